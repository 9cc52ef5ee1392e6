package baseline

import (
	"github.com/wnms/wnms/internal/wnms"
	"math"
	"testing"
	"time"
)

// The rule against the median of the history (Params.Robust): each case
// says why. The reported baseline and σ stay the mean and σ.
func TestRobustHistory(t *testing.T) {
	utc := time.UTC
	def := Params{K: DefaultK, MinSamples: DefaultMinSamples, Direction: HigherIsWorse,
		MinClients: DefaultMinClients, MinSigma: DefaultMinSigma, Alpha: DefaultAlpha}
	robust := def
	robust.Robust = true
	// An outage on one of four earlier days at the same time: 100 % there,
	// 0 % on the other three. Mean 25, σ = √1875 = 43.30: the k·σ bar is
	// 111.6 %, above any observation, and the binomial rate 25 %.
	outage := map[string]Obs{"2026-11-19 10:00": {100, 45}, "2026-11-18 10:00": {0, 45}, "2026-11-17 10:00": {0, 45}, "2026-11-16 10:00": {0, 45}}
	for _, tc := range []struct {
		name         string
		obs          Obs
		hist         map[string]Obs
		p            Params
		baseline, sd float64
		threshold    float64
		anomalous    bool
	}{
		// Mean and σ: the repeat of the outage is hidden behind the first
		// (seed 9's radius-reject and seed 8's ap-down in bench/score).
		{"an earlier outage, mean and σ", Obs{100, 45}, outage, def, 25, math.Sqrt(1875), 25 + 2*math.Sqrt(1875), false},
		// Median 0, MAD 0: the k·σ bar is the floor, 10 %, and at 5 % the
		// least improbable count of 45 is 9 (the bar is 8 of 45).
		{"an earlier outage, median", Obs{100, 45}, outage, robust, 25, math.Sqrt(1875), 100 * 8.0 / 45, true},
		// The background stays quiet: 5 of 45 is not 9.
		{"an earlier outage, 5 of 45 failing", Obs{100 * 5.0 / 45, 45}, outage, robust, 25, math.Sqrt(1875), 100 * 8.0 / 45, false},
		// A history without an outlier: 10, 20, 30 %. Median 20, MAD 10,
		// spread 14.826: k·σ bar 49.65 (mean and σ: 36.33); at 20 % 7 of
		// 10 are needed, so the bar is 60 either way.
		{"a steady history", Obs{60, 10}, map[string]Obs{"2026-11-19 10:00": {10, 10}, "2026-11-18 10:00": {20, 10}, "2026-11-17 10:00": {30, 10}},
			robust, 20, math.Sqrt(200.0 / 3), 60, false},
		{"a steady history, 7 of 10", Obs{70, 10}, map[string]Obs{"2026-11-19 10:00": {10, 10}, "2026-11-18 10:00": {20, 10}, "2026-11-17 10:00": {30, 10}},
			robust, 20, math.Sqrt(200.0 / 3), 60, true},
		// An even count: 0, 10, 20, 100. Median (10 + 20) / 2 = 15; the
		// deviations 15, 5, 5, 85 have the median 10, spread 14.826: k·σ
		// bar 44.65; at 15 % 10 of 20 are needed (bar 45).
		{"an even count of days", Obs{50, 20}, map[string]Obs{"2026-11-19 10:00": {0, 20}, "2026-11-18 10:00": {10, 20}, "2026-11-17 10:00": {20, 20},
			"2026-11-16 10:00": {100, 20}}, robust, 32.5, math.Sqrt(1568.75), 45, true},
		// Data rate keeps the mean and σ: 100, 120, 140 Mbps, threshold
		// 120 − 2·16.33.
		{"data rate", Obs{80, 6}, map[string]Obs{"2026-11-19 10:00": {100, 6}, "2026-11-18 10:00": {120, 6}, "2026-11-17 10:00": {140, 6}},
			Params{K: 2, MinSamples: 5, MinSigma: 5, Direction: LowerIsWorse, Robust: true}, 120, math.Sqrt(800.0 / 3), 120 - 2*math.Sqrt(800.0/3), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Evaluate(ms("2026-11-20 10:00", utc), tc.obs, utc, history(utc, tc.hist), tc.p)
			if r.Baseline == nil || !near(*r.Baseline, tc.baseline) || !near(*r.StdDev, tc.sd) || !near(*r.Threshold, tc.threshold) ||
				r.Anomalous != tc.anomalous {
				t.Fatalf("baseline %v σ %v threshold %v anomalous %v; want %v %v %v %v", deref(r.Baseline), deref(r.StdDev),
					deref(r.Threshold), r.Anomalous, tc.baseline, tc.sd, tc.threshold, tc.anomalous)
			}
		})
	}
}

// A trouble on one band of a slot (EvaluateParts): each case says why.
func TestPartsOfASlot(t *testing.T) {
	utc := time.UTC
	def := Params{K: DefaultK, MinSamples: DefaultMinSamples, Direction: HigherIsWorse,
		MinClients: DefaultMinClients, MinSigma: DefaultMinSigma, Alpha: DefaultAlpha, Robust: true}
	integer := def
	integer.IntThreshold = true
	quiet := map[string]Obs{"2026-11-19 10:00": {0, 10}, "2026-11-18 10:00": {0, 10}, "2026-11-17 10:00": {0, 10}}
	for _, tc := range []struct {
		name      string
		n, a      int
		parts     []Part
		p         Params
		threshold float64
		anomalous bool
	}{
		// Seed 6's one-bad-ap in bench/score: 4 of the floor's 10 failing,
		// all 4 of them among the 7 on 5 GHz. The floor alone needs 5 of
		// 10 at 5 % (P(X ≥ 4 | 10) = 0.00103, not below 0.001): its bar is
		// 40. The band: P(X ≥ 4 | 7, 5 %) = 0.00019, below 0.001 / 2 (two
		// bands), 3 is not (0.0038): the bar is the floor with 3 of them,
		// 30 %.
		{"one band, 4 of 7", 10, 4, []Part{{3, 0}, {7, 4}}, def, 30, true},
		{"one band, 3 of 7", 10, 3, []Part{{3, 0}, {7, 3}}, def, 40, false},
		// A band of 4 clients is under the minimum samples.
		{"one band of 4, 4 failing", 10, 4, []Part{{6, 0}, {4, 4}}, def, 40, false},
		// Spread over both bands: neither alone is improbable.
		{"both bands, 2 each", 10, 4, []Part{{5, 2}, {5, 2}}, def, 40, false},
		// A slot that passes on its own keeps its own bar: 9 of 16 (5
		// needed, bar 25 %); the bands' bars (50, 43.75) are higher.
		{"the slot passes on its own", 16, 9, []Part{{8, 4}, {8, 5}}, def, 25, true},
		// Too few clients in the slot: the bar is 100 whatever the band.
		{"a slot of 4", 4, 4, []Part{{0, 0}, {4, 4}}, def, 100, false},
		// An integer threshold (the service applies the band test to
		// connectivity only; the arithmetic holds for both): the band's
		// bar rounds down (30), the slot's count bar up (40).
		{"integer threshold, one band", 10, 4, []Part{{3, 0}, {7, 4}}, integer, 30, true},
		{"integer threshold, 3 of 7", 10, 3, []Part{{3, 0}, {7, 3}}, integer, 40, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := wnms.CompleteConnectivity(wnms.Connectivity{Attempting: tc.n, Failing: tc.a})
			r := EvaluateParts(ms("2026-11-20 10:00", utc), Obs{obs.Observation, tc.n}, tc.a, tc.parts, utc, history(utc, quiet), tc.p)
			if r.Threshold == nil || !near(*r.Threshold, tc.threshold) || r.Anomalous != tc.anomalous || *r.Baseline != 0 || *r.StdDev != 0 {
				t.Fatalf("threshold %v anomalous %v; want %v %v", deref(r.Threshold), r.Anomalous, tc.threshold, tc.anomalous)
			}
			if (obs.Observation > *r.Threshold) != r.Anomalous {
				t.Fatalf("observation %v above threshold %v is not anomalous %v", obs.Observation, *r.Threshold, r.Anomalous)
			}
		})
	}
}

// For every split of a slot's clients over two bands, baseline and σ, the
// observation is above the threshold exactly when the slot or one band
// passes the rule (the band against the slot's baseline at α / 2), so
// that anomalous ⇔ observation > threshold holds with bands too; the
// integer threshold flags every slot a band passes.
func TestPartsThresholdIsTheRule(t *testing.T) {
	p := Params{K: DefaultK, MinSamples: DefaultMinSamples, MinClients: DefaultMinClients, MinSigma: DefaultMinSigma, Alpha: DefaultAlpha}
	ip := p
	ip.IntThreshold = true
	partRule := func(a, n, slotN int, mean, sd float64) bool {
		return slotN >= p.MinSamples && n >= p.MinSamples && a >= p.MinClients && 100*float64(a)/float64(n) > mean+p.K*max(sd, p.MinSigma) &&
			BinomialTail(n, a, max(mean/100, MinRate)) < p.Alpha/2
	}
	checked := 0
	for _, mean := range []float64{0, 3, 7, 12, 30} {
		for _, sd := range []float64{0, 4, 9, 25} {
			for n1 := 0; n1 <= 16; n1++ {
				for n2 := 0; n2 <= 16; n2++ {
					n := n1 + n2
					for a1 := 0; a1 <= n1; a1++ {
						for a2 := 0; a2 <= n2; a2++ {
							a := a1 + a2
							parts := []Part{{n1, a1}, {n2, a2}}
							obs := wnms.CompleteConnectivity(wnms.Connectivity{Attempting: n, Failing: a}).Observation
							want := rule(a, n, mean, sd, p) || partRule(a1, n1, n, mean, sd) || partRule(a2, n2, n, mean, sd)
							if got := obs > PartsThreshold(mean, sd, n, a, parts, p); got != want {
								t.Fatalf("%d of %d (bands %d of %d, %d of %d), baseline %v σ %v: above the threshold %v, the rule says %v",
									a, n, a1, n1, a2, n2, mean, sd, got, want)
							}
							if (partRule(a1, n1, n, mean, sd) || partRule(a2, n2, n, mean, sd)) && !(obs > PartsThreshold(mean, sd, n, a, parts, ip)) {
								t.Fatalf("%d of %d (bands %d of %d, %d of %d), baseline %v σ %v: a band passes, the integer threshold does not flag it",
									a, n, a1, n1, a2, n2, mean, sd)
							}
							checked++
						}
					}
				}
			}
		}
	}
	t.Logf("%d slots checked", checked)
}
