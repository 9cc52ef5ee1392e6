-- One 15-minute baseline slot's Success and Failure events, each type in
-- client order (ts / 900000 is the slot's number): a slot's failing
-- clients are read a page at a time, and its observations recomputed
-- client by client, without sorting the slot (which SQLite did in memory,
-- hundreds of MB for a slot of a million events). Building it over
-- existing events takes about a minute per ten million.
CREATE INDEX client_events_slot ON client_events (customer_id, (ts / 900000), event_type, mac);
