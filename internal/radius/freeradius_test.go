package radius

import (
	"fmt"
	"github.com/wnms/wnms/internal/wnms"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/radius/radiustest"
)

// The tests here run the real programs from Debian: FreeRADIUS 3 as the
// upstream, radclient for PAP and accounting, eapol_test for PEAP and
// EAP-TLS through the proxy.

const upstreamSecret = radiustest.UpstreamSecret

type freeRADIUS = radiustest.FreeRADIUS

func startFreeRADIUS(t testing.TB) *freeRADIUS { return radiustest.Start(t) }

func startFreeRADIUSWith(t testing.TB, opts ...string) *freeRADIUS {
	return radiustest.StartWith(t, opts...)
}

func radclient(t *testing.T, addr, kind, secret string, attrs ...string) (string, bool) {
	return radiustest.Radclient(t, addr, kind, secret, attrs...)
}

const (
	clientMAC = "02-00-00-00-00-01"
	apCalled  = "AA-BB-CC-DD-EE-FF:corp"
)

func TestFreeRADIUSPAP(t *testing.T) {
	fr := startFreeRADIUS(t)
	_, addr, sink := startProxy(t, Config{Sources: []SourceConfig{localSource()},
		Upstreams: []Upstream{{Address: fr.Auth, Secret: upstreamSecret, TimeoutMs: 2000}}}, ProxyOptions{})
	// radclient computes the Message-Authenticator of a request that
	// names one with value 0x00.
	attrs := []string{`User-Name = "alice"`, `Calling-Station-Id = "` + clientMAC + `"`,
		`Called-Station-Id = "` + apCalled + `"`, `NAS-Identifier = "ap-1"`, `Message-Authenticator = 0x00`}

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
	sink.waitRecord(t, KindClientEvents, failure(wnms.FailRadiusRejected))

	// A NAS with the wrong secret is dropped and counted: no answer.
	if out, ok := radclient(t, addr, "auth", "not-the-secret", append(attrs, `User-Password = "alice-pw"`)...); ok {
		t.Fatalf("wrong source secret: want no answer, got:\n%s", out)
	}

	// FreeRADIUS stopped: no answer to the NAS, a 2/203 Failure.
	fr.Stop()
	if out, ok := radclient(t, addr, "auth", sourceSecret, append(attrs, `User-Password = "alice-pw"`)...); ok {
		t.Fatalf("upstream down: want no answer, got:\n%s", out)
	}
	sink.waitRecord(t, KindClientEvents, failure(wnms.FailRadiusDown))
}

func TestFreeRADIUSAccounting(t *testing.T) {
	fr := startFreeRADIUS(t)
	a, addr, sink := startAccounting(t, Config{Sources: []SourceConfig{localSource()},
		AccountingUpstreams: []Upstream{{Address: fr.Acct, Secret: upstreamSecret, TimeoutMs: 1000}}})
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
	// The terminate cause is its own event's subtype (1/4 Session ended),
	// not an 802.11 reason code of a 1/3 Disassociated.
	stop := sink.waitRecord(t, KindClientEvents, func(r map[string]any) bool { return r["typeCode"] != 1.0 })
	if stop["categoryCode"] != 1.0 || stop["typeCode"] != 4.0 || stop["subTypeCode"] != 1.0 {
		t.Errorf("Stop = %v, want 1/4/1 (Session ended, User-Request)", stop)
	}
	last := sink.waitRecord(t, KindClientStats, func(r map[string]any) bool { return r["timestamp"] == 1764000120000.0 })
	if last["txBytes"] != 2000.0 || last["rxBytes"] != 4000.0 {
		t.Errorf("last sample = %v, want deltas 2000 and 4000", last)
	}
	// Passed on to FreeRADIUS: its detail file names the session.
	waitFor(t, "FreeRADIUS to log the Stop", func() bool {
		return strings.Count(fr.Output(), "Acct-Status-Type = Stop") > 0
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
		Upstreams: []Upstream{{Address: fr.Auth, Secret: upstreamSecret, TimeoutMs: 2000}}}, ProxyOptions{})
	certs := filepath.Join(fr.Dir, "certs")

	t.Run("PEAP-MSCHAPv2", func(t *testing.T) {
		out, ok := eapolTest(t, addr, `key_mgmt=WPA-EAP
eap=PEAP
identity="alice"
password="alice-pw"
phase2="auth=MSCHAPV2"
ca_cert="`+certs+`/ca.pem"`)
		if !ok || !strings.Contains(out, "MPPE keys OK: 1  mismatch: 0") {
			t.Fatalf("eapol_test PEAP through the proxy failed:\n%s", radiustest.Tail(out, 30))
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
			t.Fatalf("eapol_test EAP-TLS through the proxy failed:\n%s", radiustest.Tail(out, 30))
		}
		sink.waitRecord(t, KindClientEvents, func(r map[string]any) bool {
			return r["eventType"] == "Success" && r["username"] == "user@example.org"
		})
	})
	t.Run("EAP-TLS certificate of another CA", func(t *testing.T) {
		dir := t.TempDir()
		radiustest.Run(t, dir, "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
			"-subj", "/CN=mallory@example.org", "-keyout", "key.pem", "-out", "cert.pem")
		out, ok := eapolTest(t, addr, `key_mgmt=WPA-EAP
eap=TLS
identity="mallory@example.org"
ca_cert="`+certs+`/ca.pem"
client_cert="`+dir+`/cert.pem"
private_key="`+dir+`/key.pem"`)
		if ok {
			t.Fatalf("a certificate of another CA was accepted:\n%s", radiustest.Tail(out, 30))
		}
		r := sink.waitRecord(t, KindClientEvents, failure(wnms.FailCertificate))
		if r["username"] != "mallory@example.org" {
			t.Errorf("2/205 = %v", r)
		}
	})
}
