-- Every index of client_events is paid for by every ingested event
-- (docs/bench-indexes.md has what each index costs and which read needs
-- it). Connection logs read a client's Success or Failure events at
-- 802.11ac APs and never the other types (Intermediate and the like), so
-- those leave the index, and the queries state the same condition so the
-- planner can use it. client_events_slot, the costliest index, goes: a
-- baseline slot's refresh and its failing clients read the per-client
-- rows ingest keeps in slot_conn_clients (migration 0015), never the
-- slot's events. client_events_ts stays: the retention purge finds the
-- oldest events through it. Rebuilding takes about a minute per ten
-- million events.
DROP INDEX client_events_connlog;
CREATE INDEX client_events_connlog ON client_events (customer_id, mac, event_type, ts, id)
    WHERE dot11ac AND event_type IN ('Success', 'Failure');
DROP INDEX client_events_slot;
