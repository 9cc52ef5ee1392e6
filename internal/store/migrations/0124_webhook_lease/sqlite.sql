-- A webhook's lease (see the PostgreSQL schema): the dispatcher that holds
-- it reads the webhook's new events and writes each delivery's row once,
-- when its attempt has ended.
ALTER TABLE webhooks ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE webhooks ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
