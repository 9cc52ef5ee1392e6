//go:build wnmsbench

package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/wnms/wnms/internal/wnms"
)

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
func EventRowsForBench(customerID int64, events []*wnms.ClientEvent, bodies [][]byte) [][]any {
	return eventRows(customerID, events, bodies)
}

// CountEventsForBench counts the stored client events.
func (s *Store) CountEventsForBench(ctx context.Context) (int64, error) {
	var n int64
	err := s.tr.QueryRowContext(ctx, `SELECT count(*) FROM client_events`).Scan(&n)
	return n, err
}

// MarkSlotsForBench marks every slot from from (ms) on that holds an
// event of the customer out of date, as if all had just been ingested,
// and returns how many.
func (s *Store) MarkSlotsForBench(ctx context.Context, customerID, from int64) (int, error) {
	slot := wnms.SlotDuration.Milliseconds()
	res, err := s.tw.ExecContext(ctx, `INSERT INTO baseline_dirty (customer_id, slot, version)
		SELECT DISTINCT customer_id, ts - ts % $2, 1 FROM client_events WHERE customer_id = $1 AND ts >= $3
		ON CONFLICT (customer_id, slot) DO NOTHING`, customerID, slot, from)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// DirtySlotCountForBench counts the slots waiting for a refresh.
func (s *Store) DirtySlotCountForBench(ctx context.Context) (int, error) {
	var n int
	err := s.tr.QueryRowContext(ctx, `SELECT count(*) FROM baseline_dirty`).Scan(&n)
	return n, err
}

// AnalyzeForBench refreshes the planner's statistics of the telemetry
// tables, as autovacuum does within a minute or two of a bulk load.
func (s *Store) AnalyzeForBench(ctx context.Context) error {
	for _, t := range []string{"client_events", "client_stats", "ap_stats", "conn_obs", "perf_obs", "baseline_dirty", "clients", "slot_conn_clients", "slot_perf_clients"} {
		if _, err := s.tw.ExecContext(ctx, `ANALYZE `+t); err != nil {
			return err
		}
	}
	return nil
}
