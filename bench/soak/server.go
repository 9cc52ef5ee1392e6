package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for the checks

	"github.com/wnms/wnms/bench/internal/benchserver"
	"github.com/wnms/wnms/internal/radius/radiustest"
)

// run is one soak: the server it starts and restarts, what the load was
// told and what it measured.
type run struct {
	tmp, bin, data string
	dbURL          string // the run's own PostgreSQL database; empty on SQLite
	adminURL       string // -database-url, to drop the run's database
	api, metrics   string // host:port
	auth, acct     string // RADIUS host:port (UDP)
	syslog         string // host:port (UDP)
	keyID, keyVal  string
	logFile        *os.File
	fr             *radiustest.FreeRADIUS
	floorID        int64
	bssids         []string
	client         *http.Client
	start          time.Time

	mu         sync.Mutex
	proc       *exec.Cmd
	procDone   chan struct{}
	lifeStarts []time.Time
	windows    []window
	faults     []string // what happened when, for the report
	cookie     string

	pid  atomic.Int64
	life atomic.Int64

	rec     recorder
	acked   ackBook
	sampler sampler
	cleaned bool
}

const (
	nasSecret = "soak-nas-secret"
)

func newRun(ctx context.Context) (*run, error) {
	tmp, err := os.MkdirTemp("", "wnms-soak-")
	if err != nil {
		return nil, err
	}
	r := &run{tmp: tmp, data: filepath.Join(tmp, "data"), keyID: "soak-key", keyVal: randomHex(16),
		client: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	r.acked.init()
	r.logFile, err = os.Create(filepath.Join(tmp, "serve.log"))
	if err != nil {
		return r, err
	}
	if r.bin = *wnmsBin; r.bin == "" {
		r.bin = filepath.Join(tmp, "wnms")
		logf("building wnms")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", r.bin, "./cmd/wnms")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return r, fmt.Errorf("go build ./cmd/wnms (run from the repository's root): %w", err)
		}
	}
	if *dbURL != "" {
		r.adminURL = *dbURL
		name := fmt.Sprintf("wnms_soak_%d", time.Now().Unix())
		if r.dbURL, err = benchserver.CreateDatabase(ctx, *dbURL, name); err != nil {
			return r, err
		}
	}
	ports := make([]string, 5)
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return r, err
		}
	}
	r.api, r.metrics, r.auth, r.acct, r.syslog = ports[0], ports[1], ports[2], ports[3], ports[4]
	frDir := filepath.Join(tmp, "freeradius")
	if err := os.Mkdir(frDir, 0o700); err != nil {
		return r, err
	}
	if r.fr, err = radiustest.StartIn(frDir, "client lab {\n\tipaddr = 127.0.0.1\n\tsecret = "+radiustest.UpstreamSecret+"\n}\n", "-l", "stdout"); err != nil {
		return r, err
	}
	return r, nil
}

func (r *run) cleanup() {
	if r.cleaned {
		return
	}
	r.cleaned = true
	r.mu.Lock()
	p, done := r.proc, r.procDone
	r.mu.Unlock()
	if p != nil {
		p.Process.Kill()
		<-done
	}
	if r.fr != nil {
		r.fr.Stop()
	}
	if r.logFile != nil {
		r.logFile.Close()
	}
	if *keep {
		logf("kept %s (and the database %s)", r.tmp, r.dbURL)
		return
	}
	if r.dbURL != "" {
		dropDatabase(r.adminURL, r.dbURL)
	}
	os.RemoveAll(r.tmp)
}

// serve starts wnms and waits until it answers /readyz.
func (r *run) serve(ctx context.Context) error {
	args := []string{"serve", "--data", r.data, "--listen", r.api, "--analytics-listen", "127.0.0.1:0",
		"--snmp-agent-listen", "off", "--metrics-listen", r.metrics, "--radius-auth-listen", r.auth,
		"--radius-acct-listen", r.acct, "--syslog-listen", r.syslog, "--log-level", "warn"}
	if r.dbURL != "" {
		args = append(args, "--database-url", r.dbURL)
	}
	if *debugAddr != "" {
		args = append(args, "--debug-listen", *debugAddr)
	}
	cmd := exec.Command(r.bin, args...)
	cmd.Env = append(os.Environ(), "WNMS_BOOTSTRAP_KEY_ID="+r.keyID, "WNMS_BOOTSTRAP_KEY_VALUE="+r.keyVal)
	cmd.Stdout, cmd.Stderr = r.logFile, r.logFile
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	r.mu.Lock()
	r.proc, r.procDone = cmd, done
	r.lifeStarts = append(r.lifeStarts, time.Now())
	r.life.Store(int64(len(r.lifeStarts) - 1))
	r.mu.Unlock()
	r.pid.Store(int64(cmd.Process.Pid))
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, err := r.client.Get("http://" + r.api + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		select {
		case <-done:
			return fmt.Errorf("wnms serve exited at start; its log: %s", r.logFile.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wnms serve not ready in 3 minutes; its log: %s", r.logFile.Name())
		}
	}
}

// kill ends wnms with SIGKILL (or SIGTERM) and waits for it.
func (r *run) kill(sig syscall.Signal) {
	r.mu.Lock()
	p, done := r.proc, r.procDone
	r.mu.Unlock()
	p.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		p.Process.Kill()
		<-done
	}
	r.pid.Store(0)
}

func (r *run) addWindow(w window) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.windows = append(r.windows, w)
}

func (r *run) fault(format string, args ...any) {
	s := fmt.Sprintf("%6.1f s  ", time.Since(r.start).Seconds()) + fmt.Sprintf(format, args...)
	logf("%s", s)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults = append(r.faults, s)
}

// login makes a new session and keeps its cookie for the load.
func (r *run) login() error {
	body, _ := json.Marshal(map[string]string{"type": "apikeycredentials", "keyId": r.keyID, "keyValue": r.keyVal})
	resp, err := r.client.Post(r.base()+"/login/key/soak/86400", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	for _, c := range resp.Cookies() {
		if c.Name == "JSESSIONID" {
			r.mu.Lock()
			r.cookie = c.Value
			r.mu.Unlock()
			return nil
		}
	}
	return fmt.Errorf("login: %s", resp.Status)
}

func (r *run) base() string { return "http://" + r.api + "/new/webservice" }

func (r *run) session() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cookie
}

// setup makes the floor, the APs the batches' events are placed at, and
// the data sources: the NAS at 127.0.0.1 (RADIUS, FreeRADIUS upstream)
// and the APs' syslog from 127.0.0.2, so that accepts are stored at once
// rather than held for a syslog view of the connection.
func (r *run) setup() error {
	must := func(method, path string, body any, out any) error {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, r.base()+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Cookie", "JSESSIONID="+r.session())
		resp, err := r.client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return fmt.Errorf("%s %s: %s %.300s", method, path, resp.Status, got)
		}
		if out != nil {
			return json.Unmarshal(got, out)
		}
		return nil
	}
	var floor struct {
		ID struct{ ID int64 } `json:"id"`
	}
	if err := must("PUT", "/V2/locations", map[string]any{
		"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
		"location":       map[string]any{"type": "floorlocation", "name": "Soak floor", "timezoneId": "UTC"}}, &floor); err != nil {
		return err
	}
	r.floorID = floor.ID.ID
	var aps []any
	for a := range 4 {
		var radios []any
		for k := range 2 {
			b := fmt.Sprintf("AA:BB:CC:00:%02X:%02X", a, k)
			r.bssids = append(r.bssids, b)
			radios = append(radios, map[string]any{"macaddress": b, "channel": 1 + 35*k, "ssid": "corp"})
		}
		aps = append(aps, map[string]any{"macaddress": fmt.Sprintf("AA:BB:CC:01:00:%02X", a), "name": fmt.Sprintf("soak-ap-%d", a),
			"ipAddress": "127.0.0.1", "locationId": map[string]any{"type": "locallocationid", "id": r.floorID}, "radios": radios})
	}
	if err := must("POST", "/V5/ingest/aps", aps, nil); err != nil {
		return err
	}
	loc := map[string]any{"type": "locallocationid", "id": r.floorID}
	return must("PUT", "/V5/datasources", map[string]any{
		"radius": map[string]any{"upstreams": []any{map[string]any{"address": r.fr.Auth, "secret": radiustest.UpstreamSecret, "timeoutMs": 2000}}},
		"sources": []any{
			map[string]any{"name": "nas", "cidr": "127.0.0.1/32", "radiusSecret": nasSecret, "locationId": loc},
			map[string]any{"name": "aps", "cidr": "127.0.0.2/32", "syslog": true, "locationId": loc},
		},
	}, nil)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// freePort is a loopback port free for TCP and UDP a moment ago.
func freePort() (string, error) {
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		addr := l.Addr().String()
		l.Close()
		if c, err := net.ListenPacket("udp", addr); err == nil {
			c.Close()
			return addr, nil
		}
	}
	return "", fmt.Errorf("no port free for both TCP and UDP")
}

func dropDatabase(base, of string) {
	u, err := url.Parse(of)
	if err != nil {
		return
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		return
	}
	defer db.Close()
	name := strings.TrimPrefix(u.Path, "/")
	if _, err := db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
		logf("drop database %s: %v", name, err)
	}
}
