-- Every index of client_events is paid for by every ingested event; the
-- two that serve reads of connection attempts alone hold only those
-- (docs/bench-indexes.md has what each index costs and which read needs
-- it). Connection logs read a client's Success or Failure events at
-- 802.11ac APs, and a baseline slot's refresh and its failing clients
-- read the slot's Success and Failure events: neither ever reads the
-- other types (Intermediate and the like), so their entries are dropped
-- from both indexes, and the queries state the same condition so the
-- planner can use them. client_events_ts stays: the retention purge
-- finds the oldest events through it. Rebuilding the two takes about a
-- minute per ten million events.
DROP INDEX client_events_connlog;
CREATE INDEX client_events_connlog ON client_events (customer_id, mac, event_type, ts, id)
    WHERE dot11ac AND event_type IN ('Success', 'Failure');
DROP INDEX client_events_slot;
CREATE INDEX client_events_slot ON client_events (customer_id, (ts / 900000), event_type, mac)
    WHERE event_type IN ('Success', 'Failure');
