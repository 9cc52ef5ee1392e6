-- Connection logs read one client's Success or Failure events at 802.11ac
-- APs, newest first: this index holds exactly those, in that order, so a
-- log page reads only the rows it answers (docs/api.md §16). Building it
-- over existing events takes about a minute per ten million.
CREATE INDEX client_events_connlog ON client_events (customer_id, mac, event_type, ts, id) WHERE dot11ac;
