-- Webhooks: where events are POSTed, signed with the webhook's secret
-- (kept as given: signing needs it; masked on every read of the API).
-- cursor is the last outbox event the webhook's deliveries were queued
-- up to; failures and paused_until back a failing receiver off as a whole.
CREATE TABLE webhooks (
    id            BIGSERIAL PRIMARY KEY,
    customer_id   BIGINT NOT NULL,
    url           TEXT NOT NULL,
    secret        TEXT NOT NULL,
    kinds         TEXT NOT NULL,
    location_id   BIGINT NOT NULL,
    location_path TEXT NOT NULL,
    enabled       BOOLEAN NOT NULL,
    cursor        BIGINT NOT NULL,
    failures      INTEGER NOT NULL DEFAULT 0,
    paused_until  BIGINT NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL
);
CREATE INDEX webhooks_customer ON webhooks (customer_id, id);

-- One event to one webhook, delivered at least once: pending until a 2xx
-- answer (delivered) or 24 hours of retries (failed). A server claims a
-- due delivery for a lease (claim_until) while it sends it, so that two
-- replicas never send it at once, and one that dies leaves it to the next.
CREATE TABLE webhook_deliveries (
    id              BIGSERIAL PRIMARY KEY,
    webhook_id      BIGINT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id        BIGINT NOT NULL,
    kind            TEXT NOT NULL,
    event_ts        BIGINT NOT NULL,
    body            TEXT NOT NULL,
    state           TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_at         BIGINT NOT NULL,
    claim_until     BIGINT NOT NULL DEFAULT 0,
    last_status     INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT NOT NULL DEFAULT '',
    last_latency_ms BIGINT NOT NULL DEFAULT 0,
    updated_at      BIGINT NOT NULL,
    UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (webhook_id, state, next_at);
CREATE INDEX webhook_deliveries_list ON webhook_deliveries (webhook_id, updated_at);
