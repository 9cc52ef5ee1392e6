-- Every index of client_events is paid for by every ingested event
-- (docs/bench-indexes.md has what each index costs and which read needs
-- it); these are narrowed to what their reads need.
--
-- The primary key (id, ts) served no read: events are read by client
-- (client_events_mac), by eventId
-- (client_events_event_id) and by time, and old ones go with their day
-- partitions. id stays, from its sequence, the tiebreak of the event
-- order.
--
-- client_events_ts becomes a BRIN index: a day partition is already the
-- first cut of a read by time (the associations export, the footfall
-- counts), and within it BRIN finds the block ranges of the window at a
-- fraction of a B-tree's cost per event.
--
-- Connection logs read a client's Success or Failure events at 802.11ac
-- APs and never the other types (Intermediate and the like), so those
-- leave the index, and the queries state the same condition so the
-- planner can use it.
--
-- client_events_slot, the costliest index, goes: a baseline slot's
-- refresh and its failing clients read the per-client rows ingest keeps
-- in slot_conn_clients (migration 0040), never the slot's events.
--
-- Rebuilding the two takes about a minute per ten million events.
ALTER TABLE client_events DROP CONSTRAINT client_events_pkey;
DROP INDEX client_events_ts;
CREATE INDEX client_events_ts ON client_events USING brin (ts);
DROP INDEX client_events_connlog;
CREATE INDEX client_events_connlog ON client_events (customer_id, mac, event_type, ts, id)
    WHERE dot11ac AND event_type IN ('Success', 'Failure');
DROP INDEX client_events_slot;
