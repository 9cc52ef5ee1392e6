-- Radio data (docs/api.md, "Radio samples"): a client sample's SNR, and
-- the samples of AP radios (channel, utilisation, noise, clients), one
-- per radio (BSSID) and millisecond: a sample repeating a stored BSSID
-- and timestamp is a retry.
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
);
CREATE INDEX radio_stats_box ON radio_stats (customer_id, box_id, ts);
CREATE INDEX radio_stats_ts ON radio_stats (ts);
