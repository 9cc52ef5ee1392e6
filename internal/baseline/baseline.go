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
//   - the threshold is baseline + k·σ where higher is worse (connectivity,
//     performance; rounded to an integer for performance) and baseline − k·σ
//     where lower is worse (data rate);
//   - an observation is anomalous when there is a baseline, the slot has at
//     least the minimum number of samples, and the observation is beyond
//     the threshold (strictly).
package baseline

import (
	"math"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// Slot geometry and history.
const (
	SlotDuration     = wnms.SlotDuration
	SlotsPerDay      = 96
	HistoryDays      = 14
	MinHistoryDays   = 3
	MinFallbackSlots = 4
	// DefaultK and DefaultMinSamples are the defaults of --baseline-k and
	// --baseline-min-samples.
	DefaultK          = 2.0
	DefaultMinSamples = 5
)

const slotMs = int64(SlotDuration / time.Millisecond)

// SlotOf is the start (Unix ms) of the slot holding ms.
func SlotOf(ms int64) int64 { return wnms.SlotOf(ms) }

// MaxSlots is the most slots Slots lists: those of the longest window a
// baseline call covers (31 days).
const MaxSlots = 31*SlotsPerDay + 1

// Slots lists the slots that start within [from, to] (Unix ms), oldest
// first, at most MaxSlots of them. The count is computed before the loop,
// so no window, however wide, makes it run past the end of int64 or
// allocate without bound; the calls check their windows (at most 31 days)
// before they get here, so the cap never cuts a real answer.
func Slots(from, to int64) []int64 {
	first := SlotOf(from)
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

// Params are a baseline's settings.
type Params struct {
	K            float64
	MinSamples   int
	Direction    Direction
	IntThreshold bool // the performance baseline's threshold is an integer
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
		sameSlot = append(sameSlot, SlotOf(p.UnixMilli()))
	}
	for i := int64(1); i <= SlotsPerDay; i++ {
		previous = append(previous, slot-i*slotMs)
	}
	return sameSlot, previous
}

// Evaluate computes the baseline of slot for the observation obs.
func Evaluate(slot int64, obs Obs, loc *time.Location, history History, p Params) Result {
	sameSlot, previous := HistorySlots(slot, loc)
	values := collect(sameSlot, history)
	if len(values) < MinHistoryDays {
		values = collect(previous, history)
		if len(values) < MinFallbackSlots {
			return Result{}
		}
	}
	mean, sd := meanStd(values)
	th := mean + p.K*sd
	if p.Direction == LowerIsWorse {
		th = mean - p.K*sd
	}
	if p.IntThreshold {
		th = math.Round(th)
	}
	r := Result{Baseline: &mean, StdDev: &sd, Threshold: &th}
	if obs.Samples >= p.MinSamples && obs.Samples > 0 {
		if p.Direction == LowerIsWorse {
			r.Anomalous = obs.Value < th
		} else {
			r.Anomalous = obs.Value > th
		}
	}
	return r
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
