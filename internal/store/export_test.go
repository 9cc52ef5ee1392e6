package store

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// ExecForTest runs a statement on the write connection, for the store's
// own tests that must put the database in a state the API cannot (a
// schema from a newer binary, say). Tests of other packages change the
// database through a connection of their own (storetest.DB).
func (s *Store) ExecForTest(ctx context.Context, query string, args ...any) error {
	_, err := s.w.ExecContext(ctx, query, args...)
	return err
}

// SubtreePlanForTest returns the engine's query plan for the subtree match
// that every subtree query uses (here over the locations table, below
// path). On PostgreSQL the plan is the generic one, made without the
// parameters' values, as a prepared statement gets once its plans are
// cached, and with sequential scans priced out so that a table of a few
// rows still shows whether the index can serve the match.
func (s *Store) SubtreePlanForTest(ctx context.Context, path string) (string, error) {
	lo, hi := subtreeBounds(path)
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	var plan []string
	if s.dialect == Postgres {
		for _, q := range []string{`SET plan_cache_mode = force_generic_plan`, `SET enable_seqscan = off`,
			`PREPARE subtree_plan AS SELECT id FROM locations WHERE ` + subtreeMatch(s.dialect, "path", "$1", "$2")} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return "", err
			}
		}
		defer conn.ExecContext(context.Background(), `DEALLOCATE subtree_plan; RESET plan_cache_mode; RESET enable_seqscan`)
		rows, err := conn.QueryContext(ctx, `EXPLAIN EXECUTE subtree_plan('`+lo+`', '`+hi+`')`)
		if err != nil {
			return "", err
		}
		defer rows.Close()
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return "", err
			}
			plan = append(plan, line)
		}
		return strings.Join(plan, "\n"), rows.Err()
	}
	rows, err := conn.QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT id FROM locations WHERE `+
		subtreeMatch(s.dialect, "path", "$1", "$2"), lo, hi)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "", err
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "\n"), rows.Err()
}

// BulkInsertForTest inserts batches of rows into table through the bulk
// path (bulk.go), all in one transaction, and returns how many rows each
// batch stored. conflict is a conflict target, whose rows stored already
// are skipped, or a whole ON CONFLICT clause.
func (s *Store) BulkInsertForTest(ctx context.Context, table string, cols []string, conflict string, batches ...[][]any) ([]int64, error) {
	var out []int64
	if conflict != "" && !strings.HasPrefix(conflict, "ON CONFLICT") {
		conflict = "ON CONFLICT " + conflict + " DO NOTHING"
	}
	err := s.bulk(ctx, s.w, func(b *bulkTx) error {
		for _, rows := range batches {
			n, err := b.Insert(ctx, table, cols, rows, conflict)
			if err != nil {
				return err
			}
			out = append(out, n)
		}
		return nil
	})
	return out, err
}

// QueryRowForTest reads one row on the read pool.
func (s *Store) QueryRowForTest(ctx context.Context, query string, args ...any) *sql.Row {
	return s.r.QueryRowContext(ctx, query, args...)
}

// EventPlanForTest returns the engine's plan of the client event page
// query for q (PostgreSQL told to avoid sequential scans, which it would
// take on a test's small table).
func (s *Store) EventPlanForTest(ctx context.Context, q wnms.EventQuery) (string, error) {
	cond, args := s.eventFilter(q)
	return s.planForTest(ctx, `SELECT body FROM client_events WHERE `+cond+` ORDER BY ts DESC, id DESC LIMIT 100`, args...)
}

// ClientLocationsPlanForTest returns the engine's plan of ClientLocations'
// query.
func (s *Store) ClientLocationsPlanForTest(ctx context.Context, boxes []int64) (string, error) {
	query, arg := clientLocationsQuery(s.dialect, boxes)
	return s.planForTest(ctx, query, int64(1), arg)
}

// planForTest is the engine's plan of a telemetry query (PostgreSQL told
// to avoid sequential scans, which it would take on a test's small table).
func (s *Store) planForTest(ctx context.Context, query string, args ...any) (string, error) {
	conn, err := s.tr.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if s.dialect == Postgres {
		if _, err := conn.ExecContext(ctx, `SET enable_seqscan = off`); err != nil {
			return "", err
		}
		defer conn.ExecContext(context.Background(), `RESET enable_seqscan`)
		query = `EXPLAIN ` + query
	} else {
		query = `EXPLAIN QUERY PLAN ` + query
	}
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var plan []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		plan = append(plan, fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	return s.parentIndexNames(ctx, strings.Join(plan, "\n"))
}

// parentIndexNames names, in a PostgreSQL plan, each day partition's index
// after the partitioned table's index it belongs to (a partition's indexes
// have generated names), so a plan reads the same on both engines.
func (s *Store) parentIndexNames(ctx context.Context, plan string) (string, error) {
	if s.dialect != Postgres {
		return plan, nil
	}
	rows, err := s.tr.QueryContext(ctx, `SELECT c.relname, p.relname FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'i' AND n.nspname = current_schema() ORDER BY length(c.relname) DESC`)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	for rows.Next() {
		var child, parent string
		if err := rows.Scan(&child, &parent); err != nil {
			return "", err
		}
		plan = strings.ReplaceAll(plan, child, parent)
	}
	return plan, rows.Err()
}

// SlotQueryPlansForTest returns the engine's plans of the queries that
// read one slot's clients (its attempts, a page of its failing clients in
// band 5 GHz on SSID corp, and its sample sums) and of the statements
// that recompute one client's rows of a slot from its events and samples.
func (s *Store) SlotQueryPlansForTest(ctx context.Context) (attempts, failing, samples, recompute string, err error) {
	slot := s.Now().UnixMilli() / 900000 * 900000 // a slot of today, whose partitions exist
	if attempts, err = s.planForTest(ctx, slotAttemptsQuery, 1, slot); err != nil {
		return
	}
	q, extra := slotFailingQuery(s.dialect, []int64{1, 2, 3}, wnms.Band5GHz, "corp", 100)
	if failing, err = s.planForTest(ctx, q, append([]any{int64(1), slot}, extra...)...); err != nil {
		return
	}
	if samples, err = s.planForTest(ctx, slotSumsQuery(s.dialect), 1, slot, slot-wnms.ChangeSpan.Milliseconds()); err != nil {
		return
	}
	for _, q := range []string{recomputeAttempts(s.dialect), recomputeSamples(s.dialect)} {
		var plan string
		q = q[strings.Index(q, "SELECT"):] // the rows it inserts
		if plan, err = s.planForTest(ctx, q, 1, slot, slot+900000, "02:00:00:00:00:01"); err != nil {
			return
		}
		recompute += plan + "\n"
	}
	return
}

// EventReadPlansForTest returns the engine's plans of the reads of client
// events other than the slot's (SlotQueryPlansForTest), by name, with the
// planner's statistics of the stored events brought up to date: a page of
// a client's events with its count, a client's connection logs of each
// kind, the associations export, the footfall counts, the eventIds a
// restart looks for, and (on SQLite) the retention purge's selection.
func (s *Store) EventReadPlansForTest(ctx context.Context) (map[string]string, error) {
	day := s.Now().UnixMilli() / dayMs * dayMs // a day whose partitions exist
	if _, err := s.tw.ExecContext(ctx, `ANALYZE client_events`); err != nil {
		return nil, err
	}
	type read struct {
		name, query string
		args        []any
	}
	var reads []read
	page := wnms.EventQuery{CustomerID: 1, MAC: "AA:BB:CC:DD:EE:FF", From: -1, To: -1, Limit: 50}
	cond, args := s.eventFilter(page)
	reads = append(reads, read{"event page", `SELECT body FROM client_events WHERE ` + cond + ` ORDER BY ts DESC, id DESC LIMIT 50`, args},
		read{"event count", `SELECT count(*) FROM client_events WHERE ` + cond, args})
	for _, typ := range []string{wnms.Success, wnms.Failure} {
		q := page
		q.Types, q.Dot11ACOnly = []string{typ}, true
		cond, args := s.eventFilter(q)
		reads = append(reads, read{"connection logs " + typ, `SELECT body FROM client_events WHERE ` + cond + ` ORDER BY ts DESC, id DESC LIMIT 100`, args})
	}
	q, args := s.associationsQuery(1, []int64{1, 2}, day, day+3_600_000, 1000)
	reads = append(reads, read{"associations", q, args})
	q, args = s.dailyClientsQuery(1, []int64{1, 2}, day, day+dayMs, 0)
	reads = append(reads, read{"daily clients", q, args})
	q, args = s.distinctClientsQuery(1, nil, day, day+dayMs)
	reads = append(reads, read{"distinct clients", q, args})
	reads = append(reads, read{"stored event ids", storedEventIDsQuery(2), []any{int64(1), day, "a", "b"}})
	if s.dialect == SQLite {
		reads = append(reads, read{"purge", `SELECT id FROM client_events WHERE ts < $1 LIMIT 1000`, []any{day}})
	}
	out := map[string]string{}
	for _, r := range reads {
		plan, err := s.planForTest(ctx, r.query, r.args...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		out[r.name] = plan
	}
	return out, nil
}

// EventIndexesForTest lists the indexes of client_events (on PostgreSQL
// those of the partitioned table, and its primary key's) by name, each
// with its definition as the engine states it.
func (s *Store) EventIndexesForTest(ctx context.Context) (map[string]string, error) {
	query := `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'client_events' AND sql IS NOT NULL`
	if s.dialect == Postgres {
		query = `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'client_events'`
	}
	rows, err := s.tr.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			return nil, err
		}
		out[name] = def
	}
	return out, rows.Err()
}

// MigrateToForTest applies the migrations up to version, as a binary of
// that schema would have.
func (s *Store) MigrateToForTest(ctx context.Context, version int) error {
	for _, set := range s.migrationSets() {
		if _, err := set.db.ExecContext(ctx, createSchemaMigrations); err != nil {
			return err
		}
		for _, m := range loadMigrations(set.file) {
			if m.version > version {
				break
			}
			if _, err := s.applyMigration(ctx, set.db, m, latestVersion()); err != nil {
				return err
			}
		}
	}
	return nil
}

// MigrateLegacyForTest makes the store what a binary of the numbering
// before the one list left: each database's tree (legacyMigrations)
// applied in that tree's order, each migration in a transaction with its
// row of the old version and file name, through the changes numbered up
// to through in the list.
func (s *Store) MigrateLegacyForTest(ctx context.Context, through int) error {
	for _, set := range s.migrationSets() {
		if _, err := set.db.ExecContext(ctx, createSchemaMigrations); err != nil {
			return err
		}
		var tree []legacyMigration
		for _, m := range legacyTrees()[set.file] {
			if m.change <= through {
				tree = append(tree, m)
			}
		}
		sort.Slice(tree, func(i, j int) bool { return tree[i].version < tree[j].version })
		for _, m := range tree {
			err := txOn(ctx, set.db, func(tx *sql.Tx) error {
				if _, err := tx.ExecContext(ctx, schemaChanges()[m.change-firstVersion].sql[set.file]); err != nil {
					return fmt.Errorf("%s/%s: %w", set.file, m.name, err)
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
					m.version, m.name, int64(1700000000000))
				return err
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// LegacyLatestForTest is, per database of the store (its main database
// first), the highest version a binary of the numbering before the one
// list knew: what such a binary compares the database's version with.
func (s *Store) LegacyLatestForTest() []int {
	var out []int
	for _, set := range s.migrationSets() {
		out = append(out, legacyLatest(set.file))
	}
	return out
}

// SchemaForTest describes the schema of each database of the store, one
// line per column, index, constraint, trigger or function, and lists its
// schema_migrations (version and name). PostgreSQL's day partitions,
// which depend on the day the store was opened, are left out.
func (s *Store) SchemaForTest(ctx context.Context) ([]string, error) {
	queries := []string{
		`SELECT type || ' ' || name || ' ON ' || tbl_name || ': ' || coalesce(sql, '') FROM sqlite_master
			WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`,
	}
	if s.dialect == Postgres {
		const own = `relnamespace = current_schema()::regnamespace AND NOT relispartition`
		queries = []string{
			`SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) ||
				CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END || coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '')
			FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
			LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
			WHERE c.` + own + ` AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
			ORDER BY c.relname, a.attnum`,
			`SELECT 'index ' || replace(pg_get_indexdef(i.indexrelid), current_schema() || '.', '')
			FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.` + own + ` ORDER BY c.relname`,
			`SELECT 'constraint ' || t.relname || '.' || k.conname || ' ' || pg_get_constraintdef(k.oid)
			FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid WHERE t.` + own + ` ORDER BY t.relname, k.conname`,
			`SELECT 'trigger ' || replace(pg_get_triggerdef(g.oid), current_schema() || '.', '')
			FROM pg_trigger g JOIN pg_class t ON t.oid = g.tgrelid WHERE t.` + own + ` AND NOT g.tgisinternal ORDER BY 1`,
			`SELECT 'function ' || replace(pg_get_functiondef(p.oid), current_schema() || '.', '')
			FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace ORDER BY 1`,
			`SELECT 'sequence ' || relname FROM pg_class WHERE relkind = 'S' AND ` + own + ` ORDER BY 1`,
		}
	}
	queries = append(queries, `SELECT 'migration ' || version || ' ' || name FROM schema_migrations ORDER BY version`)
	var out []string
	for _, set := range s.migrationSets() {
		out = append(out, "database "+set.file)
		for _, q := range queries {
			lines, err := queryColumn[string](ctx, set.db, q)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", q, err)
			}
			out = append(out, lines...)
		}
	}
	return out, nil
}

// PartitionDaysForTest lists, per partitioned table, the days (UTC, as
// YYYY-MM-DD) that have a partition.
func (s *Store) PartitionDaysForTest(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	for _, t := range partitionedTables {
		names, err := queryColumn[string](ctx, s.r, `SELECT c.relname FROM pg_inherits i
			JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
			JOIN pg_namespace n ON n.oid = p.relnamespace
			WHERE p.relname = $1 AND n.nspname = current_schema() ORDER BY c.relname`, t.table)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			day, ok := partitionDay(t.table, name)
			if !ok {
				return nil, fmt.Errorf("partition %s is not named after its day", name)
			}
			out[t.table] = append(out[t.table], time.UnixMilli(day*dayMs).UTC().Format(time.DateOnly))
		}
	}
	return out, nil
}

// CrashForTest ends the store as a killed server would: what is pending of
// the derived state is forgotten, not flushed (its journal rows stay), and
// the databases are closed.
func (s *Store) CrashForTest() {
	w := &s.behind
	w.mu.Lock()
	w.pending, w.journal, w.size, w.closed = nil, nil, 0, true
	w.waiting.Store(false)
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	w.mu.Unlock()
	s.Close()
}

// HoldDerivedForTest makes derived state wait for a read, an explicit
// flush or Close, never for time.
func (s *Store) HoldDerivedForTest() {
	s.behind.mu.Lock()
	defer s.behind.mu.Unlock()
	s.behind.every = time.Hour
}

// JournalRowsForTest counts the rows of the derived-state journal.
func (s *Store) JournalRowsForTest(ctx context.Context) (int, error) {
	var n int
	err := s.tr.QueryRowContext(ctx, `SELECT count(*) FROM derived_journal`).Scan(&n)
	return n, err
}

// GroupWriteForTest runs query in a grouped telemetry write, after hold
// (nil: at once) is closed, and answers the transaction it ran in last (a
// name, the same for writes that shared one). running (nil: none) is
// closed when the write first starts in a transaction.
func (s *Store) GroupWriteForTest(ctx context.Context, running chan struct{}, hold <-chan struct{}, query string, args ...any) (string, error) {
	var tx string
	var once sync.Once
	err := s.writeGrouped(ctx, func(b *bulkTx) error {
		if running != nil {
			once.Do(func() { close(running) })
		}
		if hold != nil {
			<-hold
		}
		tx = fmt.Sprintf("%p", b)
		_, err := b.Exec(ctx, query, args...)
		return err
	}, nil)
	return tx, err
}

// ChangeForTest runs f as a change (Store.tx, or txSolo when solo), after
// hold (nil: at once) is closed; running (nil: none) is closed when f
// first starts. It answers the transaction f ran in last.
func (s *Store) ChangeForTest(ctx context.Context, running chan struct{}, hold <-chan struct{}, solo bool, f func(*sql.Tx) error) (*sql.Tx, error) {
	var in *sql.Tx
	var once sync.Once
	run := s.tx
	if solo {
		run = s.txSolo
	}
	err := run(ctx, func(tx *sql.Tx) error {
		if running != nil {
			once.Do(func() { close(running) })
		}
		if hold != nil {
			<-hold
		}
		in = tx
		return f(tx)
	})
	return in, err
}

// ChangeQueueForTest is how many changes wait for the next round.
func (s *Store) ChangeQueueForTest() int {
	return s.changes.Queued()
}

// GroupQueueForTest is how many grouped writes wait for the next round.
func (s *Store) GroupQueueForTest() int {
	return s.group.Queued()
}

// DecodeJournalForTest round-trips derived state through a journal body.
func DecodeJournalForTest(clients map[int64]wnms.ClientUpdate, slots []int64) (map[int64]wnms.ClientUpdate, []int64, error) {
	d := newDerived()
	for b, u := range clients {
		d.clients[b] = u
	}
	for _, s := range slots {
		d.slots[s] = true
	}
	raw, err := encodeJournal(d)
	if err != nil {
		return nil, nil, err
	}
	got, err := decodeJournal(raw)
	if err != nil {
		return nil, nil, err
	}
	var out []int64
	for s := range got.slots {
		out = append(out, s)
	}
	return got.clients, out, nil
}

// DecodeJournalBodyForTest reads a journal row's body.
func DecodeJournalBodyForTest(raw []byte) (map[int64]wnms.ClientUpdate, []int64, error) {
	d, err := decodeJournal(raw)
	if err != nil {
		return nil, nil, err
	}
	return d.clients, slices.Sorted(maps.Keys(d.slots)), nil
}

// TelemetrySchemaForTest is the CREATE statement of an SQLite telemetry
// table, and of its indexes.
func (s *Store) TelemetrySchemaForTest(ctx context.Context, table string) (string, error) {
	rows, err := s.tr.QueryContext(ctx, `SELECT sql FROM sqlite_master WHERE tbl_name = $1 AND sql IS NOT NULL`, table)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var q string
		if err := rows.Scan(&q); err != nil {
			return "", err
		}
		out = append(out, q)
	}
	return strings.Join(out, ";\n"), rows.Err()
}

// OrIgnoreTablesForTest are the tables SQLite's bulk path writes with
// INSERT OR IGNORE.
func OrIgnoreTablesForTest() []string {
	var out []string
	for t := range orIgnoreTables {
		out = append(out, t)
	}
	return out
}

// LimitPendingForTest lowers how many clients and slots may wait in memory.
func (s *Store) LimitPendingForTest(n int) {
	s.behind.mu.Lock()
	defer s.behind.mu.Unlock()
	s.behind.max = n
}

// PendingForTest is how many clients and slots wait in memory.
func (s *Store) PendingForTest() int {
	s.behind.mu.Lock()
	defer s.behind.mu.Unlock()
	return s.behind.size
}

// PGColumnsForTest is pgColumns.
func PGColumnsForTest(rows [][]any, types ...string) ([]any, error) { return pgColumns(rows, types...) }

// TempStoresForTest returns SQLite's temp_store of a telemetry reader and
// of the telemetry writer (0 default, 1 file, 2 memory).
func (s *Store) TempStoresForTest(ctx context.Context) (reader, writer int, err error) {
	if err = s.tr.QueryRowContext(ctx, `PRAGMA temp_store`).Scan(&reader); err != nil {
		return 0, 0, err
	}
	err = s.tw.QueryRowContext(ctx, `PRAGMA temp_store`).Scan(&writer)
	return reader, writer, err
}

// HoldConnForTest takes one connection of the telemetry reader pool (on
// PostgreSQL, the one pool) until release is called.
func (s *Store) HoldConnForTest(ctx context.Context) (release func(), err error) {
	c, err := s.tr.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return func() { c.Close() }, nil
}
