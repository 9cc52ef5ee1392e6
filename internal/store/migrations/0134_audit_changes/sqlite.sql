-- What a recorded change did: the name people know its resource by (a
-- user's loginId, a location's name, a webhook's URL host, ...), and its
-- field-level changes as a JSON array of {field, before, after}, secrets
-- shown as "***" ('[]' for a call that committed no change). changes_omitted
-- counts the changes left out beyond the record's bound.
ALTER TABLE audit_log ADD COLUMN resource_name TEXT NOT NULL DEFAULT '';
ALTER TABLE audit_log ADD COLUMN changes TEXT NOT NULL DEFAULT '[]';
ALTER TABLE audit_log ADD COLUMN changes_omitted INTEGER NOT NULL DEFAULT 0;
