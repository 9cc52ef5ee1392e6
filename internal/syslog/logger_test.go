package syslog

import (
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestLogger sends with the real util-linux logger, in every transport,
// framing and format it has, and checks what arrives parsed.
func TestLogger(t *testing.T) {
	logger, err := exec.LookPath("logger")
	if err != nil {
		if os.Getenv("WNMS_TEST_REQUIRE_TOOLS") == "1" {
			t.Fatal("logger (util-linux) is required: WNMS_TEST_REQUIRE_TOOLS=1")
		}
		t.Skip("logger (util-linux) not installed")
	}
	r := &Receiver{}
	addr, ch := startReceiver(t, r)
	host, port, _ := net.SplitHostPort(addr)
	tests := []struct {
		name string
		args []string
		tcp  bool
	}{
		{"udp rfc3164", []string{"-d", "--rfc3164"}, false},
		{"udp rfc5424", []string{"-d", "--rfc5424"}, false},
		{"tcp rfc3164 newline", []string{"-T", "--rfc3164"}, true},
		{"tcp rfc5424 newline", []string{"-T", "--rfc5424"}, true},
		{"tcp rfc3164 octet-count", []string{"-T", "--rfc3164", "--octet-count"}, true},
		{"tcp rfc5424 octet-count", []string{"-T", "--rfc5424", "--octet-count"}, true},
	}
	for i, tt := range tests {
		text := "wlan0: STA 02:00:00:00:01:0" + string(rune('0'+i)) + " IEEE 802.11: associated (aid 1)"
		args := append(tt.args, "-n", host, "-P", port, "-t", "hostapd", "-p", "daemon.info", "--", text)
		sent := time.Now()
		if out, err := exec.Command(logger, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: logger %v: %v\n%s", tt.name, args, err, out)
		}
		got := next(t, ch)
		if got.m.Program != "hostapd" || got.m.Text != text || got.m.Facility != 3 || got.m.Severity != 6 {
			t.Errorf("%s: got %+v", tt.name, got.m)
		}
		if got.m.Host == "" {
			t.Errorf("%s: no hostname", tt.name)
		}
		// logger's RFC 3164 stamp has whole seconds in local time; the
		// receiver reads it in UTC unless told, so compare in the zone.
		stamp := got.m.Time
		if !got.m.RFC5424 {
			stamp = time.Date(stamp.Year(), stamp.Month(), stamp.Day(), stamp.Hour(), stamp.Minute(), stamp.Second(), 0, time.Local)
		}
		if d := stamp.Sub(sent); d < -2*time.Second || d > 10*time.Second {
			t.Errorf("%s: timestamp %v, sent at %v", tt.name, got.m.Time, sent)
		}
		if got.m.RFC5424 != (tt.args[1] == "--rfc5424") {
			t.Errorf("%s: RFC5424 = %v", tt.name, got.m.RFC5424)
		}
		if o, ok := ParseLine(ProgramOf(got.m.Program), got.m.Text); !ok || o.Kind != Associated || o.Interface != "wlan0" {
			t.Errorf("%s: observation %+v, %v", tt.name, o, ok)
		}
	}
	s := r.Stats()
	if s.Parsed != uint64(len(tests)) || s.Datagrams != 2 || s.Connections != 4 {
		t.Errorf("stats %+v", s)
	}
}

// TestLoggerToEvents sends a connection's hostapd and dnsmasq lines with
// logger, through a Receiver into an Assembler: one Success comes out.
func TestLoggerToEvents(t *testing.T) {
	logger, err := exec.LookPath("logger")
	if err != nil {
		if os.Getenv("WNMS_TEST_REQUIRE_TOOLS") == "1" {
			t.Fatal("logger (util-linux) is required: WNMS_TEST_REQUIRE_TOOLS=1")
		}
		t.Skip("logger (util-linux) not installed")
	}
	rec := &recorder{}
	a := &Assembler{Sink: rec}
	r := &Receiver{}
	addr, ch := startReceiver(t, r)
	host, port, _ := net.SplitHostPort(addr)
	for _, l := range []struct{ tag, text string }{
		{"hostapd", "veth0: STA 02:00:00:00:0a:01 IEEE 802.11: associated"},
		{"hostapd", "veth0: STA 02:00:00:00:0a:01 IEEE 802.1X: authenticated - EAP type: 25 (PEAP)"},
		{"hostapd", "veth0: AP-STA-CONNECTED 02:00:00:00:0a:01"},
		{"dnsmasq-dhcp", "DHCPDISCOVER(veth0) 02:00:00:00:0a:01 "},
		{"dnsmasq-dhcp", "DHCPACK(veth0) 10.0.9.10 02:00:00:00:0a:01 client"},
	} {
		// TCP keeps the lines in order, as one syslog daemon's stream does.
		args := []string{"-T", "--rfc5424", "--octet-count", "-n", host, "-P", port, "-t", l.tag, "--", l.text}
		if out, err := exec.Command(logger, args...).CombinedOutput(); err != nil {
			t.Fatalf("logger %v: %v\n%s", args, err, out)
		}
		got := next(t, ch)
		a.Observe(context.Background(), got.src, got.m)
	}
	a.Flush(context.Background())
	var success []ClientEvent
	for _, e := range rec.events(netip.MustParseAddr("127.0.0.1")) {
		if e.EventType == "Success" {
			success = append(success, e)
		}
	}
	if len(success) != 1 {
		t.Fatalf("successes %+v", success)
	}
	e := success[0]
	if e.MacAddress != "02:00:00:00:0A:01" || e.Interface != "veth0" || e.AssociationTimestamp == 0 ||
		e.AuthenticationTimestamp < e.AssociationTimestamp || e.NetworkTimestamp < e.AuthenticationTimestamp ||
		e.DHCPLatency == nil || *e.DHCPLatency != e.NetworkTimestamp-e.AuthenticationTimestamp {
		t.Errorf("Success %+v", e)
	}
	if d := time.Since(time.UnixMilli(e.Timestamp)); d < 0 || d > time.Minute {
		t.Errorf("Success at %v, %v ago", time.UnixMilli(e.Timestamp), d)
	}
}
