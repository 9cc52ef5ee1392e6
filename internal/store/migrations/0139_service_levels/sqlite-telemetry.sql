-- The service levels' counts (docs/api.md, "Service levels"), kept by
-- ingest in the transaction that stores the events (wnms.AttemptOutcome
-- says what each attempt counts as), so that a read of a day sums one row
-- per hour and place instead of the day's events. Attempts stored before
-- this migration are not counted.
--
-- service_level_hours: per UTC hour, location, AP (0: none known), SSID
-- and band, the connection attempts (Success and Failure events): the
-- Successes, those without a time to connect (untimed), and the failures
-- by where they failed.
CREATE TABLE service_level_hours (
    customer_id BIGINT NOT NULL,
    hour        BIGINT NOT NULL,
    location_id BIGINT NOT NULL,
    ap_box_id   BIGINT NOT NULL,
    ssid        TEXT NOT NULL,
    band        TEXT NOT NULL,
    successes   BIGINT NOT NULL,
    untimed     BIGINT NOT NULL,
    fail_assoc  BIGINT NOT NULL,
    fail_auth   BIGINT NOT NULL,
    fail_dhcp   BIGINT NOT NULL,
    fail_dns    BIGINT NOT NULL,
    PRIMARY KEY (customer_id, hour, location_id, ap_box_id, ssid, band)
) WITHOUT ROWID;

-- service_level_slow: for every target a location may set (target_ms, a
-- multiple of 500 ms up to 60 s), the timed Successes of the hour and
-- place that took longer, by their slow phase (authentication, DHCP); a
-- row only where there is one. A read of one target reads that target's
-- rows only (the key leads with it).
CREATE TABLE service_level_slow (
    customer_id BIGINT NOT NULL,
    target_ms   BIGINT NOT NULL,
    hour        BIGINT NOT NULL,
    location_id BIGINT NOT NULL,
    ap_box_id   BIGINT NOT NULL,
    ssid        TEXT NOT NULL,
    band        TEXT NOT NULL,
    slow_auth   BIGINT NOT NULL,
    slow_dhcp   BIGINT NOT NULL,
    PRIMARY KEY (customer_id, target_ms, hour, location_id, ap_box_id, ssid, band)
) WITHOUT ROWID;
-- The retention purge finds the old hours of service_level_slow here.
CREATE INDEX service_level_slow_hour ON service_level_slow (hour);
