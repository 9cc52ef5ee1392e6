package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/wnms/wnms/internal/wnms"
)

// On PostgreSQL the telemetry tables are range-partitioned by UTC day on
// their time column (migration 0116): one partition per table and day,
// named <table>_pYYYYMMDD. Partitions are made ahead of time (today and
// PartitionsAhead days after, at start and with every retention pass)
// and, before a write, for any other day its rows fall in; retention
// detaches and drops the partitions whose whole day is past. SQLite keeps
// one table each and deletes old rows in batches.

// dayMs is one day in milliseconds: a partition's width.
const dayMs = int64(24 * time.Hour / time.Millisecond)

// PartitionsAhead is how many days after today have their partitions
// made ahead of time.
const PartitionsAhead = 7

// partitionedTables are the day-partitioned tables and their time column.
var partitionedTables = []struct{ table, column string }{
	{"client_events", "ts"}, {"client_stats", "ts"}, {"ap_stats", "ts"}, {"radio_stats", "ts"}, {"conn_obs", "slot"}, {"perf_obs", "slot"},
	{"slot_conn_clients", "slot"}, {"slot_perf_clients", "slot"},
}

// Partitioned reports whether table's old rows go by dropping whole day
// partitions rather than by deleting rows.
func (s *Store) Partitioned(table string) bool {
	if !partitionsByDay(s.dialect) {
		return false
	}
	for _, t := range partitionedTables {
		if t.table == table {
			return true
		}
	}
	return false
}

// partitionName is the name of table's partition of day (days since the
// epoch, UTC).
func partitionName(table string, day int64) string {
	return table + "_p" + time.UnixMilli(day*dayMs).UTC().Format("20060102")
}

// partitionDay reads the day back from a partition's name (ok false for a
// name that is not one).
func partitionDay(table, name string) (int64, bool) {
	suffix, ok := strings.CutPrefix(name, table+"_p")
	if !ok || len(suffix) != 8 {
		return 0, false
	}
	t, err := time.Parse("20060102", suffix)
	if err != nil {
		return 0, false
	}
	return t.UnixMilli() / dayMs, true
}

// EnsurePartitions makes sure every partitioned table has the partitions
// of the days from..to (ms, inclusive); nothing on SQLite.
func (s *Store) EnsurePartitions(ctx context.Context, from, to int64) error {
	if !partitionsByDay(s.dialect) || from > to {
		return nil
	}
	for day := from / dayMs; day <= to/dayMs; day++ {
		if err := s.ensureDay(ctx, day); err != nil {
			return err
		}
	}
	return nil
}

// ensureDaysOf makes sure the partitions of the days of n rows' times
// (at(i), ms) exist before those rows are written; nothing on SQLite.
func (s *Store) ensureDaysOf(ctx context.Context, n int, at func(i int) int64) error {
	if !partitionsByDay(s.dialect) {
		return nil
	}
	last := int64(-1)
	for i := range n {
		day := at(i) / dayMs
		if day == last {
			continue
		}
		last = day
		if err := s.ensureDay(ctx, day); err != nil {
			return err
		}
	}
	return nil
}

// ensureDay makes the partitions of day on every partitioned table, unless
// this process knows they exist. Replicas may race to make one: each
// takes the day's advisory lock and makes what is missing.
func (s *Store) ensureDay(ctx context.Context, day int64) error {
	if _, ok := s.partitionDays.Load(day); ok {
		return nil
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := lockKey(ctx, tx, s.dialect, "partition day "+strconv.FormatInt(day, 10)); err != nil {
			return err
		}
		for _, t := range partitionedTables {
			name := partitionName(t.table, day)
			if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+name+` PARTITION OF `+t.table+
				` FOR VALUES FROM (`+strconv.FormatInt(day*dayMs, 10)+`) TO (`+strconv.FormatInt((day+1)*dayMs, 10)+`)`); err != nil {
				return fmt.Errorf("partition %s: %w", name, err)
			}
		}
		return nil
	})
	if err == nil {
		s.partitionDays.Store(day, true)
	}
	return err
}

// MaintainPartitions makes the partitions of the days from yesterday to
// PartitionsAhead days after now (ms) and drops those whose whole day lies
// before before (see telemetry.Purger); nothing on SQLite.
func (s *Store) MaintainPartitions(ctx context.Context, now, before int64) ([]wnms.DroppedPartition, error) {
	if err := s.EnsurePartitions(ctx, now-dayMs, now+PartitionsAhead*dayMs); err != nil {
		return nil, err
	}
	return s.DropPartitionsBefore(ctx, before)
}

// DropPartitionsBefore detaches and drops every day partition whose whole
// day lies before before (ms), and returns what it dropped; nothing on
// SQLite. A partition is detached concurrently, so reads and writes of
// the other days go on meanwhile, then dropped; one left half-detached by
// a crash is finished first.
func (s *Store) DropPartitionsBefore(ctx context.Context, before int64) ([]wnms.DroppedPartition, error) {
	if !partitionsByDay(s.dialect) {
		return nil, nil
	}
	var out []wnms.DroppedPartition
	for _, t := range partitionedTables {
		rows, err := s.w.QueryContext(ctx, `SELECT c.relname, i.inhdetachpending FROM pg_inherits i
			JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
			JOIN pg_namespace n ON n.oid = p.relnamespace
			WHERE p.relname = $1 AND n.nspname = current_schema() ORDER BY c.relname`, t.table)
		if err != nil {
			return out, err
		}
		type part struct {
			name    string
			day     int64
			pending bool
		}
		var old []part
		for rows.Next() {
			var p part
			if err := rows.Scan(&p.name, &p.pending); err != nil {
				rows.Close()
				return out, err
			}
			var ok bool
			if p.day, ok = partitionDay(t.table, p.name); ok && (p.day+1)*dayMs <= before {
				old = append(old, p)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return out, err
		}
		for _, p := range old {
			s.partitionDays.Delete(p.day)
			detach := `ALTER TABLE ` + t.table + ` DETACH PARTITION ` + p.name + ` CONCURRENTLY`
			if p.pending {
				detach = `ALTER TABLE ` + t.table + ` DETACH PARTITION ` + p.name + ` FINALIZE`
			}
			if _, err := s.w.ExecContext(ctx, detach); err != nil {
				return out, fmt.Errorf("detach %s: %w", p.name, err)
			}
			if _, err := s.w.ExecContext(ctx, `DROP TABLE `+p.name); err != nil {
				return out, fmt.Errorf("drop %s: %w", p.name, err)
			}
			out = append(out, wnms.DroppedPartition{Table: t.table, Day: time.UnixMilli(p.day * dayMs).UTC()})
		}
	}
	return out, nil
}

// withDays runs write after making sure the partitions of the days of n
// rows' times (at(i), ms) exist. A write that finds a day's partition gone
// (dropped meanwhile by another replica's retention, for a day that old)
// makes it again and runs once more.
func (s *Store) withDays(ctx context.Context, n int, at func(i int) int64, write func() error) error {
	if err := s.ensureDaysOf(ctx, n, at); err != nil {
		return err
	}
	err := write()
	if isNoPartition(err) {
		s.partitionDays.Clear()
		if err := s.ensureDaysOf(ctx, n, at); err != nil {
			return err
		}
		err = write()
	}
	return err
}

// isNoPartition tells PostgreSQL's refusal of a row no partition takes.
func isNoPartition(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "23514" && strings.Contains(pg.Message, "no partition")
}
