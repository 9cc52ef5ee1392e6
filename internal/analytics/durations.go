package analytics

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// durations are the analytics periods offered, in days.
var durations = []int{7, 14, 30, 60, 90, 180, 365}

// subDuration is one entry of a duration's list: a label (a day
// dd/MM/yyyy, a month MM/yyyy, or "all") or a [start, end] pair of day
// labels.
type subDuration struct {
	Label string
	Start string
	End   string
}

// MarshalJSON writes a label as a string and a pair as [start, end].
func (d subDuration) MarshalJSON() ([]byte, error) {
	if d.Label != "" {
		return json.Marshal(d.Label)
	}
	return json.Marshal([2]string{d.Start, d.End})
}

// subDurations maps each duration to its entries; it marshals as a JSON
// object keyed by the duration, in the order of durations.
type subDurations []struct {
	Days    int
	Entries []subDuration
}

// MarshalJSON writes the object with its keys in duration order.
func (s subDurations) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, d := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + strconv.Itoa(d.Days) + `":`)
		e, err := json.Marshal(d.Entries)
		if err != nil {
			return nil, err
		}
		b.Write(e)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

const (
	dayLabel   = "02/01/2006"
	monthLabel = "01/2006"
)

// subDurationsFor builds the sub-durations of every duration for the day
// of now (already in the location's time zone). Every list runs oldest
// first, so the entry holding today comes last, just before "all":
//
//   - 7: the 7 days ending today;
//   - 14, 30: [start, end] windows of 7 days ending today, covering the
//     duration; the oldest window is shorter when 7 does not divide it
//     (30 = 2 + 4×7);
//   - 60, 90, 180: [start, end] windows of 30 days ending today;
//   - 365: the 12 months ending with the current month, MM/yyyy.
func subDurationsFor(now time.Time) subDurations {
	y, m, d := now.Date()
	// Calendar arithmetic at noon UTC: no daylight-saving gap can move a
	// day label.
	today := time.Date(y, m, d, 12, 0, 0, 0, time.UTC)
	day := func(back int) string { return today.AddDate(0, 0, -back).Format(dayLabel) }
	all := subDuration{Label: "all"}
	out := make(subDurations, len(durations))
	for i, n := range durations {
		out[i].Days = n
		var e []subDuration
		switch {
		case n == 7:
			for back := n - 1; back >= 0; back-- {
				e = append(e, subDuration{Label: day(back)})
			}
		case n == 365:
			first := time.Date(y, m, 1, 12, 0, 0, 0, time.UTC)
			for back := 11; back >= 0; back-- {
				e = append(e, subDuration{Label: first.AddDate(0, -back, 0).Format(monthLabel)})
			}
		default:
			size := 30
			if n < 60 {
				size = 7
			}
			e = windows(n, size, day)
		}
		out[i].Entries = append(e, all)
	}
	return out
}

// windows splits the n days ending today into [start, end] windows of size
// days, oldest first; the oldest may be shorter.
func windows(n, size int, day func(back int) string) []subDuration {
	var rev []subDuration
	for end := 0; end < n; end += size {
		start := min(end+size, n) - 1
		rev = append(rev, subDuration{Start: day(start), End: day(end)})
	}
	out := make([]subDuration, len(rev))
	for i, w := range rev {
		out[len(rev)-1-i] = w
	}
	return out
}
