-- Client events (docs/api.md §16), beside the rest on PostgreSQL.
-- id is the arrival order (ties of timestamp); event_id is the client's
-- id of the record (or one the server made), unique per customer, so a
-- retried batch stores nothing twice. The columns are what reads filter
-- on; body is the event as the reads answer it.
CREATE TABLE client_events (
    id          BIGSERIAL PRIMARY KEY,
    customer_id BIGINT NOT NULL,
    event_id    TEXT NOT NULL,
    mac         TEXT NOT NULL,
    ts          BIGINT NOT NULL,
    event_type  TEXT NOT NULL,
    location_id BIGINT NOT NULL,
    ap_box_id   BIGINT,
    dot11ac     BOOLEAN NOT NULL,
    ssid        TEXT NOT NULL,
    protocol    TEXT NOT NULL,
    code        INTEGER,
    sub_code    INTEGER,
    body        TEXT NOT NULL
);
CREATE UNIQUE INDEX client_events_event_id ON client_events (customer_id, event_id);
CREATE INDEX client_events_mac ON client_events (customer_id, mac, ts, id);
CREATE INDEX client_events_ts ON client_events (ts);
