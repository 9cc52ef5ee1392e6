-- A client sample may carry no radio metrics: RADIUS accounting reports a
-- client's bytes but not its signal, data rate or retries. Those columns
-- are NULL then, and the reads of radio metrics skip such samples. SQLite
-- cannot drop a NOT NULL constraint, so the table is rebuilt as it is
-- with the three columns nullable, rows and ids kept.
CREATE TABLE client_stats_new (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    customer_id    BIGINT NOT NULL,
    mac            TEXT NOT NULL,
    ts             BIGINT NOT NULL,
    location_id    BIGINT NOT NULL,
    ap_box_id      BIGINT,
    bssid          TEXT NOT NULL,
    ssid           TEXT NOT NULL,
    channel        INTEGER NOT NULL,
    rssi           INTEGER,
    data_rate      DOUBLE PRECISION,
    retry_pct      DOUBLE PRECISION,
    best_nbr_rssi  INTEGER,
    tx_bytes       BIGINT,
    rx_bytes       BIGINT,
    observed_by    TEXT
);
INSERT INTO client_stats_new (id, customer_id, mac, ts, location_id, ap_box_id, bssid, ssid, channel, rssi, data_rate,
    retry_pct, best_nbr_rssi, tx_bytes, rx_bytes, observed_by)
SELECT id, customer_id, mac, ts, location_id, ap_box_id, bssid, ssid, channel, rssi, data_rate,
    retry_pct, best_nbr_rssi, tx_bytes, rx_bytes, observed_by FROM client_stats;
DROP TABLE client_stats;
ALTER TABLE client_stats_new RENAME TO client_stats;
CREATE UNIQUE INDEX client_stats_mac ON client_stats (customer_id, mac, ts);
CREATE INDEX client_stats_ts ON client_stats (ts);
CREATE INDEX client_stats_rate ON client_stats (customer_id, mac, ts, location_id, channel, data_rate, ssid);
