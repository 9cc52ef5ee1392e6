// Package baseline holds the arithmetic of baselines: 15-minute slots, the
// baseline of a slot from the history of the same slot of the day, its
// threshold, and whether an observation is anomalous. It knows nothing of
// where observations come from.
//
// The rules:
//   - time is cut into 15-minute slots aligned to the Unix epoch; a slot is
//     named by its start;
//   - the baseline of a slot is the mean, and its standard deviation the
//     population standard deviation, of the observations of the same slot
//     of the day (at the location's wall-clock time) on the previous 14
//     days that have at least one sample; with fewer than 3 such days, of
//     the previous 96 slots (24 hours) that have at least one sample; with
//     fewer than 4 of those there is no baseline;
//   - where higher is worse (connectivity and performance: the percentage
//     of a slot's n clients that are affected, failing or in trouble) a
//     slot is anomalous only when all of these hold (decisions §24): it has
//     at least the minimum samples (clients); at least the minimum affected
//     clients; an observation above baseline + k·max(σ, the σ floor); and
//     an affected count improbable at the baseline's rate, the one-sided
//     binomial P(X ≥ affected | n, p0) below α, with p0 = max(baseline/100,
//     5 %). A σ of 0 (a history without a single failure) so no longer makes
//     one failing client of six an anomaly. The service judges against the
//     median of the history and its median absolute deviation (Robust)
//     rather than the mean and σ it reports, so that one earlier outage at
//     the same time of day does not hide a repeat of it;
//   - a connectivity slot of band ANY is also anomalous when the clients
//     of one band of it alone pass the rule against the slot's history,
//     at α divided by the number of bands (EvaluateParts, PartBar);
//   - a performance slot of all SSIDs (the service's: a floor's) is also
//     anomalous when the clients of one AP radio (an AP on one band) pass
//     the AP test (APRule, EvaluateRadios): the same clients on the radio
//     half an hour apart (wnms.ChangeSpan), at least 2 of them, at least 1
//     client of the radio troubled, and their mean RSSI fell by more than max(8 dB,
//     z·spread), or their mean retry rate rose by more than max(15 points,
//     z·spread), beyond the radio's usual change (the median and median
//     absolute deviation of its change in its history, 0 without one), z
//     the normal quantile of α divided by the number of tests. A coverage
//     hole or co-channel interference troubles an AP's few clients, which
//     the floor's share dilutes; the change of the same clients, unlike
//     the radio's mean, does not move with which clients came;
//   - where lower is worse (a client's data rate, in Mbps) the slot is
//     anomalous when it has the minimum samples and its observation is
//     below baseline − k·max(σ, floor × baseline / 100): the σ floor, given
//     in percentage points, reads there as a percentage of the baseline;
//   - the threshold is the effective bar of the slot: the observation is
//     anomalous exactly when it is above it (below, for data rate). Where
//     higher is worse it is the larger of baseline + k·max(σ, floor) and
//     the largest observation with too few affected clients for the slot's
//     n (100·(a−1)/n, a the fewest affected clients that pass the minimum
//     and the binomial test), or, lower, the bar of a band that passes
//     (PartBar) or of an AP radio that passes (APFinding.Bar: the
//     observation with one troubled client of the radio fewer than the
//     test needs, the others as they are); a slot with too few samples
//     has the bar 100
//     (0 for data rate), which no observation passes. The performance
//     baseline's threshold is an integer: its k·σ part is rounded, its
//     count part rounded up, so that a slot above it still has enough
//     affected clients.
package baseline

import (
	"math"
	"slices"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// Slot geometry and history.
const (
	SlotsPerDay      = 96
	HistoryDays      = 14
	MinHistoryDays   = 3
	MinFallbackSlots = 4
	// DefaultK and DefaultMinSamples are the defaults of --baseline-k and
	// --baseline-min-samples.
	DefaultK          = 2.0
	DefaultMinSamples = 5
	// DefaultMinClients, DefaultMinSigma and DefaultAlpha are the defaults
	// of --anomaly-min-clients, --anomaly-min-sigma (percentage points)
	// and --anomaly-alpha.
	DefaultMinClients = 3
	DefaultMinSigma   = 5.0
	DefaultAlpha      = 0.001
	// MinRate is the least baseline rate the binomial test assumes (5 %):
	// a history without failures does not make a few failures improbable.
	// A few failing attempts in a hundred are what a healthy network shows
	// (a wrong password, a client walking out of range); decisions §24's
	// 1 % flagged three such failures among five evening clients (0.09
	// false alarms per quiet site-day in bench/score, against 0.01 at 5 %,
	// with the same recall).
	MinRate = 0.05
)

const slotMs = int64(wnms.SlotDuration / time.Millisecond)

// MaxSlots is the most slots Slots lists: those of the longest window a
// baseline call covers (31 days).
const MaxSlots = 31*SlotsPerDay + 1

// Slots lists the slots that start within [from, to] (Unix ms), oldest
// first, at most MaxSlots of them. The count is computed before the loop,
// so no window, however wide, makes it run past the end of int64 or
// allocate without bound; the calls check their windows (at most 31 days)
// before they get here, so the cap never cuts a real answer.
func Slots(from, to int64) []int64 {
	first := wnms.SlotOf(from)
	if first < from {
		first += slotMs
	}
	if to < first {
		return nil
	}
	n := MaxSlots
	if span := uint64(to) - uint64(first); span/uint64(slotMs) < uint64(MaxSlots) {
		n = int(span/uint64(slotMs)) + 1
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = first + int64(i)*slotMs
	}
	return out
}

// Direction says which way an observation gets worse.
type Direction int

const (
	// HigherIsWorse: connectivity and performance (percentages of clients
	// in trouble).
	HigherIsWorse Direction = iota
	// LowerIsWorse: data rate.
	LowerIsWorse
)

// Params are a baseline's settings. MinClients, MinSigma and Alpha are the
// rest of the anomaly rule (see the package comment); their zero values
// leave that part out (Alpha 0: no binomial test), which is the plain
// k·σ rule.
type Params struct {
	K            float64
	MinSamples   int
	Direction    Direction
	IntThreshold bool // the performance baseline's threshold is an integer
	// MinClients is the fewest affected clients an anomalous slot has
	// (higher is worse only).
	MinClients int
	// MinSigma is the floor under σ, in percentage points (for data rate,
	// percent of the baseline).
	MinSigma float64
	// Alpha is the significance of the binomial test (higher is worse
	// only); 0: no test.
	Alpha float64
	// Robust judges a slot (higher is worse only) against the median of
	// its history and the spread of its median absolute deviation
	// (×1.4826, σ for normal data) rather than against the mean and σ it
	// reports: one earlier outage at the same time of day (100 % among
	// days of 0 %) no longer lifts the bar of the slot above 100 %, nor the
	// rate of its binomial test, for the two weeks it stays in the
	// history. false: the mean and σ, as reported.
	Robust bool
}

// Obs is the observation of one slot; Samples is what it was computed
// from (noOfSamplesForObservation), 0 when the slot has no data.
type Obs struct {
	Value   float64
	Samples int
}

// Result is a slot's baseline; the pointers are nil when there is none.
type Result struct {
	Baseline, StdDev, Threshold *float64
	Anomalous                   bool
}

// History answers the observation of a slot (by its start, Unix ms).
type History func(slot int64) Obs

// HistorySlots are the slots whose observations a slot's baseline may
// use: first the same wall-clock slot on each of the previous 14 days in
// loc, then the previous 96 slots.
func HistorySlots(slot int64, loc *time.Location) (sameSlot, previous []int64) {
	t := time.UnixMilli(slot).In(loc)
	for d := 1; d <= HistoryDays; d++ {
		p := time.Date(t.Year(), t.Month(), t.Day()-d, t.Hour(), t.Minute(), 0, 0, loc)
		sameSlot = append(sameSlot, wnms.SlotOf(p.UnixMilli()))
	}
	for i := int64(1); i <= SlotsPerDay; i++ {
		previous = append(previous, slot-i*slotMs)
	}
	return sameSlot, previous
}

// Part is one part of a slot's clients (those of one band): how many
// there are and how many of them are affected.
type Part struct{ Clients, Affected int }

// Evaluate computes the baseline of slot for the observation obs. Where
// higher is worse, obs.Value is the percentage of obs.Samples clients that
// are affected, so the affected count is obs.Value × obs.Samples / 100.
func Evaluate(slot int64, obs Obs, loc *time.Location, history History, p Params) Result {
	return EvaluateParts(slot, obs, 0, nil, loc, history, p)
}

// EvaluateParts is Evaluate for a slot of affected clients (higher is
// worse) whose clients fall into parts (its bands): the slot is also
// anomalous when one part alone passes the rule against the slot's own
// history (PartBar), a trouble concentrated on one band that the slot's
// share of affected clients dilutes. The threshold is then the lower
// bar PartBar gives, so that anomalous ⇔ observation > threshold still
// holds.
func EvaluateParts(slot int64, obs Obs, affected int, parts []Part, loc *time.Location, history History, p Params) Result {
	sameSlot, previous := HistorySlots(slot, loc)
	values := collect(sameSlot, history)
	if len(values) < MinHistoryDays {
		values = collect(previous, history)
		if len(values) < MinFallbackSlots {
			return Result{}
		}
	}
	mean, sd := meanStd(values)
	level, spread := mean, sd
	if p.Robust && p.Direction == HigherIsWorse {
		level, spread = medianSpread(values)
	}
	th := PartsThreshold(level, spread, obs.Samples, affected, parts, p)
	r := Result{Baseline: &mean, StdDev: &sd, Threshold: &th}
	if p.Direction == LowerIsWorse {
		r.Anomalous = obs.Value < th
	} else {
		r.Anomalous = obs.Value > th
	}
	return r
}

// Threshold is the effective bar of a slot of n samples against a
// baseline of mean and σ sd (see the package comment): an observation of
// the slot is anomalous exactly when it is above it (below, for data
// rate). With Params.Robust, Evaluate passes the history's median and
// robust spread (medianSpread) as mean and sd.
func Threshold(mean, sd float64, n int, p Params) float64 {
	if p.Direction == LowerIsWorse {
		th := mean - p.K*max(sd, p.MinSigma/100*mean)
		if n < p.MinSamples || n <= 0 {
			th = min(th, 0) // no rate is below 0
		}
		if p.IntThreshold {
			th = math.Round(th)
		}
		return th
	}
	kSigma := mean + p.K*max(sd, p.MinSigma)
	// count is the largest observation with too few affected clients:
	// 100·(need−1)/n, need the fewest that pass the minimum and the
	// binomial test (n + 1 when none do). It is computed as an observation
	// is (100 × count / n), so that the observation of need−1 clients is
	// equal to it, not above. With too few samples it is 100, which no
	// observation is above.
	count := math.Inf(-1)
	if n <= 0 || n < p.MinSamples {
		count = 100
	} else {
		need := p.MinClients
		if p.Alpha > 0 {
			need = max(need, MinSignificant(n, max(mean/100, MinRate), p.Alpha))
		}
		if need > 0 {
			count = 100 * float64(need-1) / float64(n)
		}
	}
	if p.IntThreshold {
		return max(math.Round(kSigma), math.Ceil(count))
	}
	return max(kSigma, count)
}

// PartsThreshold is Threshold for a slot of n clients, affected of them,
// whose clients fall into parts: the lower of Threshold and the bar of
// PartBar when a part passes the rule.
func PartsThreshold(mean, sd float64, n, affected int, parts []Part, p Params) float64 {
	th := Threshold(mean, sd, n, p)
	if bar, ok := PartBar(mean, sd, n, affected, parts, p); ok && bar < th {
		th = bar
	}
	return th
}

// PartBar is the bar that parts of a slot (its bands) set for it, where
// higher is worse: ok when one part of at least the minimum samples alone
// passes the rule, judged against the slot's baseline of mean and σ sd
// (the slot's history, not the part's): at least the minimum affected
// clients, a share of them above mean + k·max(σ, floor), and a count
// improbable at the slot's rate, P(X ≥ affected of the part | its
// clients, max(mean/100, MinRate)) below α divided by the number of parts
// (each part is one more chance of a fluke). The bar is the observation
// the slot of n clients, affected of them, would have with one affected
// client of that part fewer than the part needs (the rest as they are):
// 100·(affected − part's affected + need − 1)/n, below the observation,
// which is above it exactly because the part has what it needs. Of
// several such parts, the lowest bar. For an integer threshold the bar is
// rounded down, which keeps it below the observation.
func PartBar(mean, sd float64, n, affected int, parts []Part, p Params) (float64, bool) {
	if p.Direction != HigherIsWorse || p.Alpha <= 0 || len(parts) == 0 || n < p.MinSamples || n <= 0 {
		return 0, false
	}
	alpha := p.Alpha / float64(len(parts))
	kSigma := mean + p.K*max(sd, p.MinSigma)
	bar, ok := 0.0, false
	for _, part := range parts {
		if part.Clients < p.MinSamples || part.Affected < p.MinClients || part.Affected > part.Clients {
			continue
		}
		need := max(p.MinClients, MinSignificant(part.Clients, max(mean/100, MinRate), alpha))
		for need <= part.Clients && !(100*float64(need)/float64(part.Clients) > kSigma) {
			need++
		}
		if part.Affected < need {
			continue
		}
		b := 100 * float64(affected-part.Affected+need-1) / float64(n)
		if p.IntThreshold {
			b = math.Floor(b)
		}
		if !ok || b < bar {
			bar, ok = b, true
		}
	}
	return bar, ok
}

func collect(slots []int64, history History) []float64 {
	var out []float64
	for _, s := range slots {
		if o := history(s); o.Samples >= 1 {
			out = append(out, o.Value)
		}
	}
	return out
}

// madScale makes the median absolute deviation of normal data its σ.
const madScale = 1.4826

// medianSpread is the median of v and its median absolute deviation
// scaled to read as a σ (madScale): what most of the days did, whatever
// one or two days far from them did (an earlier outage). The median of
// an even count is the mean of the two middle values.
func medianSpread(v []float64) (median, spread float64) {
	med := func(x []float64) float64 {
		slices.Sort(x)
		m := len(x) / 2
		if len(x)%2 == 0 {
			return (x[m-1] + x[m]) / 2
		}
		return x[m]
	}
	s := slices.Clone(v)
	median = med(s)
	for i, x := range v {
		s[i] = math.Abs(x - median)
	}
	return median, madScale * med(s)
}

// meanStd is the mean and the population standard deviation.
func meanStd(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(v)))
}

// APRule is the test of the clients of each AP's radio (an AP on one
// band), which finds a trouble of one AP that the share of troubled
// clients of its floor dilutes: a coverage hole (its power drops, and
// its clients' signal with it) or co-channel interference (another
// network on its channel, and its clients retry). It judges the change
// of what the same clients went through on the radio over
// wnms.ChangeSpan (wnms.APPerformance): clients at their desks hear their
// AP as they did half an hour ago, whichever clients the slot has, so
// that the change is near 0 where nothing happened and plain where the AP
// changed. A radio of a slot passes when all of these hold:
//   - at least MinPaired of its clients were on it ChangeSpan before too
//     (at the same place), and at least MinTroubled of its clients are
//     troubled (as the performance observation judges them, by their
//     means on the radio);
//   - their mean RSSI fell by more than MinDropDB beyond the radio's usual
//     change, or by more than z·spread when that is more; or their mean
//     retry rate rose by more than MinRisePct points beyond it, or by
//     more than z·spread. The usual change and its spread are the median
//     and the median absolute deviation (×1.4826) of the radio's change in
//     its history (the same slots as a baseline's: the same slot of the
//     day on the previous days with the minimum paired clients, else the
//     previous 96 slots), 0 and 0 without one: the change of the same
//     clients is 0 where nothing changed. z is the one-sided normal
//     quantile of Alpha divided by the number of tests made in the slot
//     (two a radio with the paired clients): each radio is one more chance
//     of a fluke.
type APRule struct {
	MinPaired, MinTroubled int
	MinDropDB, MinRisePct  float64
	Alpha                  float64
}

// DefaultAPRule is the AP test wnms runs on performance (see APRule). Its
// floors were measured on the simulator's records (docs/bench-score.md):
// over 30 seeds a coverage hole took 12 to 20 dB from the mean signal of
// its AP's paired clients, co-channel interference added 24 to 31 points
// to their mean retry rate, and where nothing happened (300 quiet
// site-days) the same means changed by at most 4.2 dB and 8.6 points.
var DefaultAPRule = APRule{MinPaired: 2, MinTroubled: 1, MinDropDB: 8, MinRisePct: 15, Alpha: DefaultAlpha}

// RadioHistory answers the observations of a radio's clients in a slot
// (by its start, Unix ms); ok false when the radio had no clients then.
type RadioHistory func(slot int64, r wnms.APObsRow) (wnms.APPerformance, bool)

// APFinding is a radio that passed the AP test, and what it makes of its
// slot: Bar is the observation of the slot (of n clients, affected of
// them) with one troubled client of the radio fewer than the test needs,
// the others as they are, rounded down for an integer threshold: the
// slot's observation is above it exactly because the radio has what it
// needs, so that anomalous ⇔ observation > threshold still holds with the
// threshold lowered to it (as PartBar's).
type APFinding struct {
	Radio  wnms.APObsRow
	Reason string // wnms.APReasonLowRSSI or wnms.APReasonHighRetry
	// Observation is the radio's clients' change over wnms.ChangeSpan (dB
	// of RSSI, or points of retry rate), Baseline its usual change, and
	// Threshold the change past which (below, for RSSI; above, for retry)
	// the radio passes.
	Observation, Baseline, Threshold float64
	Bar                              float64
}

// APTest runs the rule on the radios of a slot of n clients, affected of
// them, and answers the radio whose finding sets the lowest bar (ok false
// when none passes).
func (r APRule) APTest(slot int64, n, affected int, radios []wnms.APObsRow, loc *time.Location, history RadioHistory, intThreshold bool) (APFinding, bool) {
	if r.Alpha <= 0 || n <= 0 {
		return APFinding{}, false
	}
	tested := 0
	for _, row := range radios {
		if row.Paired >= max(r.MinPaired, 1) {
			tested++
		}
	}
	if tested == 0 {
		return APFinding{}, false
	}
	z := NormalQuantile(1 - r.Alpha/float64(2*tested))
	sameSlot, previous := HistorySlots(slot, loc)
	var best APFinding
	found := false
	for _, row := range radios {
		if row.Paired < max(r.MinPaired, 1) || row.Troubled < r.MinTroubled {
			continue
		}
		rssi, retry := r.radioChanges(sameSlot, row, history)
		if len(rssi) < MinHistoryDays {
			if rssi, retry = r.radioChanges(previous, row, history); len(rssi) < MinFallbackSlots {
				rssi, retry = nil, nil
			}
		}
		var rssiLevel, rssiSpread, retryLevel, retrySpread float64
		if len(rssi) > 0 {
			rssiLevel, rssiSpread = medianSpread(rssi)
			retryLevel, retrySpread = medianSpread(retry)
		}
		f := APFinding{Radio: row}
		if th := rssiLevel - max(z*rssiSpread, r.MinDropDB); row.RSSIChange() < th {
			f.Reason, f.Observation, f.Baseline, f.Threshold = wnms.APReasonLowRSSI, row.RSSIChange(), rssiLevel, th
		} else if th := retryLevel + max(z*retrySpread, r.MinRisePct); row.RetryChange() > th {
			f.Reason, f.Observation, f.Baseline, f.Threshold = wnms.APReasonHighRetry, row.RetryChange(), retryLevel, th
		} else {
			continue
		}
		f.Bar = 100 * float64(affected-row.Troubled+r.MinTroubled-1) / float64(n)
		if intThreshold {
			f.Bar = math.Floor(f.Bar)
		}
		if !found || f.Bar < best.Bar {
			best, found = f, true
		}
	}
	return best, found
}

// EvaluateRadios is Evaluate for a slot of affected clients (higher is
// worse) whose clients were on the AP radios radios: the slot is also
// anomalous when one radio passes the AP test (rule.APTest) against its
// own history, a trouble of one AP that the slot's share of affected
// clients dilutes. The threshold is then the lower bar of the finding,
// which is answered, so that anomalous ⇔ observation > threshold still
// holds. A slot without a baseline or with too few samples is left as
// Evaluate leaves it.
func EvaluateRadios(slot int64, obs Obs, affected int, radios []wnms.APObsRow, loc *time.Location, history History,
	radioHistory RadioHistory, p Params, rule APRule) (Result, *APFinding) {
	r := Evaluate(slot, obs, loc, history, p)
	if r.Threshold == nil || p.Direction != HigherIsWorse || obs.Samples < p.MinSamples || len(radios) == 0 {
		return r, nil
	}
	f, ok := rule.APTest(slot, obs.Samples, affected, radios, loc, radioHistory, p.IntThreshold)
	if !ok {
		return r, nil
	}
	th := min(*r.Threshold, f.Bar)
	r.Threshold, r.Anomalous = &th, obs.Value > th
	return r, &f
}

// radioChanges are the changes of the radio's clients' mean RSSI and
// mean retry rate in each of slots it had the minimum paired clients in.
func (r APRule) radioChanges(slots []int64, row wnms.APObsRow, history RadioHistory) (rssi, retry []float64) {
	for _, s := range slots {
		if a, ok := history(s, row); ok && a.Paired >= max(r.MinPaired, 1) {
			rssi = append(rssi, a.RSSIChange())
			retry = append(retry, a.RetryChange())
		}
	}
	return rssi, retry
}

// NormalQuantile is the q-quantile of the standard normal distribution
// (0 < q < 1): the z with P(Z ≤ z) = q.
func NormalQuantile(q float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*q-1)
}
