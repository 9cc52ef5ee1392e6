-- Telemetry in day partitions (docs/scale.md). Client events, samples, AP
-- samples and the baseline observations are range-partitioned by UTC day
-- on their time column (ts, or slot for observations), one partition
-- named <table>_pYYYYMMDD per day. The server creates partitions ahead of
-- time (and for any older day a batch brings), and retention drops whole
-- partitions instead of deleting rows.
--
-- A partitioned table's unique keys must hold its partition column, so an
-- event's eventId is unique per customer and timestamp: a retried record
-- (same eventId, same timestamp) is still a duplicate.
--
-- Existing rows are moved into partitions of their days; this takes about
-- a minute per ten million rows.

DO $$
DECLARE
    t text;
    idx text;
BEGIN
    FOREACH t IN ARRAY ARRAY['client_events', 'client_stats', 'ap_stats', 'conn_obs', 'perf_obs'] LOOP
        EXECUTE format('ALTER TABLE %I RENAME TO %I', t, t || '_unpartitioned');
        FOR idx IN SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = t || '_unpartitioned' LOOP
            EXECUTE format('ALTER INDEX %I RENAME TO %I', idx, idx || '_unpartitioned');
        END LOOP;
    END LOOP;
END $$;

CREATE TABLE client_events (
    id          BIGINT NOT NULL DEFAULT nextval('client_events_id_seq'),
    customer_id BIGINT NOT NULL,
    event_id    TEXT NOT NULL,
    mac         TEXT NOT NULL,
    ts          BIGINT NOT NULL,
    event_type  TEXT NOT NULL,
    location_id BIGINT NOT NULL,
    ap_box_id   BIGINT,
    dot11ac     BOOLEAN NOT NULL,
    ssid        TEXT NOT NULL,
    protocol    TEXT NOT NULL,
    code        INTEGER,
    sub_code    INTEGER,
    body        TEXT NOT NULL,
    PRIMARY KEY (id, ts)
) PARTITION BY RANGE (ts);
CREATE UNIQUE INDEX client_events_event_id ON client_events (customer_id, event_id, ts);
CREATE INDEX client_events_mac ON client_events (customer_id, mac, ts, id);
CREATE INDEX client_events_ts ON client_events (ts);
CREATE INDEX client_events_connlog ON client_events (customer_id, mac, event_type, ts, id) WHERE dot11ac;

CREATE TABLE client_stats (
    id             BIGINT NOT NULL DEFAULT nextval('client_stats_id_seq'),
    customer_id    BIGINT NOT NULL,
    mac            TEXT NOT NULL,
    ts             BIGINT NOT NULL,
    location_id    BIGINT NOT NULL,
    ap_box_id      BIGINT,
    bssid          TEXT NOT NULL,
    ssid           TEXT NOT NULL,
    channel        INTEGER NOT NULL,
    rssi           INTEGER NOT NULL,
    data_rate      DOUBLE PRECISION NOT NULL,
    retry_pct      DOUBLE PRECISION NOT NULL,
    best_nbr_rssi  INTEGER,
    tx_bytes       BIGINT,
    rx_bytes       BIGINT,
    observed_by    TEXT,
    PRIMARY KEY (id, ts)
) PARTITION BY RANGE (ts);
CREATE UNIQUE INDEX client_stats_mac ON client_stats (customer_id, mac, ts);
CREATE INDEX client_stats_ts ON client_stats (ts);
CREATE INDEX client_stats_rate ON client_stats (customer_id, mac, ts) INCLUDE (location_id, channel, data_rate, ssid);

CREATE TABLE ap_stats (
    id          BIGINT NOT NULL DEFAULT nextval('ap_stats_id_seq'),
    customer_id BIGINT NOT NULL,
    box_id      BIGINT NOT NULL,
    ts          BIGINT NOT NULL,
    interval_ms BIGINT NOT NULL,
    tx_bytes    BIGINT,
    rx_bytes    BIGINT,
    clients     INTEGER NOT NULL,
    PRIMARY KEY (id, ts)
) PARTITION BY RANGE (ts);
CREATE INDEX ap_stats_box ON ap_stats (customer_id, box_id, ts);
CREATE INDEX ap_stats_ts ON ap_stats (ts);

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
) PARTITION BY RANGE (slot);
CREATE INDEX conn_obs_slot ON conn_obs (customer_id, slot);

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
) PARTITION BY RANGE (slot);
CREATE INDEX perf_obs_slot ON perf_obs (customer_id, slot);

-- The partitions of every day the existing rows fall in, and of the days
-- from yesterday to a week ahead; then the rows move.
DO $$
DECLARE
    t text;
    col text;
    d bigint;
    today bigint := floor(extract(epoch FROM now()) / 86400)::bigint;
BEGIN
    FOR t, col IN VALUES ('client_events', 'ts'), ('client_stats', 'ts'), ('ap_stats', 'ts'), ('conn_obs', 'slot'), ('perf_obs', 'slot') LOOP
        FOR d IN EXECUTE format('SELECT DISTINCT %I / 86400000 FROM %I UNION SELECT generate_series($1 - 1, $1 + 7)', col, t || '_unpartitioned') USING today LOOP
            EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%s) TO (%s)',
                t || '_p' || to_char(to_timestamp(d * 86400) AT TIME ZONE 'UTC', 'YYYYMMDD'), t, d * 86400000, (d + 1) * 86400000);
        END LOOP;
        EXECUTE format('INSERT INTO %I SELECT * FROM %I', t, t || '_unpartitioned');
    END LOOP;
END $$;

ALTER SEQUENCE client_events_id_seq OWNED BY client_events.id;
ALTER SEQUENCE client_stats_id_seq OWNED BY client_stats.id;
ALTER SEQUENCE ap_stats_id_seq OWNED BY ap_stats.id;
DROP TABLE client_events_unpartitioned, client_stats_unpartitioned, ap_stats_unpartitioned,
    conn_obs_unpartitioned, perf_obs_unpartitioned;
