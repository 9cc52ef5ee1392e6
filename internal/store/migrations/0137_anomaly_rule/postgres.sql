-- The clients of an anomaly's slot: affected (failing, or in trouble) and
-- attempting (with samples). Anomalies recorded before have 0 for both.
ALTER TABLE anomalies ADD COLUMN affected BIGINT NOT NULL DEFAULT 0;
ALTER TABLE anomalies ADD COLUMN attempting BIGINT NOT NULL DEFAULT 0;

-- Slots whose observations were stored since the anomaly evaluation last
-- looked at them: every stored recomputation marks its slot here (version:
-- the baseline_dirty mark it cleared), and the evaluation clears a mark
-- only at the version it evaluated, so that late data and imported
-- history get their anomalies evaluated, however old their slot.
CREATE TABLE anomaly_pending (
    customer_id BIGINT NOT NULL,
    slot        BIGINT NOT NULL,
    version     BIGINT NOT NULL,
    PRIMARY KEY (customer_id, slot)
);
