-- What each client did in each baseline slot, kept up to date by every
-- ingest in the transaction that stores its records, so that recomputing
-- a slot's observations reads one row per client and place instead of the
-- slot's events and samples (a slot being filled was recomputed from all
-- its events at every read).
--
-- slot_conn_clients: a client's connection attempts (Success and Failure
-- events) at one location, SSID and band in a slot; failures is a bit set
-- of what it failed in there: 1 any Failure, 2 association, 4
-- authentication, 8 network (failureCode 1, 2, 3).
CREATE TABLE slot_conn_clients (
    customer_id BIGINT NOT NULL,
    slot        BIGINT NOT NULL,
    mac         TEXT NOT NULL,
    location_id BIGINT NOT NULL,
    ssid        TEXT NOT NULL,
    band        TEXT NOT NULL,
    failures    INTEGER NOT NULL,
    PRIMARY KEY (slot, customer_id, mac, location_id, ssid, band)
) WITHOUT ROWID;

-- slot_perf_clients: the sums of a client's statistics samples with radio
-- metrics at one location, SSID and band in a slot (wnms.ClientSums):
-- how many, the sums of data rate, retry and RSSI, whether every one had
-- a low RSSI (weak_all, 1 or 0), how many named a best neighbour
-- (with_better) and how many of those heard it well enough better
-- (better).
CREATE TABLE slot_perf_clients (
    customer_id BIGINT NOT NULL,
    slot        BIGINT NOT NULL,
    mac         TEXT NOT NULL,
    location_id BIGINT NOT NULL,
    ssid        TEXT NOT NULL,
    band        TEXT NOT NULL,
    samples     BIGINT NOT NULL,
    rate_sum    DOUBLE PRECISION NOT NULL,
    retry_sum   DOUBLE PRECISION NOT NULL,
    rssi_sum    BIGINT NOT NULL,
    weak_all    INTEGER NOT NULL,
    better      BIGINT NOT NULL,
    with_better BIGINT NOT NULL,
    PRIMARY KEY (slot, customer_id, mac, location_id, ssid, band)
) WITHOUT ROWID;

-- Filled from what is stored (about a minute per ten million events).
INSERT INTO slot_conn_clients (customer_id, slot, mac, location_id, ssid, band, failures)
SELECT customer_id, ts - ts % 900000, mac, location_id, ssid,
    CASE WHEN json_extract(body, '$.channel') BETWEEN 1 AND 14 THEN 'BAND_2_4_GHZ'
         WHEN json_extract(body, '$.channel') > 14 THEN 'BAND_5_GHZ' ELSE '' END AS band,
    MAX(CASE WHEN event_type = 'Failure' THEN 1 ELSE 0 END)
    + 2 * MAX(CASE WHEN event_type = 'Failure' AND code = 1 THEN 1 ELSE 0 END)
    + 4 * MAX(CASE WHEN event_type = 'Failure' AND code = 2 THEN 1 ELSE 0 END)
    + 8 * MAX(CASE WHEN event_type = 'Failure' AND code = 3 THEN 1 ELSE 0 END)
FROM client_events WHERE event_type IN ('Success', 'Failure')
GROUP BY customer_id, ts - ts % 900000, mac, location_id, ssid, band;

INSERT INTO slot_perf_clients (customer_id, slot, mac, location_id, ssid, band, samples, rate_sum, retry_sum, rssi_sum,
    weak_all, better, with_better)
SELECT customer_id, ts - ts % 900000, mac, location_id, ssid,
    CASE WHEN channel BETWEEN 1 AND 14 THEN 'BAND_2_4_GHZ' WHEN channel > 14 THEN 'BAND_5_GHZ' ELSE '' END AS band,
    COUNT(*), SUM(data_rate), SUM(retry_pct), SUM(rssi), MIN(CASE WHEN rssi < -75 THEN 1 ELSE 0 END),
    SUM(CASE WHEN best_nbr_rssi IS NOT NULL AND best_nbr_rssi >= rssi + 10 THEN 1 ELSE 0 END), COUNT(best_nbr_rssi)
FROM client_stats WHERE rssi IS NOT NULL
GROUP BY customer_id, ts - ts % 900000, mac, location_id, ssid, band;
