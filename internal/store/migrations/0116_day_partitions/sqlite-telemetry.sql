-- An event's eventId is unique per customer and timestamp, as on
-- PostgreSQL, whose day partitions need the timestamp in every unique key:
-- a retried record (same eventId, same timestamp) is still a duplicate.
DROP INDEX client_events_event_id;
CREATE UNIQUE INDEX client_events_event_id ON client_events (customer_id, event_id, ts);
