package main

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// window is a span in which the server was knowingly down or degraded
// (from a kill to the restarted server's first answer, a PostgreSQL
// restart to the first read that succeeds again): errors inside one are
// expected, errors outside one count against the run.
type window struct {
	What       string
	Start, End time.Time
}

// inWindow reports whether a call from start to end overlaps one of ws.
func inWindow(ws []window, start, end time.Time) bool {
	for _, w := range ws {
		if !end.Before(w.Start) && !start.After(w.End) {
			return true
		}
	}
	return false
}

// ledger compares what the server acknowledged with what the store holds:
// acked holds the keys the load was told were stored (an ingest batch's
// event ids, an answered accounting packet's records, an accepted
// authentication's client), stored how many rows each key has. A key
// acknowledged and not stored is lost; a key stored more than once (acked
// or not) is a duplicate.
type ledger struct {
	Acked, Lost, Duplicated int
	LostKeys, DupKeys       []string // a few of each, sorted, to look at
}

// compare fills a ledger.
func compare(acked map[string]bool, stored map[string]int) ledger {
	l := ledger{Acked: len(acked)}
	for k := range acked {
		if stored[k] == 0 {
			l.Lost++
			l.LostKeys = append(l.LostKeys, k)
		}
	}
	for k, n := range stored {
		if n > 1 {
			l.Duplicated++
			l.DupKeys = append(l.DupKeys, k)
		}
	}
	l.LostKeys, l.DupKeys = firstKeys(l.LostKeys), firstKeys(l.DupKeys)
	return l
}

// compareCounts fills a ledger for records that a key may have many of
// (a client's accepted authentications): acked how many of each key the
// load was told were stored, asked how many it asked for at most, stored
// how many rows each has. Fewer rows than acknowledged are lost; more rows
// than asked for are duplicates (an accept the load got no answer for may
// be stored, once). With one of each key it is compare.
func compareCounts(acked, asked, stored map[string]int) ledger {
	var l ledger
	for k, n := range acked {
		l.Acked += n
		if s := stored[k]; s < n {
			l.Lost += n - s
			l.LostKeys = append(l.LostKeys, k)
		}
	}
	for k, n := range stored {
		if n > max(asked[k], 1) {
			l.Duplicated += n - max(asked[k], 1)
			l.DupKeys = append(l.DupKeys, k)
		}
	}
	l.LostKeys, l.DupKeys = firstKeys(l.LostKeys), firstKeys(l.DupKeys)
	return l
}

// firstKeys is the first five of keys, sorted.
func firstKeys(s []string) []string {
	sort.Strings(s)
	if len(s) > 5 {
		s = s[:5]
	}
	return s
}

func (l ledger) String() string {
	s := fmt.Sprintf("%d acknowledged, %d lost, %d stored twice or more", l.Acked, l.Lost, l.Duplicated)
	if len(l.LostKeys) > 0 {
		s += fmt.Sprintf(" (lost e.g. %v)", l.LostKeys)
	}
	if len(l.DupKeys) > 0 {
		s += fmt.Sprintf(" (duplicated e.g. %v)", l.DupKeys)
	}
	return s
}

// memSample is one reading of the server's resident memory.
type memSample struct {
	At   time.Time
	Life int     // which start of the server (0: the first)
	RSS  float64 // bytes
}

// rssSlope is the growth of resident memory in MB (10^6 bytes) a minute:
// a least-squares line fitted to the samples from `from` on, with one
// intercept for each lifetime of the server (a restart starts low again,
// which is not a fall of the running server's memory) and the first warm
// of each restarted lifetime left out (its caches filling). It also
// returns how many samples it used; with fewer than two in every
// lifetime the slope is not known (ok false).
func rssSlope(samples []memSample, lifeStarts []time.Time, from time.Time, warm time.Duration) (mbPerMin float64, n int, ok bool) {
	type acc struct{ n, st, sy, stt, sty float64 }
	by := map[int]*acc{}
	for _, s := range samples {
		if s.At.Before(from) {
			continue
		}
		if s.Life > 0 && s.Life < len(lifeStarts) && s.At.Before(lifeStarts[s.Life].Add(warm)) {
			continue
		}
		a := by[s.Life]
		if a == nil {
			a = &acc{}
			by[s.Life] = a
		}
		t := s.At.Sub(from).Seconds()
		a.n++
		a.st += t
		a.sy += s.RSS
		a.stt += t * t
		a.sty += t * s.RSS
		n++
	}
	var sxx, sxy float64
	for _, a := range by {
		if a.n < 2 {
			continue
		}
		sxx += a.stt - a.st*a.st/a.n
		sxy += a.sty - a.st*a.sy/a.n
	}
	if sxx <= 0 {
		return 0, n, false
	}
	return sxy / sxx * 60 / 1e6, n, true
}

// timed is one call's latency, by when it started.
type timed struct {
	At   time.Time
	Took time.Duration
}

// minuteStats is the latency of the calls that started in one minute of
// the run.
type minuteStats struct {
	Minute        int
	N             int
	P50, P99, Max time.Duration
}

// perMinute groups latencies by the minute of the run they started in
// (from start), leaving out the calls that overlap a down window.
func perMinute(lat []timed, start time.Time, ws []window) []minuteStats {
	by := map[int][]time.Duration{}
	for _, l := range lat {
		if inWindow(ws, l.At, l.At.Add(l.Took)) {
			continue
		}
		m := int(l.At.Sub(start) / time.Minute)
		by[m] = append(by[m], l.Took)
	}
	var out []minuteStats
	for m, d := range by {
		slices.Sort(d)
		out = append(out, minuteStats{Minute: m, N: len(d), P50: quantile(d, 0.5), P99: quantile(d, 0.99), Max: d[len(d)-1]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Minute < out[j].Minute })
	return out
}

// quantile is the p-quantile of sorted (the smallest value that at least
// p of them do not exceed); 0 for none.
func quantile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[max(0, min(len(sorted)-1, i))]
}

// targets are issue 36's pass marks.
type targets struct {
	SlopeMBPerMin float64       // RSS growth after the warm-up
	PeakMB        float64       // RSS 1-second peak
	BaselineP99   time.Duration // the current slot's baseline read, in every minute
}

var defaultTargets = targets{SlopeMBPerMin: 1, PeakMB: 400, BaselineP99: 150 * time.Millisecond}

// outcome is what a run measured that the targets judge.
type outcome struct {
	Slope        float64
	SlopeKnown   bool
	PeakMB       float64 // after the warm-up
	Lost         int     // acknowledged records not stored, all kinds
	Duplicated   int
	Server5xx    int // outside the down windows
	BaselineP99s []minuteStats
	QuickCheckOK bool // true on PostgreSQL (nothing to check)
}

// verdict is one line of the pass/fail table.
type verdict struct {
	What, Got, Target string
	Pass              bool
}

// judge holds o against t.
func judge(o outcome, t targets) []verdict {
	var worst minuteStats
	for _, m := range o.BaselineP99s {
		if m.P99 >= worst.P99 {
			worst = m
		}
	}
	slope := "not known (too few samples after the warm-up)"
	if o.SlopeKnown {
		slope = fmt.Sprintf("%+.2f MB/min", o.Slope)
	}
	return []verdict{
		{"RSS slope after the warm-up", slope, fmt.Sprintf("≤ %.0f MB/min", t.SlopeMBPerMin), o.SlopeKnown && o.Slope <= t.SlopeMBPerMin},
		{"RSS 1-second peak after the warm-up", fmt.Sprintf("%.0f MB", o.PeakMB), fmt.Sprintf("≤ %.0f MB", t.PeakMB), o.PeakMB <= t.PeakMB},
		{"acknowledged records lost", fmt.Sprint(o.Lost), "0", o.Lost == 0},
		{"records stored twice", fmt.Sprint(o.Duplicated), "0", o.Duplicated == 0},
		{"5xx outside the down windows", fmt.Sprint(o.Server5xx), "0", o.Server5xx == 0},
		{"baseline read p99, worst minute", fmt.Sprintf("%s (minute %d, %d reads)", ms(worst.P99), worst.Minute, worst.N),
			"≤ " + ms(t.BaselineP99), len(o.BaselineP99s) > 0 && worst.P99 <= t.BaselineP99},
		{"SQLite PRAGMA quick_check", map[bool]string{true: "ok", false: "FAILED"}[o.QuickCheckOK], "ok", o.QuickCheckOK},
	}
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}
