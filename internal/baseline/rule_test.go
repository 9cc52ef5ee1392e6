package baseline

import (
	"github.com/wnms/wnms/internal/wnms"
	"math"
	"math/big"
	"testing"
	"time"
)

// binomialTails are P(X ≥ a) for a = 0 … n, summed term by term in
// 256-bit floats: P(X = 0) = (1−p)^n, then each term from the one before.
func binomialTails(n int, p float64) []float64 {
	const prec = 256
	f := func(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }
	pf, q := f(p), f(1)
	q.Sub(q, pf)
	odds := new(big.Float).SetPrec(prec).Quo(pf, q)
	terms := make([]*big.Float, n+1)
	terms[0] = f(1)
	for i := 0; i < n; i++ {
		terms[0].Mul(terms[0], q)
	}
	for k := 0; k < n; k++ {
		t := new(big.Float).SetPrec(prec).Mul(terms[k], odds)
		t.Mul(t, f(float64(n-k)))
		terms[k+1] = t.Quo(t, f(float64(k+1)))
	}
	out := make([]float64, n+2)
	sum := f(0)
	for k := n; k >= 0; k-- {
		sum.Add(sum, terms[k])
		out[k], _ = sum.Float64()
	}
	return out
}

func TestBinomialTail(t *testing.T) {
	// Worked by hand: P(X ≥ 7 | 10, 0.2) = 120·0.2⁷·0.8³ + 45·0.2⁸·0.8² +
	// 10·0.2⁹·0.8 + 0.2¹⁰ = 0.0008643584.
	if got := BinomialTail(10, 7, 0.2); math.Abs(got-0.0008643584) > 1e-15 {
		t.Errorf("P(X ≥ 7 | 10, 0.2) = %v", got)
	}
	for _, tc := range []struct {
		n, a int
		p    float64
		want float64
	}{{5, 0, 0.3, 1}, {5, 6, 0.3, 0}, {5, 5, 0, 0}, {5, 1, 1, 1}, {1, 1, 0.25, 0.25}, {6, 6, 0.5, 1.0 / 64}} {
		if got := BinomialTail(tc.n, tc.a, tc.p); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("P(X ≥ %d | %d, %v) = %v, want %v", tc.a, tc.n, tc.p, got, tc.want)
		}
	}
	// Against exact sums, from the middle of the distribution to far in
	// its tails, up to 3,000 clients (where p^n underflows a float64).
	for _, n := range []int{1, 5, 6, 10, 45, 100, 400, 3000} {
		for _, p := range []float64{0.01, 0.05, 0.2, 0.5, 0.93} {
			tails := binomialTails(n, p)
			for _, a := range []int{1, 2, 3, n / 20, n / 10, n / 4, n / 2, 3 * n / 4, n - 1, n} {
				if a < 0 || a > n {
					continue
				}
				want := tails[a]
				got := BinomialTail(n, a, p)
				if want == 0 && got == 0 {
					continue
				}
				if rel := math.Abs(got-want) / want; rel > 1e-9 || math.IsNaN(got) {
					t.Errorf("P(X ≥ %d | %d, %v) = %g, want %g (relative error %g)", a, n, p, got, want, rel)
				}
			}
		}
	}
	// MinSignificant: 7 of 10 at 20 % (0.00086 < 0.001; 6 of 10: 0.0064).
	if got := MinSignificant(10, 0.2, 0.001); got != 7 {
		t.Errorf("MinSignificant(10, 0.2, 0.001) = %d, want 7", got)
	}
	if got := MinSignificant(5, 0.5, 0.001); got != 6 { // 5 of 5: 1/32, never improbable enough
		t.Errorf("MinSignificant(5, 0.5, 0.001) = %d, want 6", got)
	}
}

// rule is decisions §24 said directly: whether a failing of n clients is
// anomalous against the baseline mean ± sd.
func rule(a, n int, mean, sd float64, p Params) bool {
	obs := 100 * float64(a) / float64(n)
	return n >= p.MinSamples && a >= p.MinClients && obs > mean+p.K*max(sd, p.MinSigma) &&
		BinomialTail(n, a, max(mean/100, MinRate)) < p.Alpha
}

// For every slot size, baseline and σ, an observation is above the
// threshold exactly when the rule holds for it, so that anomalous ⇔
// observation > threshold, as a vendor client reads it. The performance
// baseline's integer threshold never lets through a slot with too few
// clients or an unsurprising count, and its k·σ part moves by its rounding
// at most.
func TestThresholdIsTheRule(t *testing.T) {
	def := Params{K: DefaultK, MinSamples: DefaultMinSamples, MinClients: DefaultMinClients, MinSigma: DefaultMinSigma, Alpha: DefaultAlpha}
	other := Params{K: 3, MinSamples: 8, MinClients: 1, MinSigma: 0, Alpha: 0.05}
	checked := 0
	for _, p := range []Params{def, other} {
		for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 9, 10, 12, 17, 25, 33, 45, 60, 99, 100, 101, 150, 260, 301, 512, 1000, 2999} {
			for _, mean := range []float64{0, 0.3, 1, 2.5, 7, 16.6667, 33, 50, 80, 99} {
				for _, sd := range []float64{0, 0.4, 2, 4.99, 5, 8.165, 20, 45} {
					fl := Threshold(mean, sd, n, p)
					ip := p
					ip.IntThreshold = true
					it := Threshold(mean, sd, n, ip)
					if it != math.Trunc(it) {
						t.Fatalf("integer threshold %v", it)
					}
					need := p.MinClients
					if p.Alpha > 0 {
						need = max(need, MinSignificant(n, max(mean/100, MinRate), p.Alpha))
					}
					kSigma := mean + p.K*max(sd, p.MinSigma)
					for a := 0; a <= n; a++ {
						obs := wnms.CompleteConnectivity(wnms.Connectivity{Attempting: n, Failing: a}).Observation
						want := rule(a, n, mean, sd, p)
						if got := obs > fl; got != want {
							t.Fatalf("n %d, %d failing, baseline %v σ %v %+v: above threshold %v is %v, the rule says %v", n, a, mean, sd, p, fl, got, want)
						}
						flagged := obs > it
						if flagged && (n < p.MinSamples || a < need || obs <= math.Round(kSigma)) {
							t.Fatalf("n %d, %d failing, baseline %v σ %v: flagged by integer threshold %v against the rule", n, a, mean, sd, it)
						}
						if !flagged && want && obs > math.Ceil(kSigma) && obs > math.Ceil(100*float64(need-1)/float64(n)) {
							t.Fatalf("n %d, %d failing, baseline %v σ %v: not flagged by integer threshold %v", n, a, mean, sd, it)
						}
						checked++
					}
				}
			}
		}
	}
	t.Logf("%d slots checked", checked)
}

// The rule on the slots that taught it: each case says why.
func TestRuleEdgeCases(t *testing.T) {
	utc := time.UTC
	def := Params{K: DefaultK, MinSamples: DefaultMinSamples, Direction: HigherIsWorse,
		MinClients: DefaultMinClients, MinSigma: DefaultMinSigma, Alpha: DefaultAlpha}
	days := func(value float64, samples int) map[string]Obs {
		return map[string]Obs{"2026-11-19 10:00": {value, samples}, "2026-11-18 10:00": {value, samples}, "2026-11-17 10:00": {value, samples}}
	}
	for _, tc := range []struct {
		name      string
		obs       Obs
		hist      map[string]Obs
		p         Params
		threshold float64
		anomalous bool
	}{
		// σ = 0: a history without failures. One failing client of six
		// (16.7 %) was an anomaly under k·σ alone. Now, with 5 % assumed,
		// 4 clients are needed (P(X ≥ 3 | 6, 0.05) = 0.0022 is not below
		// 0.001, P(X ≥ 4) = 8.6e-5 is): the bar is the observation of 3 of 6.
		{"σ 0, 1 of 6 failing", Obs{100.0 / 6, 6}, days(0, 6), def, 100 * 3.0 / 6, false},
		// 3 of 6 is the background of a healthy network now and then.
		{"σ 0, 3 of 6 failing", Obs{50, 6}, days(0, 6), def, 100 * 3.0 / 6, false},
		{"σ 0, 4 of 6 failing", Obs{100 * 4.0 / 6, 6}, days(0, 6), def, 100 * 3.0 / 6, true},
		// One client, failing: too few samples; the bar is 100.
		{"one client", Obs{100, 1}, days(0, 6), def, 100, false},
		// 3 of 3 against a baseline of 0: 3 clients, but 3 < 5 samples.
		{"3 of 3 failing", Obs{100, 3}, days(0, 3), def, 100, false},
		// A full outage: 45 of 45 against 4 % (σ 0, 5 % assumed):
		// anomalous. The bar is the observation of 8 of 45: P(X ≥ 9 | 45,
		// 0.05) < 0.001.
		{"full outage", Obs{100, 45}, days(4, 45), def, 100 * 8.0 / 45, true},
		// 5 of 100 against 1 %: 5 clients, but 5 % is not above 1 + 2·5
		// (the σ floor) = 11, nor improbable at 5 %: the least count that
		// is, is 14 (the bar 13 %).
		{"5 of 100 against 1 %", Obs{5, 100}, days(1, 100), def, 13, false},
		// 15 of 100 against 1 %: above 13, and improbable.
		{"15 of 100 against 1 %", Obs{15, 100}, days(1, 100), def, 13, true},
		// A performance slot: the count bar (3 of 7, 42.86 %: 4 are needed
		// at 5 %) rounds up to 43, so 3 troubled clients are never enough.
		{"performance, 3 of 7", Obs{100 * 3.0 / 7, 7}, days(0, 7), Params{K: 2, MinSamples: 5, MinClients: 3, MinSigma: 5,
			Alpha: 0.001, IntThreshold: true}, 43, false},
		// Data rate, σ 0 at 100 Mbps: the floor is 5 % of the baseline, so
		// the threshold is 100 − 2·5 = 90 and 95 Mbps is not anomalous
		// (under k·σ alone any rate below 100 was).
		{"data rate, σ 0", Obs{95, 6}, days(100, 6), Params{K: 2, MinSamples: 5, MinSigma: 5, Direction: LowerIsWorse}, 90, false},
		{"data rate, σ 0, a fall", Obs{80, 6}, days(100, 6), Params{K: 2, MinSamples: 5, MinSigma: 5, Direction: LowerIsWorse}, 90, true},
		{"data rate, too few samples", Obs{1, 4}, days(100, 6), Params{K: 2, MinSamples: 5, MinSigma: 5, Direction: LowerIsWorse}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Evaluate(ms("2026-11-20 10:00", utc), tc.obs, utc, history(utc, tc.hist), tc.p)
			if r.Threshold == nil || !near(*r.Threshold, tc.threshold) || r.Anomalous != tc.anomalous {
				t.Fatalf("threshold %v anomalous %v; want %v %v", deref(r.Threshold), r.Anomalous, tc.threshold, tc.anomalous)
			}
			beyond := tc.obs.Value > *r.Threshold
			if tc.p.Direction == LowerIsWorse {
				beyond = tc.obs.Value < *r.Threshold
			}
			if beyond != r.Anomalous {
				t.Fatalf("observation %v beyond threshold %v is %v, anomalous %v", tc.obs.Value, *r.Threshold, beyond, r.Anomalous)
			}
		})
	}
}
