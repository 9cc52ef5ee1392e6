package baseline

import (
	"github.com/wnms/wnms/internal/wnms"
	"math"
	"testing"
	"time"
)

func ms(s string, loc *time.Location) int64 {
	t, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestSlots(t *testing.T) {
	utc := time.UTC
	for _, tc := range []struct {
		at   string
		want string
	}{{"2026-11-20 10:00", "2026-11-20 10:00"}, {"2026-11-20 10:14", "2026-11-20 10:00"}, {"2026-11-20 23:59", "2026-11-20 23:45"}} {
		if got := wnms.SlotOf(ms(tc.at, utc) + 59_999); got != ms(tc.want, utc) {
			t.Errorf("slot of %s: %d, want %s", tc.at, got, tc.want)
		}
	}
	if got := Slots(ms("2026-11-20 10:05", utc), ms("2026-11-20 10:45", utc)); len(got) != 3 || got[0] != ms("2026-11-20 10:15", utc) {
		t.Errorf("slots: %v", got)
	}
	// Bounded by construction: a window to the end of int64 (which once
	// looped forever, the slot counter overflowing) lists at most MaxSlots.
	for _, w := range [][2]int64{{0, math.MaxInt64}, {math.MaxInt64 - 1, math.MaxInt64}, {ms("2026-11-20 10:00", utc), math.MaxInt64}, {5, 4}} {
		got := Slots(w[0], w[1])
		if len(got) > MaxSlots {
			t.Errorf("Slots(%d, %d): %d slots", w[0], w[1], len(got))
		}
		for i := 1; i < len(got); i++ {
			if got[i] <= got[i-1] {
				t.Fatalf("Slots(%d, %d) not increasing at %d", w[0], w[1], i)
			}
		}
	}
	// Slots are aligned to the epoch, so India's half-hour offset still
	// sees whole quarters of its own clock.
	kolkata, _ := time.LoadLocation("Asia/Kolkata")
	if got := wnms.SlotOf(ms("2026-11-20 10:07", kolkata)); got != ms("2026-11-20 10:00", kolkata) {
		t.Errorf("Kolkata slot: %s", time.UnixMilli(got).In(kolkata))
	}
}

// history builds a History from observations keyed by wall-clock time.
func history(loc *time.Location, obs map[string]Obs) History {
	by := map[int64]Obs{}
	for k, o := range obs {
		by[ms(k, loc)] = o
	}
	return func(s int64) Obs { return by[s] }
}

func TestEvaluate(t *testing.T) {
	utc := time.UTC
	berlin, _ := time.LoadLocation("Europe/Berlin")
	higher := Params{K: 2, MinSamples: 5, Direction: HigherIsWorse}
	for _, tc := range []struct {
		name      string
		loc       *time.Location
		slot      string
		obs       Obs
		hist      map[string]Obs
		p         Params
		baseline  float64 // NaN: none
		sd        float64
		threshold float64
		anomalous bool
	}{
		{
			// Same slot on 3 earlier days: 10, 20, 30. Mean 20; population
			// variance ((−10)² + 0² + 10²)/3 = 66.67, σ = 8.1650; threshold
			// 20 + 2 × 8.1650 = 36.3299. 40 > 36.33 with 10 samples.
			name: "same slot of previous days", loc: utc, slot: "2026-11-20 10:00", obs: Obs{40, 10},
			hist: map[string]Obs{"2026-11-19 10:00": {10, 8}, "2026-11-18 10:00": {20, 8}, "2026-11-13 10:00": {30, 1},
				"2026-11-20 09:45": {90, 9}}, // a previous slot of today: not used while 3 days exist
			p: higher, baseline: 20, sd: math.Sqrt(200.0 / 3), threshold: 20 + 2*math.Sqrt(200.0/3), anomalous: true,
		},
		{
			// A day with no samples does not count; 15 days ago is out of
			// the window. Only 2 days left, so the previous 96 slots are
			// used: 4 of them, 5, 5, 5, 25: mean 10, σ = √75 = 8.6603,
			// threshold 27.3205. 27 is not above it.
			name: "fallback to the previous 96 slots", loc: utc, slot: "2026-11-20 10:00", obs: Obs{27, 50},
			hist: map[string]Obs{"2026-11-19 10:00": {5, 3}, "2026-11-18 10:00": {0, 0}, "2026-11-05 10:00": {70, 4},
				"2026-11-19 10:15": {5, 1}, "2026-11-20 09:45": {5, 2}, "2026-11-19 11:00": {25, 7}},
			p: higher, baseline: 10, sd: math.Sqrt(75), threshold: 10 + 2*math.Sqrt(75),
		},
		{
			// 2 days and 3 previous slots: no baseline, never anomalous.
			name: "too little history", loc: utc, slot: "2026-11-20 10:00", obs: Obs{100, 100},
			hist: map[string]Obs{"2026-11-19 10:00": {5, 3}, "2026-11-18 10:00": {5, 3}, "2026-11-20 09:45": {5, 2}},
			p:    higher, baseline: math.NaN(),
		},
		{
			// Beyond the k·σ bar, but 4 samples < 5: the threshold is 100,
			// which no observation passes.
			name: "too few samples", loc: utc, slot: "2026-11-20 10:00", obs: Obs{99, 4},
			hist: map[string]Obs{"2026-11-19 10:00": {10, 8}, "2026-11-18 10:00": {10, 8}, "2026-11-17 10:00": {10, 8}},
			p:    higher, baseline: 10, sd: 0, threshold: 100,
		},
		{
			// Data rate: lower is worse. 100, 120, 140 Mbps: mean 120,
			// σ 16.3299, threshold 120 − 32.6599 = 87.3401; 80 is below.
			name: "lower is worse", loc: utc, slot: "2026-11-20 10:00", obs: Obs{80, 6},
			hist: map[string]Obs{"2026-11-19 10:00": {100, 6}, "2026-11-18 10:00": {120, 6}, "2026-11-17 10:00": {140, 6}},
			p:    Params{K: 2, MinSamples: 5, Direction: LowerIsWorse}, baseline: 120, sd: math.Sqrt(800.0 / 3),
			threshold: 120 - 2*math.Sqrt(800.0/3), anomalous: true,
		},
		{
			// Performance: the threshold is rounded, 20 + 16.33 = 36.33 →
			// 36, so 36.2 is anomalous, where it is below the unrounded
			// threshold.
			name: "integer threshold", loc: utc, slot: "2026-11-20 10:00", obs: Obs{36.2, 5},
			hist: map[string]Obs{"2026-11-19 10:00": {10, 8}, "2026-11-18 10:00": {20, 8}, "2026-11-17 10:00": {30, 8}},
			p:    Params{K: 2, MinSamples: 5, IntThreshold: true}, baseline: 20, sd: math.Sqrt(200.0 / 3), threshold: 36, anomalous: true,
		},
		{
			// k = 1: threshold 20 + 8.165 = 28.165.
			name: "k", loc: utc, slot: "2026-11-20 10:00", obs: Obs{29, 5},
			hist: map[string]Obs{"2026-11-19 10:00": {10, 8}, "2026-11-18 10:00": {20, 8}, "2026-11-17 10:00": {30, 8}},
			p:    Params{K: 1, MinSamples: 5}, baseline: 20, sd: math.Sqrt(200.0 / 3), threshold: 20 + math.Sqrt(200.0/3), anomalous: true,
		},
		{
			// 23:45 in Berlin is 22:45 UTC; the same slot of the previous
			// days is 23:45 Berlin time, across midnight in UTC terms too.
			name: "a slot across midnight, Berlin", loc: berlin, slot: "2026-11-20 23:45", obs: Obs{3, 5},
			hist: map[string]Obs{"2026-11-19 23:45": {1, 1}, "2026-11-18 23:45": {2, 1}, "2026-11-17 23:45": {3, 1}},
			p:    higher, baseline: 2, sd: math.Sqrt(2.0 / 3), threshold: 2 + 2*math.Sqrt(2.0/3),
		},
		{
			// Summer time ended on 2026-10-25 in Berlin: 09:00 on the 26th
			// is 08:00 UTC, 09:00 on the 24th is 07:00 UTC. The same
			// wall-clock slot is used, not 24 hours of UTC.
			name: "across the end of summer time", loc: berlin, slot: "2026-10-26 09:00", obs: Obs{50, 5},
			hist: map[string]Obs{"2026-10-25 09:00": {10, 1}, "2026-10-24 09:00": {10, 1}, "2026-10-23 09:00": {40, 1},
				"2026-10-24 10:00": {99, 1}},
			p: higher, baseline: 20, sd: math.Sqrt(200), threshold: 20 + 2*math.Sqrt(200), anomalous: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Evaluate(ms(tc.slot, tc.loc), tc.obs, tc.loc, history(tc.loc, tc.hist), tc.p)
			if math.IsNaN(tc.baseline) {
				if r.Baseline != nil || r.StdDev != nil || r.Threshold != nil || r.Anomalous {
					t.Fatalf("want no baseline, got %+v", r)
				}
				return
			}
			if r.Baseline == nil || !near(*r.Baseline, tc.baseline) || !near(*r.StdDev, tc.sd) || !near(*r.Threshold, tc.threshold) ||
				r.Anomalous != tc.anomalous {
				t.Fatalf("got baseline %v σ %v threshold %v anomalous %v; want %v %v %v %v", deref(r.Baseline), deref(r.StdDev),
					deref(r.Threshold), r.Anomalous, tc.baseline, tc.sd, tc.threshold, tc.anomalous)
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestObserveConnectivity(t *testing.T) {
	// Four clients attempt. a fails authentication on one floor and
	// succeeds on another (one client, failing); b fails association and
	// network; c succeeds; d fails network twice. Failing 3 of 4 = 75 %;
	// association 1 (25 %), authentication 1 (25 %), network 2 (50 %).
	var fail = func(cats ...int) [4]bool {
		var f [4]bool
		for _, c := range cats {
			f[c] = true
		}
		return f
	}
	c := ObserveConnectivity([]wnms.ConnAttempt{
		{MAC: "a", Failures: fail(wnms.CategoryAuthentication)}, {MAC: "a", Failures: fail()}, {MAC: "b", Failures: fail(wnms.CategoryAssociation, wnms.CategoryNetwork)},
		{MAC: "c", Failures: fail()}, {MAC: "d", Failures: fail(wnms.CategoryNetwork)}, {MAC: "d", Failures: fail(wnms.CategoryNetwork)},
	})
	want := wnms.Connectivity{Attempting: 4, Failing: 3, Observation: 75, Association: 1, Authentication: 1, Network: 2,
		PctAssociation: 25, PctAuthentication: 25, PctNetwork: 50}
	if c != want {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
	if (ObserveConnectivity(nil) != wnms.Connectivity{}) {
		t.Fatal("an empty slot observes something")
	}
}

func TestObservePerformance(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	// a: rates 10 and 16 → mean 13 (not low), retry 20 and 12 → 16 (high).
	// b: RSSI −80 and −72 → mean −76 (low); not sticky (−72 is not below −75).
	// c: RSSI −78, −79 with neighbours −60, −65 (≥ 10 dB better): sticky, and low RSSI.
	// d: fine. e: rate 11 (low).
	// Troubled a, b, c, e = 4 of 5 = 80 %.
	p := ObservePerformance([]wnms.SlotSample{
		{MAC: "a", DataRateMbps: 10, RetryRatePct: 20, RSSI: -60, BestNeighborRSSI: nil}, {MAC: "a", DataRateMbps: 16, RetryRatePct: 12, RSSI: -62, BestNeighborRSSI: nil},
		{MAC: "b", DataRateMbps: 50, RetryRatePct: 1, RSSI: -80, BestNeighborRSSI: f(-50)}, {MAC: "b", DataRateMbps: 50, RetryRatePct: 1, RSSI: -72, BestNeighborRSSI: nil},
		{MAC: "c", DataRateMbps: 50, RetryRatePct: 1, RSSI: -78, BestNeighborRSSI: f(-60)}, {MAC: "c", DataRateMbps: 50, RetryRatePct: 1, RSSI: -79, BestNeighborRSSI: f(-65)},
		{MAC: "d", DataRateMbps: 300, RetryRatePct: 2, RSSI: -50, BestNeighborRSSI: f(-70)},
		{MAC: "e", DataRateMbps: 11, RetryRatePct: 0, RSSI: -55, BestNeighborRSSI: nil},
	})
	want := wnms.Performance{Clients: 5, Troubled: 4, Observation: 80, LowDataRate: 1, HighRetry: 1, LowRSSI: 2, Sticky: 1,
		PctLowDataRate: 20, PctHighRetry: 20, PctLowRSSI: 40, PctSticky: 20}
	if p != want {
		t.Fatalf("got %+v\nwant %+v", p, want)
	}
	if got := DataRate([]float64{100, 150, 200}); got != (Obs{150, 3}) {
		t.Fatalf("data rate %+v", got)
	}
}
