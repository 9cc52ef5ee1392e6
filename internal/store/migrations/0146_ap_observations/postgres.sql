-- The AP of each client's samples in a slot, and what the clients of each
-- AP's radio went through, so that the anomaly rule can judge an AP
-- against its own history (decisions §24: a coverage hole or co-channel
-- interference troubles one AP's few clients, which a floor's share of
-- troubled clients dilutes).
--
-- slot_perf_clients gains ap_box_id in its key: the AP the samples were
-- taken at (0: not known). Its rows are made again from the stored
-- samples, as migration 0136 first filled it.
TRUNCATE slot_perf_clients;
ALTER TABLE slot_perf_clients ADD COLUMN ap_box_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE slot_perf_clients ALTER COLUMN ap_box_id DROP DEFAULT;
ALTER TABLE slot_perf_clients DROP CONSTRAINT slot_perf_clients_pkey;
ALTER TABLE slot_perf_clients ADD PRIMARY KEY (slot, customer_id, mac, location_id, ssid, band, ap_box_id);

INSERT INTO slot_perf_clients (customer_id, slot, mac, location_id, ssid, band, ap_box_id, samples, rate_sum, retry_sum,
    rssi_sum, weak_all, better, with_better)
SELECT customer_id, ts - ts % 900000, mac, location_id, ssid,
    CASE WHEN channel BETWEEN 1 AND 14 THEN 'BAND_2_4_GHZ' WHEN channel > 14 THEN 'BAND_5_GHZ' ELSE '' END AS band,
    COALESCE(ap_box_id, 0) AS ap,
    COUNT(*), SUM(data_rate), SUM(retry_pct), SUM(rssi), MIN(CASE WHEN rssi < -75 THEN 1 ELSE 0 END),
    SUM(CASE WHEN best_nbr_rssi IS NOT NULL AND best_nbr_rssi >= rssi + 10 THEN 1 ELSE 0 END), COUNT(best_nbr_rssi)
FROM client_stats WHERE rssi IS NOT NULL
GROUP BY customer_id, ts - ts % 900000, mac, location_id, ssid, 6, 7;

-- perf_ap_obs: the clients of one AP's radio (its band) at a location in a
-- slot, from the slot's client statistics samples, stored with perf_obs:
-- how many clients, how many troubled (as perf_obs counts them), with a
-- low RSSI and with a high retry rate; and of those that were on the same
-- radio two slots before (paired), the sums of how much their mean RSSI
-- (dB) and mean retry rate (percentage points) changed since. A row per
-- radio and slot, a few thousand a day where perf_obs has a row per scope:
-- not partitioned, retention deletes its rows as it does the anomalies'.
CREATE TABLE perf_ap_obs (
    customer_id      BIGINT NOT NULL,
    location_id      BIGINT NOT NULL,
    slot             BIGINT NOT NULL,
    ap_box_id        BIGINT NOT NULL,
    band             TEXT NOT NULL,
    clients          INTEGER NOT NULL,
    troubled         INTEGER NOT NULL,
    low_rssi         INTEGER NOT NULL,
    high_retry       INTEGER NOT NULL,
    paired           INTEGER NOT NULL,
    rssi_change_sum  DOUBLE PRECISION NOT NULL,
    retry_change_sum DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (customer_id, location_id, slot, ap_box_id, band)
);
CREATE INDEX perf_ap_obs_slot ON perf_ap_obs (customer_id, slot);

-- The AP a performance anomaly names when its AP's clients made it one:
-- the AP, its band, the reason ('Low RSSI': its clients' signal fell;
-- 'High retry rate': their retry rate rose), and the AP's observation (the
-- change over two slots), its baseline and threshold, in the reason's unit
-- (dB, percentage points). NULL otherwise.
ALTER TABLE anomalies ADD COLUMN ap_box_id BIGINT;
ALTER TABLE anomalies ADD COLUMN ap_band TEXT;
ALTER TABLE anomalies ADD COLUMN ap_reason TEXT;
ALTER TABLE anomalies ADD COLUMN ap_observation DOUBLE PRECISION;
ALTER TABLE anomalies ADD COLUMN ap_baseline DOUBLE PRECISION;
ALTER TABLE anomalies ADD COLUMN ap_threshold DOUBLE PRECISION;

-- The slots of the last 15 days with samples are recomputed (as the
-- evaluation catches up, 200 slots a minute, or as reads ask for them), so
-- that every AP has a history to be judged against.
INSERT INTO baseline_dirty (customer_id, slot, version)
SELECT DISTINCT customer_id, slot, 0 FROM slot_perf_clients
WHERE slot >= (SELECT COALESCE(MAX(slot), 0) FROM slot_perf_clients) - 15 * 86400000
ON CONFLICT (customer_id, slot) DO NOTHING;
