-- Login attempts are reserved before a credential is judged, so that
-- concurrent guesses cannot outrun the throttle: each attempt takes a row in
-- every bucket it counts against (a source address, an API key id) and
-- gives it back when it succeeds. Failures stay until they leave the window.
DROP TABLE login_failures;
CREATE TABLE login_attempts (
    id     BIGSERIAL PRIMARY KEY,
    bucket TEXT NOT NULL,
    at     BIGINT NOT NULL
);
CREATE INDEX login_attempts_bucket ON login_attempts (bucket, at);
CREATE INDEX login_attempts_at ON login_attempts (at);
