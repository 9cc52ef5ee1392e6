package main

import (
	"io"
	"net"
	"strings"
	"testing"
)

// --debug-listen serves Go's profiler on a listener of its own, on
// loopback only, and only when asked: never on the API listener.
func TestDebugListener(t *testing.T) {
	get := func(t *testing.T, addr, path string) answer {
		t.Helper()
		return do(t, "GET", "http://"+addr+path, nil, "", nil)
	}
	t.Run("off by default", func(t *testing.T) {
		c, err := parseServe(nil, func(string) string { return "" }, io.Discard, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if c.debugListen != "off" {
			t.Errorf("--debug-listen defaults to %q, want off", c.debugListen)
		}
		l, _, _, _ := bootServe(t, nil, "--data", t.TempDir())
		if l.Debug != "" {
			t.Errorf("a debug listener on %s without --debug-listen", l.Debug)
		}
		for _, p := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/vars"} {
			if r := get(t, l.API, p); r.status != 404 {
				t.Errorf("GET %s on the API listener: %d, want 404", p, r.status)
			}
			if r := get(t, l.Metrics, p); r.status != 404 {
				t.Errorf("GET %s on the metrics listener: %d, want 404", p, r.status)
			}
		}
	})
	t.Run("loopback", func(t *testing.T) {
		for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
			l, _, _, _ := bootServe(t, nil, "--data", t.TempDir(), "--debug-listen", addr)
			host, _, _ := net.SplitHostPort(l.Debug)
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				t.Fatalf("--debug-listen %s listens on %q", addr, l.Debug)
			}
			if r := get(t, l.Debug, "/debug/pprof/"); r.status != 200 || !strings.Contains(r.body, "goroutine") || !strings.Contains(r.body, "heap") {
				t.Errorf("--debug-listen %s: the profile index answered %d\n%s", addr, r.status, r.body)
			}
			if r := get(t, l.Debug, "/debug/pprof/heap?debug=1"); r.status != 200 || !strings.Contains(r.body, "heap profile") {
				t.Errorf("--debug-listen %s: heap profile %d\n%.200s", addr, r.status, r.body)
			}
			if r := get(t, l.Debug, "/debug/vars"); r.status != 200 || !strings.Contains(r.body, `"memstats"`) || strings.Contains(r.body, `"cmdline"`) {
				t.Errorf("--debug-listen %s: /debug/vars %d\n%.200s", addr, r.status, r.body)
			}
			// The command line may hold a key or a database password.
			if r := get(t, l.Debug, "/debug/pprof/cmdline"); r.status != 404 || strings.Contains(r.body, "--data") {
				t.Errorf("--debug-listen %s: the command line is shown: %d %q", addr, r.status, r.body)
			}
			if r := get(t, l.API, "/debug/pprof/"); r.status != 404 {
				t.Errorf("--debug-listen %s: the API listener serves the profiler: %d", addr, r.status)
			}
		}
	})
	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			addr, want string
		}{
			{"0.0.0.0:6060", "must be a loopback address"},
			{":6060", "must be a loopback address"},
			{"[::]:6060", "must be a loopback address"},
			{"192.0.2.1:6060", "must be a loopback address"},
			{"wnms.example.com:6060", "must be a loopback address"},
			{"on", "must be off or host:port on loopback"},
		} {
			code, _, stderr := runCLI([]string{"serve", "--data", t.TempDir(), "--debug-listen", tc.addr}, nil)
			if code != 2 || !strings.Contains(stderr, `--debug-listen "`+tc.addr+`": `+tc.want) {
				t.Errorf("--debug-listen %s: exit %d, %q; want 2 and %q", tc.addr, code, stderr, tc.want)
			}
		}
	})
}
