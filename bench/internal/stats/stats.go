// Package stats summarizes the latencies the benchmarks measure.
package stats

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Pct is the p-th percentile of d (nearest rank); 0 for no samples.
func Pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(math.Ceil(p/100*float64(len(s))))-1]
}

// MS formats d in milliseconds with three decimals.
func MS(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d.Microseconds())/1000) }
