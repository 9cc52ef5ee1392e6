-- A client sample may carry no radio metrics: RADIUS accounting reports a
-- client's bytes but not its signal, data rate or retries. Those columns
-- are NULL then, and the reads of radio metrics skip such samples.
ALTER TABLE client_stats ALTER COLUMN rssi DROP NOT NULL,
    ALTER COLUMN data_rate DROP NOT NULL,
    ALTER COLUMN retry_pct DROP NOT NULL;
