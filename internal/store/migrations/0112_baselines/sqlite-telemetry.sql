-- Baselines (docs/api.md §22). conn_obs is the connectivity observation
-- of every slot in every scope (a location with its subtree, a band or
-- ANY, an SSID or '' for all), computed from the slot's Success and
-- Failure events when the slot is marked in baseline_dirty: ingest marks
-- the slots its events and samples fall in, and a refresh recomputes them. Reads of
-- baselines and the anomaly evaluation read conn_obs, never raw events.
CREATE TABLE conn_obs (
    customer_id BIGINT NOT NULL,
    location_id BIGINT NOT NULL,
    band        TEXT NOT NULL,
    ssid        TEXT NOT NULL,
    slot        BIGINT NOT NULL,
    attempting  INTEGER NOT NULL,
    failing     INTEGER NOT NULL,
    assoc       INTEGER NOT NULL,
    auth        INTEGER NOT NULL,
    network     INTEGER NOT NULL,
    PRIMARY KEY (customer_id, location_id, band, ssid, slot)
);
CREATE INDEX conn_obs_slot ON conn_obs (customer_id, slot);

-- perf_obs is the performance observation of every slot in every scope,
-- from the slot's client statistics samples, kept like conn_obs.
CREATE TABLE perf_obs (
    customer_id BIGINT NOT NULL,
    location_id BIGINT NOT NULL,
    band        TEXT NOT NULL,
    ssid        TEXT NOT NULL,
    slot        BIGINT NOT NULL,
    clients     INTEGER NOT NULL,
    troubled    INTEGER NOT NULL,
    low_rate    INTEGER NOT NULL,
    high_retry  INTEGER NOT NULL,
    low_rssi    INTEGER NOT NULL,
    sticky      INTEGER NOT NULL,
    PRIMARY KEY (customer_id, location_id, band, ssid, slot)
);
CREATE INDEX perf_obs_slot ON perf_obs (customer_id, slot);

-- Slots whose events changed since their observations were computed;
-- version (random, new at every mark) tells a refresh whether the slot
-- changed again meanwhile.
CREATE TABLE baseline_dirty (
    customer_id BIGINT NOT NULL,
    slot        BIGINT NOT NULL,
    version     BIGINT NOT NULL,
    PRIMARY KEY (customer_id, slot)
);

-- Telemetry stored before this migration is marked too, so its baselines
-- appear as the evaluation catches up (200 slots a minute) or as reads
-- ask for them.
INSERT INTO baseline_dirty (customer_id, slot, version)
SELECT customer_id, ts - ts % 900000, 0 FROM client_events WHERE event_type IN ('Success', 'Failure')
UNION
SELECT customer_id, ts - ts % 900000, 0 FROM client_stats;

-- Anomalies recorded by the evaluation, once per (location, kind, slot)
-- whichever replica finds them first.
CREATE TABLE anomalies (
    customer_id BIGINT NOT NULL,
    location_id BIGINT NOT NULL,
    kind        TEXT NOT NULL,
    slot        BIGINT NOT NULL,
    observation DOUBLE PRECISION NOT NULL,
    baseline    DOUBLE PRECISION NOT NULL,
    threshold   DOUBLE PRECISION NOT NULL,
    raised_at   BIGINT NOT NULL,
    PRIMARY KEY (customer_id, location_id, kind, slot)
);
CREATE INDEX anomalies_slot ON anomalies (customer_id, slot);
