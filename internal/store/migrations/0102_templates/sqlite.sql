-- Client connection test profiles (templates), decisions.md §12.
-- AUTOINCREMENT: a deleted profile's id is never handed out again, so a
-- client holding a stale id cannot edit another profile by mistake.
CREATE TABLE templates (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    customer_id       BIGINT NOT NULL REFERENCES customers (id),
    location_id       BIGINT NOT NULL REFERENCES locations (id),
    name              TEXT NOT NULL,
    description       TEXT NOT NULL DEFAULT '',
    mnc_template_id   BIGINT NOT NULL DEFAULT 0,
    mnc_template      BOOLEAN NOT NULL DEFAULT FALSE,
    ssid              TEXT NOT NULL,
    frequency_band    TEXT NOT NULL,
    security_mode     INTEGER NOT NULL DEFAULT 0,
    security_type     INTEGER NOT NULL DEFAULT 0,
    username          TEXT,
    password          TEXT,
    passphrase        TEXT,
    ping_servers      TEXT NOT NULL DEFAULT '[]',
    wan_test_url      TEXT NOT NULL DEFAULT '',
    ping_test_enabled BOOLEAN NOT NULL DEFAULT FALSE,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);
-- A name is unique per customer and location.
CREATE UNIQUE INDEX templates_name ON templates (customer_id, location_id, lower(name));
-- Paged lists walk a customer's profiles in id order, filtering on the
-- location from the index alone.
CREATE INDEX templates_customer_id ON templates (customer_id, id, location_id);
-- Lists of a few locations' profiles join on the location; deleting a
-- location checks for profiles created there.
CREATE INDEX templates_location ON templates (location_id, customer_id, id);

-- How many profiles each customer has at each location, kept by triggers in
-- the same transaction as the change, so that a list's totalCount sums a
-- row per location instead of counting every profile. A profile's customer
-- and location never change.
CREATE TABLE template_counts (
    customer_id BIGINT NOT NULL,
    location_id BIGINT NOT NULL,
    n           BIGINT NOT NULL,
    PRIMARY KEY (customer_id, location_id)
);
CREATE TRIGGER templates_counted AFTER INSERT ON templates BEGIN
    INSERT INTO template_counts (customer_id, location_id, n) VALUES (NEW.customer_id, NEW.location_id, 1)
        ON CONFLICT (customer_id, location_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER templates_uncounted AFTER DELETE ON templates BEGIN
    UPDATE template_counts SET n = n - 1 WHERE customer_id = OLD.customer_id AND location_id = OLD.location_id;
    DELETE FROM template_counts WHERE customer_id = OLD.customer_id AND location_id = OLD.location_id AND n <= 0;
END;
