-- The service levels' counts (docs/api.md, "Service levels"): per UTC hour, location,
-- AP (0: none known), SSID and band, how many connection attempts
-- (Success and Failure events) had each outcome, and for the timed
-- Successes their time to connect in steps of 100 ms, rounded up
-- (wnms.AttemptOutcome). Ingest keeps them in the transaction that stores
-- the events, so a read of a day sums a few thousand rows instead of the
-- day's events; a target counts exactly whatever it is, as long as it is
-- a whole number of steps. Attempts stored before this migration are not
-- counted.
CREATE TABLE service_level_hours (
    customer_id BIGINT NOT NULL,
    hour        BIGINT NOT NULL,
    location_id BIGINT NOT NULL,
    ap_box_id   BIGINT NOT NULL,
    ssid        TEXT NOT NULL,
    band        TEXT NOT NULL,
    outcome     INTEGER NOT NULL,
    ttc_steps   INTEGER NOT NULL,
    attempts    BIGINT NOT NULL,
    PRIMARY KEY (customer_id, hour, location_id, ap_box_id, ssid, band, outcome, ttc_steps)
) WITHOUT ROWID;
