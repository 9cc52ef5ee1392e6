package radius

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests here run the real programs from Debian: FreeRADIUS 3 as the
// upstream, radclient for PAP and accounting, eapol_test for PEAP and
// EAP-TLS through the proxy.

const upstreamSecret = "upstream-secret"

// freeRADIUS is a FreeRADIUS server run by a test.
type freeRADIUS struct {
	dir        string
	auth, acct string
	cmd        *exec.Cmd
	out        *syncBuffer
	stopOnce   sync.Once
	exited     chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startFreeRADIUS runs FreeRADIUS in the foreground from a copy of
// Debian's configuration in a temporary directory: a users file with
// alice, a client 127.0.0.1, free ports, the eap module's test
// certificates made there by its own Makefile (openssl), and no user
// switch.
func startFreeRADIUS(t testing.TB) *freeRADIUS {
	t.Helper()
	return startFreeRADIUSWith(t, "-X")
}

// startFreeRADIUSWith is startFreeRADIUS with other options: "-X" for
// the debug output the tests show on failure, "-l", "stdout" for speed.
func startFreeRADIUSWith(t testing.TB, opts ...string) *freeRADIUS {
	t.Helper()
	needTool(t, "freeradius", "make", "openssl")
	const etc = "/etc/freeradius/3.0"
	if _, err := os.Stat(etc); err != nil {
		needTool(t, etc) // skip or fail as for a missing program
	}
	dir := t.TempDir()
	run(t, "", "cp", "-a", etc+"/.", dir)
	edit := func(name string, f func(string) string) {
		t.Helper()
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f(string(b))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"log", "run"} {
		os.MkdirAll(filepath.Join(dir, d), 0o700)
	}
	edit("radiusd.conf", func(s string) string {
		s = regexp.MustCompile(`(?m)^\s*(user|group) = freerad$`).ReplaceAllString(s, "")
		s = regexp.MustCompile(`(?m)^logdir = .*$`).ReplaceAllString(s, "logdir = "+dir+"/log")
		s = regexp.MustCompile(`(?m)^run_dir = .*$`).ReplaceAllString(s, "run_dir = "+dir+"/run")
		return regexp.MustCompile(`(?m)^raddbdir = .*$`).ReplaceAllString(s, "raddbdir = "+dir)
	})
	authPort, acctPort, innerPort := freePort(t), freePort(t), freePort(t)
	edit("sites-available/default", func(s string) string {
		// Keep the IPv4 listeners, on 127.0.0.1 and the ports chosen.
		var out []string
		var block []string
		for _, l := range strings.SplitAfter(s, "\n") {
			switch {
			case block == nil && strings.HasPrefix(l, "listen {"):
				block = []string{l}
			case block != nil:
				block = append(block, l)
				if strings.HasPrefix(l, "}") {
					b := strings.Join(block, "")
					block = nil
					if regexp.MustCompile(`(?m)^\s*ipv6addr\s*=`).MatchString(b) {
						continue
					}
					port := authPort
					if regexp.MustCompile(`(?m)^\s*type = acct`).MatchString(b) {
						port = acctPort
					}
					b = regexp.MustCompile(`(?m)^\tipaddr = \*`).ReplaceAllString(b, "\tipaddr = 127.0.0.1")
					b = regexp.MustCompile(`(?m)^\tport = 0`).ReplaceAllString(b, fmt.Sprintf("\tport = %d", port))
					out = append(out, b)
				}
			default:
				out = append(out, l)
			}
		}
		return strings.Join(out, "")
	})
	edit("sites-available/inner-tunnel", func(s string) string {
		return strings.Replace(s, "port = 18120", fmt.Sprintf("port = %d", innerPort), 1)
	})
	edit("mods-available/eap", func(s string) string {
		return strings.NewReplacer(
			"private_key_file = /etc/ssl/private/ssl-cert-snakeoil.key", "private_key_file = ${certdir}/server.key",
			"certificate_file = /etc/ssl/certs/ssl-cert-snakeoil.pem", "certificate_file = ${certdir}/server.pem",
			"ca_file = /etc/ssl/certs/ca-certificates.crt", "ca_file = ${cadir}/ca.pem").Replace(s)
	})
	edit("mods-config/files/authorize", func(s string) string {
		return "alice Cleartext-Password := \"alice-pw\"\n" + s
	})
	edit("clients.conf", func(string) string {
		return "client lab {\n\tipaddr = 127.0.0.1\n\tsecret = " + upstreamSecret + "\n}\n"
	})
	// The CA, the server's certificate and a client certificate signed by
	// the same CA, as the eap module's README makes them.
	run(t, filepath.Join(dir, "certs"), "make", "ca.pem", "server.pem", "client.pem")

	f := &freeRADIUS{dir: dir, auth: fmt.Sprintf("127.0.0.1:%d", authPort), acct: fmt.Sprintf("127.0.0.1:%d", acctPort),
		out: &syncBuffer{}, exited: make(chan struct{})}
	f.cmd = exec.Command("freeradius", append([]string{"-f", "-d", dir}, opts...)...)
	f.cmd.Stdout, f.cmd.Stderr = f.out, f.out
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { f.cmd.Wait(); close(f.exited) }()
	t.Cleanup(func() {
		f.stop()
		if t.Failed() {
			t.Logf("FreeRADIUS output (tail):\n%s", tail(f.out.String(), 60))
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(f.out.String(), "Ready to process requests") {
		select {
		case <-f.exited:
			t.Fatalf("FreeRADIUS exited:\n%s", tail(f.out.String(), 40))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("FreeRADIUS not ready:\n%s", tail(f.out.String(), 40))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return f
}

// stop ends FreeRADIUS and waits for it.
func (f *freeRADIUS) stop() {
	f.stopOnce.Do(func() {
		f.cmd.Process.Kill()
		<-f.exited
	})
}

func tail(s string, n int) string {
	l := strings.Split(s, "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

func run(t testing.TB, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// radclient sends the attributes (one per line) as one request of kind
// ("auth" or "acct") to addr and returns its output and whether an
// answer came.
func radclient(t *testing.T, addr, kind, secret string, attrs ...string) (string, bool) {
	t.Helper()
	needTool(t, "radclient")
	cmd := exec.Command("radclient", "-x", "-r", "1", "-t", "2", addr, kind, secret)
	cmd.Stdin = strings.NewReader(strings.Join(attrs, "\n") + "\n")
	// radclient exits 1 on a Reject too: whether an answer came is in
	// what it prints.
	out, _ := cmd.CombinedOutput()
	return string(out), strings.Contains(string(out), "Received ")
}

const (
	clientMAC = "02-00-00-00-00-01"
	apCalled  = "AA-BB-CC-DD-EE-FF:corp"
)

func TestFreeRADIUSPAP(t *testing.T) {
	fr := startFreeRADIUS(t)
	_, addr, sink := startProxy(t, Config{Sources: []SourceConfig{localSource()},
		Upstreams: []Upstream{{Address: fr.auth, Secret: upstreamSecret, TimeoutMs: 2000}}}, ProxyOptions{})
	attrs := []string{`User-Name = "alice"`, `Calling-Station-Id = "` + clientMAC + `"`,
		`Called-Station-Id = "` + apCalled + `"`, `NAS-Identifier = "ap-1"`}

	out, ok := radclient(t, addr, "auth", sourceSecret, append(attrs, `User-Password = "alice-pw"`)...)
	if !ok || !strings.Contains(out, "Received Access-Accept") {
		t.Fatalf("right password: want Access-Accept relayed, got:\n%s", out)
	}
	s := sink.waitRecord(t, KindClientEvents, isType("Success"))
	for k, want := range map[string]any{"macAddress": "02:00:00:00:00:01", "bssid": "AA:BB:CC:DD:EE:FF",
		"ssid": "corp", "username": "alice", "nasIdentifier": "ap-1", "radiusPrimaryIP": "127.0.0.1"} {
		if s[k] != want {
			t.Errorf("Success %s = %v, want %v", k, s[k], want)
		}
	}
	if l, ok := s["aaaLatency"].(float64); !ok || l < 0 || l > 2000 {
		t.Errorf("aaaLatency = %v, want 0 to 2000 ms", s["aaaLatency"])
	}
	if s["authenticationTimestamp"] != s["timestamp"] || s["eventId"] == "" {
		t.Errorf("Success = %v, want authenticationTimestamp and an eventId", s)
	}

	out, ok = radclient(t, addr, "auth", sourceSecret, append(attrs, `User-Password = "wrong"`)...)
	if !ok || !strings.Contains(out, "Received Access-Reject") {
		t.Fatalf("wrong password: want Access-Reject relayed, got:\n%s", out)
	}
	sink.waitRecord(t, KindClientEvents, failure(failRejected))

	// A NAS with the wrong secret is dropped and counted: no answer.
	if out, ok := radclient(t, addr, "auth", "not-the-secret", append(attrs, `User-Password = "alice-pw"`,
		`Message-Authenticator = 0x00`)...); ok {
		t.Fatalf("wrong source secret: want no answer, got:\n%s", out)
	}

	// FreeRADIUS stopped: no answer to the NAS, a 2/203 Failure.
	fr.stop()
	if out, ok := radclient(t, addr, "auth", sourceSecret, append(attrs, `User-Password = "alice-pw"`)...); ok {
		t.Fatalf("upstream down: want no answer, got:\n%s", out)
	}
	sink.waitRecord(t, KindClientEvents, failure(failUnreachable))
}

func TestFreeRADIUSAccounting(t *testing.T) {
	fr := startFreeRADIUS(t)
	a, addr, sink := startAccounting(t, Config{Sources: []SourceConfig{localSource()},
		AccountingUpstreams: []Upstream{{Address: fr.acct, Secret: upstreamSecret, TimeoutMs: 1000}}})
	common := []string{`User-Name = "alice"`, `Calling-Station-Id = "` + clientMAC + `"`,
		`Called-Station-Id = "` + apCalled + `"`, `NAS-Identifier = "ap-1"`, `Acct-Session-Id = "s-1"`}
	send := func(extra ...string) {
		t.Helper()
		if out, ok := radclient(t, addr, "acct", sourceSecret, append(common, extra...)...); !ok ||
			!strings.Contains(out, "Accounting-Response") {
			t.Fatalf("want an Accounting-Response, got:\n%s", out)
		}
	}
	send(`Acct-Status-Type = Start`, `Framed-IP-Address = 10.0.0.7`, `Event-Timestamp = 1764000000`,
		`Acct-Input-Octets = 0`, `Acct-Output-Octets = 0`)
	start := sink.waitRecord(t, KindClientEvents, isType("Intermediate"))
	if start["categoryCode"] != 1.0 || start["typeCode"] != 1.0 || start["ip"] != "10.0.0.7" ||
		start["timestamp"] != 1764000000000.0 {
		t.Errorf("Start = %v, want 1/1 Associated with ip 10.0.0.7 at the Event-Timestamp", start)
	}
	interim := []string{`Acct-Status-Type = Interim-Update`, `Event-Timestamp = 1764000060`,
		`Acct-Input-Octets = 1000`, `Acct-Input-Gigawords = 1`, `Acct-Output-Octets = 5000`}
	send(interim...)
	// The NAS retransmits: the same sample again, a duplicate downstream.
	// This copy carries a Message-Authenticator, as some NASes add to
	// accounting (RFC 5080); radclient signs it.
	send(append(interim, `Message-Authenticator = 0x00`)...)
	waitFor(t, "two samples", func() bool { return len(sink.get(KindClientStats)) == 2 })
	st := sink.get(KindClientStats)
	if fmt.Sprint(st[0]) != fmt.Sprint(st[1]) {
		t.Errorf("retransmission: %v then %v, want the same record", st[0], st[1])
	}
	if st[0]["txBytes"] != float64(1<<32+1000) || st[0]["rxBytes"] != 5000.0 {
		t.Errorf("sample = %v, want txBytes 2^32+1000, rxBytes 5000", st[0])
	}
	send(`Acct-Status-Type = Stop`, `Event-Timestamp = 1764000120`, `Acct-Terminate-Cause = User-Request`,
		`Acct-Input-Octets = 3000`, `Acct-Input-Gigawords = 1`, `Acct-Output-Octets = 9000`)
	stop := sink.waitRecord(t, KindClientEvents, func(r map[string]any) bool { return r["typeCode"] == 3.0 })
	if stop["subTypeCode"] != 1.0 {
		t.Errorf("Stop = %v, want subTypeCode 1 (User-Request)", stop)
	}
	last := sink.waitRecord(t, KindClientStats, func(r map[string]any) bool { return r["timestamp"] == 1764000120000.0 })
	if last["txBytes"] != 2000.0 || last["rxBytes"] != 4000.0 {
		t.Errorf("last sample = %v, want deltas 2000 and 4000", last)
	}
	// Passed on to FreeRADIUS: its detail file names the session.
	waitFor(t, "FreeRADIUS to log the Stop", func() bool {
		return strings.Count(fr.out.String(), "Acct-Status-Type = Stop") > 0
	})
	if n := a.Counters().ForwardsDropped.Load(); n != 0 {
		t.Errorf("ForwardsDropped = %d", n)
	}
}

// eapolTest runs eapol_test with the network block conf against the
// proxy at addr, and reports whether it succeeded.
func eapolTest(t *testing.T, addr, network string) (string, bool) {
	t.Helper()
	needTool(t, "eapol_test")
	conf := filepath.Join(t.TempDir(), "eapol.conf")
	if err := os.WriteFile(conf, []byte("network={\n"+network+"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(addr, ":")
	cmd := exec.Command("eapol_test", "-c", conf, "-a", host, "-p", port, "-s", sourceSecret, "-t", "10",
		"-M", "02:00:00:00:00:01", "-N", "30:s:"+apCalled, "-N", "32:s:ap-1")
	out, err := cmd.CombinedOutput()
	return string(out), err == nil && strings.Contains(string(out), "SUCCESS")
}

func TestFreeRADIUSEAP(t *testing.T) {
	fr := startFreeRADIUS(t)
	_, addr, sink := startProxy(t, Config{Sources: []SourceConfig{localSource()},
		Upstreams: []Upstream{{Address: fr.auth, Secret: upstreamSecret, TimeoutMs: 2000}}}, ProxyOptions{})
	certs := filepath.Join(fr.dir, "certs")

	t.Run("PEAP-MSCHAPv2", func(t *testing.T) {
		out, ok := eapolTest(t, addr, `key_mgmt=WPA-EAP
eap=PEAP
identity="alice"
password="alice-pw"
phase2="auth=MSCHAPV2"
ca_cert="`+certs+`/ca.pem"`)
		if !ok || !strings.Contains(out, "MPPE keys OK: 1  mismatch: 0") {
			t.Fatalf("eapol_test PEAP through the proxy failed:\n%s", tail(out, 30))
		}
		s := sink.waitRecord(t, KindClientEvents, func(r map[string]any) bool {
			return r["eventType"] == "Success" && r["username"] == "alice"
		})
		if s["bssid"] != "AA:BB:CC:DD:EE:FF" || s["ssid"] != "corp" || s["nasIdentifier"] != "ap-1" {
			t.Errorf("Success = %v", s)
		}
		// aaaLatency spans the whole conversation (a TLS handshake and
		// MSCHAPv2 inside it, some ten round trips), not its last request.
		if l, _ := s["aaaLatency"].(float64); l < 1 {
			t.Errorf("aaaLatency %v ms: the conversation was not followed across its Challenges", s["aaaLatency"])
		}
	})
	t.Run("EAP-TLS", func(t *testing.T) {
		out, ok := eapolTest(t, addr, `key_mgmt=WPA-EAP
eap=TLS
identity="user@example.org"
ca_cert="`+certs+`/ca.pem"
client_cert="`+certs+`/client.crt"
private_key="`+certs+`/client.key"
private_key_passwd="whatever"`)
		if !ok || !strings.Contains(out, "MPPE keys OK: 1  mismatch: 0") {
			t.Fatalf("eapol_test EAP-TLS through the proxy failed:\n%s", tail(out, 30))
		}
		sink.waitRecord(t, KindClientEvents, func(r map[string]any) bool {
			return r["eventType"] == "Success" && r["username"] == "user@example.org"
		})
	})
	t.Run("EAP-TLS certificate of another CA", func(t *testing.T) {
		dir := t.TempDir()
		run(t, dir, "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
			"-subj", "/CN=mallory@example.org", "-keyout", "key.pem", "-out", "cert.pem")
		out, ok := eapolTest(t, addr, `key_mgmt=WPA-EAP
eap=TLS
identity="mallory@example.org"
ca_cert="`+certs+`/ca.pem"
client_cert="`+dir+`/cert.pem"
private_key="`+dir+`/key.pem"`)
		if ok {
			t.Fatalf("a certificate of another CA was accepted:\n%s", tail(out, 30))
		}
		r := sink.waitRecord(t, KindClientEvents, failure(failCertificate))
		if r["username"] != "mallory@example.org" {
			t.Errorf("2/205 = %v", r)
		}
	})
}
