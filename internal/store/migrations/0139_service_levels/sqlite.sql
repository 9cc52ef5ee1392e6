-- A location's own service level targets (docs/api.md, "Service levels"); a location
-- without a row takes its nearest ancestor's, else the defaults.
-- success_goal: % of connection attempts that should succeed;
-- ttc_ms: the time to connect target (ms, a multiple of 500);
-- ttc_goal: % of Successes that should connect within it.
CREATE TABLE service_level_targets (
    customer_id  BIGINT NOT NULL,
    location_id  BIGINT NOT NULL,
    success_goal DOUBLE PRECISION NOT NULL,
    ttc_ms       BIGINT NOT NULL,
    ttc_goal     DOUBLE PRECISION NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (customer_id, location_id)
);
