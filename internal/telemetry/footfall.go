package telemetry

import (
	"context"
	"time"
)

// FootfallStore is what the footfall range reads.
type FootfallStore interface {
	// DailyClients counts, for each day of [from, to) (ms) that starts at
	// a multiple of 24 h after from and is shifted by offset (ms east of
	// UTC), the distinct clients with a Success event at locs (nil: any):
	// day index (days since the epoch, in that offset) to count.
	DailyClients(ctx context.Context, customerID int64, locs []int64, from, to, offset int64) (map[int64]int64, error)
	// DistinctClients counts the distinct clients with a Success event in
	// [from, to) at locs.
	DistinctClients(ctx context.Context, customerID int64, locs []int64, from, to int64) (int64, error)
}

// DailyClients is the least and the most distinct clients associated per
// day at the location with materialized path path (and below) over the
// days of [from, to) as tz counts them; a day without associations counts
// 0. Days of one length and offset are counted together, a day with a
// daylight-saving change on its own, so every day is exact.
func (s *Service) DailyClients(ctx context.Context, customerID int64, path string, from, to time.Time, tz *time.Location) (lo, hi int64, err error) {
	locs, err := s.Store.SubtreeLocations(ctx, customerID, []string{path})
	if err != nil {
		return 0, 0, err
	}
	var counts []int64
	day := from.In(tz)
	for day.Before(to) {
		// A run of whole 24-hour days at one offset.
		_, off := day.Zone()
		runStart, n := day, 0
		for day.Before(to) {
			next := day.AddDate(0, 0, 1)
			if _, o := next.Zone(); o != off || next.Sub(day) != 24*time.Hour {
				break
			}
			day, n = next, n+1
		}
		if n > 0 {
			got, err := s.Store.DailyClients(ctx, customerID, locs, runStart.UnixMilli(), day.UnixMilli(), int64(off)*1000)
			if err != nil {
				return 0, 0, err
			}
			first := (runStart.UnixMilli() + int64(off)*1000) / 86_400_000
			for i := int64(0); i < int64(n); i++ {
				counts = append(counts, got[first+i])
			}
			continue
		}
		// A day of another length (a daylight-saving change) alone.
		next := day.AddDate(0, 0, 1)
		c, err := s.Store.DistinctClients(ctx, customerID, locs, day.UnixMilli(), next.UnixMilli())
		if err != nil {
			return 0, 0, err
		}
		counts, day = append(counts, c), next
	}
	for i, c := range counts {
		if i == 0 || c < lo {
			lo = c
		}
		hi = max(hi, c)
	}
	return lo, hi, nil
}
