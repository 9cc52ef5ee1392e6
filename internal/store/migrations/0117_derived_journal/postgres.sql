-- What ingested records say of their clients (the latest state) and of
-- the baseline slots they fall in, journalled in the transaction that
-- stores the records. The server applies it to clients and baseline_dirty
-- behind the ingest, coalesced (about once a second, and before any read
-- of either), deleting the rows it applied in the same transaction; rows
-- a crashed server left are applied by the next one to open the store.
CREATE TABLE derived_journal (
    id          BIGSERIAL PRIMARY KEY,
    customer_id BIGINT NOT NULL,
    owner       TEXT NOT NULL,
    created_ms  BIGINT NOT NULL,
    body        BYTEA NOT NULL -- compressed already
);
ALTER TABLE derived_journal ALTER COLUMN body SET STORAGE EXTERNAL;

-- When each of a client's name, username, last event type, and RSSI with
-- data rate was reported (the timestamp of the record that gave it): an
-- update coalesced from several records says so for each, and the upsert
-- takes a value only from a record no older than the stored state, so
-- that coalescing records in any grouping gives what applying them one by
-- one in arrival order gives.
ALTER TABLE clients ADD COLUMN name_ts BIGINT NOT NULL DEFAULT 0;
ALTER TABLE clients ADD COLUMN username_ts BIGINT NOT NULL DEFAULT 0;
ALTER TABLE clients ADD COLUMN event_type_ts BIGINT NOT NULL DEFAULT 0;
ALTER TABLE clients ADD COLUMN signal_ts BIGINT NOT NULL DEFAULT 0;
