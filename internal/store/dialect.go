package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/wnms/wnms/internal/wnms"
	"golang.org/x/sync/errgroup"
)

// What differs between the engines, in one place: every branch on the
// dialect is in this file, as a helper or a named property of the engine
// that the rest of the store asks (the choice of engine itself is Open's;
// bench_hooks.go, built for the benchmarks only, asks too and keeps its own
// table definition). Everything else in the
// store is one SQL text and one code path for both.

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

// LockEach takes PostgreSQL's transaction-scoped advisory lock on the
// hash of prefix followed by each of ids (in decimal), shared or
// exclusive, in the order of ids, in one statement. Callers sort ids, so
// that two transactions never wait for each other in a circle. One
// statement a key cost a round trip each: a batch whose events spread
// over many slots took thousands.
func (b *bulkTx) LockEach(ctx context.Context, prefix string, ids []int64, exclusive bool) error {
	if b.d != Postgres || len(ids) == 0 {
		return nil
	}
	lock := "pg_advisory_xact_lock_shared"
	if exclusive {
		lock = "pg_advisory_xact_lock"
	}
	_, err := b.Exec(ctx, `SELECT count(`+lock+`(hashtextextended($1 || o.id::text, 0)))
		FROM (SELECT u.id FROM unnest($2::bigint[]) WITH ORDINALITY AS u(id, n) ORDER BY u.n) AS o`, prefix, ids)
	return err
}

// lockClientsShared takes, in b's transaction, the lock of each customer
// of customers (in ascending order) on its clients shared, in one
// statement however many they are: writers that are not scoped updates
// do not wait for each other, only for (and keep out) a scoped update
// of the same customer. SQLite's one writer keeps every other write out
// by itself.
func lockClientsShared(ctx context.Context, b *bulkTx, customers []int64) error {
	if b.d != Postgres || len(customers) == 0 {
		return nil
	}
	// The key is clientsLock's.
	_, err := b.Exec(ctx, `SELECT pg_advisory_xact_lock_shared(hashtextextended('scoped-clients:' || c::text, 0))
		FROM unnest($1::bigint[]) AS u(c)`, customers)
	return err
}

// newUserID is the id column's value of a new user: one never given
// before, so that a deleted user's id never comes to name another. On
// PostgreSQL the column's sequence (DEFAULT) never hands an id out twice;
// SQLite would give the highest id plus one, the id of the user deleted
// last, so the id is taken above the highest ever given (id_high_water,
// which a trigger keeps; the one writer makes the read and the insert one
// step).
func newUserID(d Dialect) string {
	if d == Postgres {
		return "DEFAULT"
	}
	return "(SELECT id + 1 FROM id_high_water WHERE name = 'users')"
}

// eventChannel is the channel of a client event, which only its stored
// body carries: json_extract on SQLite, the json operator on PostgreSQL.
func eventChannel(d Dialect) string {
	if d == Postgres {
		return `(body::json->>'channel')::int`
	}
	return `json_extract(body, '$.channel')`
}

// eventBodyText is a text field of a client event's stored body (NULL
// when absent), as eventChannel reads the channel.
func eventBodyText(d Dialect, field string) string {
	if d == Postgres {
		return `(body::json->>'` + field + `')`
	}
	return `json_extract(body, '$.` + field + `')`
}

// keyLookup joins to each row of a query the row of table (as alias, its
// columns those listed) that cond finds by its key from the row's
// columns, or NULLs: a lookup in the key a row, streamed as the rows
// come. SQLite does exactly that with a LEFT JOIN. PostgreSQL would plan
// such a join as a merge with the other side read whole and sorted (one
// row a client of the slot looked up); a LATERAL subquery of at most one
// row keeps it to a lookup a row.
func keyLookup(d Dialect, table, alias, columns, cond string) string {
	if d == Postgres {
		return `LEFT JOIN LATERAL (SELECT ` + columns + ` FROM ` + table + ` ` + alias + ` WHERE ` + cond + ` LIMIT 1) AS ` + alias + ` ON TRUE`
	}
	return `LEFT JOIN ` + table + ` ` + alias + ` ON ` + cond
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
// values, with param the placeholder of the one argument it returns. The
// keys are a set joined to the table, driving the query, so that each is
// one index lookup whatever the engine guesses of the table: on
// PostgreSQL from is "unnest($2) AS v(value), " ("column = ANY($2)" can
// be planned, on a table not analyzed yet, as a scan that tests each row
// against every key); on SQLite "json_each($2) AS v CROSS JOIN " (CROSS
// JOIN keeps the keys the outer loop: with "column IN (SELECT value FROM
// json_each($2))" and another condition on an indexed column, such as the
// customer, SQLite would rather walk that index, every client of the
// customer for each lookup of a few).
func keysIn[T int64 | string](d Dialect, param, column string, values []T) (from, cond string, arg any) {
	if d == Postgres {
		cast := "::text[]"
		if _, ok := any(values).([]int64); ok {
			cast = "::bigint[]"
		}
		return "unnest(" + param + cast + ") AS v(value), ", column + " = v.value", values
	}
	b, _ := json.Marshal(values)
	return "json_each(" + param + ") AS v CROSS JOIN ", column + " = v.value", string(b)
}

// AuthRevision returns a number that changes whenever cached sessions may be
// stale as a whole. ok is false when no cache may be trusted: on PostgreSQL
// while the notification connection is down, and on a system without shared
// memory maps.
func (s *Store) AuthRevision() (rev uint64, ok bool) {
	if s.dialect == Postgres {
		return s.events.gen.Load(), s.events.up.Load()
	}
	if s.rev == nil {
		return 0, false
	}
	return s.rev.load(), true
}

// notifyAuth sends ev to other replicas from inside the transaction that
// makes the change (PostgreSQL; SQLite shares its revision instead).
func (s *Store) notifyAuth(ctx context.Context, tx *sql.Tx, ev wnms.AuthEvent) error {
	if s.dialect != Postgres {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_notify($1, $2)`, s.events.channel, encodeAuthEvent(ev))
	return err
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

// QueryInt runs a statement in the transaction that answers one integer,
// such as an INSERT … RETURNING id.
func (b *bulkTx) QueryInt(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	if b.d == Postgres {
		err := b.pgx.QueryRow(ctx, query, args...).Scan(&n)
		return n, err
	}
	err := b.tx.QueryRowContext(ctx, query, args...).Scan(&n)
	return n, err
}

// Query runs a query in the transaction and calls row for each row it
// answers, with the row's Scan.
func (b *bulkTx) Query(ctx context.Context, query string, args []any, row func(scan func(dest ...any) error) error) error {
	if b.d == Postgres {
		rows, err := b.pgx.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		return eachRow(rows, row)
	}
	rows, err := b.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	return eachRow(rows, row)
}

// eachRow calls row for each row of rows (pgx's or database/sql's).
func eachRow(rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}, row func(scan func(dest ...any) error) error) error {
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// groupsCommits tells whether concurrent ingest writes share transactions
// (group.go). SQLite has one writer, so sharing its commits costs
// nothing; PostgreSQL writes concurrent transactions on several cores at
// once, which sharing would serialize.
func groupsCommits(d Dialect) bool { return d != Postgres }

// preparesOnWriter tells whether a change's statements are prepared once
// on the writer connection (audit.go, policies.go): SQLite runs every
// write on one connection, one at a time, so a statement prepared there
// serves every change; PostgreSQL's changes run on any of the pool's
// connections at once.
func preparesOnWriter(d Dialect) bool { return d == SQLite }

// sequencesEvents tells whether events go through an inbox that a
// sequencer moves to the outbox in commit order (outbox.go): PostgreSQL
// commits concurrent transactions in any order, so an id taken in a
// transaction may commit after a higher one; SQLite's one writer commits
// in id order and writes the outbox directly.
func sequencesEvents(d Dialect) bool { return d == Postgres }

// sharedByReplicas tells whether other servers may write the same store
// at once: PostgreSQL's replicas do (the ingest journal is swept for
// their orphans, store.go and derived.go); a SQLite file has one server.
func sharedByReplicas(d Dialect) bool { return d == Postgres }

// writesArrays tells whether a write of many rows is one statement
// binding arrays (ANY($1::bigint[]), unnest), PostgreSQL's way to save
// round trips (sessions.go, webhooks.go); SQLite, in process, writes row
// by row.
func writesArrays(d Dialect) bool { return d == Postgres }

// skipLocked is the clause a pass over rows that other writers may hold
// adds to its SELECT: PostgreSQL takes the rows with lock (UPDATE, NO KEY
// UPDATE) and skips those held; SQLite's one writer holds none.
func skipLocked(d Dialect, lock string) string {
	if d != Postgres {
		return ""
	}
	return " FOR " + lock + " SKIP LOCKED"
}

// partitionsByDay tells whether the event tables are kept in day
// partitions whose old days are dropped whole (partitions.go):
// PostgreSQL's; SQLite deletes old rows in batches.
func partitionsByDay(d Dialect) bool { return d == Postgres }

// copiesIn tells whether many rows go in with COPY (bulkTx.insert):
// PostgreSQL's; SQLite takes multi-row INSERTs.
func copiesIn(d Dialect) bool { return d == Postgres }

// backsUpFiles tells whether the store copies itself to files (Backup,
// VACUUM INTO): SQLite's; PostgreSQL is backed up with pg_dump.
func backsUpFiles(d Dialect) bool { return d == SQLite }

// flushEvery is how long derived state written behind ingest waits in
// memory at most (derived.go): the longer, the more updates of one client
// coalesce into one write. Every read on the server that holds it flushes
// it first, so only other servers sharing the store can see it late: on
// SQLite there is no other server, and it waits 10 s; PostgreSQL
// replicas see each other's within a second.
func flushEvery(d Dialect) time.Duration {
	if d == Postgres {
		return time.Second
	}
	return 10 * time.Second
}

// mainFile is which file of a migration holds the main database's SQL
// (migrations.go); on SQLite telemetry has a file of its own.
func mainFile(d Dialect) string {
	if d == Postgres {
		return pgFile
	}
	return sqliteFile
}

// lockMigrations makes migrating replicas take turns: PostgreSQL locks the
// migrations table for the transaction; on SQLite the write transaction
// already runs alone.
func lockMigrations(ctx context.Context, tx *sql.Tx, d Dialect) error {
	if d != Postgres {
		return nil
	}
	_, err := tx.ExecContext(ctx, `LOCK TABLE schema_migrations IN EXCLUSIVE MODE`)
	return err
}

// checkSchemaExists refuses (ErrNoStore) a PostgreSQL database without
// wnms's schema; the SQLite file's absence is checked before opening.
func (s *Store) checkSchemaExists(ctx context.Context) error {
	if s.dialect != Postgres {
		return nil
	}
	var n int
	err := s.w.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations' AND table_schema = current_schema()`).Scan(&n)
	if err == nil && n == 0 {
		err = fmt.Errorf("%w: the database holds no wnms schema (start wnms serve --database-url once to create it)", ErrNoStore)
	}
	return err
}

// startNotifications starts PostgreSQL's listener of other replicas'
// session changes; SQLite replicas share a revision in a file instead.
func (s *Store) startNotifications(ctx context.Context, databaseURL string) error {
	if s.dialect != Postgres {
		return nil
	}
	return s.startAuthListener(ctx, databaseURL)
}

// insert is Insert's engine part: COPY on PostgreSQL, multi-row INSERTs on
// SQLite.
func (b *bulkTx) insert(ctx context.Context, table string, cols []string, rows [][]any, onConflict string) (int64, error) {
	if copiesIn(b.d) {
		return b.copyInsert(ctx, table, cols, rows, onConflict)
	}
	return b.valuesInsert(ctx, table, cols, rows, onConflict)
}

// MinMaxConns is the smallest PostgreSQL pool Config.MaxConns may ask
// for. With one connection, every request would wait behind whatever
// the server does in the background (the ingest journal's sweep, webhook
// deliveries, the baseline evaluation, retention) for as long as that
// runs.
const MinMaxConns = 2

// MaxMaxConns is the largest pool Config.MaxConns may ask for: the pool is
// opened whole at start, and PostgreSQL gives each connection a process.
const MaxMaxConns = 1000

// pgConnLifetime ends each PostgreSQL connection after this long, with
// the temporary tables of the bulk path it holds (copyInsert): their
// oldest transaction id then never gets older than half an hour of
// transactions, far from the hundreds of millions at which PostgreSQL
// must freeze a table.
const pgConnLifetime = 30 * time.Minute

// WarmPool opens every connection of the PostgreSQL pool (its
// Config.MaxConns) before the
// server serves, each with the tables of a call's first queries opened
// once, so that the first second after start runs as fast as the rest: a
// new connection costs a TCP connect, an authentication and a fresh server
// process whose catalog caches are empty, which the first requests would
// otherwise pay while they queue for it. SQLite's connections are opened
// with the store. The server calls it once, before it serves.
func (s *Store) WarmPool(ctx context.Context) error {
	if s.dialect != Postgres {
		return nil
	}
	conns := make([]*sql.Conn, s.poolSize)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close() // back to the pool, open
			}
		}
	}()
	var g errgroup.Group
	for i := range conns {
		g.Go(func() error {
			c, err := s.r.Conn(ctx)
			if err != nil {
				return err
			}
			conns[i] = c
			_, err = c.ExecContext(ctx, `SELECT 1 FROM sessions, users, api_keys, customers, locations, login_attempts LIMIT 0`)
			return err
		})
	}
	return g.Wait()
}

// finishBatch writes webhook attempts' outcomes, each row (id, state,
// attempts, next_at, last_status, last_error, last_latency_ms,
// updated_at); a delivery no longer pending (delivered by another server
// after its lease) is left as it is. PostgreSQL takes the batch in one
// statement (one round trip, a join on the ids, the values as arrays);
// SQLite, in process, runs one prepared statement a row.
func (s *Store) finishBatch(ctx context.Context, tx *sql.Tx, rows [][]any) error {
	if s.dialect != Postgres {
		st, err := tx.PrepareContext(ctx, `UPDATE webhook_deliveries SET state = $2, attempts = $3, next_at = $4, claim_until = 0,
			last_status = $5, last_error = $6, last_latency_ms = $7, updated_at = $8 WHERE id = $1 AND state = $9`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, r := range rows {
			if _, err := st.ExecContext(ctx, append(r, wnms.DeliveryPending)...); err != nil {
				return err
			}
		}
		return nil
	}
	cols, err := pgColumns(rows, "bigint", "text", "bigint", "bigint", "bigint", "text", "bigint", "bigint")
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE webhook_deliveries d SET state = v.state, attempts = v.attempts, next_at = v.next_at,
		claim_until = 0, last_status = v.last_status, last_error = v.last_error, last_latency_ms = v.last_latency_ms,
		updated_at = v.updated_at
		FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::bigint[], $8::bigint[])
		AS v (id, state, attempts, next_at, last_status, last_error, last_latency_ms, updated_at)
		WHERE d.id = v.id AND d.state = $9`, append(cols, wnms.DeliveryPending)...)
	return err
}

// pgColumns turns rows of values into one array a column, for
// PostgreSQL's unnest($1::bigint[], $2::text[], ...): a batch in one
// statement of as many parameters as columns, whatever its rows, instead
// of a parameter a value (which PostgreSQL parses and plans anew for each
// batch size, and which costs both sides a bind a value). Each column is
// "bigint" (int, int32 or int64 values) or "text" (strings).
func pgColumns(rows [][]any, types ...string) ([]any, error) {
	out := make([]any, len(types))
	for c, t := range types {
		switch t {
		case "bigint":
			col := make([]int64, len(rows))
			for i, r := range rows {
				switch v := r[c].(type) {
				case int64:
					col[i] = v
				case int:
					col[i] = int64(v)
				case int32:
					col[i] = int64(v)
				default:
					return nil, fmt.Errorf("column %d row %d: %T is not an integer", c, i, r[c])
				}
			}
			out[c] = col
		case "text":
			col := make([]string, len(rows))
			for i, r := range rows {
				v, ok := r[c].(string)
				if !ok {
					return nil, fmt.Errorf("column %d row %d: %T is not a string", c, i, r[c])
				}
				col[i] = v
			}
			out[c] = col
		default:
			return nil, fmt.Errorf("column %d: no arrays of %s", c, t)
		}
	}
	return out, nil
}

// queueBatch inserts a webhook's deliveries of evs, those in claimed
// claimed until until, and returns the ids of the rows it inserted by
// event id (an event queued before is skipped). PostgreSQL takes the batch
// in one statement (one round trip); SQLite, in process, runs one prepared
// statement a row, which costs it less than parsing one long statement.
func (s *Store) queueBatch(ctx context.Context, tx *sql.Tx, webhookID int64, evs []*wnms.Event, claimed map[int64]*wnms.Event, now, until int64) (map[int64]int64, error) {
	out := make(map[int64]int64, len(evs))
	if s.dialect != Postgres {
		st, err := tx.PrepareContext(ctx, `INSERT INTO webhook_deliveries (webhook_id, event_id, kind, event_ts, body, state,
			next_at, claim_until, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $7)
			ON CONFLICT (webhook_id, event_id) DO NOTHING RETURNING id`)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		for _, e := range evs {
			var claim, id int64
			if claimed[e.ID] != nil {
				claim = until
			}
			err := st.QueryRowContext(ctx, webhookID, e.ID, e.Kind, e.Timestamp, string(e.JSON), wnms.DeliveryPending, now, claim).Scan(&id)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return nil, err
			}
			out[e.ID] = id
		}
		return out, nil
	}
	var b strings.Builder
	args := make([]any, 0, len(evs)*8)
	b.WriteString(`INSERT INTO webhook_deliveries (webhook_id, event_id, kind, event_ts, body, state, next_at, claim_until, updated_at) VALUES `)
	for i, e := range evs {
		if i > 0 {
			b.WriteString(", ")
		}
		var claim int64
		if claimed[e.ID] != nil {
			claim = until
		}
		n := len(args)
		fmt.Fprintf(&b, "($%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7, n+8, n+7)
		args = append(args, webhookID, e.ID, e.Kind, e.Timestamp, string(e.JSON), wnms.DeliveryPending, now, claim)
	}
	b.WriteString(` ON CONFLICT (webhook_id, event_id) DO NOTHING RETURNING id, event_id`)
	rows, err := tx.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, eventID int64
		if err := rows.Scan(&id, &eventID); err != nil {
			return nil, err
		}
		out[eventID] = id
	}
	return out, rows.Err()
}

// greatest is the function that answers the larger of its arguments:
// GREATEST on PostgreSQL, the scalar max on SQLite.
func greatest(d Dialect) string {
	if d == Postgres {
		return "GREATEST"
	}
	return "max"
}

// recordBatch inserts the rows of deliveries that were sent with no row,
// each (webhook_id, event_id, kind, event_ts, body, state, attempts,
// next_at, last_status, last_error, last_latency_ms, updated_at); a
// delivery whose event has a row already, or whose webhook is gone, is
// skipped. PostgreSQL takes the batch in one statement, the values as
// arrays; SQLite runs one prepared statement a row.
func (s *Store) recordBatch(ctx context.Context, tx *sql.Tx, rows [][]any) error {
	const cols = `webhook_id, event_id, kind, event_ts, body, state, attempts, next_at, last_status, last_error,
		last_latency_ms, updated_at`
	if s.dialect != Postgres {
		st, err := tx.PrepareContext(ctx, `INSERT INTO webhook_deliveries (`+cols+`)
			SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = $1)
			ON CONFLICT (webhook_id, event_id) DO NOTHING`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, r := range rows {
			if _, err := st.ExecContext(ctx, r...); err != nil {
				return err
			}
		}
		return nil
	}
	arrays, err := pgColumns(rows, "bigint", "bigint", "text", "bigint", "text", "text", "bigint", "bigint", "bigint", "text",
		"bigint", "bigint")
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (`+cols+`) SELECT v.*
		FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::bigint[], $8::bigint[],
			$9::bigint[], $10::text[], $11::bigint[], $12::bigint[]) AS v (`+cols+`)
		WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.id = v.webhook_id)
		ON CONFLICT (webhook_id, event_id) DO NOTHING`, arrays...)
	return err
}
