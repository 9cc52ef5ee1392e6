package syslog

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	mac1 = "78:02:F8:58:69:2A"
	mac2 = "00:0C:29:01:02:03"
)

func TestParseLine(t *testing.T) {
	ip := netip.MustParseAddr
	tests := []struct {
		program, text string
		want          Observation
	}{
		// hostapd, as OpenWrt and Debian log it (the tag stripped).
		{"hostapd", "wlan1: STA 78:02:f8:58:69:2a IEEE 802.11: associated (aid 1)",
			Observation{Kind: Associated, MAC: mac1, Interface: "wlan1"}},
		{"hostapd", "STA 78:02:f8:58:69:2a IEEE 802.11: associated",
			Observation{Kind: Associated, MAC: mac1}},
		{"hostapd", "wlan0: STA 78:02:f8:58:69:2a IEEE 802.11: reassociated (aid 3) bssid=02:11:22:33:44:55",
			Observation{Kind: Associated, MAC: mac1, Interface: "wlan0", BSSID: "02:11:22:33:44:55"}},
		{"hostapd", "wlan0: AP-STA-CONNECTED 78:02:f8:58:69:2a auth_alg=open",
			Observation{Kind: Authorized, MAC: mac1, Interface: "wlan0"}},
		{"hostapd", "wlan0: STA 78:02:f8:58:69:2a WPA: pairwise key handshake completed (RSN)",
			Observation{Kind: KeyHandshake, MAC: mac1, Interface: "wlan0"}},
		{"hostapd", "wlan0: EAPOL-4WAY-HS-COMPLETED 78:02:f8:58:69:2a",
			Observation{Kind: KeyHandshake, MAC: mac1, Interface: "wlan0"}},
		{"hostapd", "veth1: STA 78:02:f8:58:69:2a IEEE 802.1X: authenticated - EAP type: 25 (PEAP)",
			Observation{Kind: EAPSuccess, MAC: mac1, Interface: "veth1"}},
		{"hostapd", "veth1: STA 78:02:f8:58:69:2a IEEE 802.1X: authentication failed - EAP type: 13 (TLS)",
			Observation{Kind: EAPFailure, MAC: mac1, Interface: "veth1"}},
		{"hostapd", "wlan0: AP-STA-POSSIBLE-PSK-MISMATCH 78:02:f8:58:69:2a",
			Observation{Kind: PSKMismatch, MAC: mac1, Interface: "wlan0"}},
		{"hostapd", "ath0: STA 78:02:f8:58:69:2a WPA: invalid MIC in msg 2/4 of 4-Way Handshake",
			Observation{Kind: PSKMismatch, MAC: mac1, Interface: "ath0"}},
		{"hostapd", "wlan0: STA 78:02:f8:58:69:2a WPA: PTKSTART: Retry limit 4 reached",
			Observation{Kind: PSKMismatch, MAC: mac1, Interface: "wlan0"}},
		{"hostapd", "wlan0: STA 78:02:f8:58:69:2a WPA: EAPOL-Key timeout",
			Observation{Kind: KeyTimeout, MAC: mac1, Interface: "wlan0"}},
		{"hostapd", "wlan0: STA 78:02:f8:58:69:2a IEEE 802.11: disassociated",
			Observation{Kind: Disconnected, MAC: mac1, Interface: "wlan0"}},
		{"hostapd", "wlan0: STA 78:02:f8:58:69:2a IEEE 802.11: deauthenticated due to local deauth request",
			Observation{Kind: Disconnected, MAC: mac1, Interface: "wlan0"}},
		{"hostapd", "wlan0: STA 78:02:f8:58:69:2a IEEE 802.11: disassociated due to inactivity reason=4",
			Observation{Kind: Disconnected, MAC: mac1, Interface: "wlan0", Reason: 4}},
		{"hostapd", "wlan0: AP-STA-DISCONNECTED 78:02:f8:58:69:2a",
			Observation{Kind: Disconnected, MAC: mac1, Interface: "wlan0"}},
		{"hostapd", "wlan0: AP-REJECTED-MAX-STA 78:02:f8:58:69:2a",
			Observation{Kind: APFull, MAC: mac1, Interface: "wlan0"}},
		{"hostapd", "wlan0: STA 78:02:f8:58:69:2a IEEE 802.11: No room for more AIDs",
			Observation{Kind: APFull, MAC: mac1, Interface: "wlan0"}},
		{"hostapd", "wlan0: AP-REJECTED-BLOCKED-STA 78:02:f8:58:69:2a",
			Observation{Kind: AssocRejected, MAC: mac1, Interface: "wlan0"}},
		{"hostapd", "wlan2: STA 78:02:f8:58:69:2a IEEE 802.11: Could not add STA to kernel driver",
			Observation{Kind: AssocRejected, MAC: mac1, Interface: "wlan2"}},
		{"hostapd", "wlan0: STA 78:02:f8:58:69:2a IEEE 802.11: Station tried to associate with unknown SSID 'x'",
			Observation{Kind: AssocRejected, MAC: mac1, Interface: "wlan0"}},
		// dnsmasq, with and without --log-dhcp's transaction id.
		{"dnsmasq-dhcp", "DHCPDISCOVER(br-lan) 78:02:f8:58:69:2a ",
			Observation{Kind: DHCPExchange, MAC: mac1, Interface: "br-lan"}},
		{"dnsmasq-dhcp", "DHCPOFFER(br-lan) 10.66.0.136 78:02:f8:58:69:2a ",
			Observation{Kind: DHCPExchange, MAC: mac1, Interface: "br-lan", IP: ip("10.66.0.136")}},
		{"dnsmasq-dhcp", "3173129068 DHCPREQUEST(br-lan) 10.66.0.136 78:02:f8:58:69:2a ",
			Observation{Kind: DHCPExchange, MAC: mac1, Interface: "br-lan", IP: ip("10.66.0.136")}},
		{"dnsmasq-dhcp", "DHCPACK(br-lan) 10.66.0.136 78:02:f8:58:69:2a android-5c1e",
			Observation{Kind: DHCPAck, MAC: mac1, Interface: "br-lan", IP: ip("10.66.0.136"), HostName: "android-5c1e"}},
		// A name that is no host name is left out.
		{"dnsmasq-dhcp", "DHCPACK(br-lan) 10.66.0.136 78:02:f8:58:69:2a <script>",
			Observation{Kind: DHCPAck, MAC: mac1, Interface: "br-lan", IP: ip("10.66.0.136")}},
		{"dnsmasq", "3173129068 DHCPACK(veth0) 10.66.0.136 78:02:f8:58:69:2a",
			Observation{Kind: DHCPAck, MAC: mac1, Interface: "veth0", IP: ip("10.66.0.136")}},
		{"dnsmasq-dhcp", "DHCPNAK(br-lan) 192.168.1.50 78:02:f8:58:69:2a wrong address",
			Observation{Kind: DHCPNak, MAC: mac1, Interface: "br-lan", IP: ip("192.168.1.50")}},
		{"dnsmasq-dhcp", "DHCPDISCOVER(br-lan) 78:02:f8:58:69:2a no address available",
			Observation{Kind: DHCPNoLease, MAC: mac1, Interface: "br-lan"}},
		// ISC dhcpd, whose MACs lack leading zeros.
		{"dhcpd", "DHCPDISCOVER from 0:c:29:1:2:3 via eth0",
			Observation{Kind: DHCPExchange, MAC: mac2, Interface: "eth0"}},
		{"dhcpd", "DHCPOFFER on 10.1.2.3 to 0:c:29:1:2:3 (pc) via eth0",
			Observation{Kind: DHCPExchange, MAC: mac2, Interface: "eth0", IP: ip("10.1.2.3")}},
		{"dhcpd", "DHCPREQUEST for 10.1.2.3 (10.1.2.1) from 0:c:29:1:2:3 (pc) via eth0",
			Observation{Kind: DHCPExchange, MAC: mac2, Interface: "eth0", IP: ip("10.1.2.3")}},
		{"dhcpd", "DHCPACK on 10.1.2.3 to 00:0c:29:01:02:03 (pc) via eth0",
			Observation{Kind: DHCPAck, MAC: mac2, Interface: "eth0", IP: ip("10.1.2.3"), HostName: "pc"}},
		{"dhcpd", "DHCPACK on 10.1.2.3 to 0:c:29:1:2:3 via 10.9.0.1",
			Observation{Kind: DHCPAck, MAC: mac2, Interface: "10.9.0.1", IP: ip("10.1.2.3")}},
		{"dhcpd", "DHCPNAK on 10.1.2.3 to 0:c:29:1:2:3 via eth0",
			Observation{Kind: DHCPNak, MAC: mac2, Interface: "eth0", IP: ip("10.1.2.3")}},
		{"dhcpd", "DHCPDISCOVER from 0:c:29:1:2:3 via eth0: network 10.1.2.0/24: no free leases",
			Observation{Kind: DHCPNoLease, MAC: mac2, Interface: "eth0"}},
	}
	for _, tt := range tests {
		got, ok := ParseLine(ProgramOf(tt.program), tt.text)
		if !ok {
			t.Errorf("%s %q: not parsed", tt.program, tt.text)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
			t.Errorf("%s %q (-want +got):\n%s", tt.program, tt.text, diff)
		}
	}
}

// Lines that say nothing of a client's connection, or are malformed, are
// not parsed (the caller counts them by program).
func TestParseLineUnparsed(t *testing.T) {
	for _, tt := range []struct{ program, text string }{
		{"hostapd", "wlan0: AP-ENABLED"},
		{"hostapd", "wlan0: STA 78:02:f8:58:69:2a IEEE 802.11: authenticated"},
		{"hostapd", "wlan0: STA 78:02:f8:58:69:2a RADIUS: starting accounting session 5991CC2F-00000000"},
		{"hostapd", "wlan0: STA 78:02:f8:58:69:2a WPA: group key handshake completed (RSN)"},
		{"hostapd", "wlan0: STA 78:02:f8:58:69:zz IEEE 802.11: associated (aid 1)"},
		{"hostapd", "wlan0: STA 78:02:f8:58:69:2a IEEE 802.11 associated"},
		{"hostapd", "wlan0: AP-STA-CONNECTED"},
		{"hostapd", "nl80211: kernel reports: Match already configured"},
		{"dnsmasq-dhcp", "DHCPSOLICIT(br-lan) 00:01:00:01:2a:bb:cc:dd:78:02:f8:58:69:2a"},
		{"dnsmasq-dhcp", "3173129068 tags: bios, br-lan"},
		{"dnsmasq-dhcp", "DHCPACK(br-lan) 78:02:f8:58:69:2a"},
		{"dnsmasq-dhcp", "DHCPRELEASE(br-lan) 10.66.0.136 78:02:f8:58:69:2a"},
		{"dnsmasq", "query[A] example.org from 10.66.0.136"},
		{"dhcpd", "DHCPACK to 10.1.2.3 (0:c:29:1:2:3) via eth0"},
		{"dhcpd", "DHCPRELEASE of 10.1.2.3 from 0:c:29:1:2:3 via eth0 (found)"},
		{"dhcpd", "Wrote 12 leases to leases file."},
		{"dhcpd", "DHCPACK on 10.1.2.3 to 0:c:29:1:2 via eth0"},
		{"sshd", "wlan0: STA 78:02:f8:58:69:2a IEEE 802.11: associated"},
	} {
		if got, ok := ParseLine(ProgramOf(tt.program), tt.text); ok {
			t.Errorf("%s %q: parsed as %+v", tt.program, tt.text, got)
		}
	}
}

func TestNormMAC(t *testing.T) {
	for in, want := range map[string]string{
		"aa:bb:cc:dd:ee:ff": "AA:BB:CC:DD:EE:FF", "AA-BB-CC-DD-EE-FF": "AA:BB:CC:DD:EE:FF",
		"0:c:29:1:2:3": "00:0C:29:01:02:03", "0:0:0:0:0:0": "00:00:00:00:00:00",
		"aa:bb:cc:dd:ee": "", "aa:bb:cc:dd:ee:ff:00": "", "aaa:bb:cc:dd:ee:f": "", "aa::cc:dd:ee:ff:0": "",
		"aa:bb:cc:dd:ee:fg": "", "aa:bb:cc:dd:ee:ff:": "", ":aa:bb:cc:dd:ee:f": "",
	} {
		got, ok := normMAC(in)
		if got != want || ok != (want != "") {
			t.Errorf("normMAC(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
