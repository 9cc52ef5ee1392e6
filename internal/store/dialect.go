package store

import (
	"context"
	"database/sql"
	"encoding/json"
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
	_, err := tx.ExecContext(ctx, advisoryLock, key)
	return err
}

// advisoryLock takes PostgreSQL's transaction-scoped advisory lock on the
// 64-bit hash of $1.
const advisoryLock = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`

// LockKey is lockKey in a bulk transaction.
func (b *bulkTx) LockKey(ctx context.Context, key string) error {
	if b.d != Postgres {
		return nil
	}
	_, err := b.Exec(ctx, advisoryLock, key)
	return err
}

// eventChannel is the channel of a client event, which only its stored
// body carries: json_extract on SQLite, the json operator on PostgreSQL.
func eventChannel(d Dialect) string {
	if d == Postgres {
		return `(body::json->>'channel')::int`
	}
	return `json_extract(body, '$.channel')`
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

// subtreeMatch is the condition "column lies at or below a location", with
// lo and hi the parameters that carry subtreeBounds of the location's
// path. It is a range over the path index on both engines, a plan that
// does not depend on the parameters' values (a LIKE 'prefix%' would need
// the pattern at planning time on PostgreSQL and a non-default collation
// on SQLite). On PostgreSQL the operators are the byte-wise ones that the
// text_pattern_ops index serves, whatever the database's collation.
func subtreeMatch(d Dialect, column, lo, hi string) string {
	if d == Postgres {
		return "(" + column + " ~>=~ " + lo + " AND " + column + " ~<~ " + hi + ")"
	}
	return "(" + column + " >= " + lo + " AND " + column + " < " + hi + ")"
}

// subtreeBounds are the bounds of the paths at or below path ("/0/5/"):
// from path itself up to, not including, path with its final '/' made
// '0' ("/0/50"), the next byte. Paths hold only digits, '-' and '/', and
// every path below "/0/5/" starts with it, so exactly those fall between.
func subtreeBounds(path string) (lo, hi string) {
	return path, path[:len(path)-1] + "0"
}

// idList completes query, which ends in a column, with the condition that
// the column is one of ids: "= ANY($1)" with one array parameter on
// PostgreSQL; on SQLite "IN (SELECT value FROM json_each($1))" with the
// ids as one JSON array. Either way the statement text is the same for any
// number of ids.
func idList(d Dialect, query string, ids []int64) (string, []any) {
	cond, arg := inList(d, "$1", ids)
	return query + cond, []any{arg}
}

// inList is the condition, to follow a column, that it is one of values,
// with param the placeholder of the one argument it returns (see idList).
func inList[T int64 | string](d Dialect, param string, values []T) (cond string, arg any) {
	if d == Postgres {
		return " = ANY(" + param + ")", values
	}
	b, _ := json.Marshal(values)
	return " IN (SELECT value FROM json_each(" + param + "))", string(b)
}

// keysIn is how a query that looks up many keys names them: from, to put
// before the table in FROM, and cond, the condition that column is one of
// values, with param the placeholder of the one argument it returns. On
// PostgreSQL the keys are a set joined to the table (from is
// "unnest($2) AS v(value), "), so that each is one index lookup whatever
// the table's statistics say: "column = ANY($2)" can be planned, on a
// table not analyzed yet, as a scan that tests each row against every key.
// On SQLite "column IN (SELECT value FROM json_each($2))", which SQLite
// turns into a lookup table, is the fast form.
func keysIn[T int64 | string](d Dialect, param, column string, values []T) (from, cond string, arg any) {
	if d == Postgres {
		cast := "::text[]"
		if _, ok := any(values).([]int64); ok {
			cast = "::bigint[]"
		}
		return "unnest(" + param + cast + ") AS v(value), ", column + " = v.value", values
	}
	b, _ := json.Marshal(values)
	return "", column + " IN (SELECT value FROM json_each(" + param + "))", string(b)
}
