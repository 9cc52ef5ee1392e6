-- Which server polls each poller of the data sources: one at a time, for
-- as long as its lease lasts; it renews the lease at every poll, and
-- another server takes the poller once the lease has run out (its
-- holder stopped or lost the database). The row also keeps the poller's
-- state as of its last poll, so that every server answers the status.
CREATE TABLE poller_leases (
    customer_id BIGINT NOT NULL,
    name        TEXT NOT NULL,
    holder      TEXT NOT NULL,
    expires_at  BIGINT NOT NULL,
    state       TEXT NOT NULL,
    last_poll   BIGINT NOT NULL,
    last_error  TEXT NOT NULL,
    radios      INTEGER NOT NULL,
    stations    INTEGER NOT NULL,
    PRIMARY KEY (customer_id, name)
);
