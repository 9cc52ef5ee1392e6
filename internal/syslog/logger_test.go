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

// needLogger returns the path of util-linux logger, or skips the test.
func needLogger(t *testing.T) string {
	t.Helper()
	logger, err := exec.LookPath("logger")
	if err != nil {
		if os.Getenv("WNMS_TEST_REQUIRE_TOOLS") == "1" {
			t.Fatal("logger (util-linux) is required: WNMS_TEST_REQUIRE_TOOLS=1")
		}
		t.Skip("logger (util-linux) not installed")
	}
	return logger
}

// Two customers whose clients share a MAC: one customer's AP logs the
// client's association and keys, the other customer's DHCP server logs a
// DHCPNAK for the same MAC, each sent by logger from its own address. The
// NAK is the second customer's client's Failure, never the first's.
func TestLoggerOwnersApart(t *testing.T) {
	logger := needLogger(t)
	const mac = "02:00:00:00:0b:01"
	// (Linux sends to any 127.0.0.0/8 address from 127.0.0.1: the second
	// sender is IPv6's loopback.)
	apAddr, dhcpAddr := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")
	rec := &recorder{}
	a := &Assembler{Sink: rec, Owner: func(src netip.Addr) int64 {
		if src == dhcpAddr {
			return 2
		}
		return 1
	}}
	ch := make(chan received, 10)
	handle := func(_ context.Context, src netip.Addr, m Message) { ch <- received{src, m} }
	to := map[netip.Addr]string{}
	for _, host := range []netip.Addr{apAddr, dhcpAddr} {
		h := host.String()
		if host.Is6() {
			h = "[" + h + "]"
		}
		to[host] = serveOn(t, &Receiver{Handle: handle}, h)
	}
	for _, l := range []struct {
		from      netip.Addr
		tag, text string
	}{
		{apAddr, "hostapd", "wlan0: STA " + mac + " IEEE 802.11: associated"},
		{apAddr, "hostapd", "wlan0: STA " + mac + " WPA: pairwise key handshake completed (RSN)"},
		{dhcpAddr, "dnsmasq-dhcp", "DHCPREQUEST(eth0) 10.0.0.9 " + mac},
		{dhcpAddr, "dnsmasq-dhcp", "DHCPNAK(eth0) 10.0.0.9 " + mac + " wrong network"},
	} {
		host, port, _ := net.SplitHostPort(to[l.from])
		args := []string{"-T", "--rfc5424", "--octet-count", "-n", host, "-P", port, "-t", l.tag, "--", l.text}
		if out, err := exec.Command(logger, args...).CombinedOutput(); err != nil {
			t.Fatalf("logger %v: %v\n%s", args, err, out)
		}
		got := next(t, ch)
		if got.src != l.from {
			t.Fatalf("a line sent to %s came from %s", host, got.src)
		}
		a.Observe(context.Background(), got.src, got.m)
	}
	a.Flush(context.Background())
	for _, e := range rec.events(apAddr) {
		if e.EventType == "Failure" {
			t.Errorf("customer 1's client has another customer's Failure %d/%d", e.FailureCode, e.SubFailureCode)
		}
	}
	var nak []ClientEvent
	for _, e := range rec.events(dhcpAddr) {
		if e.EventType == "Failure" && e.SubFailureCode == 302 {
			nak = append(nak, e)
		}
	}
	if len(nak) != 1 || nak[0].MacAddress != "02:00:00:00:0B:01" {
		t.Errorf("customer 2's client's DHCPNAK: %+v", nak)
	}
}

// An association, its key handshake and its DHCP ACK sent by logger in
// RFC 3164 format, whose timestamps have whole seconds, received 120 ms
// and 470 ms apart on wnms's clock: dhcpLatency is 350 ms, not a whole
// number of seconds.
func TestLoggerRFC3164LatencySubSecond(t *testing.T) {
	logger := needLogger(t)
	const mac = "02:00:00:00:0c:01"
	rec := &recorder{}
	// The receive clock: real time when the test starts, moved by the
	// test, so the receive times are known exactly.
	clk := &clock{t: time.Now()}
	start := clk.Now()
	a := &Assembler{Sink: rec, Now: clk.Now}
	addr, ch := startReceiver(t, &Receiver{})
	host, port, _ := net.SplitHostPort(addr)
	for _, l := range []struct {
		rx        time.Duration
		tag, text string
	}{
		{0, "hostapd", "wlan0: STA " + mac + " IEEE 802.11: associated"},
		{120 * time.Millisecond, "hostapd", "wlan0: STA " + mac + " WPA: pairwise key handshake completed (RSN)"},
		{470 * time.Millisecond, "dnsmasq-dhcp", "DHCPACK(br-lan) 10.0.0.60 " + mac + " phone"},
	} {
		args := []string{"-T", "--rfc3164", "-n", host, "-P", port, "-t", l.tag, "--", l.text}
		if out, err := exec.Command(logger, args...).CombinedOutput(); err != nil {
			t.Fatalf("logger %v: %v\n%s", args, err, out)
		}
		got := next(t, ch)
		if got.m.RFC5424 || !got.m.WholeSeconds {
			t.Fatalf("logger --rfc3164 sent %+v", got.m)
		}
		clk.set(start.Add(l.rx))
		a.Observe(context.Background(), got.src, got.m)
	}
	a.Flush(context.Background())
	var success []ClientEvent
	for _, e := range rec.events(netip.MustParseAddr("127.0.0.1")) {
		if e.EventType == "Success" {
			success = append(success, e)
		}
	}
	if len(success) != 1 || success[0].DHCPLatency == nil || *success[0].DHCPLatency != 350 {
		t.Fatalf("Successes %+v, want one with dhcpLatency 350", success)
	}
}
