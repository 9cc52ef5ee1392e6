package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// AcctSessionIdle is how long the counters of an accounting session
// without any update are kept: a NAS sends an Interim-Update every few
// minutes to an hour, so a session silent for a day ended without a Stop
// that reached wnms.
const AcctSessionIdle = 24 * time.Hour

// AcctCounters returns the octet counters last stored for the RADIUS
// accounting session key (decisions §21), and false when there are none.
func (s *Store) AcctCounters(ctx context.Context, key string) (in, out uint64, ok bool, err error) {
	var i, o int64
	err = s.r.QueryRowContext(ctx, `SELECT in_octets, out_octets FROM acct_sessions WHERE session_key = $1`, key).Scan(&i, &o)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, err
	}
	// Stored as the bits of a signed BIGINT: a counter above 2^63 comes
	// back the same.
	return uint64(i), uint64(o), true, nil
}

// SetAcctCounters stores the octet counters of the accounting session key.
func (s *Store) SetAcctCounters(ctx context.Context, key string, in, out uint64) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO acct_sessions (session_key, in_octets, out_octets, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (session_key) DO UPDATE SET in_octets = excluded.in_octets, out_octets = excluded.out_octets, updated_at = excluded.updated_at`,
		key, int64(in), int64(out), s.nowMS())
	return err
}

// EndAcctSession forgets the counters of the accounting session key.
func (s *Store) EndAcctSession(ctx context.Context, key string) error {
	_, err := s.w.ExecContext(ctx, `DELETE FROM acct_sessions WHERE session_key = $1`, key)
	return err
}
