package baseline

import (
	"math"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// radio is a radio's row of a slot: clients, troubled, paired clients and
// their mean changes of RSSI and retry over wnms.ChangeSpan.
func radioRow(box int64, band string, clients, troubled, paired int, rssiChange, retryChange float64) wnms.APObsRow {
	return wnms.APObsRow{LocationID: 2, APBoxID: box, Band: band, APPerformance: wnms.APPerformance{Clients: clients, Troubled: troubled,
		Paired: paired, RSSIChangeSum: rssiChange * float64(paired), RetryChangeSum: retryChange * float64(paired)}}
}

// radioHistory answers each radio (by box and band) the same change on
// every one of days earlier days at the slot's time of day: changes[i]
// on day i+1.
func radioHistory(slot int64, changes map[int64][]float64) RadioHistory {
	return func(s int64, r wnms.APObsRow) (wnms.APPerformance, bool) {
		for i, c := range changes[r.APBoxID] {
			if s == slot-int64(i+1)*24*3600_000 {
				return wnms.APPerformance{Clients: 6, Paired: 5, RSSIChangeSum: 5 * c, RetryChangeSum: 5 * c / 2}, true
			}
		}
		return wnms.APPerformance{}, false
	}
}

// The AP test (APRule.APTest), case by case; each says why.
func TestAPTest(t *testing.T) {
	utc := time.UTC
	slot := ms("2026-11-20 10:00", utc)
	rule := DefaultAPRule
	// z for one radio (two tests): the quantile of 1 − 0.001/2, 3.29; for
	// twelve radios (24 tests), 3.94.
	z1, z12 := NormalQuantile(1-0.001/2), NormalQuantile(1-0.001/24)
	quiet := map[int64][]float64{7: {0, 0.5, -0.5, 0.2}, 8: {0, 0.5, -0.5, 0.2}}
	for _, tc := range []struct {
		name       string
		n, a       int
		radios     []wnms.APObsRow
		hist       map[int64][]float64
		ok         bool
		box        int64
		reason     string
		threshold  float64 // the radio's
		bar        float64
		tolerances float64
	}{
		// A coverage hole: the AP's 5 paired clients lost 15 dB, 3 of its
		// 6 clients are troubled. The history's changes (0, 0.5, −0.5,
		// 0.2) have the median 0.1 and a spread of 0.37·1.4826: the floor
		// of 8 dB sets the radio's threshold, −7.9. The slot's 4 troubled
		// of 40 with one troubled client of the AP fewer than the test
		// needs (1): 100·(4 − 3 + 0)/40 = 2.5, rounded down to 2.
		{"a coverage hole", 40, 4, []wnms.APObsRow{radioRow(7, wnms.Band5GHz, 6, 3, 5, -15, 0)}, quiet,
			true, 7, wnms.APReasonLowRSSI, 0.1 - 8, 2, 0},
		// Co-channel interference: retries 25 points up.
		{"co-channel interference", 40, 9, []wnms.APObsRow{radioRow(8, wnms.Band5GHz, 6, 6, 5, -1, 25)}, quiet,
			true, 8, wnms.APReasonHighRetry, 0.05 + 15, 7, 0},
		// A quiet AP: its clients' signal moved by 3 dB.
		{"a quiet AP", 40, 4, []wnms.APObsRow{radioRow(7, wnms.Band5GHz, 6, 2, 5, -3, 2)}, quiet, false, 0, "", 0, 0, 0},
		// An AP with a single client heard half an hour before: one
		// client that walked to a far corner is not a coverage hole.
		{"a quiet AP with few clients", 40, 2, []wnms.APObsRow{radioRow(7, wnms.Band5GHz, 2, 1, 1, -20, 0)}, quiet,
			false, 0, "", 0, 0, 0},
		// The signal fell but no client of the AP is in trouble: the
		// clients' performance is not worse.
		{"no troubled client", 40, 4, []wnms.APObsRow{radioRow(7, wnms.Band5GHz, 6, 0, 5, -15, 0)}, quiet, false, 0, "", 0, 0, 0},
		// Without a history the usual change is 0.
		{"no history", 40, 4, []wnms.APObsRow{radioRow(7, wnms.Band5GHz, 6, 3, 5, -15, 0)}, nil,
			true, 7, wnms.APReasonLowRSSI, -8, 2, 0},
		// A radio whose clients' signal moves a lot from day to day (−10,
		// 0, +10, −10, +10: median 0, spread 10·1.4826): z·spread, 48.8,
		// is the bar, not the floor.
		{"a history that moves", 40, 4, []wnms.APObsRow{radioRow(7, wnms.Band5GHz, 6, 3, 5, -15, 0)},
			map[int64][]float64{7: {-10, 0, 10, -10, 10}}, false, 0, "", 0, 0, 0},
		// Each radio tested is one more chance of a fluke: a fall of 9 dB
		// against a spread of 2.5 passes alone (z·spread 8.2 < 9) and not
		// among twelve radios (9.85).
		{"one radio of one", 40, 4, []wnms.APObsRow{radioRow(7, wnms.Band5GHz, 6, 3, 5, -9, 0)},
			map[int64][]float64{7: {0, 2.5 / madScale, -2.5 / madScale}}, true, 7, wnms.APReasonLowRSSI, -z1 * 2.5, 2, 1e-9},
		{"one radio of twelve", 40, 4, append([]wnms.APObsRow{radioRow(7, wnms.Band5GHz, 6, 3, 5, -9, 0)}, quietRadios(11)...),
			map[int64][]float64{7: {0, 2.5 / madScale, -2.5 / madScale}}, false, 0, "", -z12 * 2.5, 0, 0},
		// Two radios pass: the one that sets the lower bar (more troubled
		// clients: 100·(9 − 5 + 0)/40 = 10, against 17) is named.
		{"two radios", 40, 9, []wnms.APObsRow{radioRow(7, wnms.Band5GHz, 6, 2, 5, -15, 0), radioRow(8, wnms.Band24GHz, 6, 5, 5, -14, 0)},
			quiet, true, 8, wnms.APReasonLowRSSI, 0.1 - 8, 10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := rule.APTest(slot, tc.n, tc.a, tc.radios, utc, radioHistory(slot, tc.hist), true)
			if ok != tc.ok {
				t.Fatalf("passes %v (%+v), want %v", ok, f, tc.ok)
			}
			if !ok {
				return
			}
			if f.Radio.APBoxID != tc.box || f.Reason != tc.reason || math.Abs(f.Threshold-tc.threshold) > 1e-9+tc.tolerances || f.Bar != tc.bar {
				t.Fatalf("%+v; want AP %d, %s, threshold %v, bar %v", f, tc.box, tc.reason, tc.threshold, tc.bar)
			}
			obs := 100 * float64(tc.a) / float64(tc.n)
			if !(obs > f.Bar) {
				t.Fatalf("the slot's observation %v is not above the bar %v", obs, f.Bar)
			}
		})
	}
}

// quietRadios are n radios whose clients went through nothing.
func quietRadios(n int) []wnms.APObsRow {
	var out []wnms.APObsRow
	for i := range n {
		out = append(out, radioRow(int64(100+i), wnms.Band5GHz, 6, 0, 5, 0, 0))
	}
	return out
}

// For every slot of up to 30 clients, every count of troubled clients,
// every count of them on a radio whose clients' signal fell, and a few
// baselines, the observation is above the threshold exactly when the
// slot passes the rule or the radio passes the AP test (which needs a
// troubled client of its own): anomalous ⇔ observation > threshold holds
// with the AP test too, on the integer threshold of performance.
func TestAPThresholdIsTheRule(t *testing.T) {
	utc := time.UTC
	slot := ms("2026-11-20 10:00", utc)
	p := Params{K: DefaultK, MinSamples: DefaultMinSamples, MinClients: DefaultMinClients, MinSigma: DefaultMinSigma, Alpha: DefaultAlpha,
		IntThreshold: true, Robust: true}
	rule := DefaultAPRule
	checked := 0
	for _, level := range []float64{0, 5, 20} {
		hist := func(s int64) Obs {
			if s < slot && (slot-s)%(24*3600_000) == 0 && slot-s <= 4*24*3600_000 {
				return Obs{Value: level, Samples: 30}
			}
			return Obs{}
		}
		for n := 1; n <= 30; n++ {
			for a := 0; a <= n; a++ {
				for onRadio := 0; onRadio <= min(a, 6); onRadio++ {
					for _, drop := range []float64{0, -15} {
						radios := []wnms.APObsRow{radioRow(7, wnms.Band5GHz, 6, onRadio, 4, drop, 0)}
						obs := wnms.CompletePerformance(wnms.Performance{Clients: n, Troubled: a}).Observation
						r, f := EvaluateRadios(slot, Obs{Value: obs, Samples: n}, a, radios, utc, hist, radioHistory(slot, nil), p, rule)
						floor := Evaluate(slot, Obs{Value: obs, Samples: n}, utc, hist, p)
						apPasses := n >= p.MinSamples && drop < -rule.MinDropDB && onRadio >= rule.MinTroubled
						if want := floor.Anomalous || apPasses; r.Anomalous != want || (obs > *r.Threshold) != want {
							t.Fatalf("%d of %d troubled, %d on the radio, change %v, baseline %v: anomalous %v, above the threshold %v %v; want %v",
								a, n, onRadio, drop, level, r.Anomalous, *r.Threshold, obs > *r.Threshold, want)
						}
						if (f != nil) != apPasses || *r.Threshold != math.Trunc(*r.Threshold) {
							t.Fatalf("%d of %d troubled, %d on the radio, change %v: finding %+v, threshold %v", a, n, onRadio, drop, f, *r.Threshold)
						}
						checked++
					}
				}
			}
		}
	}
	t.Logf("%d slots checked", checked)
}

// The counter's radios: each client counts once on each radio it used,
// judged by its means there; it is paired when it was on the radio (at
// the same place) wnms.ChangeSpan before, and its change is that of its
// means. Samples at no known AP, or of no known band, belong to no radio.
func TestRadioCounts(t *testing.T) {
	ancestors := map[int64][]int64{2: {0, 1, 2}}
	sums := func(n int, rssi, retry, rate float64) wnms.ClientSums {
		return wnms.ClientSums{N: n, RSSI: float64(n) * rssi, Retry: float64(n) * retry, Rate: float64(n) * rate}
	}
	rows := []wnms.ScopedSums{
		// a: on AP 7's 5 GHz radio under two SSIDs (one client there),
		// weak now (−80, from −62 half an hour before).
		{LocationID: 2, Band: wnms.Band5GHz, SSID: "corp", APBoxID: 7, ClientSums: sums(2, -80, 5, 50), Before: sums(3, -62, 5, 50)},
		{LocationID: 2, Band: wnms.Band5GHz, SSID: "guest", APBoxID: 7, ClientSums: sums(1, -80, 5, 50)},
		// a also on AP 8's 2.4 GHz radio, new there.
		{LocationID: 2, Band: wnms.Band24GHz, SSID: "corp", APBoxID: 8, ClientSums: sums(1, -60, 30, 50)},
		// b: on AP 7's 5 GHz radio, fine, retries 4 points up.
		{LocationID: 2, Band: wnms.Band5GHz, SSID: "corp", APBoxID: 7, ClientSums: sums(3, -55, 6, 200), Before: sums(3, -54, 2, 200)},
		// c: at no known AP; d: of no known band.
		{LocationID: 2, Band: wnms.Band5GHz, SSID: "corp", ClientSums: sums(3, -85, 40, 1)},
		{LocationID: 2, Band: wnms.BandUnknown, SSID: "corp", APBoxID: 7, ClientSums: sums(3, -85, 40, 1)},
	}
	for i, mac := range []string{"a", "a", "a", "b", "c", "d"} {
		rows[i].MAC = mac
	}
	c := NewPerfCounter(ancestors)
	for _, x := range rows {
		c.Add(x)
	}
	c.Rows(0)
	got := map[[2]any]wnms.APPerformance{}
	for _, r := range c.Radios(0) {
		got[[2]any{r.APBoxID, r.Band}] = r.APPerformance
	}
	want := map[[2]any]wnms.APPerformance{
		{int64(7), wnms.Band5GHz}:  {Clients: 2, Troubled: 1, LowRSSI: 1, Paired: 2, RSSIChangeSum: -18 - 1, RetryChangeSum: 0 + 4},
		{int64(8), wnms.Band24GHz}: {Clients: 1, Troubled: 1, HighRetry: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("radios %+v, want %+v", got, want)
	}
	for k, w := range want {
		if g := got[k]; g.Clients != w.Clients || g.Troubled != w.Troubled || g.LowRSSI != w.LowRSSI || g.HighRetry != w.HighRetry ||
			g.Paired != w.Paired || math.Abs(g.RSSIChangeSum-w.RSSIChangeSum) > 1e-9 || math.Abs(g.RetryChangeSum-w.RetryChangeSum) > 1e-9 {
			t.Errorf("radio %v: %+v, want %+v", k, g, w)
		}
	}
}
