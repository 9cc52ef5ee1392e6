-- Files that calls make for a client to download (the association data
-- export): kept in the store so that any replica serves the link, owned
-- by a customer, the user who made it and the location it covers, and
-- purged a day after it was made.
CREATE TABLE exports (
    file_key     TEXT PRIMARY KEY,
    customer_id  BIGINT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    user_id      BIGINT NOT NULL,
    location_id  BIGINT NOT NULL,
    kind         TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size         BIGINT NOT NULL,
    bytes        BYTEA NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX exports_created ON exports (created_at);
