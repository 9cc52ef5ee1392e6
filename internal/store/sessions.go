package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/wnms/wnms/internal/wnms"
)

// CreateSession stores a new session.
func (s *Store) CreateSession(ctx context.Context, se *wnms.Session) error {
	var keyID any
	if se.KeyID != "" {
		keyID = se.KeyID
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO sessions (token_hash, user_id, key_id, client_identifier, timeout_s,
		created_at, expires_at, cluster_children, password_change) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		se.TokenHash, se.UserID, keyID, se.ClientIdentifier, se.Timeout, se.CreatedAt, se.ExpiresAt,
		se.ClusterChildren, se.PasswordChange)
	return err
}

// SessionUser reads a session and its user in one query. An unknown token
// is RESOURCE_NOT_FOUND; expiry is the caller's to judge.
func (s *Store) SessionUser(ctx context.Context, tokenHash string) (*wnms.Session, *wnms.User, error) {
	var se wnms.Session
	var keyID sql.NullString
	u, err := scanUser(s.r.QueryRowContext(ctx, `SELECT `+userColumns+`, se.key_id, se.client_identifier, se.timeout_s,
		se.created_at, se.expires_at, se.cluster_children, se.password_change`+userFrom+
		` JOIN sessions se ON se.user_id = u.id WHERE se.token_hash = $1`, tokenHash),
		&keyID, &se.ClientIdentifier, &se.Timeout, &se.CreatedAt, &se.ExpiresAt, &se.ClusterChildren, &se.PasswordChange)
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
// session is unknown or already expired.
func (s *Store) ExtendSession(ctx context.Context, tokenHash string, expiresAt int64) (bool, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE sessions SET expires_at = $1 WHERE token_hash = $2 AND expires_at > $3`,
		expiresAt, tokenHash, s.nowMS())
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	s.authChanged()
	return n > 0, nil
}

// DeleteSession ends a session.
func (s *Store) DeleteSession(ctx context.Context, tokenHash string) error {
	_, err := s.w.ExecContext(ctx, `DELETE FROM sessions WHERE token_hash = $1`, tokenHash)
	s.authChanged()
	return err
}

// ActiveSessions counts unexpired sessions.
func (s *Store) ActiveSessions(ctx context.Context) (int, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE expires_at > $1`, s.nowMS()).Scan(&n)
	return n, err
}

// PurgeExpired deletes expired sessions and login failures older than
// failuresBefore (ms).
func (s *Store) PurgeExpired(ctx context.Context, failuresBefore int64) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= $1`, s.nowMS()); err != nil {
		return err
	}
	_, err := s.w.ExecContext(ctx, `DELETE FROM login_failures WHERE at < $1`, failuresBefore)
	return err
}

// AddrFailure records a failed login from a source address and returns how
// many failures that address has since since (ms), this one included.
func (s *Store) AddrFailure(ctx context.Context, addr string, since int64) (int, error) {
	var n int
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO login_failures (addr, at) VALUES ($1, $2)`, addr, s.nowMS()); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM login_failures WHERE addr = $1 AND at >= $2`, addr, since).Scan(&n)
	})
	return n, err
}

// AddrFailures counts the failed logins of a source address since since
// (ms), and the time of the oldest of them.
func (s *Store) AddrFailures(ctx context.Context, addr string, since int64) (n int, oldest int64, err error) {
	var o sql.NullInt64
	err = s.r.QueryRowContext(ctx, `SELECT count(*), min(at) FROM login_failures WHERE addr = $1 AND at >= $2`,
		addr, since).Scan(&n, &o)
	return n, o.Int64, err
}

// CreateAPIKey stores a key (its hash only).
func (s *Store) CreateAPIKey(ctx context.Context, k *wnms.APIKey) error {
	k.CreatedAt = s.nowMS()
	_, err := s.w.ExecContext(ctx, `INSERT INTO api_keys (key_id, user_id, hash, created_at) VALUES ($1, $2, $3, $4)`,
		k.KeyID, k.UserID, k.Hash, k.CreatedAt)
	return err
}

const keyColumns = `k.key_id, k.user_id, u.login_id, u.customer_id, k.created_at, k.last_used_at, k.hash
	FROM api_keys k JOIN users u ON u.id = k.user_id`

func scanKey(sc scanner) (*wnms.APIKey, error) {
	var k wnms.APIKey
	err := sc.Scan(&k.KeyID, &k.UserID, &k.LoginID, &k.CustomerID, &k.CreatedAt, &k.LastUsedAt, &k.Hash)
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
	res, err := s.w.ExecContext(ctx, `DELETE FROM api_keys WHERE key_id = $1
		AND ($2 = 0 OR user_id IN (SELECT id FROM users WHERE customer_id = $2))`, keyID, customerID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return wnms.NotFound("no key %q", keyID)
	}
	s.authChanged()
	return nil
}

// TouchAPIKey records the last use of a key.
func (s *Store) TouchAPIKey(ctx context.Context, keyID string) error {
	_, err := s.w.ExecContext(ctx, `UPDATE api_keys SET last_used_at = $1 WHERE key_id = $2`, s.nowMS(), keyID)
	return err
}
