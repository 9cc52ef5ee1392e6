-- Foundation: customers, locations, users, API keys, sessions, throttling.
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE customers (
    id     BIGINT PRIMARY KEY,
    name   TEXT NOT NULL,
    locked BOOLEAN NOT NULL DEFAULT FALSE
);
INSERT INTO customers (id, name) VALUES (1, 'default');

CREATE TABLE locations (
    id           BIGSERIAL PRIMARY KEY,
    customer_id  BIGINT REFERENCES customers (id),
    parent_id    BIGINT REFERENCES locations (id),
    type         TEXT NOT NULL,
    name         TEXT NOT NULL,
    timezone_id  TEXT NOT NULL DEFAULT '',
    location_tag TEXT,
    path         TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE UNIQUE INDEX locations_sibling_name ON locations (parent_id, customer_id, lower(name));
CREATE INDEX locations_path ON locations (path text_pattern_ops);
INSERT INTO locations (id, customer_id, parent_id, type, name, path, created_at)
    VALUES (0, NULL, NULL, 'folderlocation', 'Root', '/0/', 0);
UPDATE locations SET timezone_id = 'UTC' WHERE id = 0;
INSERT INTO locations (id, customer_id, parent_id, type, name, path, created_at)
    VALUES (-1, NULL, 0, 'folderlocation', 'Unknown', '/0/-1/', 0);
UPDATE locations SET timezone_id = 'UTC' WHERE id = -1;

CREATE TABLE users (
    id                       BIGSERIAL PRIMARY KEY,
    customer_id              BIGINT NOT NULL REFERENCES customers (id),
    login_id                 TEXT NOT NULL,
    first_name               TEXT NOT NULL DEFAULT '',
    last_name                TEXT NOT NULL DEFAULT '',
    email                    TEXT NOT NULL DEFAULT '',
    role                     TEXT NOT NULL,
    user_type                TEXT NOT NULL,
    time_zone                TEXT NOT NULL DEFAULT '',
    tz_offset                INTEGER NOT NULL DEFAULT 0,
    font_pref                TEXT NOT NULL DEFAULT 'ENGLISH_ONLY',
    passwd_settings          TEXT NOT NULL DEFAULT '{}',
    logout_interval          INTEGER NOT NULL DEFAULT -1,
    allowed_locations        TEXT NOT NULL DEFAULT '[]',
    allow_access_mgmt        BOOLEAN NOT NULL DEFAULT TRUE,
    allow_security_mgmt      BOOLEAN NOT NULL DEFAULT TRUE,
    service_user             BOOLEAN NOT NULL DEFAULT FALSE,
    default_password         BOOLEAN NOT NULL DEFAULT FALSE,
    password_change_enforced BOOLEAN NOT NULL DEFAULT FALSE,
    user_defined_fields      TEXT,
    password_hash            TEXT NOT NULL DEFAULT '',
    password_set_at          BIGINT NOT NULL DEFAULT 0,
    manual_lock              BOOLEAN NOT NULL DEFAULT FALSE,
    locked_until             BIGINT NOT NULL DEFAULT 0,
    failed_logins            INTEGER NOT NULL DEFAULT 0,
    created_at               BIGINT NOT NULL
);
CREATE UNIQUE INDEX users_login_id ON users (lower(login_id));
CREATE INDEX users_customer ON users (customer_id, id);

CREATE TABLE custom_fields (
    id          BIGSERIAL PRIMARY KEY,
    customer_id BIGINT NOT NULL REFERENCES customers (id),
    name        TEXT NOT NULL
);
CREATE UNIQUE INDEX custom_fields_name ON custom_fields (customer_id, lower(name));

CREATE TABLE api_keys (
    key_id       TEXT PRIMARY KEY,
    user_id      BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    hash         BYTEA NOT NULL,
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE sessions (
    token_hash        TEXT PRIMARY KEY,
    user_id           BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key_id            TEXT REFERENCES api_keys (key_id) ON DELETE CASCADE,
    client_identifier TEXT NOT NULL,
    timeout_s         INTEGER NOT NULL,
    created_at        BIGINT NOT NULL,
    expires_at        BIGINT NOT NULL,
    cluster_children  BOOLEAN NOT NULL DEFAULT FALSE,
    password_change   BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX sessions_expires ON sessions (expires_at);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE login_failures (
    addr TEXT NOT NULL,
    at   BIGINT NOT NULL
);
CREATE INDEX login_failures_addr ON login_failures (addr, at);
