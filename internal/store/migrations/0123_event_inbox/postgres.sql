-- Events stored by a change's transaction before they have an outbox id:
-- the transaction inserts here without taking the outbox's order lock, and
-- the event hub (SequenceEvents, one server at a time under that lock)
-- moves them into event_outbox, where ids are then handed out in commit
-- order. A row lives here only until the next sequencing.
CREATE TABLE event_inbox (
    id            BIGSERIAL PRIMARY KEY,
    customer_id   BIGINT NOT NULL,
    kind          TEXT NOT NULL,
    ts            BIGINT NOT NULL,
    location_path TEXT NOT NULL,
    data          TEXT NOT NULL
);
