-- A client's data-rate baseline reads 15 days of its samples (about 4,300
-- at one every 5 minutes). This index holds every column that read needs,
-- so it is answered from consecutive index pages instead of one table
-- lookup a sample, wherever the samples were written among other clients'.
CREATE INDEX client_stats_rate ON client_stats (customer_id, mac, ts, location_id, channel, data_rate, ssid);
