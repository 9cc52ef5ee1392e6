//go:build wnmsbench

package store

import (
	"context"

	"github.com/wnms/wnms/internal/wnms"
)

// KeepServiceLevelsForBench adds events to the service level counts in a
// transaction of its own, as ingest does in the batch's transaction: the
// benchmark of the read measures what the upkeep costs ingest with it.
func (s *Store) KeepServiceLevelsForBench(ctx context.Context, customerID int64, events []*wnms.ClientEvent) error {
	return s.bulk(ctx, s.tw, func(b *bulkTx) error {
		return keepServiceLevels(ctx, b, customerID, events, int64(len(events)))
	})
}

// ServiceLevelRowsForBench counts the rows of service_level_hours and
// service_level_slow.
func (s *Store) ServiceLevelRowsForBench(ctx context.Context) (hours, slow int64, err error) {
	if err := s.tr.QueryRowContext(ctx, `SELECT count(*) FROM service_level_hours`).Scan(&hours); err != nil {
		return 0, 0, err
	}
	err = s.tr.QueryRowContext(ctx, `SELECT count(*) FROM service_level_slow`).Scan(&slow)
	return hours, slow, err
}
