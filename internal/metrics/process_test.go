package metrics

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestProcessSeries scrapes a registry with the runtime and process series
// over HTTP, checks the whole answer against the text format, and checks
// each standard series' type, HELP line and a plausible value.
func TestProcessSeries(t *testing.T) {
	r := NewRegistry()
	r.Counter("wnms_things_total", "Things.", "kind").Inc("a")
	r.Process()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ContentType)
		r.Write(w)
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != ContentType {
		t.Errorf("Content-Type %q", ct)
	}
	fams, err := parseExposition(string(body))
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	now := float64(time.Now().Unix())
	positive := func(v float64) bool { return v > 0 }
	for _, tc := range []struct {
		name, typ string
		ok        func(float64) bool
	}{
		{"go_goroutines", "gauge", positive},
		{"go_threads", "gauge", positive},
		{"go_info", "gauge", func(v float64) bool { return v == 1 }},
		{"go_gc_duration_seconds_count", "summary", func(v float64) bool { return v >= 0 }},
		{"go_memstats_alloc_bytes", "gauge", positive},
		{"go_memstats_alloc_bytes_total", "counter", positive},
		{"go_memstats_sys_bytes", "gauge", positive},
		{"go_memstats_heap_alloc_bytes", "gauge", positive},
		{"go_memstats_heap_sys_bytes", "gauge", positive},
		{"go_memstats_heap_inuse_bytes", "gauge", positive},
		{"go_memstats_heap_objects", "gauge", positive},
		{"go_memstats_mallocs_total", "counter", positive},
		{"go_memstats_next_gc_bytes", "gauge", positive},
		{"process_cpu_seconds_total", "counter", func(v float64) bool { return v >= 0 }},
		{"process_resident_memory_bytes", "gauge", func(v float64) bool { return v > 1<<20 }},
		{"process_virtual_memory_bytes", "gauge", func(v float64) bool { return v > 1<<20 }},
		{"process_open_fds", "gauge", positive},
		{"process_max_fds", "gauge", positive},
		{"process_start_time_seconds", "gauge", func(v float64) bool { return v > now-24*3600*365 && v <= now+1 }},
		{"wnms_things_total", "counter", func(v float64) bool { return v == 1 }},
	} {
		fam := strings.TrimSuffix(tc.name, "_count")
		if tc.typ != "summary" {
			fam = tc.name
		}
		f, ok := fams[fam]
		switch {
		case !ok:
			t.Errorf("%s: missing", fam)
			continue
		case f.typ != tc.typ:
			t.Errorf("%s: type %s, want %s", fam, f.typ, tc.typ)
		case f.help == "":
			t.Errorf("%s: no HELP", fam)
		}
		var v float64
		found := false
		for _, s := range f.samples {
			if s.name == tc.name {
				v, found = s.value, true
			}
		}
		if !found || !tc.ok(v) {
			t.Errorf("%s = %v (found %v): implausible", tc.name, v, found)
		}
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	// The open descriptors counted are this process's: one more file
	// open shows.
	before := scrapeValue(t, r, "process_open_fds")
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if after := scrapeValue(t, r, "process_open_fds"); after != before+1 {
		t.Errorf("process_open_fds %v, then %v with one more file open", before, after)
	}
	if q := fams["go_gc_duration_seconds"].samples; len(q) != 7 || q[0].labels != `{quantile="0"}` {
		t.Errorf("go_gc_duration_seconds: %+v", q)
	}
}

func scrapeValue(t *testing.T, r *Registry, name string) float64 {
	t.Helper()
	var b strings.Builder
	r.Write(&b)
	fams, err := parseExposition(b.String())
	if err != nil {
		t.Fatal(err)
	}
	return fams[name].samples[0].value
}

// TestParseExpositionRejects shows the checker below is strict: each
// mistake of the text format is caught.
func TestParseExpositionRejects(t *testing.T) {
	good := "# HELP a_total A.\n# TYPE a_total counter\na_total 1\n"
	if _, err := parseExposition(good); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		"no HELP":           "# TYPE a_total counter\na_total 1\n",
		"no TYPE":           "# HELP a_total A.\na_total 1\n",
		"unknown type":      "# HELP a A.\n# TYPE a meter\na 1\n",
		"family twice":      good + good,
		"foreign sample":    "# HELP a A.\n# TYPE a gauge\nb 1\n",
		"bad value":         "# HELP a A.\n# TYPE a gauge\na one\n",
		"bad name":          "# HELP 1a A.\n# TYPE 1a gauge\n1a 1\n",
		"bad labels":        "# HELP a A.\n# TYPE a gauge\na{x=1} 1\n",
		"unterminated line": "# HELP a A.\n# TYPE a gauge\na 1",
		"histogram no +Inf": "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",
		"summary quantile":  "# HELP s S.\n# TYPE s summary\ns 1\ns_sum 1\ns_count 1\n",
		"blank line":        good + "\n",
	} {
		if _, err := parseExposition(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

type sample struct {
	name, labels string
	value        float64
}

type expFamily struct {
	help, typ string
	samples   []sample
}

var (
	metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")*)?\})? (\S+)$`)
)

// parseExposition checks text in the Prometheus text format (version
// 0.0.4) as this registry writes it, strictly: every family has its HELP
// then its TYPE line before its samples and appears once; each sample
// belongs to the family above it (with the _bucket/_sum/_count and le or
// quantile rules of histograms and summaries); labels are quoted and
// escaped; values are Go floats or +Inf/-Inf/NaN; every line ends in \n.
func parseExposition(text string) (map[string]*expFamily, error) {
	if !strings.HasSuffix(text, "\n") {
		return nil, fmt.Errorf("the text does not end in a newline")
	}
	fams := map[string]*expFamily{}
	var cur *expFamily
	var curName string
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, help, _ := strings.Cut(rest, " ")
			if !metricName.MatchString(name) {
				return nil, fmt.Errorf("line %d: bad metric name %q", i+1, name)
			}
			if _, dup := fams[name]; dup {
				return nil, fmt.Errorf("line %d: family %s appears twice", i+1, name)
			}
			if i+1 >= len(lines) {
				return nil, fmt.Errorf("line %d: HELP without TYPE", i+1)
			}
			typ, ok := strings.CutPrefix(lines[i+1], "# TYPE "+name+" ")
			if !ok {
				return nil, fmt.Errorf("line %d: HELP of %s not followed by its TYPE", i+1, name)
			}
			switch typ {
			case "counter", "gauge", "histogram", "summary", "untyped":
			default:
				return nil, fmt.Errorf("line %d: unknown type %q", i+2, typ)
			}
			if cur != nil {
				if err := checkFamily(curName, cur); err != nil {
					return nil, err
				}
			}
			cur, curName = &expFamily{help: help, typ: typ}, name
			fams[name] = cur
			i++
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("line %d: not a HELP, TYPE or sample line: %q", i+1, line)
		}
		if cur == nil {
			return nil, fmt.Errorf("line %d: sample before any HELP and TYPE", i+1)
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: value %q: %v", i+1, m[3], err)
		}
		suffix, ok := strings.CutPrefix(m[1], curName)
		switch {
		case !ok:
			return nil, fmt.Errorf("line %d: sample %s under family %s", i+1, m[1], curName)
		case suffix == "":
		case (cur.typ == "histogram" && suffix == "_bucket") || ((cur.typ == "histogram" || cur.typ == "summary") && (suffix == "_sum" || suffix == "_count")):
		default:
			return nil, fmt.Errorf("line %d: sample %s under %s family %s", i+1, m[1], cur.typ, curName)
		}
		cur.samples = append(cur.samples, sample{name: m[1], labels: m[2], value: v})
	}
	if cur != nil {
		if err := checkFamily(curName, cur); err != nil {
			return nil, err
		}
	}
	return fams, nil
}

// checkFamily checks what a histogram or summary must have.
func checkFamily(name string, f *expFamily) error {
	var sum, count, inf bool
	for _, s := range f.samples {
		switch {
		case s.name == name+"_sum":
			sum = true
		case s.name == name+"_count":
			count = true
		case f.typ == "histogram" && s.name == name+"_bucket":
			if !strings.Contains(s.labels, `le="`) {
				return fmt.Errorf("%s: bucket without le", name)
			}
			inf = inf || strings.Contains(s.labels, `le="+Inf"`)
		case f.typ == "histogram":
			return fmt.Errorf("%s: histogram sample %s", name, s.name)
		case f.typ == "summary" && !strings.Contains(s.labels, `quantile="`):
			return fmt.Errorf("%s: summary sample without quantile", name)
		}
	}
	switch {
	case f.typ == "histogram" && len(f.samples) > 0 && (!sum || !count || !inf):
		return fmt.Errorf("%s: histogram without _sum, _count or the +Inf bucket", name)
	case f.typ == "summary" && (!sum || !count):
		return fmt.Errorf("%s: summary without _sum or _count", name)
	}
	return nil
}
