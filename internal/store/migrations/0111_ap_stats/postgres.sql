-- AP heartbeat history for the AP trends (docs/api.md §19): the bytes an
-- AP moved since its previous heartbeat, over interval_ms, and its client
-- count.
CREATE TABLE ap_stats (
    id          BIGSERIAL PRIMARY KEY,
    customer_id BIGINT NOT NULL,
    box_id      BIGINT NOT NULL,
    ts          BIGINT NOT NULL,
    interval_ms BIGINT NOT NULL,
    tx_bytes    BIGINT,
    rx_bytes    BIGINT,
    clients     INTEGER NOT NULL
);
CREATE INDEX ap_stats_box ON ap_stats (customer_id, box_id, ts);
CREATE INDEX ap_stats_ts ON ap_stats (ts);
