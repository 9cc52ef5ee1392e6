-- Client statistics samples (docs/api.md §17) and the latest state of
-- every client, kept up to date on ingest from events and samples.
CREATE TABLE client_stats (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
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
    observed_by    TEXT
);
CREATE INDEX client_stats_mac ON client_stats (customer_id, mac, ts);
CREATE INDEX client_stats_ts ON client_stats (ts);

CREATE TABLE clients (
    box_id          BIGINT PRIMARY KEY,
    customer_id     BIGINT NOT NULL,
    mac             TEXT NOT NULL,
    name            TEXT NOT NULL,
    username        TEXT NOT NULL,
    last_seen       BIGINT NOT NULL,
    last_event_type TEXT NOT NULL,
    bssid           TEXT NOT NULL,
    ap_name         TEXT NOT NULL,
    ap_box_id       BIGINT,
    ssid            TEXT NOT NULL,
    channel         INTEGER NOT NULL,
    protocol        TEXT NOT NULL,
    location_id     BIGINT NOT NULL,
    rssi            INTEGER,
    data_rate       DOUBLE PRECISION
);
CREATE UNIQUE INDEX clients_mac ON clients (customer_id, mac);
CREATE INDEX clients_last_seen ON clients (customer_id, last_seen);
