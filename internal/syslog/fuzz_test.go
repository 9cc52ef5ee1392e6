package syslog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/telemetry"
)

// The fuzz targets' seeds are in testdata/fuzz; these hold for any input.

func FuzzParse(f *testing.F) {
	f.Add([]byte("<13>Nov 25 03:39:26 vm hostapd: wlan0: AP-STA-CONNECTED 02:00:00:00:01:00"))
	f.Add([]byte(`<13>1 2026-11-25T03:39:26.876634+00:00 vm dnsmasq-dhcp 15190 - [a b="\]"] DHCPACK(br-lan) 10.0.0.5 02:00:00:00:01:00`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b, now, nil)
		if err != nil {
			if !errors.Is(err, ErrNotSyslog) {
				t.Fatalf("error %v", err)
			}
			return
		}
		if m.Facility < 0 || m.Facility > 23 || m.Severity < 0 || m.Severity > 7 {
			t.Fatalf("PRI %d.%d", m.Facility, m.Severity)
		}
		if strings.ContainsAny(m.Program, " ") || (!m.RFC5424 && strings.ContainsAny(m.Program, ":[")) {
			t.Fatalf("program %q", m.Program)
		}
		if !bytes.Contains(b, []byte(m.Text)) || !bytes.Contains(b, []byte(m.Host)) || !bytes.Contains(b, []byte(m.Program)) {
			t.Fatalf("fields not from the input: %+v", m)
		}
		if again, err := Parse(b, now, nil); err != nil || !again.Time.Equal(m.Time) || again.Text != m.Text {
			t.Fatalf("not deterministic")
		}
	})
}

func FuzzFrameReader(f *testing.F) {
	f.Add([]byte("5 <13>a<13>b\n6 <13>cd\n"), 8)
	f.Add([]byte("999999999 x"), 16)
	f.Fuzz(func(t *testing.T, stream []byte, max int) {
		if max < 1 || max > 1<<12 {
			max = 64
		}
		fr := NewFrameReader(bytes.NewReader(stream), max)
		var frames [][]byte
		total := 0
		for {
			b, err := fr.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrFraming) {
					t.Fatalf("error %v", err)
				}
				break
			}
			if len(b) == 0 || len(b) > max {
				t.Fatalf("frame of %d bytes, limit %d", len(b), max)
			}
			if !bytes.Contains(stream, b) {
				t.Fatalf("frame %q not in the stream", b)
			}
			total += len(b)
			frames = append(frames, bytes.Clone(b))
		}
		if total > len(stream) {
			t.Fatalf("%d bytes of frames from %d", total, len(stream))
		}
		// What was read, octet-counted again, reads back the same.
		var enc bytes.Buffer
		for _, b := range frames {
			fmt.Fprintf(&enc, "%d %s", len(b), b)
		}
		fr = NewFrameReader(&enc, max)
		for i, want := range frames {
			got, err := fr.Next()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("frame %d again: %q, %v; want %q", i, got, err, want)
			}
		}
		if _, err := fr.Next(); err != io.EOF {
			t.Fatalf("after the last frame: %v", err)
		}
	})
}

func FuzzParseLine(f *testing.F) {
	f.Add("hostapd", "wlan0: STA 02:00:00:00:01:00 IEEE 802.11: associated (aid 1) bssid=02:aa:00:00:00:01 reason=3")
	f.Add("dnsmasq-dhcp", "3173129068 DHCPACK(br-lan) 10.66.0.136 78:02:f8:58:69:2a phone")
	f.Add("dhcpd", "DHCPACK on 10.1.2.3 to 0:c:29:1:2:3 (pc) via eth0")
	f.Fuzz(func(t *testing.T, program, text string) {
		o, ok := ParseLine(ProgramOf(program), text)
		if !ok {
			if o != (Observation{}) {
				t.Fatalf("not parsed but %+v", o)
			}
			return
		}
		if o.Kind == KindNone || o.Kind > DHCPNoLease {
			t.Fatalf("kind %v", o.Kind)
		}
		if m, ok := telemetry.ParseMAC(o.MAC); !ok || m != o.MAC {
			t.Fatalf("MAC %q", o.MAC)
		}
		if o.BSSID != "" {
			if b, ok := telemetry.ParseMAC(o.BSSID); !ok || b != o.BSSID {
				t.Fatalf("BSSID %q", o.BSSID)
			}
		}
		if o.Kind == DHCPAck && !o.IP.Is4() {
			t.Fatalf("ACK without an address: %+v", o)
		}
		if o.Reason < 0 || o.Reason > 65535 || !strings.Contains(text, o.Interface) {
			t.Fatalf("%+v", o)
		}
	})
}

// FuzzAssemble feeds any lines, from three sources of two owners, some
// with whole-second timestamps, to an assembler with small limits: every
// event it makes is one ingest takes, and it tracks no more clients than
// allowed.
func FuzzAssemble(f *testing.F) {
	f.Add([]byte("hostapd wlan0: STA 02:00:00:00:01:00 IEEE 802.11: associated (aid 1)\n" +
		"hostapd wlan0: AP-STA-CONNECTED 02:00:00:00:01:00\n" +
		"+dnsmasq-dhcp DHCPACK(br-lan) 10.66.0.5 02:00:00:00:01:00\n" +
		"hostapd wlan0: AP-STA-POSSIBLE-PSK-MISMATCH 02:00:00:00:01:01\n" +
		"+dhcpd DHCPNAK on 10.1.2.3 to 2:0:0:0:1:1 via eth0\n" +
		"*dnsmasq-dhcp DHCPNAK(br-lan) 10.66.0.5 02:00:00:00:01:00\n"))
	f.Fuzz(func(t *testing.T, script []byte) {
		var (
			events []ClientEvent
			clk    = &clock{t: t0}
		)
		a := &Assembler{Now: clk.Now, MaxClients: 4, BatchSize: 3, PendingTimeout: time.Second, StateTimeout: 2 * time.Second,
			Owner: func(src netip.Addr) int64 {
				if src == ap2 {
					return 2
				}
				return 1
			},
			Sink: SinkFunc(func(_ context.Context, _ netip.Addr, e []ClientEvent) error {
				events = append(events, e...)
				return nil
			})}
		for i, l := range strings.Split(string(script), "\n") {
			src := ap
			if strings.HasPrefix(l, "+") {
				src, l = router, l[1:]
			} else if strings.HasPrefix(l, "*") {
				src, l = ap2, l[1:]
			}
			program, text, _ := strings.Cut(l, " ")
			clk.set(t0.Add(time.Duration(i) * 300 * time.Millisecond))
			at, whole := clk.Now(), i%2 == 0
			if whole {
				at = at.Truncate(time.Second)
			}
			a.Observe(context.Background(), src, Message{Program: program, Text: text, Time: at, WholeSeconds: whole})
			a.Tick(context.Background())
			if n := a.Stats().Clients; n > 4 {
				t.Fatalf("%d clients tracked", n)
			}
			checkLists(t, a)
		}
		// Pending attempts end, then their clients are forgotten.
		for range 2 {
			clk.set(clk.Now().Add(time.Hour))
			a.Tick(context.Background())
		}
		a.Flush(context.Background())
		if n := a.Stats().Clients; n != 0 {
			t.Fatalf("%d clients left after two hours", n)
		}
		checkLists(t, a)
		if n := len(a.latest); n != 0 {
			t.Fatalf("%d latest associations left after two hours", n)
		}
		for _, e := range events {
			e.BSSID, e.Channel = "02:AA:00:00:00:01", 6
			raw, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := telemetry.ParseEvent(raw, t0.Add(2*time.Hour)); err != nil {
				t.Fatalf("ingest refuses %s: %v", raw, err)
			}
		}
	})
}

// checkLists checks that the pending and ended lists hold every client
// tracked once, each in the list it says, in order of touch, with their
// links both ways.
func checkLists(t *testing.T, a *Assembler) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, l := range []*clientList{&a.pending, &a.ended} {
		var prev *client
		for c := l.front; c != nil; prev, c = c, c.next {
			if c.prev != prev || c.ended != (l == &a.ended) || a.clients[c.key] != c {
				t.Fatalf("client %+v out of place in its list", c.key)
			}
			if prev != nil && prev.touched > c.touched {
				t.Fatalf("client %+v touched before the one ahead of it", c.key)
			}
			if n++; n > len(a.clients) {
				t.Fatal("lists hold more clients than are tracked")
			}
		}
		if l.back != prev {
			t.Fatal("a list's back is not its last client")
		}
	}
	if n != len(a.clients) {
		t.Fatalf("lists hold %d clients, %d tracked", n, len(a.clients))
	}
}
