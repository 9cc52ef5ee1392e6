-- The goals of the radio's service levels (coverage, capacity, roaming) a
-- location may set with its other targets: the % of client samples, or of
-- roams, that should meet their fixed thresholds. 90 until set.
ALTER TABLE service_level_targets ADD COLUMN coverage_goal DOUBLE PRECISION NOT NULL DEFAULT 90;
ALTER TABLE service_level_targets ADD COLUMN capacity_goal DOUBLE PRECISION NOT NULL DEFAULT 90;
ALTER TABLE service_level_targets ADD COLUMN roaming_goal DOUBLE PRECISION NOT NULL DEFAULT 90;
