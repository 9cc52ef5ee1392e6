-- A client has at most one sample at a given millisecond: a sample that
-- repeats a stored (customer, client, timestamp) is a retry, answered as a
-- duplicate and not stored again (docs/api.md §17). Earlier copies of a
-- repeated sample are folded into the first before the key is made unique.
DELETE FROM client_stats WHERE id NOT IN (SELECT MIN(id) FROM client_stats GROUP BY customer_id, mac, ts);
DROP INDEX client_stats_mac;
CREATE UNIQUE INDEX client_stats_mac ON client_stats (customer_id, mac, ts);
