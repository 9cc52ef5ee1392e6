package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// bootServe runs `wnms serve` in-process and returns where it listens and a
// function that stops it (as SIGTERM would) and returns its error.
func bootServe(t testing.TB, env map[string]string, args ...string) (listening, *syncBuf, *syncBuf, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	getenv := func(k string) string { return env[k] }
	stdout, stderr := &syncBuf{}, &syncBuf{}
	ready := make(chan listening, 1)
	done := make(chan error, 1)
	args = append([]string{"--listen", "127.0.0.1:0", "--analytics-listen", "127.0.0.1:0", "--snmp-agent-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"}, args...)
	go func() { done <- runServe(ctx, args, getenv, stdout, stderr, func(l listening) { ready <- l }) }()
	select {
	case l := <-ready:
		stopped := false
		stop := func() error {
			if stopped {
				return nil
			}
			stopped = true
			cancel()
			return <-done
		}
		t.Cleanup(func() { stop() })
		return l, stdout, stderr, stop
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("serve did not start")
	}
	return listening{}, nil, nil, nil
}

func login(t testing.TB, base, keyID, keyValue string) *http.Cookie {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"type": "apikeycredentials", "keyId": keyID, "keyValue": keyValue})
	resp, err := http.Post(base+"/new/webservice/login/key/test/600", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "JSESSIONID" {
			return c
		}
	}
	t.Fatal("no JSESSIONID")
	return nil
}

func get(t *testing.T, url string, ck *http.Cookie) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if ck != nil {
		req.AddCookie(ck)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The whole first-run story: bootstrap key printed and written 0600 (and
// not logged), a key created by the CLI beside the running server works at
// once, revocation ends its sessions, backups show in system info, and
// SIGTERM shuts down cleanly.
func TestServeBootstrapCLIAndShutdown(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			cfg := apitest.StoreConfig(t, b)
			env := map[string]string{"WNMS_DATA": cfg.DataDir, "WNMS_DATABASE_URL": cfg.DatabaseURL}
			l, stdout, stderr, stop := bootServe(t, env)
			base := "http://" + l.API

			// bootstrap-key.json on SQLite, bootstrap-key-postgres-<db>.json
			// on PostgreSQL.
			keyFile := filepath.Join(cfg.DataDir, bootstrapKeyBase(cfg.DatabaseURL)+".json")
			raw, err := os.ReadFile(keyFile)
			if err != nil {
				t.Fatal(err)
			}
			fi, _ := os.Stat(keyFile)
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("bootstrap-key.json mode %v, want 0600", fi.Mode().Perm())
			}
			var key struct{ KeyID, KeyValue string }
			if err := json.Unmarshal(raw, &key); err != nil || key.KeyValue == "" {
				t.Fatalf("bootstrap key file: %s %v", raw, err)
			}
			if !strings.Contains(stdout.String(), key.KeyValue) {
				t.Error("the bootstrap key is not printed")
			}
			if strings.Contains(stderr.String(), key.KeyValue) {
				t.Error("the bootstrap key value is in the log")
			}
			admin := login(t, base, key.KeyID, key.KeyValue)
			if s := get(t, base+"/new/webservice/V5/users/current", admin); s != 200 {
				t.Fatalf("current user: %d", s)
			}
			if s := get(t, "http://"+l.Analytics+"/healthz", nil); s != 200 {
				t.Errorf("analytics healthz: %d", s)
			}

			// The CLI beside the running server.
			var out bytes.Buffer
			getenv := func(k string) string { return env[k] }
			if err := run(context.Background(), []string{"apikey", "create", "--login", "ops-bot", "--role", "OPERATOR"}, getenv, &out, &out); err != nil {
				t.Fatalf("apikey create: %v", err)
			}
			var nk struct{ KeyID, KeyValue string }
			if err := json.Unmarshal(out.Bytes(), &nk); err != nil {
				t.Fatalf("apikey create output %q: %v", out.String(), err)
			}
			bot := login(t, base, nk.KeyID, nk.KeyValue)
			if s := get(t, base+"/new/webservice/V5/users/current", bot); s != 200 {
				t.Fatalf("CLI key session: %d", s)
			}
			out.Reset()
			if err := run(context.Background(), []string{"apikey", "list"}, getenv, &out, &out); err != nil || strings.Contains(out.String(), nk.KeyValue) || !strings.Contains(out.String(), nk.KeyID) {
				t.Fatalf("apikey list: %v %s", err, out.String())
			}
			if err := run(context.Background(), []string{"apikey", "revoke", nk.KeyID}, getenv, &out, &out); err != nil {
				t.Fatal(err)
			}
			// The CLI is another process on the store: on SQLite the
			// revocation is seen at once, on PostgreSQL within 1 s.
			bound := time.Duration(0)
			if b == apitest.Postgres {
				bound = time.Second
			}
			for deadline := time.Now().Add(bound); ; time.Sleep(20 * time.Millisecond) {
				s := get(t, base+"/new/webservice/V5/users/current", bot)
				if s == 401 {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("revoked key's session: %d after %v, want 401", s, bound)
					break
				}
			}
			if err := run(context.Background(), []string{"apikey", "create", "--login", "x", "--role", "KING"}, getenv, &out, &out); err == nil {
				t.Error("apikey create with a bad role succeeded")
			}

			if b == apitest.SQLite {
				out.Reset()
				if err := run(context.Background(), []string{"backup"}, getenv, &out, &out); err != nil {
					t.Fatalf("backup: %v", err)
				}
				paths := strings.Fields(out.String())
				if len(paths) != 2 || !strings.HasSuffix(paths[1], "-telemetry.db") {
					t.Fatalf("backup printed %q, want the store and its telemetry file", paths)
				}
				for _, p := range paths {
					if _, err := os.Stat(p); err != nil {
						t.Fatalf("backup file: %v", err)
					}
				}
				req, _ := http.NewRequest("GET", base+"/new/webservice/V7/system/info", nil)
				req.AddCookie(admin)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				var info struct {
					BackupFiles []struct{ BackupFileName string } `json:"backupFiles"`
				}
				json.NewDecoder(resp.Body).Decode(&info)
				resp.Body.Close()
				if len(info.BackupFiles) != 2 || !strings.HasPrefix(info.BackupFiles[0].BackupFileName, "wnms-") {
					t.Errorf("system info backups: %+v", info.BackupFiles)
				}
			}
			if err := stop(); err != nil {
				t.Fatalf("shutdown: %v", err)
			}
			if !strings.Contains(stderr.String(), "shutting down") {
				t.Error("no shutdown log line")
			}
			// A restart keeps the data and creates no second bootstrap key.
			l2, stdout2, _, _ := bootServe(t, env)
			login(t, "http://"+l2.API, key.KeyID, key.KeyValue)
			if strings.Contains(stdout2.String(), "keyValue") {
				t.Error("a restart printed a new bootstrap key")
			}
		})
	}
}

func TestBootstrapKeyFromEnvironmentAndFlags(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"WNMS_DATA": dir, "WNMS_BOOTSTRAP_KEY_ID": "boot-id", "WNMS_BOOTSTRAP_KEY_VALUE": "boot-value-0123456789"}
	l, stdout, _, _ := bootServe(t, env)
	login(t, "http://"+l.API, "boot-id", "boot-value-0123456789")
	if strings.Contains(stdout.String(), "boot-value") {
		t.Error("the environment key is printed")
	}
	if _, err := os.Stat(filepath.Join(dir, "bootstrap-key.json")); !os.IsNotExist(err) {
		t.Error("bootstrap-key.json written for an environment key")
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"serve", "--log-level", "loud"}, func(string) string { return "" }, &out, &out); err == nil {
		t.Error("a bad --log-level was accepted")
	}
	if err := run(context.Background(), []string{"serve"}, func(k string) string {
		return map[string]string{"WNMS_SHUTDOWN_TIMEOUT": "soon"}[k]
	}, &out, &out); err == nil || !strings.Contains(err.Error(), "WNMS_SHUTDOWN_TIMEOUT") {
		t.Errorf("a bad environment twin: %v", err)
	}
	if err := run(context.Background(), []string{"frobnicate"}, func(string) string { return "" }, &out, &out); err == nil {
		t.Error("an unknown command succeeded")
	}
	out.Reset()
	if err := run(context.Background(), []string{"version"}, func(string) string { return "" }, &out, &out); err != nil || !strings.HasPrefix(out.String(), "wnms ") {
		t.Errorf("version: %v %q", err, out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"migrate", "--data", dir}, func(string) string { return "" }, &out, &out); err != nil || !strings.Contains(out.String(), "current schema") {
		t.Errorf("migrate: %v %q", err, out.String())
	}
}

func TestTLSAuto(t *testing.T) {
	dir := t.TempDir()
	l, _, _, _ := bootServe(t, map[string]string{"WNMS_DATA": dir}, "--tls", "auto")
	if !l.TLS {
		t.Fatal("TLS is off")
	}
	for _, f := range []string{"tls/cert.pem", "tls/key.pem"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig.InsecureSkipVerify = true //nolint:gosec // the certificate is self-signed by design
	resp, err := (&http.Client{Transport: tr}).Get(fmt.Sprintf("https://%s/healthz", l.API))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("https healthz: %d", resp.StatusCode)
	}
}

// A busy port fails the start before the store is touched: nothing is
// created or printed, and the message names the flag.
func TestServeBusyPortFailsFirst(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyUDP, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busyUDP.Close()
	for _, flagName := range []string{"--listen", "--analytics-listen", "--snmp-agent-listen", "--metrics-listen"} {
		t.Run(flagName, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			addr := busy.Addr().String()
			if flagName == "--snmp-agent-listen" {
				addr = busyUDP.LocalAddr().String()
			}
			args := []string{"--data", dir, "--listen", "127.0.0.1:0", "--analytics-listen", "127.0.0.1:0",
				"--snmp-agent-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", flagName, addr}
			var stdout, stderr bytes.Buffer
			err := runServe(context.Background(), args, func(string) string { return "" }, &stdout, &stderr, nil)
			if err == nil || !strings.Contains(err.Error(), flagName+" "+addr) || !strings.Contains(err.Error(), "address already in use") {
				t.Fatalf("error %v, want one naming %s and the busy address", err, flagName)
			}
			if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
				t.Errorf("the data directory was created before the ports were checked")
			}
			if stdout.Len() != 0 {
				t.Errorf("printed before failing: %s", stdout.String())
			}
		})
	}
}

// The running binary answers requests net/http cannot parse in the JSON
// envelope of each listener.
func TestServeJSONForMalformedRequests(t *testing.T) {
	l, _, _, _ := bootServe(t, map[string]string{"WNMS_DATA": t.TempDir()})
	for _, tc := range []struct{ addr, want string }{
		{l.API, `"errors":[{"errorCode":"INVALID_REQUEST_BODY"`},
		{l.Analytics, `"success":false`},
	} {
		c, err := net.Dial("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(c, "GARBAGE\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		c.Close()
		if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s %s", tc.addr, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
}
