-- RADIUS accepts waiting for the syslog Success of their connection
-- (docs/datasources.md, "Accepts held for the syslog join"). A row is
-- written within a second of the accept and removed once the
-- connection's Success is stored, so a restart finds what was still
-- pending: the server that held it (server_id) takes it back when it
-- starts, and any server takes a row left past its hold. event_id is the
-- eventId the connection's one Success takes; record is the Success as
-- the RADIUS proxy made it (the ingest format).
CREATE TABLE held_accepts (
    server_id   BIGINT NOT NULL,
    event_id    TEXT NOT NULL,
    customer_id BIGINT NOT NULL,
    source      TEXT NOT NULL,
    held_at     BIGINT NOT NULL,
    record      TEXT NOT NULL,
    PRIMARY KEY (server_id, event_id)
);
CREATE INDEX held_accepts_held_at ON held_accepts (held_at);
