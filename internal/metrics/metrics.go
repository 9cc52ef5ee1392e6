// Package metrics is a small Prometheus text-format registry: counters and
// histograms with labels, and gauges read at scrape time. It exists so the
// server needs no metrics dependency for a handful of series.
package metrics

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry holds metric families in registration order.
type Registry struct {
	mu       sync.Mutex
	families []family
}

type family interface {
	write(w io.Writer)
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

func (r *Registry) add(f family) {
	r.mu.Lock()
	r.families = append(r.families, f)
	r.mu.Unlock()
}

// Write writes every family in the Prometheus text exposition format.
func (r *Registry) Write(w io.Writer) {
	r.mu.Lock()
	fs := append([]family(nil), r.families...)
	r.mu.Unlock()
	for _, f := range fs {
		f.write(w)
	}
}

// ContentType is the media type of the text exposition format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func labelString(names, values []string) string {
	if len(names) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
		b.WriteString(`="`)
		b.WriteString(labelEscaper.Replace(values[i]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// CounterVec is a counter family with labels.
type CounterVec struct {
	name, help string
	labels     []string
	series     sync.Map // label string -> *Counter
}

// Counter registers a counter family.
func (r *Registry) Counter(name, help string, labels ...string) *CounterVec {
	c := &CounterVec{name: name, help: help, labels: labels}
	r.add(c)
	return c
}

// Counter is one series of a counter family.
type Counter struct{ v atomic.Uint64 }

// Add adds n.
func (c *Counter) Add(n uint64) { c.v.Add(n) }

// Inc adds one.
func (c *Counter) Inc() { c.v.Add(1) }

// Value is the count so far.
func (c *Counter) Value() uint64 { return c.v.Load() }

// With returns the series with the given label values; hot paths keep it
// rather than look it up on every event.
func (c *CounterVec) With(values ...string) *Counter {
	key := labelString(c.labels, values)
	v, ok := c.series.Load(key)
	if !ok {
		v, _ = c.series.LoadOrStore(key, new(Counter))
	}
	return v.(*Counter)
}

// Inc adds one to the series with the given label values.
func (c *CounterVec) Inc(values ...string) { c.With(values...).Inc() }

func sortedKeys(m *sync.Map) []string {
	var keys []string
	m.Range(func(k, _ any) bool { keys = append(keys, k.(string)); return true })
	sort.Strings(keys)
	return keys
}

func (c *CounterVec) write(w io.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n", c.name, c.help, c.name)
	keys := sortedKeys(&c.series)
	if len(keys) == 0 && len(c.labels) == 0 {
		fmt.Fprintf(w, "%s 0\n", c.name)
	}
	for _, k := range keys {
		v, _ := c.series.Load(k)
		fmt.Fprintf(w, "%s%s %d\n", c.name, k, v.(*Counter).v.Load())
	}
}

// HistogramVec is a histogram family with labels.
type HistogramVec struct {
	name, help string
	labels     []string
	buckets    []float64
	series     sync.Map // label string -> *histogram
}

type histogram struct {
	mu     sync.Mutex
	counts []uint64
	sum    float64
	count  uint64
}

// Histogram registers a histogram family with the given upper bounds.
func (r *Registry) Histogram(name, help string, buckets []float64, labels ...string) *HistogramVec {
	h := &HistogramVec{name: name, help: help, labels: labels, buckets: buckets}
	r.add(h)
	return h
}

// Histogram is one series of a histogram family.
type Histogram struct {
	buckets []float64
	h       *histogram
}

// With returns the series with the given label values.
func (h *HistogramVec) With(values ...string) *Histogram {
	key := labelString(h.labels, values)
	s, ok := h.series.Load(key)
	if !ok {
		s, _ = h.series.LoadOrStore(key, &histogram{counts: make([]uint64, len(h.buckets))})
	}
	return &Histogram{buckets: h.buckets, h: s.(*histogram)}
}

// Observe records v in the series with the given label values.
func (h *HistogramVec) Observe(v float64, values ...string) { h.With(values...).Observe(v) }

// Observe records v.
func (x *Histogram) Observe(v float64) {
	hs := x.h
	i := sort.SearchFloat64s(x.buckets, v)
	hs.mu.Lock()
	if i < len(hs.counts) {
		hs.counts[i]++
	}
	hs.sum += v
	hs.count++
	hs.mu.Unlock()
}

func (h *HistogramVec) write(w io.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", h.name, h.help, h.name)
	for _, k := range sortedKeys(&h.series) {
		s, _ := h.series.Load(k)
		hs := s.(*histogram)
		hs.mu.Lock()
		counts := append([]uint64(nil), hs.counts...)
		sum, count := hs.sum, hs.count
		hs.mu.Unlock()
		inner := strings.TrimSuffix(strings.TrimPrefix(k, "{"), "}")
		sep := ""
		if inner != "" {
			sep = ","
		}
		var cum uint64
		for i, b := range h.buckets {
			cum += counts[i]
			fmt.Fprintf(w, "%s_bucket{%s%sle=\"%s\"} %d\n", h.name, inner, sep, formatFloat(b), cum)
		}
		fmt.Fprintf(w, "%s_bucket{%s%sle=\"+Inf\"} %d\n", h.name, inner, sep, count)
		fmt.Fprintf(w, "%s_sum%s %s\n%s_count%s %d\n", h.name, k, formatFloat(sum), h.name, k, count)
	}
}

func formatFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

type gaugeFunc struct {
	name, help, typ string
	f               func() float64
}

// GaugeFunc registers a gauge whose value f returns at scrape time.
func (r *Registry) GaugeFunc(name, help string, f func() float64) {
	r.add(&gaugeFunc{name: name, help: help, typ: "gauge", f: f})
}

// CounterFunc registers a counter whose value f returns at scrape time
// (a value kept elsewhere, that only grows).
func (r *Registry) CounterFunc(name, help string, f func() float64) {
	r.add(&gaugeFunc{name: name, help: help, typ: "counter", f: f})
}

func (g *gaugeFunc) write(w io.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %s\n", g.name, g.help, g.name, g.typ, g.name, formatFloat(g.f()))
}

type gaugeVecFunc struct {
	name, help, label, typ string
	f                      func() map[string]float64
}

// GaugeVecFunc registers a gauge with one label whose series f returns at
// scrape time, keyed by the label's value.
func (r *Registry) GaugeVecFunc(name, help, label string, f func() map[string]float64) {
	r.add(&gaugeVecFunc{name: name, help: help, label: label, typ: "gauge", f: f})
}

// CounterVecFunc registers a counter with one label whose series f
// returns at scrape time (values kept elsewhere, that only grow), keyed
// by the label's value.
func (r *Registry) CounterVecFunc(name, help, label string, f func() map[string]float64) {
	r.add(&gaugeVecFunc{name: name, help: help, label: label, typ: "counter", f: f})
}

func (g *gaugeVecFunc) write(w io.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", g.name, g.help, g.name, g.typ)
	vals := g.f()
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s%s %s\n", g.name, labelString([]string{g.label}, []string{k}), formatFloat(vals[k]))
	}
}
