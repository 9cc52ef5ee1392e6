package telemetry

import (
	"context"
	"time"

	"github.com/wnms/wnms/internal/every"
	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/wnms"
)

// DefaultRetention is how long events and samples are kept.
const DefaultRetention = 30 * 24 * time.Hour

// PurgeBatch is how many rows one purge statement deletes; the purge
// pauses between batches so that ingest and reads are never held up.
const PurgeBatch = 10_000

// Purger is what retention needs of the store.
type Purger interface {
	// PurgeTelemetry deletes at most batch rows of table older than
	// before (ms) and returns how many it deleted (none of a table kept in
	// day partitions).
	PurgeTelemetry(ctx context.Context, table string, before int64, batch int) (int, error)
	// MaintainPartitions, on a store that keeps telemetry in day
	// partitions, makes the partitions of the days ahead of now (ms) and
	// drops those whose whole day lies before before; a store without
	// partitions does nothing.
	MaintainPartitions(ctx context.Context, now, before int64) ([]wnms.DroppedPartition, error)
}

// PurgedTables are the telemetry tables retention purges, oldest rows
// first: events, samples, AP heartbeats and radio samples, the clients not seen since, the
// connection log bundles, the baseline rows of the slots before, the
// service level counts of the hours before, and the incidents whose last
// slot is before (made of the anomalies purged with them).
var PurgedTables = []string{"client_events", "client_stats", "ap_stats", "radio_stats", "clients", "log_bundles", "conn_obs", "perf_obs", "perf_ap_obs", "anomalies", "baseline_dirty", "anomaly_pending",
	"slot_conn_clients", "slot_perf_clients", "service_level_hours", "service_level_slow", "service_level_radio", "incidents"}

// Instrument registers the service's series: records ingested by kind and
// result, and rows purged by table.
func (s *Service) Instrument(reg *metrics.Registry) {
	s.ingested = reg.Counter("wnms_ingest_records_total", "Telemetry records ingested, by kind and result.", "kind", "result")
	s.purged = reg.Counter("wnms_telemetry_purged_rows_total", "Telemetry rows purged by retention, by table.", "table")
	s.droppedDays = reg.Counter("wnms_telemetry_dropped_partitions_total", "Day partitions of telemetry dropped by retention (PostgreSQL), by table.", "table")
}

// count records an ingest's result.
func (s *Service) count(kind string, r *Result) {
	if s.ingested == nil || r == nil {
		return
	}
	s.ingested.With(kind, "accepted").Add(uint64(r.Accepted))
	s.ingested.With(kind, "duplicate").Add(uint64(r.Duplicates))
	s.ingested.With(kind, "rejected").Add(uint64(len(r.Rejected)))
}

// Purge deletes, table by table and batch by batch, the telemetry older
// than the retention, and returns how many rows it deleted.
func (s *Service) Purge(ctx context.Context, p Purger) (int, error) {
	now := s.Now()
	before := now.Add(-s.Retention).UnixMilli()
	dropped, err := p.MaintainPartitions(ctx, now.UnixMilli(), before)
	for _, d := range dropped {
		if s.droppedDays != nil {
			s.droppedDays.With(d.Table).Inc()
		}
		if s.Log != nil {
			s.Log.Info("telemetry partition dropped", "table", d.Table, "day", d.Day.Format(time.DateOnly))
		}
	}
	if err != nil {
		return 0, err
	}
	total := 0
	for _, table := range PurgedTables {
		for {
			n, err := p.PurgeTelemetry(ctx, table, before, PurgeBatch)
			if err != nil {
				return total, err
			}
			total += n
			if s.purged != nil {
				s.purged.With(table).Add(uint64(n))
			}
			if n < PurgeBatch {
				break
			}
			select {
			case <-ctx.Done():
				return total, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return total, nil
}

// PurgeEvery runs Purge every interval until ctx ends.
func (s *Service) PurgeEvery(ctx context.Context, p Purger, interval time.Duration) {
	every.Period(ctx, interval, func(ctx context.Context) {
		n, err := s.Purge(ctx, p)
		if err != nil && ctx.Err() == nil && s.Log != nil {
			s.Log.Error("telemetry purge failed", "err", err)
		} else if n > 0 && s.Log != nil {
			s.Log.Info("telemetry purged", "rows", n, "retention", s.Retention.String())
		}
	})
}
