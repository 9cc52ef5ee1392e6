package store

import (
	"context"
	"database/sql"
	"errors"
	"sort"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// CreateSession stores a session for a login that succeeded, and in the
// same transaction gives back the login's reserved attempts (release; see
// ReserveAttempt) and marks the session's API key, if any, used now: one
// commit, where these were three (a PostgreSQL commit waits for its WAL
// flush, and a login's latency was mostly its round trips and commits).
func (s *Store) CreateSession(ctx context.Context, se *wnms.Session, release []int64) error {
	var keyID any
	if se.KeyID != "" {
		keyID = se.KeyID
	}
	if writesArrays(s.dialect) {
		// One statement: a login's round trips to the database are most
		// of its time. The UPDATE holds the key's row lock until the
		// commit, no longer than when it ran last: the call's audit
		// record is written after it either way.
		return s.tx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `WITH r AS (DELETE FROM login_attempts WHERE id = ANY($10::bigint[])),
				k AS (UPDATE api_keys SET last_used_at = $11 WHERE key_id = $3)
				INSERT INTO sessions (token_hash, user_id, key_id, client_identifier, timeout_s,
				created_at, expires_at, cluster_children, password_change) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
				se.TokenHash, se.UserID, keyID, se.ClientIdentifier, se.Timeout, se.CreatedAt, se.ExpiresAt,
				se.ClusterChildren, se.PasswordChange, release, s.nowMS())
			return err
		})
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.releaseAttempts(ctx, tx, release); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (token_hash, user_id, key_id, client_identifier, timeout_s,
			created_at, expires_at, cluster_children, password_change) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			se.TokenHash, se.UserID, keyID, se.ClientIdentifier, se.Timeout, se.CreatedAt, se.ExpiresAt,
			se.ClusterChildren, se.PasswordChange); err != nil {
			return err
		}
		if se.KeyID == "" {
			return nil
		}
		// Last: the key's row stays locked (PostgreSQL) until the commit,
		// and logins with the same key wait for it.
		_, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used_at = $1 WHERE key_id = $2`, s.nowMS(), se.KeyID)
		return err
	})
}

// SessionUser reads a session and its user in one query. An unknown token
// is RESOURCE_NOT_FOUND; expiry is the caller's to judge.
func (s *Store) SessionUser(ctx context.Context, tokenHash string) (*wnms.Session, *wnms.User, error) {
	var se wnms.Session
	var keyID sql.NullString
	u, err := scanUser(s.r.QueryRowContext(ctx, `SELECT `+userColumns+`, se.key_id, se.client_identifier, se.timeout_s,
		se.created_at, se.expires_at, se.cluster_children, se.password_change, coalesce(k.cluster_parent, FALSE)`+userFrom+
		` JOIN sessions se ON se.user_id = u.id LEFT JOIN api_keys k ON k.key_id = se.key_id WHERE se.token_hash = $1`, tokenHash),
		&keyID, &se.ClientIdentifier, &se.Timeout, &se.CreatedAt, &se.ExpiresAt, &se.ClusterChildren, &se.PasswordChange,
		&se.ClusterParent)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, wnms.Errorf(wnms.SessionExpired, "session expired or ended")
	}
	if err != nil {
		return nil, nil, err
	}
	u.Derive(s.Now())
	se.TokenHash, se.UserID, se.CustomerID, se.KeyID = tokenHash, u.UserID, u.CustomerID, keyID.String
	return &se, u, nil
}

// ExtendSession sets a live session's expiry; it reports false when the
// session is unknown or already expired. Only this process's cache hears of
// it: elsewhere a cached copy that looks expired is read again.
func (s *Store) ExtendSession(ctx context.Context, tokenHash string, expiresAt int64) (bool, error) {
	res, err := s.exec(ctx, `UPDATE sessions SET expires_at = $1 WHERE token_hash = $2 AND expires_at > $3`,
		expiresAt, tokenHash, s.nowMS())
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	s.authCommitted(wnms.AuthEvent{Session: tokenHash, Extended: true})
	return n > 0, nil
}

// DeleteSession ends a session.
func (s *Store) DeleteSession(ctx context.Context, tokenHash string) error {
	return s.authTx(ctx, wnms.AuthEvent{Session: tokenHash}, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE token_hash = $1`, tokenHash)
		return err
	})
}

// ActiveSessions counts unexpired sessions.
func (s *Store) ActiveSessions(ctx context.Context) (int, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE expires_at > $1`, s.nowMS()).Scan(&n)
	return n, err
}

// PurgeExpired deletes expired sessions, login attempts older than
// attemptsBefore (ms), old export files and the counters of accounting
// sessions idle for AcctSessionIdle.
func (s *Store) PurgeExpired(ctx context.Context, attemptsBefore int64) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= $1`, s.nowMS()); err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM login_attempts WHERE at < $1`, attemptsBefore); err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM acct_sessions WHERE updated_at < $1`, s.Now().Add(-AcctSessionIdle).UnixMilli()); err != nil {
		return err
	}
	_, err := s.w.ExecContext(ctx, `DELETE FROM exports WHERE kind = $1 AND created_at < $2`, wnms.FileExport, s.Now().Add(-ExportLife).UnixMilli())
	return err
}

// ExportLife is how long an export file is kept. Log bundles stay as
// long as telemetry does (PurgeTelemetry).
const ExportLife = 24 * time.Hour

// ReserveAttempt records one login attempt in every bucket (a source
// address, an API key id, ...) unless one of them already holds limit
// attempts since since (ms). Checking and recording are one atomic step, so
// concurrent attempts can never together pass the limit. It returns the
// ids of the recorded attempts, to give back when the login succeeds
// (with its session, CreateSession, or ReleaseAttempts). When a bucket is
// full it records nothing and returns ok false and, of the full buckets,
// the latest time (ms) at which a bucket's oldest attempt since since was
// made (the caller adds its window to tell when to try again).
func (s *Store) ReserveAttempt(ctx context.Context, buckets []string, since int64, limit int) (ids []int64, retryAt int64, ok bool, err error) {
	// Bookkeeping before the call's change, not the change: the call's
	// audit record is left for the transaction of its change (a password
	// changed by its owner) or for the call's end.
	ctx = wnms.WithAudit(ctx, nil)
	sorted := append([]string(nil), buckets...)
	sort.Strings(sorted) // one lock order for every caller
	if writesArrays(s.dialect) {
		err = s.tx(ctx, func(tx *sql.Tx) error {
			ids, retryAt, ok, err = s.reserveAttemptPG(ctx, tx, sorted, since, limit)
			return err
		})
		return ids, retryAt, ok, err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		ids, retryAt, ok = nil, 0, true
		for _, b := range sorted {
			if err := lockKey(ctx, tx, s.dialect, "attempts:"+b); err != nil {
				return err
			}
			var n int
			var oldest sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT count(*), min(at) FROM login_attempts WHERE bucket = $1 AND at >= $2`,
				b, since).Scan(&n, &oldest); err != nil {
				return err
			}
			if n >= limit {
				ok = false
				if oldest.Int64 > retryAt {
					retryAt = oldest.Int64
				}
			}
		}
		if !ok {
			return nil
		}
		now := s.nowMS()
		for _, b := range sorted {
			var id int64
			if err := tx.QueryRowContext(ctx, `INSERT INTO login_attempts (bucket, at) VALUES ($1, $2) RETURNING id`,
				b, now).Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	return ids, retryAt, ok, err
}

// lockAttempts takes the advisory lock of each bucket, in the order
// given (unnest yields an array's elements in order).
const lockAttempts = `SELECT pg_advisory_xact_lock(hashtextextended('attempts:' || b, 0)) FROM unnest($1::text[]) AS u(b)`

// reserveAttempts counts each bucket's attempts since $2 and, unless one
// holds $3, records an attempt (at $4) in each: rows (id, 0) for the
// recorded attempts, or one row (0, retryAt) when a bucket is full.
const reserveAttempts = `WITH c AS (
		SELECT u.b, s.n, s.oldest FROM unnest($1::text[]) AS u(b),
			LATERAL (SELECT count(*) AS n, min(at) AS oldest FROM login_attempts a WHERE a.bucket = u.b AND a.at >= $2) s
	), ins AS (
		INSERT INTO login_attempts (bucket, at)
		SELECT b, $4 FROM c WHERE NOT EXISTS (SELECT 1 FROM c WHERE n >= $3)
		RETURNING id
	)
	SELECT id, 0 FROM ins
	UNION ALL
	SELECT 0, coalesce(max(oldest), 0) FROM c WHERE n >= $3 HAVING count(*) > 0`

// reserveAttemptPG is ReserveAttempt's transaction on PostgreSQL in two
// statements whatever the number of buckets (a login's round trips to
// the database are most of its time): the buckets' locks, then the count
// and the insert in one statement, which, run after the locks were
// granted, sees every attempt committed by their earlier holders (each
// statement of a READ COMMITTED transaction, which every transaction of
// the store is, reads what was committed when it began).
func (s *Store) reserveAttemptPG(ctx context.Context, tx *sql.Tx, sorted []string, since int64, limit int) (ids []int64, retryAt int64, ok bool, err error) {
	if _, err := tx.ExecContext(ctx, lockAttempts, sorted); err != nil {
		return nil, 0, false, err
	}
	rows, err := tx.QueryContext(ctx, reserveAttempts, sorted, since, limit, s.nowMS())
	if err != nil {
		return nil, 0, false, err
	}
	defer rows.Close()
	ok = true
	for rows.Next() {
		var id, at int64
		if err := rows.Scan(&id, &at); err != nil {
			return nil, 0, false, err
		}
		if id == 0 {
			ok, retryAt = false, at
			continue
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, false, err
	}
	if !ok {
		ids = nil
	}
	return ids, retryAt, ok, nil
}

// ReleaseAttempts gives back attempts that succeeded: only failures count
// against a bucket.
func (s *Store) ReleaseAttempts(ctx context.Context, ids []int64) error {
	return s.releaseAttempts(ctx, s.w, ids)
}

// releaseAttempts is ReleaseAttempts on q (the pool, or a transaction).
func (s *Store) releaseAttempts(ctx context.Context, q execQuerier, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	query, args := idList(s.dialect, `DELETE FROM login_attempts WHERE id`, ids)
	_, err := q.ExecContext(ctx, query, args...)
	return err
}

// CreateAPIKey stores a key (its hash only).
func (s *Store) CreateAPIKey(ctx context.Context, k *wnms.APIKey) error {
	k.CreatedAt = s.nowMS()
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO api_keys (key_id, user_id, hash, created_at, cluster_parent) VALUES ($1, $2, $3, $4, $5)`,
			k.KeyID, k.UserID, k.Hash, k.CreatedAt, k.ClusterParent); err != nil {
			return err
		}
		if wnms.AuditFrom(ctx) == nil {
			return nil
		}
		a := *k
		if err := tx.QueryRowContext(ctx, `SELECT login_id, customer_id FROM users WHERE id = $1`, k.UserID).Scan(&a.LoginID, &a.CustomerID); err != nil {
			return err
		}
		auditChange(ctx, keyName(&a), nil, &a)
		return nil
	})
}

// keyName names an API key in the audit log: its user's loginId and its id.
func keyName(k *wnms.APIKey) string { return k.LoginID + " key " + k.KeyID }

const keyColumns = `k.key_id, k.user_id, u.login_id, u.customer_id, k.created_at, k.last_used_at, k.cluster_parent, k.hash
	FROM api_keys k JOIN users u ON u.id = k.user_id`

func scanKey(sc scanner) (*wnms.APIKey, error) {
	var k wnms.APIKey
	err := sc.Scan(&k.KeyID, &k.UserID, &k.LoginID, &k.CustomerID, &k.CreatedAt, &k.LastUsedAt, &k.ClusterParent, &k.Hash)
	return &k, err
}

// APIKey reads a key by id; an unknown id is RESOURCE_NOT_FOUND.
func (s *Store) APIKey(ctx context.Context, keyID string) (*wnms.APIKey, error) {
	k, err := scanKey(s.r.QueryRowContext(ctx, `SELECT `+keyColumns+` WHERE k.key_id = $1`, keyID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, wnms.NotFound("no key %q", keyID)
	}
	return k, err
}

// APIKeys lists the keys of a customer (0: all customers), oldest first.
func (s *Store) APIKeys(ctx context.Context, customerID int64) ([]wnms.APIKey, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+keyColumns+` WHERE $1 = 0 OR u.customer_id = $1 ORDER BY k.created_at, k.key_id`, customerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []wnms.APIKey{}
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *k)
	}
	return out, rows.Err()
}

// DeleteAPIKey revokes a key of a customer (0: any) and ends its sessions.
func (s *Store) DeleteAPIKey(ctx context.Context, customerID int64, keyID string) error {
	var userID int64
	err := s.r.QueryRowContext(ctx, `SELECT k.user_id FROM api_keys k JOIN users u ON u.id = k.user_id
		WHERE k.key_id = $1 AND ($2 = 0 OR u.customer_id = $2)`, keyID, customerID).Scan(&userID)
	if errors.Is(err, sql.ErrNoRows) {
		return wnms.NotFound("no key %q", keyID)
	}
	if err != nil {
		return err
	}
	return s.authTx(ctx, wnms.AuthEvent{User: userID}, func(tx *sql.Tx) error {
		if old, err := scanKey(tx.QueryRowContext(ctx, `SELECT `+keyColumns+` WHERE k.key_id = $1`, keyID)); err == nil {
			auditChange(ctx, keyName(old), old, nil)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM api_keys WHERE key_id = $1 AND user_id = $2`, keyID, userID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return wnms.NotFound("no key %q", keyID)
		}
		return nil
	})
}
