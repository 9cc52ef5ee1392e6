package syslog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wnms/wnms/internal/telemetry"
)

var (
	ap     = netip.MustParseAddr("10.0.0.2")
	ap2    = netip.MustParseAddr("10.0.0.3")
	router = netip.MustParseAddr("10.0.0.1")
	t0     = time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
)

const sta = "02:00:00:00:01:00"

// clock is a test clock that moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// recorder is a Sink that keeps what it is given.
type recorder struct {
	mu      sync.Mutex
	batches []emitted
	err     error
}

type emitted struct {
	src    netip.Addr
	events []ClientEvent
}

func (r *recorder) Emit(_ context.Context, src netip.Addr, events []ClientEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, emitted{src, events})
	return r.err
}

func (r *recorder) events(src netip.Addr) []ClientEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []ClientEvent
	for _, b := range r.batches {
		if b.src == src {
			out = append(out, b.events...)
		}
	}
	return out
}

// line is one log line at ms after t0, from src.
type line struct {
	ms      int64
	src     netip.Addr
	program string
	text    string
}

func newAssembler() (*Assembler, *recorder, *clock) {
	rec, clk := &recorder{}, &clock{t: t0}
	return &Assembler{Sink: rec, Now: clk.Now}, rec, clk
}

// feed observes lines, each received when it was written.
func feed(a *Assembler, clk *clock, lines ...line) {
	for _, l := range lines {
		at := t0.Add(time.Duration(l.ms) * time.Millisecond)
		clk.set(at)
		a.Observe(context.Background(), l.src, Message{Program: l.program, Text: l.text, Time: at, RFC5424: true})
	}
}

func hostapd(ms int64, text string) line { return line{ms, ap, "hostapd", "wlan0: " + text} }
func dnsmasq(ms int64, src netip.Addr, text string) line {
	return line{ms, src, "dnsmasq-dhcp", text}
}

// summary is an event without its eventId, AssocSeen and AuthSeen, for
// comparing (TestAssemblerAuthSeen checks the last two).
func summary(events []ClientEvent) []ClientEvent {
	out := make([]ClientEvent, len(events))
	for i, e := range events {
		e.EventID, e.AssocSeen, e.AuthSeen = "", time.Time{}, time.Time{}
		out[i] = e
	}
	return out
}

// A Success's AssocSeen and AuthSeen are when wnms received the lines of
// its association and its authentication (with none, the association
// again), on wnms's clock whatever the sender's; other events have none.
func TestAssemblerAuthSeen(t *testing.T) {
	const late = 5 * time.Minute // the AP's clock is behind wnms's
	for _, c := range []struct {
		name  string
		lines []line
		want  [][2]int64 // each Success's association and authentication, ms after t0 on wnms's clock
	}{
		{"keys done", []line{
			hostapd(0, "STA 02:00:00:00:01:00 IEEE 802.11: associated (aid 1)"),
			hostapd(30, "STA 02:00:00:00:01:00 IEEE 802.1X: authenticated - EAP type: 25 (PEAP)"),
			hostapd(41, "STA 02:00:00:00:01:00 WPA: pairwise key handshake completed (RSN)"),
			dnsmasq(940, ap, "DHCPACK(br-lan) 10.66.0.5 02:00:00:00:01:00 phone"),
		}, [][2]int64{{0, 41}}},
		{"802.1X success only", []line{
			hostapd(0, "STA 02:00:00:00:01:00 IEEE 802.11: associated (aid 1)"),
			hostapd(30, "STA 02:00:00:00:01:00 IEEE 802.1X: authenticated - EAP type: 25 (PEAP)"),
			dnsmasq(940, ap, "DHCPACK(br-lan) 10.66.0.5 02:00:00:00:01:00 phone"),
		}, [][2]int64{{0, 30}}},
		{"open network", []line{
			hostapd(10, "STA 02:00:00:00:01:00 IEEE 802.11: associated (aid 1)"),
			dnsmasq(940, ap, "DHCPACK(br-lan) 10.66.0.5 02:00:00:00:01:00 phone"),
		}, [][2]int64{{10, 10}}},
		{"a second connection", []line{
			hostapd(0, "STA 02:00:00:00:01:00 IEEE 802.11: associated (aid 1)"),
			hostapd(41, "STA 02:00:00:00:01:00 WPA: pairwise key handshake completed (RSN)"),
			dnsmasq(940, ap, "DHCPACK(br-lan) 10.66.0.5 02:00:00:00:01:00 phone"),
			hostapd(5000, "STA 02:00:00:00:01:00 IEEE 802.11: associated (aid 1)"),
			hostapd(5041, "STA 02:00:00:00:01:00 WPA: pairwise key handshake completed (RSN)"),
			dnsmasq(5900, ap, "DHCPACK(br-lan) 10.66.0.5 02:00:00:00:01:00 phone"),
		}, [][2]int64{{0, 41}, {5000, 5041}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, rec, clk := newAssembler()
			for _, l := range c.lines {
				at := t0.Add(time.Duration(l.ms) * time.Millisecond)
				clk.set(at)
				a.Observe(context.Background(), l.src, Message{Program: l.program, Text: l.text, Time: at.Add(-late), RFC5424: true})
			}
			a.Flush(context.Background())
			var got [][2]int64
			for _, e := range rec.events(ap) {
				if e.EventType == "Success" {
					got = append(got, [2]int64{e.AssocSeen.Sub(t0).Milliseconds(), e.AuthSeen.Sub(t0).Milliseconds()})
				} else if !e.AssocSeen.IsZero() || !e.AuthSeen.IsZero() {
					t.Errorf("%s event has AssocSeen %v, AuthSeen %v", e.EventType, e.AssocSeen, e.AuthSeen)
				}
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("the Successes' association and authentication times (-want +got):\n%s", diff)
			}
		})
	}
}

func ms(n int64) int64 { return t0.UnixMilli() + n }

func ipp(s string) *string { return &s }

func ptr[T any](v T) *T { return &v }

// checkIngest proves the records are what ingest takes: each, with the
// BSSID and channel the caller fills, passes telemetry.ParseEvent.
func checkIngest(t *testing.T, events []ClientEvent) {
	t.Helper()
	filled := make([]ClientEvent, len(events))
	for i, e := range events {
		if e.BSSID == "" {
			e.BSSID = "02:AA:00:00:00:01"
		}
		e.Channel = 36
		filled[i] = e
	}
	for _, e := range filled {
		raw, err := json.Marshal(e.Record())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := telemetry.ParseEvent(raw, t0.Add(time.Hour)); err != nil {
			t.Errorf("ingest refuses %s: %v", raw, err)
		}
	}
}

func TestAssemblerSuccess(t *testing.T) {
	a, rec, clk := newAssembler()
	feed(a, clk,
		hostapd(0, "STA 02:00:00:00:01:00 IEEE 802.11: associated (aid 1)"),
		hostapd(40, "AP-STA-CONNECTED 02:00:00:00:01:00 auth_alg=open"),
		hostapd(41, "STA 02:00:00:00:01:00 WPA: pairwise key handshake completed (RSN)"),
		dnsmasq(300, ap, "DHCPDISCOVER(br-lan) 02:00:00:00:01:00 "),
		dnsmasq(310, ap, "DHCPOFFER(br-lan) 10.66.0.5 02:00:00:00:01:00 "),
		dnsmasq(700, ap, "DHCPREQUEST(br-lan) 10.66.0.5 02:00:00:00:01:00 "),
		dnsmasq(940, ap, "DHCPACK(br-lan) 10.66.0.5 02:00:00:00:01:00 phone"),
		// Renewal and rekey later: no second Success.
		dnsmasq(60000, ap, "DHCPACK(br-lan) 10.66.0.5 02:00:00:00:01:00 phone"),
		hostapd(60001, "STA 02:00:00:00:01:00 WPA: pairwise key handshake completed (RSN)"),
	)
	a.Flush(context.Background())
	got := rec.events(ap)
	want := []ClientEvent{
		{MacAddress: sta, EventType: "Intermediate", Timestamp: ms(0), CategoryCode: 1, TypeCode: 1, Interface: "wlan0"},
		{MacAddress: sta, EventType: "Intermediate", Timestamp: ms(940), CategoryCode: 3, TypeCode: 30, IP: ipp("10.66.0.5"), Interface: "wlan0"},
		{MacAddress: sta, EventType: "Success", Timestamp: ms(940), AssociationTimestamp: ms(0), AuthenticationTimestamp: ms(40),
			NetworkTimestamp: ms(940), DHCPLatency: ptr(int64(900)), IP: ipp("10.66.0.5"), HostName: "phone", ClientName: "phone", Interface: "wlan0"},
		{MacAddress: sta, EventType: "Intermediate", Timestamp: ms(60000), CategoryCode: 3, TypeCode: 30, IP: ipp("10.66.0.5"), Interface: "wlan0"},
	}
	if diff := cmp.Diff(want, summary(got)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	checkIngest(t, got)
	s := a.Stats()
	if s.Lines[ProgramHostapd].Parsed != 4 || s.Lines[ProgramDnsmasq].Parsed != 5 || s.Events["Success"] != 1 || s.Events["Intermediate"] != 3 {
		t.Errorf("stats %+v", s)
	}
}

// The DHCP server is another box: its ACK completes the connection the AP
// saw, and the Success goes out under the AP's address.
func TestAssemblerDHCPElsewhere(t *testing.T) {
	a, rec, clk := newAssembler()
	feed(a, clk,
		hostapd(0, "STA 02:00:00:00:01:00 IEEE 802.11: associated (aid 1) bssid=02:aa:00:00:00:09"),
		hostapd(20, "STA 02:00:00:00:01:00 IEEE 802.1X: authenticated - EAP type: 25 (PEAP)"),
		hostapd(60, "STA 02:00:00:00:01:00 WPA: pairwise key handshake completed (RSN)"),
		line{500, router, "dhcpd", "DHCPACK on 10.1.2.3 to 2:0:0:0:1:0 (pc) via eth0"},
	)
	a.Flush(context.Background())
	if got := rec.events(router); len(got) != 0 {
		t.Errorf("events under the router's address: %+v", got)
	}
	got := rec.events(ap)
	want := []ClientEvent{
		{MacAddress: sta, EventType: "Intermediate", Timestamp: ms(0), CategoryCode: 1, TypeCode: 1, BSSID: "02:AA:00:00:00:09", Interface: "wlan0"},
		{MacAddress: sta, EventType: "Intermediate", Timestamp: ms(500), CategoryCode: 3, TypeCode: 30, IP: ipp("10.1.2.3"), BSSID: "02:AA:00:00:00:09", Interface: "wlan0"},
		{MacAddress: sta, EventType: "Success", Timestamp: ms(500), AssociationTimestamp: ms(0), AuthenticationTimestamp: ms(60),
			NetworkTimestamp: ms(500), DHCPLatency: ptr(int64(440)), IP: ipp("10.1.2.3"), HostName: "pc", ClientName: "pc", BSSID: "02:AA:00:00:00:09", Interface: "wlan0"},
	}
	if diff := cmp.Diff(want, summary(got)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	checkIngest(t, got)
}

// Each way a connection fails makes one Failure of the catalogue's cause,
// however many lines say it.
func TestAssemblerFailures(t *testing.T) {
	assoc := hostapd(0, "STA 02:00:00:00:01:00 IEEE 802.11: associated (aid 1)")
	keys := hostapd(30, "STA 02:00:00:00:01:00 WPA: pairwise key handshake completed (RSN)")
	tests := []struct {
		name  string
		lines []line
		want  []ClientEvent // the Failures and disconnections, in order
	}{{
		name: "wrong PSK",
		lines: []line{assoc,
			hostapd(1000, "AP-STA-POSSIBLE-PSK-MISMATCH 02:00:00:00:01:00"),
			hostapd(1001, "STA 02:00:00:00:01:00 WPA: invalid MIC in msg 2/4 of 4-Way Handshake"),
			hostapd(2000, "AP-STA-POSSIBLE-PSK-MISMATCH 02:00:00:00:01:00"),
			hostapd(5000, "STA 02:00:00:00:01:00 IEEE 802.11: deauthenticated due to local deauth request"),
			hostapd(5001, "AP-STA-DISCONNECTED 02:00:00:00:01:00"),
		},
		want: []ClientEvent{
			{EventType: "Failure", Timestamp: ms(1000), AssociationTimestamp: ms(0), FailureCode: 2, SubFailureCode: 201},
			{EventType: "Intermediate", Timestamp: ms(5000), CategoryCode: 1, TypeCode: 3},
		},
	}, {
		name: "keys time out and the client is let go",
		lines: []line{assoc,
			hostapd(1000, "STA 02:00:00:00:01:00 WPA: EAPOL-Key timeout"),
			hostapd(2000, "STA 02:00:00:00:01:00 WPA: EAPOL-Key timeout"),
			hostapd(4000, "STA 02:00:00:00:01:00 IEEE 802.11: disassociated reason=15"),
		},
		want: []ClientEvent{
			{EventType: "Failure", Timestamp: ms(1000), AssociationTimestamp: ms(0), FailureCode: 2, SubFailureCode: 201},
			{EventType: "Intermediate", Timestamp: ms(4000), CategoryCode: 1, TypeCode: 3, SubTypeCode: 15},
		},
	}, {
		name: "a key timeout the retry recovers is no failure",
		lines: []line{assoc,
			hostapd(1000, "STA 02:00:00:00:01:00 WPA: EAPOL-Key timeout"),
			hostapd(1100, "STA 02:00:00:00:01:00 WPA: pairwise key handshake completed (RSN)"),
			dnsmasq(1500, ap, "DHCPACK(br-lan) 10.66.0.5 02:00:00:00:01:00"),
		},
		want: []ClientEvent{{EventType: "Success", Timestamp: ms(1500), AssociationTimestamp: ms(0), AuthenticationTimestamp: ms(1100),
			NetworkTimestamp: ms(1500), DHCPLatency: ptr(int64(400)), IP: ipp("10.66.0.5")}},
	}, {
		name:  "802.1X rejected",
		lines: []line{assoc, hostapd(800, "STA 02:00:00:00:01:00 IEEE 802.1X: authentication failed - EAP type: 25 (PEAP)")},
		want:  []ClientEvent{{EventType: "Failure", Timestamp: ms(800), AssociationTimestamp: ms(0), FailureCode: 2, SubFailureCode: 202}},
	}, {
		name: "DHCP NAK, then the client gets an address",
		lines: []line{assoc, keys,
			dnsmasq(200, ap, "DHCPREQUEST(br-lan) 192.168.1.50 02:00:00:00:01:00 "),
			dnsmasq(201, ap, "DHCPNAK(br-lan) 192.168.1.50 02:00:00:00:01:00 wrong network"),
			dnsmasq(202, ap, "DHCPNAK(br-lan) 192.168.1.50 02:00:00:00:01:00 wrong network"),
			dnsmasq(900, ap, "DHCPACK(br-lan) 10.66.0.5 02:00:00:00:01:00"),
		},
		want: []ClientEvent{
			{EventType: "Failure", Timestamp: ms(201), AssociationTimestamp: ms(0), AuthenticationTimestamp: ms(30), FailureCode: 3, SubFailureCode: 302},
			{EventType: "Success", Timestamp: ms(900), AssociationTimestamp: ms(0), AuthenticationTimestamp: ms(30), NetworkTimestamp: ms(900), DHCPLatency: ptr(int64(870)), IP: ipp("10.66.0.5")},
		},
	}, {
		name: "dnsmasq has no address",
		lines: []line{assoc, keys,
			dnsmasq(200, ap, "DHCPDISCOVER(br-lan) 02:00:00:00:01:00 no address available"),
			dnsmasq(3200, ap, "DHCPDISCOVER(br-lan) 02:00:00:00:01:00 no address available"),
		},
		want: []ClientEvent{{EventType: "Failure", Timestamp: ms(200), AssociationTimestamp: ms(0), AuthenticationTimestamp: ms(30), FailureCode: 3, SubFailureCode: 301}},
	}, {
		name: "dhcpd has no free lease",
		lines: []line{assoc, keys,
			line{200, router, "dhcpd", "DHCPDISCOVER from 2:0:0:0:1:0 via eth0: network 10.1.2.0/24: no free leases"},
		},
		want: []ClientEvent{{EventType: "Failure", Timestamp: ms(200), AssociationTimestamp: ms(0), AuthenticationTimestamp: ms(30), FailureCode: 3, SubFailureCode: 301}},
	}, {
		name:  "AP full",
		lines: []line{hostapd(0, "AP-REJECTED-MAX-STA 02:00:00:00:01:00")},
		want:  []ClientEvent{{EventType: "Failure", Timestamp: ms(0), FailureCode: 1, SubFailureCode: 103}},
	}, {
		name:  "association refused",
		lines: []line{hostapd(0, "AP-REJECTED-BLOCKED-STA 02:00:00:00:01:00"), hostapd(5, "AP-REJECTED-BLOCKED-STA 02:00:00:00:01:00")},
		want:  []ClientEvent{{EventType: "Failure", Timestamp: ms(0), FailureCode: 1, SubFailureCode: 101}},
	}, {
		name: "a disconnection before DHCP, no DHCP line seen: Success without DHCP",
		lines: []line{assoc, keys,
			hostapd(2000, "AP-STA-DISCONNECTED 02:00:00:00:01:00"),
			hostapd(2001, "STA 02:00:00:00:01:00 IEEE 802.11: disassociated"),
		},
		want: []ClientEvent{
			{EventType: "Success", Timestamp: ms(30), AssociationTimestamp: ms(0), AuthenticationTimestamp: ms(30)},
			{EventType: "Intermediate", Timestamp: ms(2000), CategoryCode: 1, TypeCode: 3},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, rec, clk := newAssembler()
			feed(a, clk, tt.lines...)
			a.Flush(context.Background())
			var got []ClientEvent
			for _, e := range summary(rec.events(ap)) {
				if e.MacAddress != sta {
					t.Errorf("event of %s", e.MacAddress)
				}
				e.MacAddress, e.Interface = "", ""
				if e.EventType == "Intermediate" && (e.TypeCode == 1 || e.TypeCode == 30) {
					continue // associations and leases: TestAssemblerSuccess
				}
				got = append(got, e)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			checkIngest(t, rec.events(ap))
			if n := len(rec.events(router)); n != 0 {
				t.Errorf("%d events under the router's address", n)
			}
		})
	}
}

// An attempt with no outcome ends after PendingTimeout, as the package
// documentation says.
func TestAssemblerExpiry(t *testing.T) {
	tests := []struct {
		name  string
		lines []line
		want  []ClientEvent
	}{{
		name: "keys done, no DHCP line: Success without DHCP",
		lines: []line{hostapd(0, "STA 02:00:00:00:01:00 IEEE 802.11: associated (aid 1)"),
			hostapd(30, "AP-STA-CONNECTED 02:00:00:00:01:00")},
		want: []ClientEvent{{EventType: "Success", Timestamp: ms(30), AssociationTimestamp: ms(0), AuthenticationTimestamp: ms(30)}},
	}, {
		name: "keys done, DHCP asked, never answered: no offer",
		lines: []line{hostapd(0, "STA 02:00:00:00:01:00 IEEE 802.11: associated (aid 1)"),
			hostapd(30, "AP-STA-CONNECTED 02:00:00:00:01:00"),
			dnsmasq(100, ap, "DHCPDISCOVER(br-lan) 02:00:00:00:01:00 "),
			dnsmasq(4100, ap, "DHCPDISCOVER(br-lan) 02:00:00:00:01:00 ")},
		want: []ClientEvent{{EventType: "Failure", Timestamp: ms(100), AssociationTimestamp: ms(0), AuthenticationTimestamp: ms(30), FailureCode: 3, SubFailureCode: 301}},
	}, {
		name:  "associated only: nothing to say",
		lines: []line{hostapd(0, "STA 02:00:00:00:01:00 IEEE 802.11: associated (aid 1)")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, rec, clk := newAssembler()
			feed(a, clk, tt.lines...)
			last := t0.Add(time.Duration(tt.lines[len(tt.lines)-1].ms) * time.Millisecond)
			clk.set(last.Add(DefaultPendingTimeout - time.Millisecond))
			a.Tick(context.Background())
			if s := a.Stats(); s.Expired != 0 {
				t.Fatalf("expired %d before PendingTimeout", s.Expired)
			}
			clk.set(last.Add(DefaultPendingTimeout))
			a.Tick(context.Background())
			a.Flush(context.Background())
			var got []ClientEvent
			for _, e := range summary(rec.events(ap)) {
				if e.EventType != "Intermediate" {
					e.MacAddress, e.Interface = "", ""
					got = append(got, e)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if s := a.Stats(); s.Expired != 1 || s.Clients != 1 {
				t.Errorf("stats %+v", s)
			}
			// The client is forgotten after StateTimeout.
			clk.set(last.Add(DefaultPendingTimeout + DefaultStateTimeout))
			a.Tick(context.Background())
			if s := a.Stats(); s.Clients != 0 {
				t.Errorf("%d clients tracked after StateTimeout", s.Clients)
			}
		})
	}
}

// The same lines make the same eventIds: a line received twice (a UDP
// duplicate, a TCP sender resending after a reconnect, two replicas) is a
// duplicate downstream. Different lines make different ones.
func TestAssemblerEventIDs(t *testing.T) {
	lines := []line{
		hostapd(0, "STA 02:00:00:00:01:00 IEEE 802.11: associated (aid 1)"),
		hostapd(30, "AP-STA-CONNECTED 02:00:00:00:01:00"),
		dnsmasq(500, ap, "DHCPACK(br-lan) 10.66.0.5 02:00:00:00:01:00"),
		hostapd(9000, "AP-STA-DISCONNECTED 02:00:00:00:01:00"),
		hostapd(9500, "STA 02:00:00:00:01:00 IEEE 802.11: associated (aid 1)"),
		hostapd(9600, "AP-STA-POSSIBLE-PSK-MISMATCH 02:00:00:00:01:00"),
	}
	run := func() []ClientEvent {
		a, rec, clk := newAssembler()
		feed(a, clk, lines...)
		a.Flush(context.Background())
		return rec.events(ap)
	}
	first, second := run(), run()
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("the same lines made other events (-first +second):\n%s", diff)
	}
	ids := map[string]bool{}
	for _, e := range first {
		if ids[e.EventID] {
			t.Errorf("eventId %s twice", e.EventID)
		}
		ids[e.EventID] = true
		if len(e.EventID) > telemetry.MaxEventID || !strings.HasPrefix(e.EventID, "syslog-") {
			t.Errorf("eventId %q", e.EventID)
		}
	}
	if len(first) != 6 {
		t.Errorf("%d events, want 6 (2 associations, lease, Success, disconnection, Failure)", len(first))
	}
	// The ACK line again, in the same assembler: the lease event repeats
	// with its eventId, and no second Success.
	a, rec, clk := newAssembler()
	feed(a, clk, lines[:3]...)
	feed(a, clk, lines[2])
	a.Flush(context.Background())
	got := rec.events(ap)
	if len(got) != 4 || got[3].EventID != got[1].EventID || got[3].TypeCode != 30 {
		t.Errorf("a repeated ACK made %+v", summary(got))
	}
}

func TestAssemblerEviction(t *testing.T) {
	a, rec, clk := newAssembler()
	a.MaxClients = 2
	feed(a, clk,
		hostapd(0, "STA 02:00:00:00:01:01 IEEE 802.11: associated (aid 1)"),
		hostapd(1, "STA 02:00:00:00:01:02 IEEE 802.11: associated (aid 2)"),
		hostapd(2, "STA 02:00:00:00:01:03 IEEE 802.11: associated (aid 3)"),
		hostapd(3, "AP-STA-CONNECTED 02:00:00:00:01:01"),
		dnsmasq(4, ap, "DHCPACK(br-lan) 10.66.0.5 02:00:00:00:01:01"),
		hostapd(5, "AP-STA-CONNECTED 02:00:00:00:01:03"),
		dnsmasq(6, ap, "DHCPACK(br-lan) 10.66.0.6 02:00:00:00:01:03"),
	)
	a.Flush(context.Background())
	success := map[string]bool{}
	for _, e := range rec.events(ap) {
		if e.EventType == "Success" {
			success[e.MacAddress] = true
		}
	}
	// 01:01 was the oldest: forgotten, so its ACK completes nothing.
	if success["02:00:00:00:01:01"] || !success["02:00:00:00:01:03"] {
		t.Errorf("successes %v", success)
	}
	if s := a.Stats(); s.Evicted < 1 || s.Clients > 2 {
		t.Errorf("stats %+v", s)
	}
}

func TestAssemblerBatches(t *testing.T) {
	a, rec, clk := newAssembler()
	a.BatchSize, a.FlushInterval = 3, 500*time.Millisecond
	assoc := func(ms int64, src netip.Addr, n string) line {
		return line{ms, src, "hostapd", "STA 02:00:00:00:01:0" + n + " IEEE 802.11: associated"}
	}
	batches := func() []emitted {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return append([]emitted(nil), rec.batches...)
	}
	// By age: each source's batch when its first event is FlushInterval old.
	feed(a, clk, assoc(0, ap, "1"), assoc(1, ap2, "2"))
	for _, step := range []struct {
		ms   int64
		want []netip.Addr
	}{{499, nil}, {500, []netip.Addr{ap}}, {501, []netip.Addr{ap, ap2}}} {
		clk.set(t0.Add(time.Duration(step.ms) * time.Millisecond))
		a.Tick(context.Background())
		var got []netip.Addr
		for _, b := range batches() {
			if len(b.events) != 1 {
				t.Errorf("batch of %d events", len(b.events))
			}
			got = append(got, b.src)
		}
		if !cmp.Equal(step.want, got, cmp.Comparer(func(x, y netip.Addr) bool { return x == y })) {
			t.Fatalf("at %d ms: batches of %v, want %v", step.ms, got, step.want)
		}
	}
	// By size: a full batch waits for Run, off the receive path.
	feed(a, clk, assoc(600, ap, "3"), assoc(601, ap, "4"), assoc(602, ap, "5"))
	if n := len(batches()); n != 2 || len(a.queue) != 1 {
		t.Fatalf("a full batch: %d emitted, %d queued; want 2, 1", n, len(a.queue))
	}
	a.FlushInterval = time.Hour // Run's own Tick must not emit the rest
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- a.Run(ctx) }()
	waitFor(t, "Run to emit the full batch", func() bool { return len(batches()) == 3 })
	if b := batches()[2]; b.src != ap || len(b.events) != 3 {
		t.Errorf("the full batch: %+v", b)
	}
	rec.mu.Lock()
	rec.err = errors.New("store down")
	rec.mu.Unlock()
	feed(a, clk, assoc(700, ap, "6"), assoc(701, ap, "7"), assoc(702, ap, "8"))
	waitFor(t, "the refused batch", func() bool { return a.Stats().EmitErrors == 1 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := a.Stats(); s.Batches != 4 || s.EventsLost != 3 || s.Events["Intermediate"] != 8 {
		t.Errorf("stats %+v", s)
	}
}

// A full queue and an ended context: Observe returns, the batch is lost
// and counted.
func TestAssemblerQueueFull(t *testing.T) {
	a, _, clk := newAssembler()
	a.BatchSize, a.QueueLen = 1, 1
	feed(a, clk, hostapd(0, "STA 02:00:00:00:01:01 IEEE 802.11: associated"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a.Observe(ctx, ap, Message{Program: "hostapd", Text: "STA 02:00:00:00:01:02 IEEE 802.11: associated"})
	if s := a.Stats(); s.EventsLost != 1 || len(a.queue) != 1 {
		t.Errorf("stats %+v, %d queued", s, len(a.queue))
	}
}

func TestAssemblerRunFlushesOnExit(t *testing.T) {
	a, rec, clk := newAssembler()
	a.FlushInterval = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- a.Run(ctx) }()
	feed(a, clk, hostapd(0, "STA 02:00:00:00:01:00 IEEE 802.11: associated"))
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := rec.events(ap); len(got) != 1 {
		t.Errorf("after Run: %+v", got)
	}
	if err := (&Assembler{}).Run(context.Background()); err == nil {
		t.Error("Run without a Sink: no error")
	}
}

func TestAssemblerCounts(t *testing.T) {
	a, rec, clk := newAssembler()
	a.Observe(context.Background(), ap, Message{Program: "sshd", Text: "Accepted publickey"})
	a.Observe(context.Background(), ap, Message{Program: "hostapd", Text: "wlan0: AP-ENABLED"})
	a.Observe(context.Background(), ap, Message{Program: "dnsmasq", Text: "query[A] example.org from 10.0.0.5"})
	a.Observe(context.Background(), ap, Message{Program: "dhcpd", Text: "DHCPACK on 10.1.2.3 to 0:c:29:1:2:3 via eth0"})
	s := a.Stats()
	want := map[string]LineStats{ProgramHostapd: {Unparsed: 1}, ProgramDnsmasq: {Unparsed: 1}, ProgramDHCPD: {Parsed: 1}}
	if diff := cmp.Diff(want, s.Lines); diff != "" || s.OtherPrograms != 1 {
		t.Errorf("lines (-want +got):\n%s\nother %d", diff, s.OtherPrograms)
	}
	// A line with no timestamp, or one far from the receive time, takes
	// the receive time.
	clk.set(t0.Add(time.Minute))
	for _, at := range []time.Time{{}, t0.Add(-48 * time.Hour), t0.Add(48 * time.Hour)} {
		a.Observe(context.Background(), ap, Message{Program: "hostapd", Text: "AP-REJECTED-MAX-STA 02:00:00:00:01:00", Time: at})
		a.Observe(context.Background(), ap, Message{Program: "hostapd", Text: "STA 02:00:00:00:01:00 IEEE 802.11: associated", Time: at})
	}
	a.Flush(context.Background())
	n := 0
	for _, e := range rec.events(ap) {
		if e.MacAddress != sta {
			continue
		}
		n++
		if e.Timestamp != t0.Add(time.Minute).UnixMilli() {
			t.Errorf("%s event at %d, want the receive time", e.EventType, e.Timestamp)
		}
	}
	if n != 6 {
		t.Errorf("%d events, want 6 (3 rejections, 3 associations)", n)
	}
}

// A DHCP server that saw the client before (a NAK with no association
// known) still hands the client's next ACK to the association the AP saw.
func TestAssemblerDHCPElsewhereAfterEarlierLines(t *testing.T) {
	a, rec, clk := newAssembler()
	feed(a, clk,
		line{0, router, "dhcpd", "DHCPNAK on 10.1.2.3 to 2:0:0:0:1:0 via eth0"},
		hostapd(1000, "STA 02:00:00:00:01:00 IEEE 802.11: associated (aid 1)"),
		hostapd(1050, "AP-STA-CONNECTED 02:00:00:00:01:00"),
		line{1500, router, "dhcpd", "DHCPACK on 10.1.2.3 to 2:0:0:0:1:0 via eth0"},
	)
	a.Flush(context.Background())
	atRouter := summary(rec.events(router))
	if len(atRouter) != 1 || atRouter[0].FailureCode != 3 || atRouter[0].SubFailureCode != 302 || atRouter[0].Interface != "eth0" {
		t.Errorf("under the router: %+v", atRouter)
	}
	var types []string
	for _, e := range rec.events(ap) {
		types = append(types, e.EventType)
	}
	if diff := cmp.Diff([]string{"Intermediate", "Intermediate", "Success"}, types); diff != "" {
		t.Errorf("under the AP (-want +got):\n%s", diff)
	}
}

// A wired 802.1X port (hostapd driver=wired) logs no association: the
// port's start is one, and a Wi-Fi client's start after its association
// changes nothing.
func TestAssemblerWiredPort(t *testing.T) {
	a, rec, clk := newAssembler()
	feed(a, clk,
		hostapd(0, "STA 02:00:00:00:01:00 IEEE 802.1X: start authentication"),
		hostapd(5, "STA 02:00:00:00:01:00 IEEE 802.1X: received EAPOL-Start from STA"),
		hostapd(180, "STA 02:00:00:00:01:00 IEEE 802.1X: authenticated - EAP type: 25 (PEAP)"),
		hostapd(181, "STA 02:00:00:00:01:00 IEEE 802.1X: authorizing port"),
		dnsmasq(900, ap, "DHCPACK(lp0) 10.66.0.5 02:00:00:00:01:00 "),
		// A Wi-Fi client: associated, then its 802.1X start.
		hostapd(2000, "STA 02:00:00:00:02:00 IEEE 802.11: associated (aid 2)"),
		hostapd(2001, "STA 02:00:00:00:02:00 IEEE 802.1X: start authentication"),
		hostapd(2100, "AP-STA-CONNECTED 02:00:00:00:02:00"),
		dnsmasq(2500, ap, "DHCPACK(lp0) 10.66.0.6 02:00:00:00:02:00 "),
	)
	a.Flush(context.Background())
	got := rec.events(ap)
	var successes []ClientEvent
	for _, e := range got {
		if e.EventType == "Success" {
			successes = append(successes, e)
		}
	}
	want := []ClientEvent{
		{MacAddress: sta, EventType: "Success", Timestamp: ms(900), AssociationTimestamp: ms(0), AuthenticationTimestamp: ms(180),
			NetworkTimestamp: ms(900), DHCPLatency: ptr(int64(720)), IP: ipp("10.66.0.5"), Interface: "wlan0"},
		{MacAddress: "02:00:00:00:02:00", EventType: "Success", Timestamp: ms(2500), AssociationTimestamp: ms(2000),
			AuthenticationTimestamp: ms(2100), NetworkTimestamp: ms(2500), DHCPLatency: ptr(int64(400)), IP: ipp("10.66.0.6"), Interface: "wlan0"},
	}
	if diff := cmp.Diff(want, summary(successes)); diff != "" {
		t.Errorf("successes (-want +got):\n%s", diff)
	}
	checkIngest(t, got)
}

// overlap is a Sink that holds each batch a while and records how many it
// held at once.
type overlap struct {
	mu          sync.Mutex
	in, most, n int
	hold        time.Duration
}

func (o *overlap) Emit(ctx context.Context, src netip.Addr, events []ClientEvent) error {
	o.mu.Lock()
	o.in++
	o.most = max(o.most, o.in)
	o.mu.Unlock()
	time.Sleep(o.hold)
	o.mu.Lock()
	o.in--
	o.n++
	o.mu.Unlock()
	return nil
}

// Run hands Emitters full batches to the Sink at once, never more, and
// every batch once.
func TestAssemblerEmitters(t *testing.T) {
	for _, c := range []struct{ emitters, want int }{{0, DefaultEmitters}, {1, 1}, {3, 3}} {
		t.Run(fmt.Sprint(c.emitters), func(t *testing.T) {
			sink := &overlap{hold: 30 * time.Millisecond}
			clk := &clock{t: t0}
			a := &Assembler{Sink: sink, Now: clk.Now, BatchSize: 1, Emitters: c.emitters, FlushInterval: time.Hour}
			for i := range 6 { // six full batches wait before Run starts
				feed(a, clk, hostapd(int64(i), fmt.Sprintf("STA 02:00:00:00:01:%02x IEEE 802.11: associated", i)))
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			go func() { done <- a.Run(ctx) }()
			waitFor(t, "every batch", func() bool { sink.mu.Lock(); defer sink.mu.Unlock(); return sink.n == 6 })
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if sink.most != c.want || sink.n != 6 {
				t.Errorf("%d batches, at most %d at once; want 6, %d", sink.n, sink.most, c.want)
			}
		})
	}
}

// Lines whose own time has whole seconds (RFC 3164) measure dhcpLatency
// on wnms's receive clock, to the millisecond; lines with fractions keep
// their own times.
func TestAssemblerLatencyWholeSeconds(t *testing.T) {
	type obs struct {
		rx    int64 // received, ms after t0
		at    int64 // the line's own time, ms after t0
		whole bool
		text  string
	}
	const mac = "02:00:00:00:01:00"
	assoc := "wlan0: STA " + mac + " IEEE 802.11: associated"
	keys := "wlan0: STA " + mac + " WPA: pairwise key handshake completed (RSN)"
	ack := "DHCPACK(br-lan) 10.0.0.60 " + mac + " phone"
	tests := []struct {
		name  string
		lines []obs
		want  int64
	}{
		{"RFC 3164 in one second", []obs{{0, 0, true, assoc}, {120, 0, true, keys}, {470, 0, true, ack}}, 350},
		{"RFC 3164 across a second", []obs{{900, 0, true, assoc}, {950, 0, true, keys}, {1210, 1000, true, ack}}, 260},
		{"open network, RFC 3164", []obs{{100, 0, true, assoc}, {340, 0, true, ack}}, 240},
		{"DHCP server in whole seconds, AP in ms", []obs{{10, 5, false, assoc}, {60, 55, false, keys}, {300, 0, true, ack}}, 240},
		{"fractions on both ends: the lines' own times", []obs{{10, 0, false, assoc}, {60, 40, false, keys}, {300, 380, false, ack}}, 340},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, rec, clk := newAssembler()
			for _, l := range tt.lines {
				clk.set(t0.Add(time.Duration(l.rx) * time.Millisecond))
				program := "hostapd"
				if strings.HasPrefix(l.text, "DHCP") {
					program = "dnsmasq-dhcp"
				}
				a.Observe(context.Background(), ap, Message{Program: program, Text: l.text,
					Time: t0.Add(time.Duration(l.at) * time.Millisecond), WholeSeconds: l.whole})
			}
			a.Flush(context.Background())
			var got []int64
			for _, e := range rec.events(ap) {
				if e.EventType == "Success" && e.DHCPLatency != nil {
					got = append(got, *e.DHCPLatency)
				}
			}
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("dhcpLatency %v, want [%d]", got, tt.want)
			}
		})
	}
}
