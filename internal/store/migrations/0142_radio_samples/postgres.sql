-- Radio data (docs/api.md, "Radio samples"): a client sample's SNR, and
-- the samples of AP radios (channel, utilisation, noise, clients), one
-- per radio (BSSID) and millisecond: a sample repeating a stored BSSID
-- and timestamp is a retry. Partitioned by day on ts, like ap_stats.
ALTER TABLE client_stats ADD COLUMN snr INTEGER;

CREATE TABLE radio_stats (
    customer_id BIGINT NOT NULL,
    bssid       TEXT NOT NULL,
    ts          BIGINT NOT NULL,
    box_id      BIGINT NOT NULL,
    location_id BIGINT NOT NULL,
    channel     INTEGER,
    band        TEXT NOT NULL,
    utilization DOUBLE PRECISION,
    noise       INTEGER,
    clients     INTEGER,
    tx_power    INTEGER,
    PRIMARY KEY (customer_id, bssid, ts)
) PARTITION BY RANGE (ts);
CREATE INDEX radio_stats_box ON radio_stats (customer_id, box_id, ts);

-- A partition for every day ap_stats has one (yesterday to a week ahead
-- at least); the server makes later ones as for the other tables.
DO $$
DECLARE
    d bigint;
BEGIN
    FOR d IN SELECT DISTINCT (extract(epoch FROM to_date(substring(c.relname FROM '_p([0-9]{8})$'), 'YYYYMMDD')) / 86400)::bigint
            FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
            JOIN pg_namespace n ON n.oid = p.relnamespace
            WHERE p.relname = 'ap_stats' AND n.nspname = current_schema() AND c.relname ~ '_p[0-9]{8}$'
            UNION SELECT generate_series(floor(extract(epoch FROM now()) / 86400)::bigint - 1, floor(extract(epoch FROM now()) / 86400)::bigint + 7) LOOP
        EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF radio_stats FOR VALUES FROM (%s) TO (%s)',
            'radio_stats_p' || to_char(to_timestamp(d * 86400) AT TIME ZONE 'UTC', 'YYYYMMDD'), d * 86400000, (d + 1) * 86400000);
    END LOOP;
END $$;
