package main

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func TestInWindow(t *testing.T) {
	ws := []window{{"kill -9", at(10), at(12)}, {"PostgreSQL restart", at(50), at(55)}}
	for _, c := range []struct {
		name       string
		start, end float64
		want       bool
	}{
		{"before", 1, 9.9, false},
		{"ends inside", 9, 10.5, true},
		{"inside", 10.2, 11, true},
		{"spans the window", 9, 13, true},
		{"starts inside", 11.9, 20, true},
		{"between", 12.1, 49.9, false},
		{"second window", 54, 56, true},
		{"after", 55.1, 60, false},
	} {
		if got := inWindow(ws, at(c.start), at(c.end)); got != c.want {
			t.Errorf("%s [%g, %g]: %v, want %v", c.name, c.start, c.end, got, c.want)
		}
	}
	if inWindow(nil, at(0), at(1)) {
		t.Error("no window: a call is inside one")
	}
}

func TestCompare(t *testing.T) {
	for _, c := range []struct {
		name              string
		acked             []string
		stored            map[string]int
		lost, dup, nacked int
	}{
		{"all once", []string{"a", "b"}, map[string]int{"a": 1, "b": 1}, 0, 0, 2},
		{"one lost", []string{"a", "b"}, map[string]int{"a": 1}, 1, 0, 2},
		{"one twice", []string{"a", "b"}, map[string]int{"a": 2, "b": 1}, 0, 1, 2},
		// A record stored whose answer never came (a kill between commit
		// and answer) is neither lost nor a duplicate.
		{"stored, not acknowledged", []string{"a"}, map[string]int{"a": 1, "z": 1}, 0, 0, 1},
		{"not acknowledged, twice", nil, map[string]int{"z": 3}, 0, 1, 0},
		{"nothing", nil, nil, 0, 0, 0},
	} {
		acked := map[string]bool{}
		for _, k := range c.acked {
			acked[k] = true
		}
		l := compare(acked, c.stored)
		if l.Lost != c.lost || l.Duplicated != c.dup || l.Acked != c.nacked {
			t.Errorf("%s: %+v, want %d lost, %d duplicated, %d acknowledged", c.name, l, c.lost, c.dup, c.nacked)
		}
		if (l.Lost > 0) != strings.Contains(l.String(), "lost e.g.") {
			t.Errorf("%s: %q does not name what was lost", c.name, l)
		}
	}
}

func TestCompareCounts(t *testing.T) {
	for _, c := range []struct {
		name                 string
		acked, asked, stored map[string]int
		lost, dup, nacked    int
	}{
		{"each once", map[string]int{"a": 1, "b": 1}, map[string]int{"a": 1, "b": 1}, map[string]int{"a": 1, "b": 1}, 0, 0, 2},
		{"a client back three times", map[string]int{"a": 3}, map[string]int{"a": 3}, map[string]int{"a": 3}, 0, 0, 3},
		{"one of three lost", map[string]int{"a": 3}, map[string]int{"a": 3}, map[string]int{"a": 2}, 1, 0, 3},
		{"all of a client's lost", map[string]int{"a": 2, "b": 1}, map[string]int{"a": 2, "b": 1}, map[string]int{"b": 1}, 2, 0, 3},
		// An accept whose answer never reached the load may be stored: not
		// a duplicate while no more rows than requests.
		{"stored, not acknowledged", map[string]int{"a": 1}, map[string]int{"a": 2}, map[string]int{"a": 2}, 0, 0, 1},
		{"more rows than requests", map[string]int{"a": 2}, map[string]int{"a": 2}, map[string]int{"a": 3}, 0, 1, 2},
		{"never asked, stored twice", nil, nil, map[string]int{"z": 2}, 0, 1, 0},
		{"nothing", nil, nil, nil, 0, 0, 0},
	} {
		l := compareCounts(c.acked, c.asked, c.stored)
		if l.Lost != c.lost || l.Duplicated != c.dup || l.Acked != c.nacked {
			t.Errorf("%s: %+v, want %d lost, %d duplicated, %d acknowledged", c.name, l, c.lost, c.dup, c.nacked)
		}
	}
}

func TestRSSSlope(t *testing.T) {
	const mb = 1e6
	// line makes samples of one lifetime every second from a to b seconds,
	// starting at base MB and growing perMin MB a minute.
	line := func(life int, a, b, base, perMin float64) []memSample {
		var s []memSample
		for x := a; x < b; x++ {
			s = append(s, memSample{At: at(x), Life: life, RSS: (base + perMin*(x-a)/60) * mb})
		}
		return s
	}
	starts := []time.Time{at(0), at(300), at(600)}
	for _, c := range []struct {
		name    string
		samples []memSample
		from    float64
		warm    time.Duration
		want    float64
		ok      bool
	}{
		{"flat", line(0, 0, 600, 100, 0), 120, 0, 0, true},
		{"growing", line(0, 0, 600, 100, 3), 120, 0, 3, true},
		// Each restart starts low again: a line through all the samples
		// would fall; within each lifetime memory grows 2 MB/min.
		{"restarts", append(append(line(0, 0, 300, 200, 2), line(1, 300, 600, 50, 2)...), line(2, 600, 900, 50, 2)...), 120, 0, 2, true},
		// A restarted server's warm-up (a jump as its caches fill) is
		// left out.
		{"restarted warm-up left out", append(append(line(0, 0, 300, 100, 0), line(1, 300, 360, 20, 60)...), line(1, 360, 600, 80, 0)...),
			120, time.Minute, 0, true},
		{"warm-up of the run left out", append(line(0, 0, 120, 10, 50), line(0, 120, 600, 110, 0)...), 120, 0, 0, true},
		{"too few samples", line(0, 0, 121, 100, 0), 120, 0, 0, false},
	} {
		got, _, ok := rssSlope(c.samples, starts, at(c.from), c.warm)
		if ok != c.ok || math.Abs(got-c.want) > 1e-6 {
			t.Errorf("%s: %.4f MB/min (known %v), want %.4f (%v)", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestPerMinute(t *testing.T) {
	var lat []timed
	for i := range 100 { // minute 0: 1..100 ms
		lat = append(lat, timed{At: at(float64(i) * 0.5), Took: time.Duration(i+1) * time.Millisecond})
	}
	lat = append(lat, timed{At: at(61), Took: 5 * time.Millisecond}, timed{At: at(70), Took: 9 * time.Second})
	ws := []window{{"kill -9", at(69), at(71)}}
	got := perMinute(lat, t0, ws)
	if len(got) != 2 {
		t.Fatalf("%+v: want 2 minutes", got)
	}
	if m := got[0]; m.Minute != 0 || m.N != 100 || m.P50 != 50*time.Millisecond || m.P99 != 99*time.Millisecond || m.Max != 100*time.Millisecond {
		t.Errorf("minute 0: %+v", m)
	}
	// The read in the down window is left out.
	if m := got[1]; m.Minute != 1 || m.N != 1 || m.Max != 5*time.Millisecond {
		t.Errorf("minute 1: %+v", m)
	}
}

func TestJudge(t *testing.T) {
	good := outcome{Slope: 0.4, SlopeKnown: true, PeakMB: 300, QuickCheckOK: true,
		BaselineP99s: []minuteStats{{Minute: 0, N: 240, P99: 90 * time.Millisecond}, {Minute: 1, N: 240, P99: 140 * time.Millisecond}}}
	for _, v := range judge(good, defaultTargets) {
		if !v.Pass {
			t.Errorf("a good run fails %q: %s", v.What, v.Got)
		}
	}
	for _, c := range []struct {
		failing string
		change  func(*outcome)
	}{
		{"RSS slope", func(o *outcome) { o.Slope = 1.5 }},
		{"RSS slope", func(o *outcome) { o.SlopeKnown = false }},
		{"RSS 1-second peak", func(o *outcome) { o.PeakMB = 401 }},
		{"acknowledged records lost", func(o *outcome) { o.Lost = 1 }},
		{"records stored twice", func(o *outcome) { o.Duplicated = 1 }},
		{"5xx outside", func(o *outcome) { o.Server5xx = 1 }},
		{"baseline read p99", func(o *outcome) { o.BaselineP99s[1].P99 = 151 * time.Millisecond }},
		{"baseline read p99", func(o *outcome) { o.BaselineP99s = nil }},
		{"SQLite PRAGMA quick_check", func(o *outcome) { o.QuickCheckOK = false }},
	} {
		o := good
		o.BaselineP99s = append([]minuteStats(nil), good.BaselineP99s...)
		c.change(&o)
		for _, v := range judge(o, defaultTargets) {
			if strings.HasPrefix(v.What, c.failing) == v.Pass {
				t.Errorf("change to %s: %q passes %v", c.failing, v.What, v.Pass)
			}
		}
	}
}

func TestParseRadclient(t *testing.T) {
	out := `Sent Access-Request Id 1 from 0.0.0.0:40000 to 127.0.0.1:1812 length 90
	User-Name = "alice"
	Calling-Station-Id = "02-AA-00-00-00-01"
Sent Access-Request Id 2 from 0.0.0.0:40000 to 127.0.0.1:1812 length 90
	User-Name = "alice"
	Calling-Station-Id = "02-AA-00-00-00-02"
Sent Access-Request Id 3 from 0.0.0.0:40000 to 127.0.0.1:1812 length 90
	Calling-Station-Id = "02-aa-00-00-00-03"
Received Access-Accept Id 1 from 127.0.0.1:1812 to 0.0.0.0:0 length 20
Received Access-Reject Id 2 from 127.0.0.1:1812 to 0.0.0.0:0 length 20
(0) No reply from server for ID 3 socket 3
`
	acc, other, none := parseRadclient([]byte(out))
	if len(acc) != 1 || acc[0] != "02:AA:00:00:00:01" || other != 1 || none != 1 {
		t.Errorf("accepted %v, %d other answers, %d none; want [02:AA:00:00:00:01], 1, 1", acc, other, none)
	}
}

func TestMetricValue(t *testing.T) {
	b := []byte("# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 42\n" +
		"go_goroutines_total{x=\"1\"} 7\ngo_memstats_heap_alloc_bytes 1.5e+07\n")
	if v := metricValue(b, "go_goroutines"); v != 42 {
		t.Errorf("go_goroutines %v, want 42", v)
	}
	if v := metricValue(b, "go_memstats_heap_alloc_bytes"); v != 1.5e7 {
		t.Errorf("heap %v, want 1.5e7", v)
	}
	if v := metricValue(b, "go_threads"); v != -1 {
		t.Errorf("absent series: %v, want -1", v)
	}
}

func TestScanLog(t *testing.T) {
	p := t.TempDir() + "/serve.log"
	log := `{"time":"x","level":"ERROR","msg":"ingest failed","err":"database is locked"}
{"time":"x","level":"WARN","msg":"radius: events not stored","records":3}
{"time":"x","level":"WARN","msg":"radius: events not stored","records":1}
{"time":"x","level":"INFO","msg":"wnms serving"}
panic: runtime error: index out of range
not json at all
`
	if err := os.WriteFile(p, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	errs, panics, top := scanLog(p)
	if errs != 1 || panics != 1 {
		t.Errorf("%d ERROR lines, %d panics; want 1, 1", errs, panics)
	}
	want := []string{"     2× WARN radius: events not stored", "     1× ERROR ingest failed"}
	if strings.Join(top, "|") != strings.Join(want, "|") {
		t.Errorf("top messages %q, want %q", top, want)
	}
}

func TestPopulationPass(t *testing.T) {
	for _, c := range []struct {
		population int
		scale      float64
		want       time.Duration
	}{
		{5000, 1, 300 * time.Second}, // syslog: 16.7 connections a second, RADIUS 20
		{0, 1, 0},
		{2000, 2, 60 * time.Second},
		{100, 0.01, 100 * time.Second}, // at least one authentication a second, one line each 100 ms
	} {
		if got := populationPass(c.population, c.scale); got != c.want {
			t.Errorf("populationPass(%d, %g) = %s, want %s", c.population, c.scale, got, c.want)
		}
	}
}
