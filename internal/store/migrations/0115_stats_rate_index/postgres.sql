-- A client's data-rate baseline reads 15 days of its samples (about 4,300
-- at one every 5 minutes). This index carries every column that read needs,
-- so that it can be an index-only scan instead of one heap fetch a sample.
CREATE INDEX client_stats_rate ON client_stats (customer_id, mac, ts) INCLUDE (location_id, channel, data_rate, ssid);
