package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// The bulk path: many rows into one table in one transaction, at the speed
// each engine is best at. Ingest of telemetry goes through here.
//
// PostgreSQL: the rows are streamed with COPY into a temporary table that
// lives for the transaction, then moved with one INSERT … SELECT … ON
// CONFLICT DO NOTHING, so that rows already stored (a retried batch) are
// skipped rather than failing the COPY. SQLite: multi-row INSERTs of as
// many rows as fit in one statement's parameters, on the one writer
// connection. Either way the batch is one transaction: all of it is
// committed, or none.

// maxSQLiteParams is SQLite's limit on parameters in one statement.
const maxSQLiteParams = 32766

// bulkTx is a write transaction that can take rows in bulk.
type bulkTx struct {
	d   Dialect
	tx  *sql.Tx // SQLite
	pgx pgx.Tx  // PostgreSQL
}

// Exec runs one statement in the transaction.
func (b *bulkTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if b.d == Postgres {
		tag, err := b.pgx.Exec(ctx, query, args...)
		return tag.RowsAffected(), err
	}
	res, err := b.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Insert adds rows (each a value per column of cols) to table and returns
// how many were stored. onConflict is the statement's ON CONFLICT clause:
// "ON CONFLICT (customer_id, event_id) DO NOTHING" skips (and does not
// count) a row whose key is stored already, in the table or earlier in the
// batch; an ON CONFLICT … DO UPDATE upserts (then no key may repeat in one
// batch); "" makes a duplicate key fail the batch.
func (b *bulkTx) Insert(ctx context.Context, table string, cols []string, rows [][]any, onConflict string) (int64, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	for i, r := range rows {
		if len(r) != len(cols) {
			return 0, fmt.Errorf("bulk insert into %s: row %d has %d values for %d columns", table, i, len(r), len(cols))
		}
	}
	if onConflict != "" {
		onConflict = " " + onConflict
	}
	list := strings.Join(cols, ", ")
	if b.d == Postgres {
		tmp := "bulk_" + table
		if _, err := b.pgx.Exec(ctx, `CREATE TEMPORARY TABLE IF NOT EXISTS `+tmp+` (LIKE `+table+
			` INCLUDING DEFAULTS) ON COMMIT DROP`); err != nil {
			return 0, err
		}
		if _, err := b.pgx.CopyFrom(ctx, pgx.Identifier{tmp}, cols, pgx.CopyFromRows(rows)); err != nil {
			return 0, err
		}
		tag, err := b.pgx.Exec(ctx, `INSERT INTO `+table+` (`+list+`) SELECT `+list+` FROM `+tmp+onConflict)
		if err != nil {
			return 0, err
		}
		if _, err := b.pgx.Exec(ctx, `TRUNCATE `+tmp); err != nil {
			return 0, err
		}
		return tag.RowsAffected(), nil
	}
	per := maxSQLiteParams / len(cols)
	var n int64
	for start := 0; start < len(rows); start += per {
		chunk := rows[start:min(start+per, len(rows))]
		var q strings.Builder
		q.WriteString(`INSERT INTO ` + table + ` (` + list + `) VALUES `)
		args := make([]any, 0, len(chunk)*len(cols))
		for i, r := range chunk {
			if i > 0 {
				q.WriteByte(',')
			}
			q.WriteByte('(')
			for j := range r {
				if j > 0 {
					q.WriteByte(',')
				}
				q.WriteByte('?')
			}
			q.WriteByte(')')
			args = append(args, r...)
		}
		q.WriteString(onConflict)
		res, err := b.tx.ExecContext(ctx, q.String(), args...)
		if err != nil {
			return n, err
		}
		k, err := res.RowsAffected()
		if err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

// bulk runs f in one write transaction on db (s.w, or s.tw for
// telemetry) that can take rows in bulk, committing when f returns nil.
func (s *Store) bulk(ctx context.Context, db *sql.DB, f func(b *bulkTx) error) error {
	if s.dialect != Postgres {
		return txOn(ctx, db, func(tx *sql.Tx) error { return f(&bulkTx{d: s.dialect, tx: tx}) })
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return errors.New("bulk: the PostgreSQL connection is not a pgx connection")
		}
		return pgx.BeginFunc(ctx, c.Conn(), func(tx pgx.Tx) error {
			return f(&bulkTx{d: s.dialect, pgx: tx})
		})
	})
}
