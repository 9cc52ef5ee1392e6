package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
)

// report reads the store, prints the run's table and checks, and
// reports whether every target passed.
func (r *run) report(w io.Writer) bool {
	if *samplesOut != "" {
		if err := r.writeSamples(*samplesOut); err != nil {
			logf("samples: %v", err)
		}
	}
	ws := r.windows
	end := r.start.Add(*duration)
	mb := func(b float64) string { return fmt.Sprintf("%.0f", b/1e6) }

	fmt.Fprintf(w, "\n## wnms soak: %s, %s at scale %g, %d kills, FreeRADIUS down %s, junk %v, PostgreSQL restart %v\n\n",
		engineName(r), *duration, *scale, *kills, *radiusDown, *junk, *pgRestart)
	var loads []float64
	for _, m := range r.sampler.metrics {
		loads = append(loads, m.Load1)
	}
	slices.Sort(loads)
	if len(loads) > 0 {
		fmt.Fprintf(w, "Machine: %d cores, shared; 1-minute load average during the run %.1f–%.1f (median %.1f).\n\n",
			runtime.NumCPU(), loads[0], loads[len(loads)-1], loads[len(loads)/2])
	}

	// The timeline, a row a minute.
	base := perMinute(r.rec.lat["baseline"], r.start, ws)
	baseBy := map[int]minuteStats{}
	for _, b := range base {
		baseBy[b.Minute] = b
	}
	minutes := int((*duration + time.Minute - 1) / time.Minute)
	fmt.Fprintln(w, "| min | lives | RSS mean MB | RSS 1-s peak MB | heap MB | goroutines | fds | threads | WAL MB (main/telemetry) | CPU % of a core | baseline reads p50 / p99 | batches acked | 5xx out / in | no answer |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	minuteOf := func(t time.Time) int { return int(t.Sub(r.start) / time.Minute) }
	for m := range minutes {
		var rssSum, peak float64
		var n, thr, fds int
		lives := map[int]bool{}
		var cpuTicks float64
		var cpuSecs float64
		var prev *procSample
		for i := range r.sampler.proc {
			s := &r.sampler.proc[i]
			if minuteOf(s.At) != m || s.At.Before(r.start) {
				prev = s
				continue
			}
			rssSum += s.RSS
			peak = max(peak, s.HWM, s.RSS)
			thr, fds = max(thr, s.Threads), max(fds, s.FDs)
			lives[s.Life] = true
			n++
			if prev != nil && prev.Life == s.Life {
				cpuTicks += float64(s.CPU - prev.CPU)
				cpuSecs += s.At.Sub(prev.At).Seconds()
			}
			prev = s
		}
		var heap, gor float64
		var walM, walT int64
		for _, s := range r.sampler.metrics {
			if minuteOf(s.At) == m && !s.At.Before(r.start) {
				heap, gor = max(heap, s.Heap), max(gor, s.Goroutines)
				walM, walT = max(walM, s.WALMain), max(walT, s.WALTelem)
			}
		}
		acked := 0
		for _, l := range r.rec.lat["ingest"] {
			if minuteOf(l.At) == m {
				acked++
			}
		}
		var out5, in5, none int
		for _, c := range r.rec.bad {
			if minuteOf(c.Start) != m {
				continue
			}
			switch {
			case c.Status >= 500 && inWindow(ws, c.Start, c.End):
				in5++
			case c.Status >= 500:
				out5++
			case c.Status == 0:
				none++
			}
		}
		var ls []string
		for l := range lives {
			ls = append(ls, fmt.Sprint(l))
		}
		sort.Strings(ls)
		wal := "–"
		if r.dbURL == "" {
			wal = fmt.Sprintf("%s / %s", mb(float64(walM)), mb(float64(walT)))
		}
		cpu := "–"
		if cpuSecs > 0 {
			cpu = fmt.Sprintf("%.0f", cpuTicks/100/cpuSecs*100)
		}
		b := baseBy[m]
		rssMean := "–"
		if n > 0 {
			rssMean = mb(rssSum / float64(n))
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %.0f | %d | %d | %s | %s | %s / %s (%d) | %d | %d / %d | %d |\n",
			m, strings.Join(ls, ","), rssMean, mb(peak), mb(heap), gor, fds, thr, wal, cpu, ms(b.P50), ms(b.P99), b.N, acked, out5, in5, none)
	}

	// The calls.
	fmt.Fprintln(w, "\n| calls | answered 200 | a second | p50 | p99 | max | 4xx | 5xx outside / inside the down windows | no answer | skipped (too many in flight) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	kinds := []string{"ingest", "users", "events", "baseline", "stream", "junk", "probe"}
	total5xxOut := 0
	for _, k := range kinds {
		lat := make([]time.Duration, 0, len(r.rec.lat[k]))
		for _, l := range r.rec.lat[k] {
			lat = append(lat, l.Took)
		}
		slices.Sort(lat)
		var c4, out5, in5, none int
		for _, c := range r.rec.bad {
			if c.Kind != k {
				continue
			}
			switch {
			case c.Status >= 500 && inWindow(ws, c.Start, c.End):
				in5++
			case c.Status >= 500:
				out5++
			case c.Status >= 400:
				c4++
			case c.Status == 0:
				none++
			}
		}
		total5xxOut += out5
		if len(lat)+c4+out5+in5+none == 0 {
			continue
		}
		p := func(q float64) string {
			if len(lat) == 0 {
				return "–"
			}
			return ms(quantile(lat, q))
		}
		fmt.Fprintf(w, "| %s | %d | %.1f | %s | %s | %s | %d | %d / %d | %d | %d |\n", k, len(lat), float64(len(lat))/duration.Seconds(),
			p(0.5), p(0.99), p(1), c4, out5, in5, none, r.rec.skipped[k])
	}
	var outside []string
	for _, c := range r.rec.bad {
		if c.Status >= 500 && !inWindow(ws, c.Start, c.End) && len(outside) < 10 {
			outside = append(outside, fmt.Sprintf("%s at %.1f s: %d", c.Kind, c.Start.Sub(r.start).Seconds(), c.Status))
		}
	}
	if len(outside) > 0 {
		fmt.Fprintf(w, "\n5xx outside the down windows (first 10): %s\n", strings.Join(outside, "; "))
	}

	a := &r.acked
	fmt.Fprintf(w, "\nRADIUS: %d authentications sent by radclient, %d accepted, %d answered otherwise (rejects while FreeRADIUS was down), %d unanswered. "+
		"Accounting: %d packets, %d never answered within 2 minutes. Syslog: %d lines sent (%d refused by a down port). Event stream: %d connections, %d events.\n",
		a.authSent, a.authAccept, a.authReject, a.authNone, a.acctSent, a.acctGiven, a.syslogSent, a.syslogErr, a.streamConns, a.streamRecv)
	fmt.Fprintf(w, "Ingest: %d batches acknowledged, %d given up unacknowledged, %d refused (4xx); %d records of them rejected %q.\n",
		a.batchCount, a.unacked, a.refused, a.recordsRejected, a.firstRejection)

	fmt.Fprintln(w, "\nFaults and events (seconds into the run):")
	for _, f := range r.faults {
		fmt.Fprintf(w, "    %s\n", f)
	}
	for _, d := range ws {
		fmt.Fprintf(w, "    down window: %s from %.1f s to %.1f s (%s)\n", d.What, d.Start.Sub(r.start).Seconds(), d.End.Sub(r.start).Seconds(), d.End.Sub(d.Start).Round(time.Millisecond))
	}
	errs, panics, msgs := scanLog(r.logFile.Name())
	fmt.Fprintf(w, "Server log: %d ERROR lines, %d panics (%s).\n", errs, panics, r.logFile.Name())
	for _, m := range msgs {
		fmt.Fprintf(w, "    %s\n", m)
	}

	// Memory.
	var mem []memSample
	var peakAfter float64
	for _, s := range r.sampler.proc {
		if s.At.Before(r.start) || s.At.After(end) {
			continue
		}
		mem = append(mem, memSample{At: s.At, Life: s.Life, RSS: s.RSS})
		if !s.At.Before(r.start.Add(*warmup)) {
			peakAfter = max(peakAfter, s.HWM, s.RSS)
		}
	}
	slope, nSlope, known := rssSlope(mem, r.lifeStarts, r.start.Add(*warmup), *warmup)
	fmt.Fprintf(w, "\nMemory: RSS slope after the %s warm-up %+.2f MB/min (%d samples, each lifetime its own intercept, a restarted server's first %s left out); ",
		*warmup, slope, nSlope, *warmup)
	for l := range r.lifeStarts {
		s, _, ok := rssSlope(filterLife(mem, l), r.lifeStarts, r.start.Add(*warmup), *warmup)
		if ok {
			fmt.Fprintf(w, "lifetime %d %+.2f MB/min; ", l, s)
		}
	}
	fmt.Fprintf(w, "1-second peak after the warm-up %s MB.\n", mb(peakAfter))
	// Where the growth is: the memory the Go runtime holds, and the rest
	// of the resident memory (SQLite's caches, the binary), each read in
	// the same scrape of /metrics.
	var goHeld, rest []memSample
	for _, m := range r.sampler.metrics {
		if m.At.Before(r.start) || m.At.After(end) || m.GoHeld <= 0 || m.RSS <= 0 {
			continue
		}
		goHeld = append(goHeld, memSample{At: m.At, Life: m.Life, RSS: m.GoHeld})
		rest = append(rest, memSample{At: m.At, Life: m.Life, RSS: m.RSS - m.GoHeld})
	}
	sGo, _, okGo := rssSlope(goHeld, r.lifeStarts, r.start.Add(*warmup), *warmup)
	sOut, _, okOut := rssSlope(rest, r.lifeStarts, r.start.Add(*warmup), *warmup)
	if okGo && okOut {
		fmt.Fprintf(w, "Of the slope, held by the Go runtime %+.2f MB/min; outside it (SQLite's caches, the binary) %+.2f MB/min.\n", sGo, sOut)
	}
	// Not a target: the same slope once each lifetime has heard the
	// load's clients once, which tells a process refilling its
	// per-client state (bounded) from one that keeps growing.
	if pass := populationPass(*population, *scale); pass > *warmup {
		s, _, ok := rssSlope(mem, r.lifeStarts, r.start.Add(pass), pass)
		sGo, _, okGo := rssSlope(goHeld, r.lifeStarts, r.start.Add(pass), pass)
		if ok && okGo {
			fmt.Fprintf(w, "Once each lifetime has heard the load's %d clients (its first %s left out instead): RSS slope %+.2f MB/min, held by the Go runtime %+.2f.\n",
				*population, pass, s, sGo)
		}
	}

	// The store.
	stored, err := r.readStored(context.Background())
	o := outcome{Slope: slope, SlopeKnown: known, PeakMB: peakAfter / 1e6, Server5xx: total5xxOut, BaselineP99s: base}
	if err != nil {
		fmt.Fprintf(w, "\nThe store could not be read: %v\n", err)
		o.Lost = -1
	} else {
		o.QuickCheckOK = stored.quickCheckOK()
		fmt.Fprintln(w, "\nStored once:")
		for _, c := range []struct {
			what   string
			acked  map[string]bool
			stored map[string]int
		}{
			{"ingest batch events (by event id)", a.batches, stored.batchIDs},
			{"accounting Start/Stop events (by client and time)", a.acctEvents, stored.acctEvents},
			{"accounting Interim/Stop samples (by client and time)", a.acctSamples, stored.acctSamples},
		} {
			l := compare(c.acked, c.stored)
			o.Lost += l.Lost
			o.Duplicated += l.Duplicated
			fmt.Fprintf(w, "    %s: %s\n", c.what, l)
		}
		l := compareCounts(a.accepts, a.authAsked, stored.accepts)
		o.Lost += l.Lost
		o.Duplicated += l.Duplicated
		fmt.Fprintf(w, "    accepted authentications (Successes by client): %s\n", l)
		// When the lost accepts were answered: by minute of the run.
		lostBy := map[int]int{}
		for m, n := range a.accepts {
			if stored.accepts[m] < n {
				lostBy[minuteOf(a.acceptedAt[m])] += n - stored.accepts[m]
			}
		}
		if len(lostBy) > 0 {
			var parts []string
			for m := range minutes + 10 {
				if lostBy[m] > 0 {
					parts = append(parts, fmt.Sprintf("minute %d: %d", m, lostBy[m]))
				}
			}
			fmt.Fprintf(w, "    accepts lost, by the minute radclient got them: %s\n", strings.Join(parts, ", "))
		}
		for _, q := range stored.quickCheck {
			fmt.Fprintf(w, "    PRAGMA quick_check %s\n", q)
		}
		if r.dbURL != "" {
			o.QuickCheckOK = true
		}
	}

	fmt.Fprintln(w, "\n| target | got | wanted | |")
	fmt.Fprintln(w, "|---|---|---|---|")
	pass := true
	for _, v := range judge(o, defaultTargets) {
		if r.dbURL != "" && strings.HasPrefix(v.What, "SQLite") {
			continue
		}
		mark := "pass"
		if !v.Pass {
			mark, pass = "FAIL", false
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", v.What, v.Got, v.Target, mark)
	}
	return pass
}

func filterLife(m []memSample, life int) []memSample {
	var out []memSample
	for _, s := range m {
		if s.Life == life {
			out = append(out, s)
		}
	}
	return out
}

// scanLog counts the server log's ERROR lines and panics, and names the
// most frequent messages of its ERROR and WARN lines.
func scanLog(path string) (errs, panics int, top []string) {
	f, err := os.Open(path)
	if err != nil {
		return -1, -1, nil
	}
	defer f.Close()
	msgs := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, `"level":"ERROR"`) || strings.Contains(l, "level=ERROR") {
			errs++
		}
		if lv := logLevel(l); lv == "ERROR" || lv == "WARN" {
			msgs[lv+" "+logMsg(l)]++
		}
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") {
			panics++
		}
	}
	for m, n := range msgs {
		top = append(top, fmt.Sprintf("%6d× %s", n, m))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(top)))
	if len(top) > 8 {
		top = top[:8]
	}
	return errs, panics, top
}

// logLevel and logMsg read a JSON log line's level and message ("" when
// it is not one).
func logLevel(l string) string { return jsonField(l, "level") }
func logMsg(l string) string   { return jsonField(l, "msg") }

func jsonField(l, name string) string {
	var m map[string]any
	if json.Unmarshal([]byte(l), &m) != nil {
		return ""
	}
	v, _ := m[name].(string)
	return v
}
