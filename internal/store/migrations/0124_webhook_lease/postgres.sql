-- A webhook's lease: the dispatcher that holds it (lease_owner, an id
-- random per run) until lease_until (ms) is the one that reads the
-- webhook's new outbox events. It sends them without writing a delivery
-- row first, and writes each delivery's row once, in its final state,
-- when the attempt has ended; cursor then moves past the events whose
-- rows are written. A webhook backing off, or whose holder is gone, has
-- its events queued as rows, as before.
ALTER TABLE webhooks ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE webhooks ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
