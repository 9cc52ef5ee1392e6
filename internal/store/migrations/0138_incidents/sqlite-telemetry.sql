-- Incidents are grouped from the anomalies recorded since the last
-- grouping, whatever their slot (late data records anomalies of past
-- slots): the grouping reads them in the order they were raised.
CREATE INDEX anomalies_raised ON anomalies (customer_id, raised_at);
