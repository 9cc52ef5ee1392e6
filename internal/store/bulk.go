package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The bulk path: many rows into one table in one transaction, at the speed
// each engine is best at. Ingest of telemetry goes through here.
//
// PostgreSQL: the rows are streamed with COPY, straight into the table
// when that can only fail on a row stored already (see copyInsert), else
// into the connection's temporary table like it and moved with one INSERT
// … SELECT … ON CONFLICT, which skips or updates the stored rows. SQLite:
// multi-row INSERTs of as
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

// Insert adds rows (each a value per column of cols) to table and returns
// how many were stored. onConflict is the statement's ON CONFLICT clause:
// "ON CONFLICT (customer_id, event_id, ts) DO NOTHING" skips (and does not
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
	return b.insert(ctx, table, cols, rows, onConflict)
}

// copyInsert is Insert on PostgreSQL: COPY into a temporary table like
// table, then one INSERT … SELECT from it, which applies onConflict. When
// there is no onConflict, or it only skips rows stored already (DO
// NOTHING), the rows are first copied straight into table, as fast as
// PostgreSQL takes rows: a batch with no such row (nearly every batch; a
// retry is the exception) is done then, and one with any goes back to its
// savepoint and takes the way through the temporary table.
//
// The temporary table is created once per connection and emptied by
// every commit (ON COMMIT DELETE ROWS), not created and dropped by each
// transaction: that added and removed its rows in the system catalogs
// every time (2.7 ms of the server's time, the costliest statement of an
// accounting round). Such a table lives as long as its connection, and
// PostgreSQL never advances its oldest transaction id (autovacuum does not
// visit temporary tables), which would hold back the database's freezing;
// the pool therefore ends every connection after pgConnLifetime. The
// table has the columns its table had when the connection first used it;
// a migration runs before the server's first write, so only a schema
// change under a running server would find it stale.
func (b *bulkTx) copyInsert(ctx context.Context, table string, cols []string, rows [][]any, onConflict string) (int64, error) {
	if onConflict == "" {
		return b.pgx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
	}
	if strings.HasSuffix(onConflict, " DO NOTHING") {
		if _, err := b.pgx.Exec(ctx, `SAVEPOINT bulk_copy`); err != nil {
			return 0, err
		}
		n, err := b.pgx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
		if err == nil {
			_, err = b.pgx.Exec(ctx, `RELEASE SAVEPOINT bulk_copy`)
			return n, err
		}
		if pgErr, ok := errors.AsType[*pgconn.PgError](err); !ok || pgErr.Code != "23505" {
			return 0, err
		}
		if _, err := b.pgx.Exec(ctx, `ROLLBACK TO SAVEPOINT bulk_copy`); err != nil {
			return 0, err
		}
	}
	list := strings.Join(cols, ", ")
	tmp := "bulk_" + table
	if _, err := b.pgx.Exec(ctx, `CREATE TEMPORARY TABLE IF NOT EXISTS `+tmp+` (LIKE `+table+
		` INCLUDING DEFAULTS) ON COMMIT DELETE ROWS`); err != nil {
		return 0, err
	}
	if _, err := b.pgx.CopyFrom(ctx, pgx.Identifier{tmp}, cols, pgx.CopyFromRows(rows)); err != nil {
		return 0, err
	}
	tag, err := b.pgx.Exec(ctx, `INSERT INTO `+table+` (`+list+`) SELECT `+list+` FROM `+tmp+onConflict)
	if err != nil {
		return 0, err
	}
	// Empty for a second batch of the table in this transaction; the
	// commit empties it anyway.
	if _, err := b.pgx.Exec(ctx, `DELETE FROM `+tmp); err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// orIgnoreTables are the tables whose bulk rows SQLite skips with INSERT
// OR IGNORE when they are stored already, rather than ON CONFLICT … DO
// NOTHING. The two skip the same rows here (each row fills every NOT NULL
// column, and these tables have no CHECK or foreign key: TestOrIgnoreTables
// keeps it so), but an INSERT that can fail on a constraint makes SQLite
// keep a statement journal of every page it changes, so that the
// statement alone can be undone: with OR IGNORE none can, and a batch of
// client events is written in about two thirds of the time.
var orIgnoreTables = map[string]bool{"client_events": true, "client_stats": true}

// valuesInsert is Insert on SQLite: multi-row INSERTs of as many rows as
// the statement's parameter limit allows.
func (b *bulkTx) valuesInsert(ctx context.Context, table string, cols []string, rows [][]any, onConflict string) (int64, error) {
	verb := "INSERT"
	if orIgnoreTables[table] && strings.HasSuffix(onConflict, " DO NOTHING") {
		verb, onConflict = "INSERT OR IGNORE", ""
	}
	list := strings.Join(cols, ", ")
	per := maxSQLiteParams / len(cols)
	var n int64
	for start := 0; start < len(rows); start += per {
		chunk := rows[start:min(start+per, len(rows))]
		var q strings.Builder
		q.WriteString(verb + ` INTO ` + table + ` (` + list + `) VALUES `)
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
