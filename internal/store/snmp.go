package store

import (
	"context"
	"strconv"

	"github.com/wnms/wnms/internal/wnms"
)

// CountUp adds one to a counting setting (1 when unset) and returns the
// new value, atomically: replicas starting together get distinct values.
func (s *Store) CountUp(ctx context.Context, name string) (int64, error) {
	var v string
	err := s.w.QueryRowContext(ctx, `INSERT INTO settings (name, value) VALUES ($1, '1')
		ON CONFLICT (name) DO UPDATE SET value = CAST(CAST(settings.value AS BIGINT) + 1 AS TEXT)
		RETURNING value`, name).Scan(&v)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// SNMPCounts are the figures of the SNMP agent's status objects, over
// every customer: APs up and down, and clients heard from at or after
// activeSince (Unix ms).
func (s *Store) SNMPCounts(ctx context.Context, activeSince int64) (wnms.SNMPCounts, error) {
	if err := s.settle(ctx); err != nil {
		return wnms.SNMPCounts{}, err
	}
	var c wnms.SNMPCounts
	err := s.r.QueryRowContext(ctx, `SELECT COALESCE(SUM(CASE WHEN active THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN active THEN 0 ELSE 1 END), 0) FROM aps`).Scan(&c.APsUp, &c.APsDown)
	if err != nil {
		return c, err
	}
	err = s.tr.QueryRowContext(ctx, `SELECT count(*) FROM clients WHERE last_seen >= $1`, activeSince).Scan(&c.Clients)
	return c, err
}

// SNMPPolicyCustomers lists the customers that have stored an SNMP
// policy (the others have the default, which sends no traps).
func (s *Store) SNMPPolicyCustomers(ctx context.Context) ([]int64, error) {
	return queryIDs(ctx, s.r, `SELECT customer_id FROM global_policies WHERE policy_type = $1 ORDER BY customer_id`,
		wnms.SNMPPolicyType)
}
