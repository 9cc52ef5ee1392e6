// Command readratio measures what an authenticated read costs in wnms
// against what net/http alone costs on the same machine: it starts a real
// `wnms serve` (embedded SQLite in a fresh data directory, or PostgreSQL)
// and bench/bare (a net/http server answering 1 KiB of JSON) side by side,
// logs in with an API key, and loads
//
//	bare: GET /                                     (1 KiB of JSON)
//	wnms: GET /new/webservice/V5/users/current      (with the session cookie)
//
// with the same client, in alternating rounds (each round loads every
// server once, starting one further along than the round before, so all
// see the same load from the rest of the machine). Each round prints the
// rates, the ratio wnms/bare and the p99s; the summary gives the range and
// median of each.
//
//	go run ./bench/readratio                          # SQLite, 5 rounds of 4 s
//	go run ./bench/readratio -engine postgres -database-url postgres://…
//
// The client is wrk (-t2 -c32, as the table was measured) when it
// is installed, else a load generator built in (keep-alive HTTP/1.1 over
// raw connections, as light as wrk); -client chooses. The program builds
// wnms and bench/bare from this checkout unless -wnms and -bare name
// binaries. -wnms may name several builds, comma-separated (with one
// PostgreSQL database each in -database-url): they run side by side and
// every round loads each of them and bare, in turn, which compares an
// older build with this one under the same load of a shared machine.
// Everything it starts is stopped when it ends.
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
	wnmsBins    []string
	dbURLs      []string
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
	flag.StringVar(&c.databaseURL, "database-url", os.Getenv("WNMS_DATABASE_URL"), "PostgreSQL URL for -engine postgres (a throw-away database: the run adds an API user and sessions), one per -wnms binary, comma-separated; default WNMS_DATABASE_URL")
	wnmsList := flag.String("wnms", "", "wnms binary to run (default: go build ./cmd/wnms), or several, comma-separated, to run side by side")
	flag.StringVar(&c.bareBin, "bare", "", "bare server binary (default: go build ./bench/bare)")
	flag.StringVar(&c.client, "client", "auto", "load client: wrk, go (built in), or auto (wrk when installed)")
	flag.IntVar(&c.rounds, "rounds", 5, "alternating rounds (each loads bare and wnms once)")
	flag.DurationVar(&c.duration, "duration", 4*time.Second, "length of each load")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "unrecorded load of each server before the rounds")
	flag.IntVar(&c.threads, "threads", 2, "client threads (wrk -t; the built-in client's GOMAXPROCS)")
	flag.IntVar(&c.conns, "conns", 32, "client connections (wrk -c)")
	flag.StringVar(&c.wnmsAddr, "wnms-addr", "127.0.0.1:18180", "API listener of wnms (the analytics listener takes the next port; a second -wnms build takes the port 10 above, and so on)")
	flag.StringVar(&c.bareAddr, "bare-addr", "127.0.0.1:18170", "listener of the bare server")
	flag.StringVar(&c.debugListen, "debug-listen", "off", "pass --debug-listen to wnms (to profile it under this load)")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory (binaries, logs, data)")
	flag.Parse()
	if *wnmsList != "" {
		c.wnmsBins = strings.Split(*wnmsList, ",")
	}
	if c.databaseURL != "" {
		c.dbURLs = strings.Split(c.databaseURL, ",")
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "readratio:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	switch {
	case c.engine != "sqlite" && c.engine != "postgres":
		return fmt.Errorf("-engine %q: want sqlite or postgres", c.engine)
	case c.engine == "postgres" && len(c.dbURLs) != max(1, len(c.wnmsBins)):
		return errors.New("-engine postgres needs -database-url (or WNMS_DATABASE_URL): one database per -wnms binary")
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

	if len(c.wnmsBins) == 0 || c.bareBin == "" {
		fmt.Println("== building into", tmp)
	}
	if len(c.wnmsBins) == 0 {
		bin, err := build(tmp, "wnms", "./cmd/wnms")
		if err != nil {
			return err
		}
		c.wnmsBins = []string{bin}
	}
	if c.bareBin == "" {
		if c.bareBin, err = build(tmp, "bare", "./bench/bare"); err != nil {
			return err
		}
	}

	// bare first: a wnms that then finds its port taken fails to start,
	// where the other order would have bare's check answered by wnms.
	bare, err := startProc(filepath.Join(tmp, "bare.log"), nil, c.bareBin, "-listen", c.bareAddr)
	if err != nil {
		return err
	}
	defer bare.stop()
	if err := waitHTTP(ctx, "http://"+c.bareAddr+"/", bare); err != nil {
		return fmt.Errorf("bare did not start on %s (port taken? -bare-addr): %w", c.bareAddr, err)
	}
	host, port, err := net.SplitHostPort(c.wnmsAddr)
	if err != nil {
		return fmt.Errorf("-wnms-addr %q: %w", c.wnmsAddr, err)
	}
	firstPort, _ := strconv.Atoi(port)
	targets := []target{{name: "bare", url: "http://" + c.bareAddr + "/", pid: bare.cmd.Process.Pid}}
	for i, bin := range c.wnmsBins {
		name := "wnms"
		if len(c.wnmsBins) > 1 {
			name = fmt.Sprintf("wnms#%d", i+1)
			fmt.Printf("== %s is %s\n", name, bin)
		}
		dbURL := ""
		if c.engine == "postgres" {
			dbURL = c.dbURLs[i]
		}
		addr := net.JoinHostPort(host, strconv.Itoa(firstPort+10*i))
		w, cookie, err := startWnms(c, bin, addr, dbURL, filepath.Join(tmp, fmt.Sprint(i+1)))
		if err != nil {
			return err
		}
		defer w.stop()
		targets = append(targets, target{name: name, url: "http://" + addr + "/new/webservice/V5/users/current", cookie: cookie, pid: w.cmd.Process.Pid})
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
	// Each round loads every server once, starting one further along than
	// the round before: no server is always first after a pause or last
	// under a build-up.
	res := make([][]result, len(targets))
	for r := 1; r <= c.rounds; r++ {
		got := make([]result, len(targets))
		for k := range targets {
			i := (k + r - 1) % len(targets)
			if got[i], err = load(ctx, c, targets[i], c.duration); err != nil {
				return err
			}
			res[i] = append(res[i], got[i])
		}
		line := fmt.Sprintf("round %d: bare %6.0f req/s p99 %6.2f ms cpu %5.1f µs/req", r, got[0].rps, ms(got[0].p99), us(got[0].cpu))
		for i := 1; i < len(targets); i++ {
			line += fmt.Sprintf(" | %s %6.0f req/s p99 %6.2f ms cpu %5.1f µs/req ratio %.3f", targets[i].name, got[i].rps,
				ms(got[i].p99), us(got[i].cpu), got[i].rps/got[0].rps)
		}
		fmt.Println(line)
	}
	fmt.Printf("summary (%d rounds, %s): bare %s req/s, p99 %s ms, cpu %s µs/req\n", c.rounds, c.engine,
		spread(rates(res[0]), "%.0f"), spread(p99s(res[0]), "%.2f"), spread(cpus(res[0]), "%.1f"))
	for i := 1; i < len(targets); i++ {
		var ratios, cost []float64
		for k := range res[0] {
			ratios = append(ratios, res[i][k].rps/res[0][k].rps)
			if res[i][k].cpu > 0 {
				cost = append(cost, float64(res[0][k].cpu)/float64(res[i][k].cpu))
			}
		}
		line := fmt.Sprintf("summary (%d rounds, %s): %s %s req/s, ratio %s, p99 %s ms, cpu %s µs/req", c.rounds, c.engine,
			targets[i].name, spread(rates(res[i]), "%.0f"), spread(ratios, "%.3f"), spread(p99s(res[i]), "%.2f"), spread(cpus(res[i]), "%.1f"))
		if len(cost) > 0 {
			line += ", cpu ratio bare/wnms " + spread(cost, "%.3f")
		}
		fmt.Println(line)
	}
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

// startWnms starts the wnms binary bin on addr (its analytics listener on
// the next port) over a fresh data directory in dir, or the PostgreSQL
// database dbURL, logs in with an API key and returns the session cookie.
func startWnms(c config, bin, addr, dbURL, dir string) (*proc, string, error) {
	help, _ := exec.Command(bin, "serve", "--help").CombinedOutput()
	has := func(flag string) bool { return bytes.Contains(help, []byte("--"+flag+" ")) }
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", err
	}
	p, _ := strconv.Atoi(port)
	data := filepath.Join(dir, "data")
	args := []string{"serve", "--data", data, "--listen", addr, "--analytics-listen", net.JoinHostPort(host, strconv.Itoa(p+1))}
	for _, f := range []string{"snmp-agent-listen", "metrics-listen"} { // flags an older build may lack
		if has(f) {
			args = append(args, "--"+f, "off")
		}
	}
	if c.debugListen != "off" {
		args = append(args, "--debug-listen", c.debugListen)
	}
	// A fresh store makes the bootstrap key; a PostgreSQL database that
	// already holds users does not, and then a key is made with the CLI
	// once serve has created the schema.
	keyID, keyValue := "readratio-"+random(6), random(32)
	env := serveEnv("WNMS_BOOTSTRAP_KEY_ID="+keyID, "WNMS_BOOTSTRAP_KEY_VALUE="+keyValue)
	if dbURL != "" {
		args = append(args, "--database-url", dbURL)
	}
	fmt.Printf("== starting %s %s\n", bin, strings.Join(redact(args), " "))
	w, err := startProc(filepath.Join(dir, "wnms.log"), env, bin, args...)
	if err != nil {
		return nil, "", err
	}
	if err := waitHTTP(context.Background(), "http://"+addr+"/readyz", w); err != nil {
		w.stop()
		log, _ := os.ReadFile(filepath.Join(dir, "wnms.log"))
		return nil, "", fmt.Errorf("wnms did not become ready on %s (port taken? -wnms-addr): %w\n%s", addr, err, tail(log, 20))
	}
	cookie, status, err := login(addr, keyID, keyValue)
	if err == nil && status == http.StatusUnauthorized && dbURL != "" {
		out, cerr := exec.Command(bin, "apikey", "create", "--login", "wnms-bench", "--role", "SUPERUSER",
			"--database-url", dbURL).CombinedOutput()
		var k struct{ KeyID, KeyValue string }
		if cerr != nil || json.Unmarshal(bytes.TrimSpace(out), &k) != nil || k.KeyID == "" {
			w.stop()
			return nil, "", fmt.Errorf("wnms apikey create printed no key (%v): %s", cerr, out)
		}
		cookie, status, err = login(addr, k.KeyID, k.KeyValue)
	}
	if err != nil || cookie == "" {
		w.stop()
		return nil, "", fmt.Errorf("login answered %d without a session (%v)", status, err)
	}
	return w, cookie, nil
}

// login logs in with an API key and returns the session cookie and the
// status of the answer.
func login(addr, keyID, keyValue string) (string, int, error) {
	body, _ := json.Marshal(map[string]string{"type": "apikeycredentials", "keyId": keyID, "keyValue": keyValue})
	resp, err := http.Post("http://"+addr+"/new/webservice/login/key/readratio/86400", "application/json", bytes.NewReader(body))
	if err != nil {
		return "", 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	for _, ck := range resp.Cookies() {
		if ck.Name == "JSESSIONID" && resp.StatusCode == http.StatusOK {
			return ck.Value, resp.StatusCode, nil
		}
	}
	return "", resp.StatusCode, nil
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

// target is a URL to load, with the session cookie wnms needs, and the
// process that serves it.
type target struct {
	name, url, cookie string
	pid               int
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
	n   int64 // answers
	// cpu is the processor time the server's process used per answer
	// (user and system, from /proc; 0 where there is none). On a shared
	// machine it varies far less than the rate, which follows whatever
	// else runs.
	cpu time.Duration
}

func load(ctx context.Context, c config, t target, d time.Duration) (result, error) {
	if err := ctx.Err(); err != nil {
		return result{}, err
	}
	before, ok := cpuTime(t.pid)
	var r result
	var err error
	if c.client == "wrk" {
		r, err = loadWrk(ctx, c, t, d)
	} else {
		r, err = loadGo(ctx, c, t, d)
	}
	if after, ok2 := cpuTime(t.pid); ok && ok2 && err == nil && r.n > 0 {
		r.cpu = (after - before) / time.Duration(r.n)
	}
	return r, err
}

// cpuTime is the user and system time of process pid so far, from
// /proc/<pid>/stat (Linux; ok false elsewhere).
func cpuTime(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The fields after the command's name, which is in parentheses and
	// may hold spaces: utime and stime are the 14th and 15th of the line.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	const ticks = 100 // USER_HZ, 100 on every Linux architecture Go runs on
	return time.Duration(utime+stime) * time.Second / ticks, true
}

var (
	wrkRate = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
	wrkN    = regexp.MustCompile(`(?m)^\s*([0-9]+) requests in`)
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
	m, l, cnt := wrkRate.FindSubmatch(out), wrkP99.FindSubmatch(out), wrkN.FindSubmatch(out)
	if m == nil || l == nil || cnt == nil {
		return result{}, fmt.Errorf("wrk printed no rate, count or p99:\n%s", out)
	}
	rps, _ := strconv.ParseFloat(string(m[1]), 64)
	n, _ := strconv.ParseInt(string(cnt[1]), 10, 64)
	v, _ := strconv.ParseFloat(string(l[1]), 64)
	unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[string(l[2])]
	return result{rps: rps, n: n, p99: time.Duration(v * float64(unit))}, nil
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
	return result{rps: float64(total.Load()) / time.Since(start).Seconds(), n: total.Load(), p99: hist.quantile(0.99)}, nil
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

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func cpus(rs []result) []float64 {
	var out []float64
	for _, r := range rs {
		out = append(out, us(r.cpu))
	}
	return out
}

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
