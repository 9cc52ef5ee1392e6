package store

import "context"

// ExecForTest runs a statement on the write connection. It exists for tests
// that must put the database in a state the API cannot (a schema from a
// newer binary, say).
func (s *Store) ExecForTest(ctx context.Context, query string, args ...any) error {
	_, err := s.w.ExecContext(ctx, query, args...)
	return err
}
