//go:build wnmsbench

package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/wnms/wnms/internal/wnms"
)

// RawInsertEventsForBench inserts client event rows (the columns of
// InsertClientEvents) the fastest way the engine has, with no conflict
// handling: COPY straight into the table on PostgreSQL, multi-row INSERTs
// on SQLite. It is the yardstick the ingest benchmark compares with.
func (s *Store) RawInsertEventsForBench(ctx context.Context, rows [][]any) error {
	return s.RawInsertIntoForBench(ctx, "client_events", rows)
}

// RawInsertIntoForBench is RawInsertEventsForBench into table, one with
// the columns of client_events (EventTableForBench).
func (s *Store) RawInsertIntoForBench(ctx context.Context, table string, rows [][]any) error {
	if !copiesIn(s.dialect) {
		return s.bulk(ctx, s.tw, func(b *bulkTx) error {
			_, err := b.Insert(ctx, table, eventColumns, rows, "")
			return err
		})
	}
	conn, err := s.tw.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		_, err := dc.(*stdlib.Conn).Conn().CopyFrom(ctx, pgx.Identifier{table}, eventColumns, pgx.CopyFromRows(rows))
		return err
	})
}

// EventTableForBench (re)creates table on the telemetry database with the
// columns of client_events and no index but those of indexes, each a
// statement in which {t} stands for the table's name. With partitioned
// (PostgreSQL only) it is partitioned by day as client_events is, with
// the partitions of the days from..to (ms); without, it is a plain table.
// On SQLite id is the rowid, as in client_events.
func (s *Store) EventTableForBench(ctx context.Context, table string, partitioned bool, from, to int64, indexes []string) error {
	if _, err := s.tw.ExecContext(ctx, `DROP TABLE IF EXISTS `+table); err != nil {
		return err
	}
	id := "id " + rowID(s.dialect)
	ddl := `CREATE TABLE ` + table + ` (` + id + `, customer_id BIGINT NOT NULL, event_id TEXT NOT NULL,
		mac TEXT NOT NULL, ts BIGINT NOT NULL, event_type TEXT NOT NULL, location_id BIGINT NOT NULL, ap_box_id BIGINT,
		dot11ac BOOLEAN NOT NULL, ssid TEXT NOT NULL, protocol TEXT NOT NULL, code INTEGER, sub_code INTEGER, body TEXT NOT NULL)`
	if partitioned && partitionsByDay(s.dialect) {
		ddl += ` PARTITION BY RANGE (ts)`
	}
	if _, err := s.tw.ExecContext(ctx, ddl); err != nil {
		return err
	}
	if partitioned && partitionsByDay(s.dialect) {
		for day := from / dayMs; day <= to/dayMs; day++ {
			if _, err := s.tw.ExecContext(ctx, `CREATE TABLE `+partitionName(table, day)+` PARTITION OF `+table+
				` FOR VALUES FROM (`+strconv.FormatInt(day*dayMs, 10)+`) TO (`+strconv.FormatInt((day+1)*dayMs, 10)+`)`); err != nil {
				return err
			}
		}
	}
	for _, ix := range indexes {
		if _, err := s.tw.ExecContext(ctx, strings.ReplaceAll(ix, "{t}", table)); err != nil {
			return fmt.Errorf("%s: %w", ix, err)
		}
	}
	return nil
}

// DropTableForBench drops a table EventTableForBench made.
func (s *Store) DropTableForBench(ctx context.Context, table string) error {
	_, err := s.tw.ExecContext(ctx, `DROP TABLE IF EXISTS `+table)
	return err
}

// ExecTelemetryForBench runs a statement on the telemetry database.
func (s *Store) ExecTelemetryForBench(ctx context.Context, query string, args ...any) error {
	_, err := s.tw.ExecContext(ctx, query, args...)
	return err
}

// EventRowsForBench turns events and their bodies into the rows that
// RawInsertEventsForBench takes, as InsertClientEvents makes them: the
// rows' bodies are the bytes of bodies, not copies, which must not be
// written to while the rows are in use.
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
	for _, t := range []string{"client_events", "client_stats", "ap_stats", "radio_stats", "conn_obs", "perf_obs", "perf_ap_obs", "baseline_dirty", "clients", "slot_conn_clients", "slot_perf_clients"} {
		if _, err := s.tw.ExecContext(ctx, `ANALYZE `+t); err != nil {
			return err
		}
	}
	return nil
}

// rowID is the column definition of a table's id: SQLite's rowid, or a
// PostgreSQL sequence (NOT NULL, as a partitioned table's key needs).
func rowID(d Dialect) string {
	if d == Postgres {
		return "BIGSERIAL NOT NULL"
	}
	return "INTEGER PRIMARY KEY AUTOINCREMENT"
}
