package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// queryIDs runs a query of one integer column and returns its values.
func queryIDs(ctx context.Context, db querier, query string, args ...any) ([]int64, error) {
	return queryColumn[int64](ctx, db, query, args...)
}

// queryJSON runs a query of one column of JSON text and returns the
// documents as they are stored.
func queryJSON(ctx context.Context, q querier, query string, args ...any) ([]json.RawMessage, error) {
	docs, err := queryColumn[jsonText](ctx, q, query, args...)
	out := make([]json.RawMessage, len(docs))
	for i, d := range docs {
		out[i] = json.RawMessage(d)
	}
	return out, err
}

// jsonText scans a JSON document stored as text (SQLite answers a string,
// PostgreSQL bytes).
type jsonText []byte

func (j *jsonText) Scan(v any) error {
	switch x := v.(type) {
	case string:
		*j = jsonText(x)
	case []byte:
		*j = bytes.Clone(x)
	default:
		return fmt.Errorf("a JSON document is text, not %T", v)
	}
	return nil
}

// queryColumn runs a query of one column and returns its values, in
// order (an empty slice, not nil, when there are none).
func queryColumn[T any](ctx context.Context, q querier, query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// snapshotPage reads a page of rows and how many rows match in all from
// one snapshot (a read-only, repeatable-read transaction on db), so that
// the count and the page agree: total from countQuery (-1 when it is
// ""), the page from pageQuery, each row made by scan (an empty slice,
// not nil, when there are none).
func snapshotPage[T any](ctx context.Context, db *sql.DB, countQuery string, countArgs []any, pageQuery string, pageArgs []any,
	scan func(scanner) (T, error)) ([]T, int, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	total := -1
	if countQuery != "" {
		if err := tx.QueryRowContext(ctx, countQuery, countArgs...).Scan(&total); err != nil {
			return nil, 0, err
		}
	}
	rows, err := tx.QueryContext(ctx, pageQuery, pageArgs...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	return out, total, tx.Commit()
}
