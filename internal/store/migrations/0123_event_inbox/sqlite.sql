-- Events stored before they have an outbox id (see the PostgreSQL schema).
-- SQLite's one writer commits in id order, so changes store their events
-- in event_outbox directly and this table stays empty; it exists so that
-- both engines have one schema and one sequencing statement.
CREATE TABLE event_inbox (
    id            INTEGER PRIMARY KEY,
    customer_id   BIGINT NOT NULL,
    kind          TEXT NOT NULL,
    ts            BIGINT NOT NULL,
    location_path TEXT NOT NULL,
    data          TEXT NOT NULL
);
