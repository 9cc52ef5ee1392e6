-- The octet counters of open RADIUS accounting sessions (decisions §21):
-- an Interim-Update's byte deltas are taken from the session's previous
-- counters, which must outlive the process that saw them and be found by
-- every replica. A row goes with the session's Stop, or after a day
-- without an update (PurgeExpired).
CREATE TABLE acct_sessions (
	session_key TEXT PRIMARY KEY,
	in_octets   BIGINT NOT NULL,
	out_octets  BIGINT NOT NULL,
	updated_at  BIGINT NOT NULL
);
CREATE INDEX acct_sessions_updated ON acct_sessions (updated_at);
