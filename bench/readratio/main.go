// Command readratio measures what an authenticated read costs in wnms
// against what net/http alone costs on the same machine: it starts a real
// `wnms serve` (embedded SQLite in a fresh data directory, or PostgreSQL)
// and bench/bare (a net/http server answering 1 KiB of JSON) side by side,
// logs in with an API key, and loads
//
//	bare: GET /                                     (1 KiB of JSON)
//	wnms: GET /new/webservice/V5/users/current      (with the session cookie)
//
// with the same client, in alternating rounds (bare first in odd rounds,
// wnms first in even ones, so both see the same load from the rest of the
// machine). Each round prints both rates, the ratio wnms/bare and both
// p99s; the summary gives the range and median of each.
//
//	go run ./bench/readratio                          # SQLite, 5 rounds of 4 s
//	go run ./bench/readratio -engine postgres -database-url postgres://…
//
// The client is wrk (-t2 -c32, as the table was measured) when it
// is installed, else a load generator built in (keep-alive HTTP/1.1 over
// raw connections, as light as wrk); -client chooses. The program builds
// wnms and bench/bare from this checkout unless -wnms and -bare name
// binaries (to measure an older build, say). Everything it starts is
// stopped when it ends.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type config struct {
	engine      string
	databaseURL string
	wnmsBin     string
	bareBin     string
	client      string
	rounds      int
	duration    time.Duration
	warmup      time.Duration
	threads     int
	conns       int
	wnmsAddr    string
	bareAddr    string
	debugListen string
	keep        bool
}

func main() {
	var c config
	flag.StringVar(&c.engine, "engine", "sqlite", "store of wnms: sqlite (a fresh data directory) or postgres (-database-url)")
	flag.StringVar(&c.databaseURL, "database-url", os.Getenv("WNMS_DATABASE_URL"), "PostgreSQL URL for -engine postgres (a throw-away database: the run adds an API user wnms-bench and sessions); default WNMS_DATABASE_URL")
	flag.StringVar(&c.wnmsBin, "wnms", "", "wnms binary to run (default: go build ./cmd/wnms)")
	flag.StringVar(&c.bareBin, "bare", "", "bare server binary (default: go build ./bench/bare)")
	flag.StringVar(&c.client, "client", "auto", "load client: wrk, go (built in), or auto (wrk when installed)")
	flag.IntVar(&c.rounds, "rounds", 5, "alternating rounds (each loads bare and wnms once)")
	flag.DurationVar(&c.duration, "duration", 4*time.Second, "length of each load")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "unrecorded load of each server before the rounds")
	flag.IntVar(&c.threads, "threads", 2, "client threads (wrk -t; the built-in client's GOMAXPROCS)")
	flag.IntVar(&c.conns, "conns", 32, "client connections (wrk -c)")
	flag.StringVar(&c.wnmsAddr, "wnms-addr", "127.0.0.1:18180", "API listener of wnms (the analytics listener takes the next port)")
	flag.StringVar(&c.bareAddr, "bare-addr", "127.0.0.1:18190", "listener of the bare server")
	flag.StringVar(&c.debugListen, "debug-listen", "off", "pass --debug-listen to wnms (to profile it under this load)")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory (binaries, logs, data)")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "readratio:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	switch {
	case c.engine != "sqlite" && c.engine != "postgres":
		return fmt.Errorf("-engine %q: want sqlite or postgres", c.engine)
	case c.engine == "postgres" && c.databaseURL == "":
		return errors.New("-engine postgres needs -database-url (or WNMS_DATABASE_URL)")
	case c.rounds < 1 || c.duration < time.Second || c.conns < 1 || c.threads < 1:
		return errors.New("-rounds, -conns and -threads must be at least 1, -duration at least 1s")
	}
	switch c.client {
	case "auto":
		c.client = "go"
		if _, err := exec.LookPath("wrk"); err == nil {
			c.client = "wrk"
		}
	case "wrk", "go":
	default:
		return fmt.Errorf("-client %q: want wrk, go or auto", c.client)
	}

	tmp, err := os.MkdirTemp("", "wnms-readratio-")
	if err != nil {
		return err
	}
	if c.keep {
		defer fmt.Fprintln(os.Stderr, "readratio: kept", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if c.wnmsBin == "" || c.bareBin == "" {
		fmt.Println("== building into", tmp)
	}
	if c.wnmsBin == "" {
		if c.wnmsBin, err = build(tmp, "wnms", "./cmd/wnms"); err != nil {
			return err
		}
	}
	if c.bareBin == "" {
		if c.bareBin, err = build(tmp, "bare", "./bench/bare"); err != nil {
			return err
		}
	}

	wnms, cookie, err := startWnms(ctx, c, tmp)
	if err != nil {
		return err
	}
	defer wnms.stop()
	bare, err := startProc(filepath.Join(tmp, "bare.log"), nil, c.bareBin, "-listen", c.bareAddr)
	if err != nil {
		return err
	}
	defer bare.stop()
	if err := waitHTTP(ctx, "http://"+c.bareAddr+"/", bare); err != nil {
		return fmt.Errorf("bare did not start on %s (port taken? -bare-addr): %w", c.bareAddr, err)
	}

	targets := []target{
		{name: "bare", url: "http://" + c.bareAddr + "/"},
		{name: "wnms", url: "http://" + c.wnmsAddr + "/new/webservice/V5/users/current", cookie: cookie},
	}
	for _, t := range targets {
		n, err := answerSize(t)
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		fmt.Printf("== %s %s answers %d bytes\n", t.name, t.url, n)
	}
	fmt.Printf("== client %s, %d threads, %d connections, %s per load; wnms on %s, GOMAXPROCS of this machine %d\n",
		c.client, c.threads, c.conns, c.duration, c.engine, runtime.NumCPU())
	if c.warmup > 0 {
		for _, t := range targets {
			if _, err := load(ctx, c, t, c.warmup); err != nil {
				return err
			}
		}
	}
	var res [2][]result
	for r := 1; r <= c.rounds; r++ {
		order := []int{0, 1}
		if r%2 == 0 {
			order = []int{1, 0}
		}
		var got [2]result
		for _, i := range order {
			if got[i], err = load(ctx, c, targets[i], c.duration); err != nil {
				return err
			}
			res[i] = append(res[i], got[i])
		}
		fmt.Printf("round %d: bare %8.0f req/s p99 %6.2f ms   wnms %8.0f req/s p99 %6.2f ms   ratio %.3f\n",
			r, got[0].rps, ms(got[0].p99), got[1].rps, ms(got[1].p99), got[1].rps/got[0].rps)
	}
	var ratios []float64
	for i := range res[0] {
		ratios = append(ratios, res[1][i].rps/res[0][i].rps)
	}
	fmt.Printf("summary (%d rounds, %s): bare %s req/s, wnms %s req/s, ratio %s; p99 bare %s ms, wnms %s ms\n",
		c.rounds, c.engine, spread(rates(res[0]), "%.0f"), spread(rates(res[1]), "%.0f"), spread(ratios, "%.3f"),
		spread(p99s(res[0]), "%.2f"), spread(p99s(res[1]), "%.2f"))
	return nil
}

// build compiles a package of this module into dir.
func build(dir, name, pkg string) (string, error) {
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s (run from the repository's root): %w", pkg, err)
	}
	return out, nil
}

// proc is a started server.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startProc(logFile string, env []string, bin string, args ...string) (*proc, error) {
	log, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); log.Close(); close(p.done) }()
	return p, nil
}

// stop ends the process: SIGTERM, then SIGKILL after 30 s.
func (p *proc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func waitHTTP(ctx context.Context, u string, p *proc) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(u); err == nil {
			resp.Body.Close()
			return nil
		}
		if p.exited() {
			return errors.New("the process exited")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return errors.New("no answer within 60 s")
}

// serveEnv is the environment of wnms: this one without any WNMS_*
// variable, so that nothing left in the caller's shell changes what is
// measured.
func serveEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WNMS_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// startWnms starts wnms serve, logs in with an API key and returns the
// session cookie.
func startWnms(ctx context.Context, c config, tmp string) (*proc, string, error) {
	help, _ := exec.Command(c.wnmsBin, "serve", "--help").CombinedOutput()
	has := func(flag string) bool { return bytes.Contains(help, []byte("--"+flag+" ")) }
	host, port, err := net.SplitHostPort(c.wnmsAddr)
	if err != nil {
		return nil, "", fmt.Errorf("-wnms-addr %q: %w", c.wnmsAddr, err)
	}
	p, _ := strconv.Atoi(port)
	data := filepath.Join(tmp, "data")
	args := []string{"serve", "--data", data, "--listen", c.wnmsAddr, "--analytics-listen", net.JoinHostPort(host, strconv.Itoa(p+1))}
	for _, f := range []string{"snmp-agent-listen", "metrics-listen"} { // flags an older build may lack
		if has(f) {
			args = append(args, "--"+f, "off")
		}
	}
	if c.debugListen != "off" {
		args = append(args, "--debug-listen", c.debugListen)
	}
	keyID, keyValue := "readratio-"+random(6), random(32)
	env := serveEnv()
	if c.engine == "postgres" {
		args = append(args, "--database-url", c.databaseURL)
		// The database may already hold users, so no bootstrap key is
		// made: make one with the CLI.
		out, err := exec.Command(c.wnmsBin, "apikey", "create", "--login", "wnms-bench", "--role", "SUPERUSER",
			"--database-url", c.databaseURL).Output()
		if err != nil {
			return nil, "", fmt.Errorf("wnms apikey create: %w", err)
		}
		var k struct{ KeyID, KeyValue string }
		if err := json.Unmarshal(bytes.TrimSpace(out), &k); err != nil || k.KeyID == "" {
			return nil, "", fmt.Errorf("wnms apikey create printed no key (%v)", err)
		}
		keyID, keyValue = k.KeyID, k.KeyValue
	} else {
		env = serveEnv("WNMS_BOOTSTRAP_KEY_ID="+keyID, "WNMS_BOOTSTRAP_KEY_VALUE="+keyValue)
	}
	fmt.Printf("== starting %s %s\n", c.wnmsBin, strings.Join(redact(args), " "))
	w, err := startProc(filepath.Join(tmp, "wnms.log"), env, c.wnmsBin, args...)
	if err != nil {
		return nil, "", err
	}
	if err := waitHTTP(ctx, "http://"+c.wnmsAddr+"/readyz", w); err != nil {
		w.stop()
		log, _ := os.ReadFile(filepath.Join(tmp, "wnms.log"))
		return nil, "", fmt.Errorf("wnms did not become ready on %s (port taken? -wnms-addr): %w\n%s", c.wnmsAddr, err, tail(log, 20))
	}
	body, _ := json.Marshal(map[string]string{"type": "apikeycredentials", "keyId": keyID, "keyValue": keyValue})
	resp, err := http.Post("http://"+c.wnmsAddr+"/new/webservice/login/key/readratio/86400", "application/json", bytes.NewReader(body))
	if err != nil {
		w.stop()
		return nil, "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	for _, ck := range resp.Cookies() {
		if ck.Name == "JSESSIONID" && resp.StatusCode == http.StatusOK {
			return w, ck.Value, nil
		}
	}
	w.stop()
	return nil, "", fmt.Errorf("login answered %s without a session", resp.Status)
}

// redact hides the password of a database URL in args.
func redact(args []string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if u, err := url.Parse(a); err == nil && u.User != nil {
			out[i] = u.Redacted()
		}
	}
	return out
}

func random(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func tail(b []byte, lines int) string {
	l := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(l[max(0, len(l)-lines):], "\n")
}

// target is a URL to load, with the session cookie wnms needs.
type target struct {
	name, url, cookie string
}

func (t target) request() (*http.Request, error) {
	req, err := http.NewRequest("GET", t.url, nil)
	if err == nil && t.cookie != "" {
		req.Header.Set("Cookie", "JSESSIONID="+t.cookie)
	}
	return req, err
}

func answerSize(t target) (int, error) {
	req, err := t.request()
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("answered %s: %s", resp.Status, b)
	}
	return len(b), err
}

// result is one load of one server.
type result struct {
	rps float64
	p99 time.Duration
}

func load(ctx context.Context, c config, t target, d time.Duration) (result, error) {
	if err := ctx.Err(); err != nil {
		return result{}, err
	}
	if c.client == "wrk" {
		return loadWrk(ctx, c, t, d)
	}
	return loadGo(ctx, c, t, d)
}

var (
	wrkRate = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
	wrkP99  = regexp.MustCompile(`(?m)^\s+99%\s+([0-9.]+)(us|ms|s)\b`)
)

// loadWrk runs wrk with its latency distribution; an error or a non-2xx
// answer fails the run, since the rate would mean nothing.
func loadWrk(ctx context.Context, c config, t target, d time.Duration) (result, error) {
	args := []string{"-t" + strconv.Itoa(c.threads), "-c" + strconv.Itoa(c.conns), "-d" + strconv.Itoa(int(d.Seconds())) + "s", "--latency"}
	if t.cookie != "" {
		args = append(args, "-H", "Cookie: JSESSIONID="+t.cookie)
	}
	out, err := exec.CommandContext(ctx, "wrk", append(args, t.url)...).CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("wrk against %s: %w\n%s", t.name, err, out)
	}
	if bytes.Contains(out, []byte("Non-2xx")) || bytes.Contains(out, []byte("Socket errors")) {
		return result{}, fmt.Errorf("wrk against %s saw errors:\n%s", t.name, out)
	}
	m, l := wrkRate.FindSubmatch(out), wrkP99.FindSubmatch(out)
	if m == nil || l == nil {
		return result{}, fmt.Errorf("wrk printed no rate or p99:\n%s", out)
	}
	rps, _ := strconv.ParseFloat(string(m[1]), 64)
	v, _ := strconv.ParseFloat(string(l[1]), 64)
	unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[string(l[2])]
	return result{rps: rps, p99: time.Duration(v * float64(unit))}, nil
}

// loadGo is the built-in client: c.conns keep-alive connections, each
// sending the same request and reading its answer, for d. Latencies go
// into a histogram of 1 % wide buckets, so memory does not grow with the
// rate.
func loadGo(ctx context.Context, c config, t target, d time.Duration) (result, error) {
	u, err := url.Parse(t.url)
	if err != nil {
		return result{}, err
	}
	var req bytes.Buffer
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: readratio\r\n", u.RequestURI(), u.Host)
	if t.cookie != "" {
		fmt.Fprintf(&req, "Cookie: JSESSIONID=%s\r\n", t.cookie)
	}
	req.WriteString("\r\n")
	prev := runtime.GOMAXPROCS(c.threads)
	defer runtime.GOMAXPROCS(prev)

	var (
		total  atomic.Int64
		mu     sync.Mutex
		hist   histogram
		firstE error
		wg     sync.WaitGroup
	)
	start := time.Now()
	end := start.Add(d)
	for range c.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var h histogram
			n, err := loadConn(ctx, u.Host, req.Bytes(), end, &h)
			total.Add(n)
			mu.Lock()
			hist.add(&h)
			if err != nil && firstE == nil {
				firstE = err
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if firstE != nil {
		return result{}, fmt.Errorf("load of %s: %w", t.name, firstE)
	}
	return result{rps: float64(total.Load()) / time.Since(start).Seconds(), p99: hist.quantile(0.99)}, nil
}

// loadConn sends req over one connection until end and counts the
// answers; any answer but 200 is an error.
func loadConn(ctx context.Context, addr string, req []byte, end time.Time, h *histogram) (int64, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	conn.SetDeadline(end.Add(10 * time.Second))
	r := bufio.NewReaderSize(conn, 16<<10)
	var n int64
	for time.Now().Before(end) && ctx.Err() == nil {
		t0 := time.Now()
		if _, err := conn.Write(req); err != nil {
			return n, err
		}
		if err := readAnswer(r); err != nil {
			return n, err
		}
		h.observe(time.Since(t0))
		n++
	}
	return n, nil
}

// readAnswer reads one HTTP/1.1 answer with a Content-Length body.
func readAnswer(r *bufio.Reader) error {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
		return fmt.Errorf("answer %q", bytes.TrimSpace(line))
	}
	length := -1
	for {
		line, err = r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && strings.EqualFold(string(k), "Content-Length") {
			if length, err = strconv.Atoi(string(bytes.TrimSpace(v))); err != nil {
				return fmt.Errorf("Content-Length %q", v)
			}
		}
	}
	if length < 0 {
		return errors.New("an answer without Content-Length")
	}
	_, err = r.Discard(length)
	return err
}

// histogram counts latencies in buckets 1 % wide from 1 µs.
type histogram struct {
	counts [2000]int64
}

func bucket(d time.Duration) int {
	us := float64(d) / float64(time.Microsecond)
	if us <= 1 {
		return 0
	}
	return min(int(math.Log(us)/math.Log(1.01))+1, len(histogram{}.counts)-1)
}

func (h *histogram) observe(d time.Duration) { h.counts[bucket(d)]++ }

func (h *histogram) add(o *histogram) {
	for i, n := range o.counts {
		h.counts[i] += n
	}
}

// quantile is the upper bound of the bucket holding quantile q.
func (h *histogram) quantile(q float64) time.Duration {
	var total int64
	for _, n := range h.counts {
		total += n
	}
	want := int64(math.Ceil(q * float64(total)))
	var seen int64
	for i, n := range h.counts {
		if seen += n; seen >= want && n > 0 {
			return time.Duration(math.Pow(1.01, float64(i)) * float64(time.Microsecond))
		}
	}
	return 0
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func rates(rs []result) []float64 {
	var out []float64
	for _, r := range rs {
		out = append(out, r.rps)
	}
	return out
}

func p99s(rs []result) []float64 {
	var out []float64
	for _, r := range rs {
		out = append(out, ms(r.p99))
	}
	return out
}

// spread is "min–max (median m)".
func spread(v []float64, format string) string {
	s := slices.Clone(v)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf(format+"–"+format+" (median "+format+")", s[0], s[len(s)-1], med)
}
