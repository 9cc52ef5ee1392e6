// Package every runs background work on a period until its context ends:
// the one loop behind AP liveness, retention, session housekeeping,
// cluster keep-alives and the anomaly evaluation.
package every

import (
	"context"
	"time"
)

// Period calls f every period, the first time one period from now, until
// ctx ends. f gets ctx and runs to completion before the next call.
func Period(ctx context.Context, period time.Duration, f func(ctx context.Context)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f(ctx)
		}
	}
}
