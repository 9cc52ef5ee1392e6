package syslog

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// now is the receive time of the parser tests: 25 November 2026.
var now = time.Date(2026, 11, 25, 3, 40, 0, 0, time.UTC)

func TestParse(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   string
		loc  *time.Location
		now  time.Time // the package's now if zero
		want Message
	}{{
		name: "logger --rfc3164",
		in:   "<13>Nov 25 03:39:26 vm hostapd: wlan0: STA aa:bb:cc:dd:ee:ff IEEE 802.11: associated (aid 1)",
		want: Message{Facility: 1, Severity: 5, Time: time.Date(2026, 11, 25, 3, 39, 26, 0, time.UTC), WholeSeconds: true, Host: "vm",
			Program: "hostapd", Text: "wlan0: STA aa:bb:cc:dd:ee:ff IEEE 802.11: associated (aid 1)"},
	}, {
		name: "logger --rfc5424 with timeQuality",
		in:   `<13>1 2026-11-25T03:39:26.876634+00:00 vm dnsmasq-dhcp 15190 - [timeQuality tzKnown="1" isSynced="0"] DHCPACK(br-lan) 10.0.0.5 aa:bb:cc:dd:ee:ff phone`,
		want: Message{Facility: 1, Severity: 5, Time: time.Date(2026, 11, 25, 3, 39, 26, 876634000, time.UTC), Host: "vm",
			Program: "dnsmasq-dhcp", PID: "15190", Text: "DHCPACK(br-lan) 10.0.0.5 aa:bb:cc:dd:ee:ff phone", RFC5424: true},
	}, {
		name: "rfc5424 nil values, no SD, BOM",
		in:   "<30>1 - - - - - - \ufeffhello",
		want: Message{Facility: 3, Severity: 6, Text: "hello", RFC5424: true},
	}, {
		name: "rfc5424 escaped SD, two elements, msgid, trailing newline",
		in:   `<165>1 2026-11-25T04:39:26+01:00 ap1.example.org hostapd 77 ID47 [a@1 k="v \"q\" \]x"][b@2 z="1"] wlan0: AP-STA-CONNECTED 00:11:22:33:44:55` + "\n",
		want: Message{Facility: 20, Severity: 5, Time: time.Date(2026, 11, 25, 3, 39, 26, 0, time.UTC), WholeSeconds: true, Host: "ap1.example.org",
			Program: "hostapd", PID: "77", MsgID: "ID47", Text: "wlan0: AP-STA-CONNECTED 00:11:22:33:44:55", RFC5424: true},
	}, {
		name: "rfc5424 without MSG",
		in:   "<14>1 2026-11-25T03:39:26Z host app - - -",
		want: Message{Facility: 1, Severity: 6, Time: time.Date(2026, 11, 25, 3, 39, 26, 0, time.UTC), WholeSeconds: true, Host: "host", Program: "app", RFC5424: true},
	}, {
		name: "OpenWrt logd without hostname, pid",
		in:   "<30>Nov 25 03:39:27 dnsmasq-dhcp[1403]: DHCPDISCOVER(br-lan) 78:02:f8:58:69:2a ",
		want: Message{Facility: 3, Severity: 6, Time: time.Date(2026, 11, 25, 3, 39, 27, 0, time.UTC), WholeSeconds: true, Program: "dnsmasq-dhcp",
			PID: "1403", Text: "DHCPDISCOVER(br-lan) 78:02:f8:58:69:2a "},
	}, {
		name: "busybox syslogd forwarding, space-padded day",
		in:   "<29>Nov  5 23:01:02 OpenWrt hostapd: wlan1: AP-STA-DISCONNECTED 78:02:f8:58:69:2a",
		want: Message{Facility: 3, Severity: 5, Time: time.Date(2026, 11, 5, 23, 1, 2, 0, time.UTC), WholeSeconds: true, Host: "OpenWrt",
			Program: "hostapd", Text: "wlan1: AP-STA-DISCONNECTED 78:02:f8:58:69:2a"},
	}, {
		name: "rsyslog forward format: RFC 3339 in RFC 3164 position",
		in:   "<30>2026-11-25T03:39:26.123456+00:00 gw dhcpd[812]: DHCPACK on 10.1.2.3 to 0:c:29:1:2:3 (pc) via eth0",
		want: Message{Facility: 3, Severity: 6, Time: time.Date(2026, 11, 25, 3, 39, 26, 123456000, time.UTC), Host: "gw",
			Program: "dhcpd", PID: "812", Text: "DHCPACK on 10.1.2.3 to 0:c:29:1:2:3 (pc) via eth0"},
	}, {
		name: "year and milliseconds, local zone",
		in:   "<30>Nov 25 2026 04:39:26.250 ap hostapd: x",
		loc:  berlin,
		want: Message{Facility: 3, Severity: 6, Time: time.Date(2026, 11, 25, 3, 39, 26, 250e6, time.UTC), Host: "ap", Program: "hostapd", Text: "x"},
	}, {
		name: "December line read in January is last year's",
		in:   "<30>Dec 31 23:59:59 ap hostapd: x",
		now:  time.Date(2027, 1, 1, 0, 0, 5, 0, time.UTC),
		want: Message{Facility: 3, Severity: 6, Time: time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC), WholeSeconds: true, Host: "ap", Program: "hostapd", Text: "x"},
	}, {
		name: "January line read on 31 December (sender's clock ahead) is next year's",
		in:   "<30>Jan  1 00:00:01 ap hostapd: x",
		now:  time.Date(2026, 12, 31, 23, 59, 58, 0, time.UTC),
		want: Message{Facility: 3, Severity: 6, Time: time.Date(2027, 1, 1, 0, 0, 1, 0, time.UTC), WholeSeconds: true, Host: "ap", Program: "hostapd", Text: "x"},
	}, {
		name: "no timestamp",
		in:   "<13>hostapd: wlan0: AP-ENABLED",
		want: Message{Facility: 1, Severity: 5, Program: "hostapd", Text: "wlan0: AP-ENABLED"},
	}, {
		name: "no tag",
		in:   "<13>Nov 25 03:39:26 host just some words",
		want: Message{Facility: 1, Severity: 5, Time: time.Date(2026, 11, 25, 3, 39, 26, 0, time.UTC), WholeSeconds: true, Host: "host", Text: "just some words"},
	}, {
		name: "tag[pid] without colon, CRLF and NUL",
		in:   "<13>Nov 25 03:39:26 host dhcpd[1] DHCPNAK on 1.2.3.4 to 00:11:22:33:44:55 via eth0\r\n\x00",
		want: Message{Facility: 1, Severity: 5, Time: time.Date(2026, 11, 25, 3, 39, 26, 0, time.UTC), WholeSeconds: true, Host: "host", Program: "dhcpd", PID: "1",
			Text: "DHCPNAK on 1.2.3.4 to 00:11:22:33:44:55 via eth0"},
	}, {
		name: "IPv6 hostname",
		in:   "<13>Nov 25 03:39:26 2001:db8::1 hostapd: x",
		want: Message{Facility: 1, Severity: 5, Time: time.Date(2026, 11, 25, 3, 39, 26, 0, time.UTC), WholeSeconds: true, Host: "2001:db8::1", Program: "hostapd", Text: "x"},
	}, {
		name: "bad timestamp is text",
		in:   "<13>Foo 25 03:39:26 host: x",
		want: Message{Facility: 1, Severity: 5, Text: "Foo 25 03:39:26 host: x"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := now
			if !tt.now.IsZero() {
				at = tt.now
			}
			got, err := Parse([]byte(tt.in), at, tt.loc)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !got.Time.Equal(tt.want.Time) {
				t.Errorf("Time = %v, want %v", got.Time, tt.want.Time)
			}
			got.Time, tt.want.Time = time.Time{}, time.Time{}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseGarbage(t *testing.T) {
	for _, in := range []string{
		"", "\n", "hello", "<>x", "<13", "<192>Nov 25 03:39:26 host x", "<013>x", "<1x>x", "<99999>x",
		"<13>1 not-a-time host app - - - x", "<13>1 2026-11-25T03:39:26Z host", "<13>1 2026-11-25T03:39:26Z host app - - [unterminated x",
		"<13>1 2026-11-25T03:39:26Z host app - - junk", "<13>1 2026-11-25T03:39:26Z host app - - -junk",
	} {
		if m, err := Parse([]byte(in), now, nil); !errors.Is(err, ErrNotSyslog) {
			t.Errorf("Parse(%q) = %+v, %v; want ErrNotSyslog", in, m, err)
		}
	}
}
