package baseline

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/wnms"
)

// The counters, fed client by client, give every scope what the
// arithmetic gives over all of that scope's rows at once.
func TestCountersMatchTheArithmetic(t *testing.T) {
	ancestors := map[int64][]int64{1: {0, 1}, 2: {0, 1, 2}, 3: {0, 3}, -1: {0, -1}}
	locs := []int64{1, 2, 3, -1}
	r := rand.New(rand.NewPCG(7, 9))
	for round := 0; round < 50; round++ {
		var attempts []wnms.ScopedAttempt
		var sums []wnms.ScopedSums
		for c := 0; c < 1+r.IntN(40); c++ {
			mac := fmt.Sprintf("m%03d", c)
			for k := 0; k < 1+r.IntN(4); k++ {
				loc, band, ssid := locs[r.IntN(len(locs))], []string{wnms.Band24GHz, wnms.Band5GHz}[r.IntN(2)], []string{"corp", "guest"}[r.IntN(2)]
				var f [4]bool
				if cat := r.IntN(6); cat <= 3 {
					f[0], f[cat] = true, true
				}
				attempts = append(attempts, wnms.ScopedAttempt{LocationID: loc, Band: band, SSID: ssid, ConnAttempt: wnms.ConnAttempt{MAC: mac, Failures: f}})
				n := 1 + r.IntN(5)
				sums = append(sums, wnms.ScopedSums{LocationID: loc, Band: band, SSID: ssid, ClientSums: wnms.ClientSums{MAC: mac, N: n,
					Rate: float64(n) * float64(r.IntN(40)), Retry: float64(n) * float64(r.IntN(30)), RSSI: float64(n) * float64(-90+r.IntN(40)),
					WeakAll: r.IntN(2) == 0, WithBetter: n, Better: n - r.IntN(2)}})
			}
		}
		slices.SortStableFunc(attempts, func(a, b wnms.ScopedAttempt) int { return strings.Compare(a.MAC, b.MAC) })
		slices.SortStableFunc(sums, func(a, b wnms.ScopedSums) int { return strings.Compare(a.MAC, b.MAC) })
		cc, pc := NewConnCounter(ancestors), NewPerfCounter(ancestors)
		for _, a := range attempts {
			cc.Add(a)
		}
		for _, x := range sums {
			pc.Add(x)
		}
		wantConn := map[scope][]wnms.ConnAttempt{}
		for _, a := range attempts {
			eachScope(a.LocationID, a.Band, a.SSID, ancestors, func(k scope) { wantConn[k] = append(wantConn[k], a.ConnAttempt) })
		}
		gotConn := cc.Rows(0)
		if len(gotConn) != len(wantConn) {
			t.Fatalf("round %d: %d connectivity scopes, want %d", round, len(gotConn), len(wantConn))
		}
		for _, row := range gotConn {
			if want := ObserveConnectivity(wantConn[scope{row.LocationID, row.Band, row.SSID}]); row.Connectivity != want {
				t.Fatalf("round %d, scope %v: %+v, want %+v", round, row, row.Connectivity, want)
			}
		}
		wantPerf := map[scope][]wnms.ClientSums{}
		for _, x := range sums {
			eachScope(x.LocationID, x.Band, x.SSID, ancestors, func(k scope) { wantPerf[k] = append(wantPerf[k], x.ClientSums) })
		}
		gotPerf := pc.Rows(0)
		if len(gotPerf) != len(wantPerf) {
			t.Fatalf("round %d: %d performance scopes, want %d", round, len(gotPerf), len(wantPerf))
		}
		for _, row := range gotPerf {
			if want := ObservePerformanceSums(wantPerf[scope{row.LocationID, row.Band, row.SSID}]); row.Performance != want {
				t.Fatalf("round %d, scope %v: %+v, want %+v", round, row, row.Performance, want)
			}
		}
	}
}

// BenchmarkConnCounter counts a slot of 30,000 clients on 200 floors four
// levels deep, one in ten seen at two places: what a read of the slot
// being filled spends on counting, besides reading the rows.
//
//	go test -run X -bench ConnCounter ./internal/baseline
func BenchmarkConnCounter(b *testing.B) {
	ancestors := map[int64][]int64{}
	for f := int64(0); f < 200; f++ {
		ancestors[1000+f] = []int64{0, 1 + f/50, 100 + f/10, 1000 + f}
	}
	r := rand.New(rand.NewPCG(1, 2))
	var rows []wnms.ScopedAttempt
	for c := 0; c < 30000; c++ {
		mac := fmt.Sprintf("02:00:00:%02x:%02x:%02x", c>>16, c>>8&0xff, c&0xff)
		places := 1
		if c%10 == 0 {
			places = 2
		}
		for range places {
			var f [4]bool
			if cat := r.IntN(40); cat <= 3 {
				f[0], f[cat] = true, true
			}
			rows = append(rows, wnms.ScopedAttempt{LocationID: 1000 + r.Int64N(200), Band: []string{wnms.Band24GHz, wnms.Band5GHz}[r.IntN(2)],
				SSID: []string{"corp", "guest", "iot"}[r.IntN(3)], ConnAttempt: wnms.ConnAttempt{MAC: mac, Failures: f}})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		c := NewConnCounter(ancestors)
		for _, a := range rows {
			c.Add(a)
		}
		if len(c.Rows(0)) == 0 {
			b.Fatal("no rows")
		}
	}
}
