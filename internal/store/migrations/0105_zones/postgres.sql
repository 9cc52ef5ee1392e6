-- Zone configuration for location analytics (decisions.md §16): one row
-- per location and customer (the shared root and unknown locations carry
-- one per customer). page_id is the location's active landing page id,
-- assigned on first read and never reused. A NULL part was never set.
CREATE TABLE zone_configs (
    page_id       BIGSERIAL PRIMARY KEY,
    location_id   BIGINT NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
    customer_id   BIGINT NOT NULL REFERENCES customers (id),
    layout_length DOUBLE PRECISION,
    layout_width  DOUBLE PRECISION,
    layout_unit   TEXT,
    footfall_min  BIGINT,
    footfall_max  BIGINT,
    dwell_time    TEXT,
    updated_at    BIGINT NOT NULL
);
CREATE UNIQUE INDEX zone_configs_location ON zone_configs (location_id, customer_id);
