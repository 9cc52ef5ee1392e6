-- The service levels of the attempts stored before ingest kept their
-- counts (migration 0043 counts from then on): the server counts them
-- from the stored events in the background, an hour at a time, from the
-- hour of the oldest stored event (next_hour; or the oldest hour retention
-- keeps) up to until_ms (the newest event stored when this migration ran).
-- next_hour is where the count has got to; the row goes once it is done.
-- A new store has no events, so no row and nothing to do.
CREATE TABLE service_level_backfill (
    next_hour BIGINT NOT NULL,
    until_ms  BIGINT NOT NULL
);
INSERT INTO service_level_backfill (next_hour, until_ms)
SELECT MIN(ts) - MIN(ts) % 3600000, MAX(ts) + 1 FROM client_events HAVING COUNT(*) > 0;
