package main

import (
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// /metrics is served on its own listener, on loopback unless the
// operator names another address, and not on the API listener unless
// asked (--metrics-listen api): the series need no login.
func TestMetricsListener(t *testing.T) {
	get := func(t *testing.T, addr string) answer {
		t.Helper()
		return do(t, "GET", "http://"+addr+"/metrics", nil, "", nil)
	}
	t.Run("default", func(t *testing.T) {
		// The default is loopback, whatever --listen is.
		for _, args := range [][]string{nil, {"--listen", "0.0.0.0:8080"}} {
			c, err := parseServe(args, func(string) string { return "" }, io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			host, _, _ := net.SplitHostPort(c.metricsListen)
			if ip, err := netip.ParseAddr(host); err != nil || !ip.IsLoopback() {
				t.Errorf("%v: --metrics-listen defaults to %q, not loopback", args, c.metricsListen)
			}
		}
		// bootServe gives --metrics-listen 127.0.0.1:0 (the default
		// port would clash between tests).
		l, _, _, _ := bootServe(t, nil, "--data", t.TempDir())
		if r := get(t, l.API); r.status != 404 {
			t.Errorf("/metrics on the API listener: %d, want 404", r.status)
		}
		r := get(t, l.Metrics)
		if r.status != 200 || !strings.Contains(r.body, "\ngo_goroutines ") || !strings.Contains(r.body, "\nprocess_open_fds ") ||
			!strings.Contains(r.body, "# TYPE wnms_http_requests_total counter\n") {
			t.Errorf("/metrics on the metrics listener: %d\n%s", r.status, r.body)
		}
		if r := do(t, "GET", "http://"+l.Metrics+"/healthz", nil, "", nil); r.status != 404 {
			t.Errorf("the metrics listener serves /healthz: %d", r.status)
		}
	})
	t.Run("api", func(t *testing.T) {
		l, _, _, _ := bootServe(t, nil, "--data", t.TempDir(), "--metrics-listen", "api")
		if r := get(t, l.API); r.status != 200 || !strings.Contains(r.body, "\ngo_goroutines ") || l.Metrics != "" {
			t.Errorf("--metrics-listen api: %d, metrics listener %q", r.status, l.Metrics)
		}
	})
	t.Run("off", func(t *testing.T) {
		l, _, _, _ := bootServe(t, nil, "--data", t.TempDir(), "--metrics-listen", "off")
		if r := get(t, l.API); r.status != 404 || l.Metrics != "" {
			t.Errorf("--metrics-listen off: %d on the API listener, metrics listener %q", r.status, l.Metrics)
		}
	})
	t.Run("explicit non-loopback", func(t *testing.T) {
		l, _, _, _ := bootServe(t, nil, "--data", t.TempDir(), "--metrics-listen", "0.0.0.0:0")
		host, port, _ := net.SplitHostPort(l.Metrics)
		if ip, err := netip.ParseAddr(host); err != nil || !ip.IsUnspecified() {
			t.Fatalf("--metrics-listen 0.0.0.0:0 listens on %s", l.Metrics)
		}
		if r := get(t, net.JoinHostPort("127.0.0.1", port)); r.status != 200 {
			t.Errorf("/metrics on 0.0.0.0: %d", r.status)
		}
	})
	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--metrics-listen", "public"}, `--metrics-listen "public": must be host:port, off, or api`},
			{[]string{"--listen", "127.0.0.1:8080", "--metrics-listen", "127.0.0.1:8080"}, "say api to serve /metrics there"},
		} {
			code, _, stderr := runCLI(append([]string{"serve", "--data", t.TempDir()}, tc.args...), nil)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
			}
		}
	})
}
