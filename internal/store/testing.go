package store

import (
	"context"
	"database/sql"
	"strings"
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

// DumpForTest returns every value of every row of a table as text, one
// row a line: for tests that look for a value anywhere in a table (a
// secret that must never be stored there).
func (s *Store) DumpForTest(ctx context.Context, table string) (string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT * FROM `+table)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	vals := make([]sql.NullString, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return "", err
		}
		for _, v := range vals {
			b.WriteString(v.String)
			b.WriteByte('\t')
		}
		b.WriteByte('\n')
	}
	return b.String(), rows.Err()
}
