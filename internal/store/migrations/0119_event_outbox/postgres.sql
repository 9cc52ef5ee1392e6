-- Events raised for the event stream and webhooks (AP down and up,
-- anomalies, user lockouts, configuration changes), kept 24 hours. Ids
-- are assigned in commit order, so a reader that has seen id N has seen
-- every event before it. location_path is the materialized path of the
-- location the event concerns ('' for the whole customer).
CREATE TABLE event_outbox (
    id            BIGSERIAL PRIMARY KEY,
    customer_id   BIGINT NOT NULL,
    kind          TEXT NOT NULL,
    ts            BIGINT NOT NULL,
    location_path TEXT NOT NULL,
    data          TEXT NOT NULL
);
CREATE INDEX event_outbox_ts ON event_outbox (ts);
