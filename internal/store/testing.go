package store

import (
	"context"
)

// ExecForTest runs a statement on the write connection. It exists for tests
// that must put the database in a state the API cannot (a schema from a
// newer binary, say).
func (s *Store) ExecForTest(ctx context.Context, query string, args ...any) error {
	_, err := s.w.ExecContext(ctx, query, args...)
	return err
}

// CountTelemetryForTest counts the stored client events and samples.
func (s *Store) CountTelemetryForTest(ctx context.Context) (events, samples int64, err error) {
	if err = s.tr.QueryRowContext(ctx, `SELECT COUNT(*) FROM client_events`).Scan(&events); err != nil {
		return 0, 0, err
	}
	err = s.tr.QueryRowContext(ctx, `SELECT COUNT(*) FROM client_stats`).Scan(&samples)
	return events, samples, err
}
