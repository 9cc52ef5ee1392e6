-- Where a recorded call was: the materialized path of the location it was
-- checked against ('' for a call that named none, which concerns the
-- whole customer). A location-scoped ADMINISTRATOR reads only the records
-- inside its scope.
ALTER TABLE audit_log ADD COLUMN location_path TEXT NOT NULL DEFAULT '';
