-- Incidents (docs/api.md, "Incidents"): the anomalous slots of one site
-- (the folder holding the floors) that follow each other with at most one
-- slot between them, grouped. first_slot and last_slot are the starts of
-- the first and last anomalous slot; closed_at ("to") is the end of the
-- last one once the evaluation has passed it by more than one slot, NULL
-- while the incident is open. detail is what the incident says of itself
-- as JSON (floors, peak, cause, scope, evidence), recomputed whenever its
-- slots change. Incidents live in the main database so that acknowledging
-- one commits with its audit record.
CREATE TABLE incidents (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    customer_id  BIGINT NOT NULL,
    site_id      BIGINT NOT NULL,
    first_slot   BIGINT NOT NULL,
    last_slot    BIGINT NOT NULL,
    closed_at    BIGINT,
    kind         TEXT NOT NULL,
    detail       TEXT NOT NULL,
    acknowledged BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX incidents_site ON incidents (customer_id, site_id, last_slot);
CREATE INDEX incidents_slot ON incidents (customer_id, first_slot);
CREATE INDEX incidents_open ON incidents (customer_id, last_slot) WHERE closed_at IS NULL;
