-- A client's IP address: that of the newest event that carried one (a
-- Success's DHCP ACK or RADIUS Framed-IP-Address, an accounting Start's
-- Intermediate); '' until one is observed, answered as null. ip_ts is
-- when it was reported, for the same coalescing rule as username_ts.
ALTER TABLE clients ADD COLUMN ip_address TEXT NOT NULL DEFAULT '';
ALTER TABLE clients ADD COLUMN ip_ts BIGINT NOT NULL DEFAULT 0;
