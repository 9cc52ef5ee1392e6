-- The audit log: every state-changing call, login, failed login, lockout,
-- logout and command-line change, written in the transaction of the change
-- it records. changed_fields is a JSON array of field names (never values).
CREATE TABLE audit_log (
    id             BIGSERIAL PRIMARY KEY,
    customer_id    BIGINT NOT NULL,
    ts             BIGINT NOT NULL,
    user_id        BIGINT NOT NULL,
    login_id       TEXT NOT NULL,
    key_id         TEXT NOT NULL,
    role           TEXT NOT NULL,
    via            TEXT NOT NULL,
    source_address TEXT NOT NULL,
    request_id     TEXT NOT NULL,
    method         TEXT NOT NULL,
    path           TEXT NOT NULL,
    resource_type  TEXT NOT NULL,
    resource_id    TEXT NOT NULL,
    status         INTEGER NOT NULL,
    changed_fields TEXT NOT NULL
);
CREATE INDEX audit_log_customer_ts ON audit_log (customer_id, ts, id);
CREATE INDEX audit_log_login ON audit_log (customer_id, login_id, ts);
CREATE INDEX audit_log_resource ON audit_log (customer_id, resource_type, ts);
CREATE INDEX audit_log_ts ON audit_log (ts);
