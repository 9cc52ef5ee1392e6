package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/wnms/wnms/internal/baseline"
	"github.com/wnms/wnms/internal/telemetry"
)

// ExecForTest runs a statement on the write connection. It exists for tests
// that must put the database in a state the API cannot (a schema from a
// newer binary, say).
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
// batch stored.
func (s *Store) BulkInsertForTest(ctx context.Context, table string, cols []string, conflict string, batches ...[][]any) ([]int64, error) {
	var out []int64
	if conflict != "" {
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

// RawInsertEventsForBench inserts client event rows (the columns of
// InsertClientEvents) the fastest way the engine has, with no conflict
// handling: COPY straight into the table on PostgreSQL, multi-row INSERTs
// on SQLite. It is the yardstick the ingest benchmark compares with.
func (s *Store) RawInsertEventsForBench(ctx context.Context, rows [][]any) error {
	if s.dialect != Postgres {
		return s.bulk(ctx, s.tw, func(b *bulkTx) error {
			_, err := b.Insert(ctx, "client_events", eventColumns, rows, "")
			return err
		})
	}
	conn, err := s.tw.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		_, err := dc.(*stdlib.Conn).Conn().CopyFrom(ctx, pgx.Identifier{"client_events"}, eventColumns, pgx.CopyFromRows(rows))
		return err
	})
}

// EventRowsForBench turns events and their bodies into the rows that
// RawInsertEventsForBench takes, as InsertClientEvents makes them.
func EventRowsForBench(customerID int64, events []*telemetry.Event, bodies [][]byte) [][]any {
	return eventRows(customerID, events, bodies)
}

// CountEventsForBench counts the stored client events.
func (s *Store) CountEventsForBench(ctx context.Context) (int64, error) {
	var n int64
	err := s.tr.QueryRowContext(ctx, `SELECT count(*) FROM client_events`).Scan(&n)
	return n, err
}

// MarkAllSlotsForBench marks every slot holding an event of the customer
// out of date, as if all had just been ingested, and returns how many.
func (s *Store) MarkAllSlotsForBench(ctx context.Context, customerID int64) (int, error) {
	slot := baseline.SlotDuration.Milliseconds()
	res, err := s.tw.ExecContext(ctx, `INSERT INTO baseline_dirty (customer_id, slot, version)
		SELECT DISTINCT customer_id, ts - ts % $2, 1 FROM client_events WHERE customer_id = $1
		ON CONFLICT (customer_id, slot) DO NOTHING`, customerID, slot)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// EventPlanForTest returns the engine's plan of the client event page
// query for q (PostgreSQL told to avoid sequential scans, which it would
// take on a test's small table).
func (s *Store) EventPlanForTest(ctx context.Context, q telemetry.EventQuery) (string, error) {
	cond, args := s.eventFilter(q)
	return s.planForTest(ctx, `SELECT body FROM client_events WHERE `+cond+` ORDER BY ts DESC, id DESC LIMIT 100`, args...)
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
	return strings.Join(plan, "\n"), rows.Err()
}

// SlotQueryPlansForTest returns the engine's plans of the queries that
// read one slot's events and samples.
func (s *Store) SlotQueryPlansForTest(ctx context.Context) (events, samples string, err error) {
	if events, err = s.planForTest(ctx, slotAttemptsQuery(s.dialect), 1, 0, 900000, "Success", "Failure"); err != nil {
		return "", "", err
	}
	samples, err = s.planForTest(ctx, slotSumsQuery, 1, 0, 900000, -75, 10)
	return events, samples, err
}

// DirtySlotCountForBench counts the slots waiting for a refresh.
func (s *Store) DirtySlotCountForBench(ctx context.Context) (int, error) {
	var n int
	err := s.tr.QueryRowContext(ctx, `SELECT count(*) FROM baseline_dirty`).Scan(&n)
	return n, err
}

// CountTelemetryForTest counts the stored client events and samples.
func (s *Store) CountTelemetryForTest(ctx context.Context) (events, samples int64, err error) {
	if err = s.tr.QueryRowContext(ctx, `SELECT COUNT(*) FROM client_events`).Scan(&events); err != nil {
		return 0, 0, err
	}
	err = s.tr.QueryRowContext(ctx, `SELECT COUNT(*) FROM client_stats`).Scan(&samples)
	return events, samples, err
}
