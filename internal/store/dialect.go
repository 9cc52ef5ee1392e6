package store

import (
	"context"
	"database/sql"
)

// What differs between the engines, in one place. Everything else in the
// store is one SQL text for both.

// lockKey takes a lock on an arbitrary key for the rest of the transaction,
// so that a check and the write it allows are one atomic step. On SQLite
// every write transaction already runs alone (one writer connection,
// BEGIN IMMEDIATE), so there is nothing to take; PostgreSQL takes a
// transaction-scoped advisory lock on the key's hash.
func lockKey(ctx context.Context, tx *sql.Tx, d Dialect, key string) error {
	if d != Postgres {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key)
	return err
}

// forUpdate is the clause that locks the rows of table (its name or alias
// in the query) that a transaction reads before it writes them back: FOR
// UPDATE OF on PostgreSQL; nothing on SQLite, where the write transaction
// holds the database.
func forUpdate(d Dialect, table string) string {
	if d == Postgres {
		return " FOR UPDATE OF " + table
	}
	return ""
}
