package metrics

import (
	"strings"
	"sync"
	"testing"
)

// TestExposition checks the text format Prometheus reads: HELP and TYPE
// lines, label escaping, cumulative histogram buckets with +Inf, _sum and
// _count, and gauges read at scrape time.
func TestExposition(t *testing.T) {
	r := NewRegistry()
	c := r.Counter("wnms_things_total", "Things.", "kind")
	c.Inc("a")
	c.With("a").Add(2)
	c.Inc(`quote " and \ and` + "\nnewline")
	h := r.Histogram("wnms_seconds", "Seconds.", []float64{0.1, 1}, "route")
	h.Observe(0.05, "x")
	h.Observe(0.5, "x")
	h.Observe(5, "x")
	g := 7.0
	r.GaugeFunc("wnms_gauge", "A gauge.", func() float64 { return g })
	var b strings.Builder
	r.Write(&b)
	out := b.String()
	if _, err := parseExposition(out); err != nil {
		t.Errorf("the text format: %v\n%s", err, out)
	}
	for _, want := range []string{
		"# HELP wnms_things_total Things.\n# TYPE wnms_things_total counter\n",
		`wnms_things_total{kind="a"} 3` + "\n",
		`wnms_things_total{kind="quote \" and \\ and\nnewline"} 1` + "\n",
		"# TYPE wnms_seconds histogram\n",
		`wnms_seconds_bucket{route="x",le="0.1"} 1` + "\n",
		`wnms_seconds_bucket{route="x",le="1"} 2` + "\n",
		`wnms_seconds_bucket{route="x",le="+Inf"} 3` + "\n",
		`wnms_seconds_sum{route="x"} 5.55` + "\n",
		`wnms_seconds_count{route="x"} 3` + "\n",
		"# TYPE wnms_gauge gauge\nwnms_gauge 7\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("exposition lacks %q:\n%s", want, out)
		}
	}
}

// TestConcurrentUse counts exactly under concurrent increments and scrapes.
func TestConcurrentUse(t *testing.T) {
	r := NewRegistry()
	c := r.Counter("wnms_n_total", "N.", "k")
	h := r.Histogram("wnms_h", "H.", []float64{1}, "k")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 1000; j++ {
				c.Inc("a")
				h.Observe(0.5, "a")
				if j%100 == 0 {
					r.Write(&strings.Builder{})
				}
			}
		}()
	}
	wg.Wait()
	var b strings.Builder
	r.Write(&b)
	if !strings.Contains(b.String(), `wnms_n_total{k="a"} 8000`) || !strings.Contains(b.String(), `wnms_h_count{k="a"} 8000`) {
		t.Errorf("lost counts:\n%s", b.String())
	}
}
