package main

import (
	"encoding/json"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/radius/radiustest"
)

// truthServer is a server with its data source listeners on, one AP
// registered as the README's "Connect your network" says (its radio and
// address), and one source (the loopback) that signs RADIUS and sends
// syslog, with FreeRADIUS upstream.
type truthServer struct {
	*sourcesServer
	fr        *radiustest.FreeRADIUS
	nasSecret string
}

func startTruthServer(t *testing.T, args ...string) *truthServer {
	t.Helper()
	radiustest.NeedTool(t, "radclient", "logger")
	fr := radiustest.Start(t)
	srv := startSourcesServer(t, "127.0.0.1", args...)
	srv.addAP("aa:bb:cc:dd:ee:00", "lab-ap-1", "127.0.0.1", "aa:bb:cc:dd:ee:ff", "corp")
	const nasSecret = "nas-secret-truth"
	srv.must("data sources", "PUT", "/V5/datasources", map[string]any{
		"radius": map[string]any{
			"upstreams":           []any{map[string]any{"address": fr.Auth, "secret": radiustest.UpstreamSecret, "timeoutMs": 2000}},
			"accountingUpstreams": []any{map[string]any{"address": fr.Acct, "secret": radiustest.UpstreamSecret, "timeoutMs": 2000}},
		},
		"sources": []any{map[string]any{"name": "lab", "cidr": "127.0.0.1/32", "radiusSecret": nasSecret, "syslog": true,
			"locationId": map[string]any{"type": "locallocationid", "id": srv.floor}}},
	})
	return &truthServer{sourcesServer: srv, fr: fr, nasSecret: nasSecret}
}

// auth sends a PAP Access-Request of user for the client mac at the AP
// (its BSSID and name) and returns radclient's output.
func (s *truthServer) auth(mac, user, pw string, extra ...string) string {
	s.t.Helper()
	out, ok := radiustest.Radclient(s.t, s.l.RadiusAuth, "auth", s.nasSecret, append([]string{"User-Name = " + user,
		"User-Password = " + pw, "Calling-Station-Id = " + mac, "Called-Station-Id = AA-BB-CC-DD-EE-FF:corp",
		"NAS-Identifier = lab-ap-1", "NAS-IP-Address = 127.0.0.1", "Message-Authenticator = 0x00"}, extra...)...)
	if !ok {
		s.t.Fatalf("no answer through wnms:\n%s", out)
	}
	return out
}

// acct sends an Accounting-Request and waits for its answer.
func (s *truthServer) acct(attrs ...string) {
	s.t.Helper()
	if out, ok := radiustest.Radclient(s.t, s.l.RadiusAcct, "acct", s.nasSecret, attrs...); !ok ||
		!strings.Contains(out, "Accounting-Response") {
		s.t.Fatalf("accounting %v:\n%s", attrs, out)
	}
}

// log sends one line with logger over TCP.
func (s *truthServer) log(tag, text string) {
	s.t.Helper()
	host, port, _ := net.SplitHostPort(s.l.Syslog)
	args := []string{"-T", "--rfc5424", "--octet-count", "-n", host, "-P", port, "-t", tag, "--", text}
	if out, err := exec.Command("logger", args...).CombinedOutput(); err != nil {
		s.t.Fatalf("logger %v: %v\n%s", args, err, out)
	}
}

// ap is the lab AP's record.
func (s *truthServer) ap() (active bool, lastSeen int64) {
	s.t.Helper()
	var aps []struct {
		ActiveStatus bool  `json:"activeStatus"`
		LastSeen     int64 `json:"lastSeen"`
	}
	json.Unmarshal([]byte(s.must("AP", "GET", "/v2/devices/aps?macaddress=aa:bb:cc:dd:ee:00", nil).body), &aps)
	if len(aps) != 1 {
		s.t.Fatalf("%d APs", len(aps))
	}
	return aps[0].ActiveStatus, aps[0].LastSeen
}

// waitAP waits (20 s at most) for the lab AP to be up or down.
func (s *truthServer) waitAP(up bool, why string) {
	s.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if active, _ := s.ap(); active == up {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: the AP is not %s after 20 s\nserver log:\n%s", why, map[bool]string{true: "up", false: "down"}[up],
				radiustest.Tail(s.stderr.String(), 30))
		}
	}
}

// Traffic a source attributes to an AP is the AP's heartbeat: an AP
// registered with its radio and address, silent past the AP timeout
// (1 s here), comes back up with a RADIUS authentication (held for its
// syslog Success), an accounting packet, and a syslog line, each alone.
func TestDataSourcesTrafficIsHeartbeat(t *testing.T) {
	t.Parallel()
	s := startTruthServer(t, "--ap-timeout", "1s")
	for _, step := range []struct {
		name string
		send func()
	}{
		{"an Access-Request accepted", func() {
			if out := s.auth("02-00-00-00-01-01", "alice", "alice-pw"); !strings.Contains(out, "Access-Accept") {
				t.Fatalf("alice:\n%s", out)
			}
		}},
		{"an Access-Request rejected", func() {
			if out := s.auth("02-00-00-00-01-02", "alice", "wrong"); !strings.Contains(out, "Access-Reject") {
				t.Fatalf("wrong password:\n%s", out)
			}
		}},
		{"an accounting Start", func() {
			s.acct("Acct-Status-Type = Start", "Acct-Session-Id = hb-1", "User-Name = alice",
				"Calling-Station-Id = 02-00-00-00-01-01", "Called-Station-Id = AA-BB-CC-DD-EE-FF:corp", "NAS-IP-Address = 127.0.0.1")
		}},
		{"a hostapd line", func() { s.log("hostapd", "wlan0: STA 02:00:00:00:01:03 IEEE 802.11: associated") }},
	} {
		s.waitAP(false, step.name+": silent")
		_, before := s.ap()
		step.send()
		s.waitAP(true, step.name)
		if _, after := s.ap(); after <= before {
			t.Errorf("%s: lastSeen %d, before %d", step.name, after, before)
		}
	}
}
