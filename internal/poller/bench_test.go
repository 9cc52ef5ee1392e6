package poller_test

// BenchmarkPollers measures what polling costs per AP: N fake APs
// (ubustest's OpenWrt, and optionally node exporters serving the
// recorded OpenWrt exposition) in a process of their own, polled by a
// Manager over a real store and the real telemetry ingest (or a sink
// that only counts, to isolate the poller's own cost). docs/bench-pollers.md
// says how to run it and what it found.

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/poller"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/ubus/ubustest"
	"github.com/wnms/wnms/internal/wnms"
)

// The benchmark's settings, given after -args.
var (
	benchAPs        = flag.Int("aps", 500, "BenchmarkPollers: fake APs polled")
	benchPrometheus = flag.Int("prometheus", 0, "BenchmarkPollers: how many of -aps are node exporters (the rest speak ubus)")
	benchMaxClients = flag.Int("max-clients", 30, "BenchmarkPollers: an AP has 1 to this many clients")
	benchInterval   = flag.Duration("interval", 30*time.Second, "BenchmarkPollers: the pollers' interval")
	benchWarmup     = flag.Duration("warmup", 0, "BenchmarkPollers: time after every AP's first poll before measuring (0: one interval)")
	benchDuration   = flag.Duration("duration", 3*time.Minute, "BenchmarkPollers: how long the steady phase is measured")
	benchIngest     = flag.String("ingest", "store", "BenchmarkPollers: store (the telemetry ingest and the store) or discard (a sink that counts)")
	benchSlow       = flag.Int("slow", 0, "BenchmarkPollers: how many of the ubus APs answer every request after -slow-delay")
	benchSlowDelay  = flag.Duration("slow-delay", 15*time.Second, "BenchmarkPollers: the slow APs' delay")
	benchHeap       = flag.String("heap-profile", "", "BenchmarkPollers: write the heap's profile at the end of the steady phase to this file")
)

// fakeAPsEnv makes TestFakeAPs serve the benchmark's APs.
const fakeAPsEnv = "WNMS_POLLER_BENCH_FAKE_APS"

// TestFakeAPs is the benchmark's fake APs, in a process of their own so
// that their cost is not counted as the poller's: it serves -aps APs,
// prints one line per AP ("ap <kind> <url> <clients> <slow>") and
// "ready", and serves until its standard input ends.
func TestFakeAPs(t *testing.T) {
	if os.Getenv(fakeAPsEnv) != "1" {
		t.Skip("BenchmarkPollers' fake APs, started by it")
	}
	w := bufio.NewWriter(os.Stdout)
	for _, a := range startFakeAPs(t) {
		fmt.Fprintf(w, "ap %s %s %d %t\n", a.kind, a.url, a.clients, a.slow)
	}
	fmt.Fprintln(w, "ready")
	w.Flush()
	io.Copy(io.Discard, os.Stdin)
}

type fakeAP struct {
	kind, url string
	clients   int
	slow      bool
}

// startFakeAPs starts the APs: each with its own BSSID and 1 to
// -max-clients clients of its own (a fixed seed: every run the same).
// The slow ones are ubus APs spread over the list.
func startFakeAPs(t *testing.T) []fakeAP {
	rng := rand.New(rand.NewPCG(33, 500))
	status := string(ubustest.File("rax3000m/hostapd_get_status.json"))
	var assoc struct{ Results []map[string]any }
	if err := json.Unmarshal(ubustest.File("rax3000m/iwinfo_assoclist.json"), &assoc); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(recording)
	if err != nil {
		t.Fatal(err)
	}
	// The exposition without its stations, which each exporter adds.
	var kept []string
	for line := range strings.Lines(string(text)) {
		if !strings.HasPrefix(line, "wifi_station") {
			kept = append(kept, line)
		}
	}
	exposition := strings.Join(kept, "")
	ubusAPs := *benchAPs - *benchPrometheus
	slowEvery := 0
	if *benchSlow > 0 {
		slowEvery = max(1, ubusAPs / *benchSlow)
	}
	slow := 0
	var out []fakeAP
	for i := range *benchAPs {
		n := 1 + rng.IntN(*benchMaxClients)
		bssid := fmt.Sprintf("02:5b:%02x:%02x:00:01", i>>8, i&0xff)
		mac := func(j int) string { return fmt.Sprintf("06:5c:%02x:%02x:00:%02x", i>>8, i&0xff, j) }
		if i >= ubusAPs {
			var b strings.Builder
			b.WriteString(strings.ReplaceAll(exposition, "18:d6:c7:0b:cf:e3", bssid))
			for j := range n {
				l := fmt.Sprintf(`{mac="%s",ifname="wlan0"}`, strings.ToUpper(mac(j)))
				fmt.Fprintf(&b, "wifi_station_signal_dbm%s %d\nwifi_station_transmit_kilobits_per_second%s 72200\n"+
					"wifi_station_receive_kilobits_per_second%s 6000\nwifi_station_transmit_bytes_total%s %d\n"+
					"wifi_station_receive_bytes_total%s %d\n", l, -40-rng.IntN(40), l, l, l, rng.IntN(1<<30), l, rng.IntN(1<<30))
			}
			body := []byte(b.String())
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/plain; version=0.0.4")
				w.Write(body)
			}))
			t.Cleanup(srv.Close)
			out = append(out, fakeAP{kind: wnms.PollerPrometheus, url: srv.URL + "/metrics", clients: n})
			continue
		}
		ap := ubustest.New(t, ubustest.Config{})
		ap.SetReply("hostapd.phy0-ap0", "get_status", []byte(strings.Replace(status, "c8:75:f4:74:c6:92", bssid, 1)))
		stations := make([]map[string]any, n)
		for j := range stations {
			s := map[string]any{}
			for k, v := range assoc.Results[0] {
				s[k] = v
			}
			s["mac"] = strings.ToUpper(mac(j))
			s["signal"] = -40 - rng.IntN(40)
			stations[j] = s
		}
		list, err := json.Marshal(map[string]any{"results": stations})
		if err != nil {
			t.Fatal(err)
		}
		ap.SetReply("iwinfo", "assoclist", list)
		isSlow := slowEvery > 0 && slow < *benchSlow && i%slowEvery == 0
		if isSlow {
			ap.SetDelay(*benchSlowDelay)
			slow++
		}
		out = append(out, fakeAP{kind: wnms.PollerUbus, url: ap.URL, clients: n, slow: isSlow})
	}
	return out
}

// BenchmarkPollers polls -aps fake APs every -interval for -duration
// after a warm-up, and reports the process's CPU per AP and poll, its
// heap, RSS and goroutines per AP, the polls made against those due, how
// late they began and how long they took, and the records stored per
// second. The store is SQLite, or PostgreSQL when WNMS_TEST_DATABASE_URL
// is set. It runs once whatever -benchtime says.
func BenchmarkPollers(b *testing.B) {
	if testing.Short() {
		b.Skip("minutes long")
	}
	if *benchIngest != "store" && *benchIngest != "discard" {
		b.Fatalf("-ingest %q: store or discard", *benchIngest)
	}
	interval := *benchInterval
	warmup := *benchWarmup
	if warmup == 0 {
		warmup = interval
	}
	aps, apProc := startFakeAPProcess(b)

	backend := apitest.SQLite
	if os.Getenv("WNMS_TEST_DATABASE_URL") != "" {
		backend = apitest.Postgres
	}
	e := apitest.New(b, backend)
	site := e.NewLocation(b, 0, wnms.FolderLocation, "Site", 1)
	var pollers []any
	names := map[string]fakeAP{}
	for i, a := range aps {
		name := fmt.Sprintf("ap-%04d", i)
		names[name] = a
		p := map[string]any{"name": name, "kind": a.kind, "url": a.url,
			"locationId": map[string]any{"type": "locallocationid", "id": site.ID.ID}}
		if a.kind == wnms.PollerUbus {
			p["username"], p["password"] = ubustest.Username, ubustest.Password
		}
		if interval%time.Second == 0 && interval >= wnms.MinPollSeconds*time.Second {
			p["intervalSeconds"] = int(interval / time.Second)
		}
		pollers = append(pollers, p)
	}
	e.Admin.Expect(200, "PUT", "/V5/datasources", map[string]any{
		"radius": map[string]any{"upstreams": []any{}, "accountingUpstreams": []any{}}, "sources": []any{}, "pollers": pollers})

	var ingest interface {
		poller.Ingester
		accepted() int64
		took() []timed
	}
	if *benchIngest == "store" {
		ingest = &timedIngester{next: e.API.Telemetry}
	} else {
		ingest = &countingIngester{}
	}
	polls := &pollLog{byName: map[string][]pollRec{}}
	m := &poller.Manager{Store: e.Store, Ingest: ingest, Notify: e.API.Hub, Holder: "bench", Log: slog.New(slog.DiscardHandler),
		NewDriver: func(p wnms.Poller) (poller.Driver, error) {
			d, err := poller.DriverFor(p)
			if err != nil {
				return nil, err
			}
			t := &timedDriver{Driver: d, name: p.Name, log: polls}
			if f, ok := d.(poller.Follower); ok {
				return timedFollower{t, f}, nil
			}
			return t, nil
		}}
	if _, ok := pollers[0].(map[string]any)["intervalSeconds"]; !ok {
		poller.SetInterval(m, interval)
	}

	base := sampleMemory()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.Run(ctx, 10*time.Second) }()
	defer func() { cancel(); <-done }()

	// Warm-up: every AP that answers has been polled once, then -warmup.
	began := time.Now()
	for {
		polled := 0
		for name, a := range names {
			if !a.slow && polls.okCount(name) > 0 {
				polled++
			}
		}
		if polled == len(aps)-*benchSlow {
			break
		}
		if time.Since(began) > 2*interval+time.Minute {
			b.Fatalf("only %d of %d APs polled after %v", polled, len(aps)-*benchSlow, time.Since(began).Round(time.Second))
		}
		time.Sleep(100 * time.Millisecond)
	}
	firstRound := time.Since(began)
	time.Sleep(warmup)

	from := sampleCPU(apProc.Process.Pid)
	acceptedFrom := ingest.accepted()
	time.Sleep(*benchDuration)
	to := sampleCPU(apProc.Process.Pid)
	acceptedTo := ingest.accepted()
	mem := sampleMemory()
	window := to.at.Sub(from.at)
	if *benchHeap != "" {
		f, err := os.Create(*benchHeap)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}

	// The polls that began in the window, of the APs that answer and of
	// the slow ones.
	var nOK, nFailed, slowPolls int
	var lags, durations []time.Duration
	for name, a := range names {
		recs := polls.of(name)
		for i, p := range recs {
			if p.start.Before(from.at) || !p.start.Before(to.at) {
				continue
			}
			if a.slow {
				slowPolls++
				continue
			}
			if p.ok {
				nOK++
			} else {
				nFailed++
			}
			durations = append(durations, p.took)
			if i > 0 {
				lags = append(lags, p.start.Sub(recs[i-1].start)-interval)
			}
		}
	}
	var ingestTook []time.Duration
	for _, x := range ingest.took() {
		if !x.at.Before(from.at) && x.at.Before(to.at) {
			ingestTook = append(ingestTook, x.took)
		}
	}
	answering := len(aps) - *benchSlow
	due := float64(answering) * window.Seconds() / interval.Seconds()
	cpu := (to.self - from.self).Seconds()
	n := float64(len(aps))
	cpuPerPoll := cpu / float64(max(1, nOK+nFailed+slowPolls))
	clients := 0
	for _, a := range aps {
		clients += a.clients
	}

	fmt.Printf("pollers: %d APs (%d ubus, %d prometheus, %d slow answering after %v), %d clients, every %v; %s, ingest %s\n",
		len(aps), len(aps)-*benchPrometheus, *benchPrometheus, *benchSlow, *benchSlowDelay, clients, interval, backend, *benchIngest)
	fmt.Printf("first round of polls done after %v; measured %v after %v of warm-up\n",
		firstRound.Round(time.Millisecond), window.Round(time.Millisecond), warmup)
	fmt.Printf("machine: %d cores, load average %s at the start, %s at the end; cores busy %.2f of %d (this process %.2f, the fake APs %.2f, others %.2f)\n",
		runtime.NumCPU(), from.load, to.load, to.busy(from), runtime.NumCPU(), cpu/window.Seconds(),
		(to.child-from.child).Seconds()/window.Seconds(), to.busy(from)-cpu/window.Seconds()-(to.child-from.child).Seconds()/window.Seconds())
	fmt.Printf("polls of the APs that answer: %d ok, %d failed, %.0f due (%.1f%%)\n", nOK, nFailed, due, 100*float64(nOK)/due)
	late := 0
	var lagSum time.Duration
	for _, l := range lags {
		lagSum += l
		if l > time.Second {
			late++
		}
	}
	fmt.Printf("poll start lag (gap between two polls' starts minus the interval): p50 %v p99 %v max %v; %d of %d over 1 s; mean period %v\n",
		pct(lags, 50), pct(lags, 99), pct(lags, 100), late, len(lags), (interval + lagSum/time.Duration(max(1, len(lags)))).Round(time.Millisecond))
	fmt.Printf("poll duration (the driver's exchange with the AP): p50 %v p99 %v max %v\n",
		pct(durations, 50), pct(durations, 99), pct(durations, 100))
	if len(ingestTook) > 0 {
		fmt.Printf("ingest call (one of the three a poll makes): p50 %v p99 %v max %v\n",
			pct(ingestTook, 50), pct(ingestTook, 99), pct(ingestTook, 100))
	}
	if *benchSlow > 0 {
		fmt.Printf("slow APs: %d polls began in the window (each fails after the request timeout, then backs off)\n", slowPolls)
	}
	fmt.Printf("records ingested: %.1f/s\n", float64(acceptedTo-acceptedFrom)/window.Seconds())
	fmt.Printf("CPU: %.3f s in %v = %.1f%% of a core; %.3f ms per AP per poll; the fake APs %.3f s\n",
		cpu, window.Round(time.Second), 100*cpu/window.Seconds(), 1000*cpuPerPoll, (to.child - from.child).Seconds())
	fmt.Printf("memory: heap in use %.1f KB per AP (%.1f MB → %.1f MB), RSS %.1f KB per AP (%.1f MB → %.1f MB), goroutines %.2f per AP (%d → %d)\n",
		float64(mem.heap-base.heap)/1024/n, float64(base.heap)/(1<<20), float64(mem.heap)/(1<<20),
		float64(mem.rss-base.rss)/1024/n, float64(base.rss)/(1<<20), float64(mem.rss)/(1<<20),
		float64(mem.goroutines-base.goroutines)/n, base.goroutines, mem.goroutines)
	if l := len(e.Logs.String()); l > 0 {
		fmt.Printf("server log kept by the test environment: %d bytes\n", l)
	}

	b.ReportMetric(1000*cpuPerPoll, "cpu-ms/ap-poll")
	b.ReportMetric(float64(mem.heap-base.heap)/1024/n, "heap-KB/ap")
	b.ReportMetric(float64(mem.rss-base.rss)/1024/n, "rss-KB/ap")
	b.ReportMetric(float64(mem.goroutines-base.goroutines)/n, "goroutines/ap")
	b.ReportMetric(float64(pct(lags, 99))/float64(time.Millisecond), "lag-p99-ms")
	b.ReportMetric(100*float64(nOK)/due, "%polls-done")
}

// startFakeAPProcess runs TestFakeAPs in a copy of this test binary and
// reads its APs; the process ends when the benchmark does.
func startFakeAPProcess(b *testing.B) ([]fakeAP, *exec.Cmd) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestFakeAPs$", "-test.bench=^$", "-test.timeout=0",
		"-aps="+strconv.Itoa(*benchAPs), "-prometheus="+strconv.Itoa(*benchPrometheus),
		"-max-clients="+strconv.Itoa(*benchMaxClients), "-slow="+strconv.Itoa(*benchSlow), "-slow-delay="+benchSlowDelay.String())
	cmd.Env = append(os.Environ(), fakeAPsEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	var aps []fakeAP
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 1 && f[0] == "ready" {
			go io.Copy(io.Discard, stdout)
			return aps, cmd
		}
		if len(f) != 5 || f[0] != "ap" {
			continue // the test binary's own lines
		}
		n, _ := strconv.Atoi(f[3])
		aps = append(aps, fakeAP{kind: f[1], url: f[2], clients: n, slow: f[4] == "true"})
	}
	b.Fatalf("the fake APs did not start: %v", sc.Err())
	return nil, nil
}

// pollRec is one poll as the driver saw it.
type pollRec struct {
	start time.Time
	took  time.Duration
	ok    bool
}

// pollLog keeps every poll of every poller, by poller.
type pollLog struct {
	mu     sync.Mutex
	byName map[string][]pollRec
}

func (l *pollLog) add(name string, r pollRec) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byName[name] = append(l.byName[name], r)
}

func (l *pollLog) of(name string) []pollRec {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.byName[name])
}

func (l *pollLog) okCount(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.byName[name] {
		if r.ok {
			n++
		}
	}
	return n
}

// timedDriver records each poll of the driver it wraps.
type timedDriver struct {
	poller.Driver
	name string
	log  *pollLog
}

func (d *timedDriver) Poll(ctx context.Context) (*poller.Observation, error) {
	start := time.Now()
	obs, err := d.Driver.Poll(ctx)
	d.log.add(d.name, pollRec{start: start, took: time.Since(start), ok: err == nil})
	return obs, err
}

// timedFollower is a timedDriver that still follows the AP's events.
type timedFollower struct {
	*timedDriver
	f poller.Follower
}

func (d timedFollower) Follow(ctx context.Context, emit func([]wnms.EventRecord)) error {
	return d.f.Follow(ctx, emit)
}

// timed is how long one ingest call took, and when it ended.
type timed struct {
	at   time.Time
	took time.Duration
}

// timedIngester passes each call to the telemetry ingest, counting the
// records it accepted and timing the call.
type timedIngester struct {
	next  poller.Ingester
	count atomic.Int64
	mu    sync.Mutex
	calls []timed
}

func (t *timedIngester) done(start time.Time, res *telemetry.Result, err error) (*telemetry.Result, error) {
	now := time.Now()
	t.mu.Lock()
	t.calls = append(t.calls, timed{at: now, took: now.Sub(start)})
	t.mu.Unlock()
	if err == nil {
		t.count.Add(int64(res.Accepted))
	}
	return res, err
}

func (t *timedIngester) IngestSourceAPs(ctx context.Context, c *wnms.Caller, recs []telemetry.APInput, at int64) (*telemetry.Result, error) {
	start := time.Now()
	res, err := t.next.IngestSourceAPs(ctx, c, recs, at)
	return t.done(start, res, err)
}

func (t *timedIngester) IngestSourceRadioSamples(ctx context.Context, c *wnms.Caller, recs []wnms.RadioSampleRecord) (*telemetry.Result, error) {
	start := time.Now()
	res, err := t.next.IngestSourceRadioSamples(ctx, c, recs)
	return t.done(start, res, err)
}

func (t *timedIngester) IngestSourceSamples(ctx context.Context, c *wnms.Caller, recs []wnms.SampleRecord, at int64) (*telemetry.Result, error) {
	start := time.Now()
	res, err := t.next.IngestSourceSamples(ctx, c, recs, at)
	return t.done(start, res, err)
}

func (t *timedIngester) IngestSourceEvents(ctx context.Context, c *wnms.Caller, recs []wnms.EventRecord, at int64) (*telemetry.Result, error) {
	start := time.Now()
	res, err := t.next.IngestSourceEvents(ctx, c, recs, at)
	return t.done(start, res, err)
}

func (t *timedIngester) accepted() int64 { return t.count.Load() }

func (t *timedIngester) took() []timed {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.calls)
}

// countingIngester is an ingest that stores nothing: it accepts every
// record and counts them, so that a run with it costs what the pollers
// themselves cost (asking the APs, parsing, making the records, the
// leases).
type countingIngester struct{ count atomic.Int64 }

func (c *countingIngester) accept(n int) (*telemetry.Result, error) {
	c.count.Add(int64(n))
	return &telemetry.Result{Accepted: n, Rejected: []telemetry.Rejection{}}, nil
}

func (c *countingIngester) IngestSourceAPs(_ context.Context, _ *wnms.Caller, recs []telemetry.APInput, _ int64) (*telemetry.Result, error) {
	return c.accept(len(recs))
}

func (c *countingIngester) IngestSourceRadioSamples(_ context.Context, _ *wnms.Caller, recs []wnms.RadioSampleRecord) (*telemetry.Result, error) {
	return c.accept(len(recs))
}

func (c *countingIngester) IngestSourceSamples(_ context.Context, _ *wnms.Caller, recs []wnms.SampleRecord, _ int64) (*telemetry.Result, error) {
	return c.accept(len(recs))
}

func (c *countingIngester) IngestSourceEvents(_ context.Context, _ *wnms.Caller, recs []wnms.EventRecord, _ int64) (*telemetry.Result, error) {
	return c.accept(len(recs))
}

func (c *countingIngester) accepted() int64 { return c.count.Load() }

func (c *countingIngester) took() []timed { return nil }

// cpuSample is the CPU time used so far by this process, by the fake
// APs' process and by the whole machine.
type cpuSample struct {
	at                time.Time
	self, child       time.Duration
	machineBusy, idle time.Duration
	load              string
}

func sampleCPU(child int) cpuSample {
	s := cpuSample{at: time.Now()}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		s.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	// /proc/<pid>/stat: utime and stime are fields 14 and 15, in clock
	// ticks (100 a second on Linux), after the command in parentheses.
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child)); err == nil {
		if i := strings.LastIndexByte(string(b), ')'); i > 0 {
			f := strings.Fields(string(b[i+1:]))
			if len(f) > 13 {
				u, _ := strconv.ParseInt(f[11], 10, 64)
				k, _ := strconv.ParseInt(f[12], 10, 64)
				s.child = time.Duration(u+k) * 10 * time.Millisecond
			}
		}
	}
	// /proc/stat's cpu line: user nice system idle iowait irq softirq
	// steal, in ticks.
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		for i := 1; i < len(f) && i <= 8; i++ {
			v, _ := strconv.ParseInt(f[i], 10, 64)
			if i == 4 || i == 5 {
				s.idle += time.Duration(v) * 10 * time.Millisecond
			} else {
				s.machineBusy += time.Duration(v) * 10 * time.Millisecond
			}
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(b))
		if len(f) >= 3 {
			s.load = strings.Join(f[:3], " ")
		}
	}
	return s
}

// busy is the machine's cores busy on average since from.
func (s cpuSample) busy(from cpuSample) float64 {
	return (s.machineBusy - from.machineBusy).Seconds() / s.at.Sub(from.at).Seconds()
}

type memSample struct {
	heap, rss  int64
	goroutines int
}

var vmRSS = regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB`)

// sampleMemory collects garbage first, so that the heap is what is live.
func sampleMemory() memSample {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := memSample{heap: int64(ms.HeapInuse), goroutines: runtime.NumGoroutine()}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		if m := vmRSS.FindSubmatch(b); m != nil {
			kb, _ := strconv.ParseUint(string(m[1]), 10, 64)
			s.rss = int64(kb) << 10
		}
	}
	return s
}

// pct is the p-th percentile of d (nearest rank), rounded to 0.1 ms; 0
// for none.
func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[max(0, int(math.Ceil(p/100*float64(len(s))))-1)].Round(100 * time.Microsecond)
}
