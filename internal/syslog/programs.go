package syslog

import (
	"net/netip"
	"strconv"
	"strings"
)

// Kind is what a program's log line says happened to a client.
type Kind uint8

// The kinds of observation the program parsers make.
const (
	KindNone Kind = iota
	// hostapd
	Associated    // "STA <mac> IEEE 802.11: associated"
	Authorized    // "AP-STA-CONNECTED <mac>": the port is open (keys done, or an open network)
	KeyHandshake  // "STA <mac> WPA: pairwise key handshake completed", "EAPOL-4WAY-HS-COMPLETED <mac>"
	EAPSuccess    // "STA <mac> IEEE 802.1X: authenticated - EAP type: ..."
	Disconnected  // "IEEE 802.11: disassociated|deauthenticated", "AP-STA-DISCONNECTED <mac>"
	PSKMismatch   // "AP-STA-POSSIBLE-PSK-MISMATCH <mac>", "WPA: invalid MIC in msg 2/4 ...", "WPA: ... Retry limit ... reached"
	KeyTimeout    // "STA <mac> WPA: EAPOL-Key timeout" (hostapd retries; a failure only if the keys never complete)
	EAPFailure    // "STA <mac> IEEE 802.1X: authentication failed - EAP type: ..."
	AssocRejected // "AP-REJECTED-BLOCKED-STA <mac>", "IEEE 802.11: Station tried to associate ...", ...
	APFull        // "AP-REJECTED-MAX-STA <mac>", "IEEE 802.11: No room for more AIDs"
	// dnsmasq and ISC dhcpd
	DHCPExchange // DHCPDISCOVER, DHCPOFFER, DHCPREQUEST without an error
	DHCPAck      // DHCPACK with the address
	DHCPNak      // DHCPNAK
	DHCPNoLease  // dnsmasq "no address available", dhcpd "no free leases"
	// hostapd again
	PortStart // "STA <mac> IEEE 802.1X: start authentication": a wired 802.1X port (driver=wired) has no association
)

var kindNames = [...]string{"none", "associated", "authorized", "key_handshake", "eap_success", "disconnected",
	"psk_mismatch", "key_timeout", "eap_failure", "assoc_rejected", "ap_full", "dhcp_exchange", "dhcp_ack",
	"dhcp_nak", "dhcp_no_lease", "port_start"}

// String is the kind's name, for logs and tests.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind" + strconv.Itoa(int(k))
}

// Observation is what one log line of hostapd or a DHCP server says of one
// client.
type Observation struct {
	Kind Kind
	MAC  string // the client, upper case and colon-separated as wnms stores it
	// Interface is hostapd's interface (the BSS) or the DHCP server's
	// interface, "" when the line names none.
	Interface string
	BSSID     string     // the BSSID, when the line names one ("bssid=..."), in MAC's form
	IP        netip.Addr // the address a DHCP line names
	Reason    int        // an 802.11 reason code the line gives ("reason=N"), else 0
	// HostName is the host name a DHCPACK line gives the client (the one
	// it sent its server), "" when none or not a host name.
	HostName string
}

// maxHostName is the longest DHCP host name kept (a full domain name).
const maxHostName = 253

// hostName returns s when it is a host name as DHCP servers log them
// (letters, digits, '-', '_' and '.'), else "".
func hostName(s string) string {
	if s == "" || len(s) > maxHostName {
		return ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return ""
		}
	}
	return s
}

// Programs whose lines ParseLine reads, as ProgramOf names them.
const (
	ProgramHostapd = "hostapd"
	ProgramDnsmasq = "dnsmasq"
	ProgramDHCPD   = "dhcpd"
)

// ProgramOf returns the parser's name for a syslog program (tag or
// APP-NAME): ProgramHostapd, ProgramDnsmasq (for "dnsmasq" and
// "dnsmasq-dhcp"), ProgramDHCPD, or "" for a program it does not read.
func ProgramOf(program string) string {
	switch strings.ToLower(program) {
	case "hostapd":
		return ProgramHostapd
	case "dnsmasq", "dnsmasq-dhcp":
		return ProgramDnsmasq
	case "dhcpd":
		return ProgramDHCPD
	}
	return ""
}

// ParseLine reads the text of a message of program (a ProgramOf name) and
// reports whether it says something of a client.
func ParseLine(program, text string) (Observation, bool) {
	switch program {
	case ProgramHostapd:
		return ParseHostapd(text)
	case ProgramDnsmasq:
		return ParseDnsmasq(text)
	case ProgramDHCPD:
		return ParseDHCPD(text)
	}
	return Observation{}, false
}

// ParseHostapd reads a hostapd line: its logger lines ("[<ifname>: ]STA
// <mac> <module>: <text>") and its control events ("[<ifname>: ]AP-STA-...
// <mac> [key=value ...]"), as hostapd writes them to syslog.
func ParseHostapd(text string) (Observation, bool) {
	var o Observation
	s := text
	// The interface prefix: "wlan0: " (one word, before any space).
	if i := strings.Index(s, ": "); i > 0 && !strings.ContainsAny(s[:i], " \t") {
		o.Interface, s = s[:i], s[i+2:]
	}
	word, rest, _ := strings.Cut(s, " ")
	if word == "STA" {
		macTok, rest, _ := strings.Cut(rest, " ")
		mac, ok := normMAC(macTok)
		if !ok {
			return Observation{}, false
		}
		o.MAC = mac
		module, msg, ok := strings.Cut(rest, ": ")
		if !ok {
			return Observation{}, false
		}
		o.Kind = hostapdModuleKind(module, msg)
		if o.Kind == KindNone {
			return Observation{}, false
		}
		o.BSSID, o.Reason = keyValues(msg)
		return o, true
	}
	switch word {
	case "AP-STA-CONNECTED":
		o.Kind = Authorized
	case "AP-STA-DISCONNECTED":
		o.Kind = Disconnected
	case "AP-STA-POSSIBLE-PSK-MISMATCH":
		o.Kind = PSKMismatch
	case "EAPOL-4WAY-HS-COMPLETED":
		o.Kind = KeyHandshake
	case "AP-REJECTED-MAX-STA":
		o.Kind = APFull
	case "AP-REJECTED-BLOCKED-STA":
		o.Kind = AssocRejected
	default:
		return Observation{}, false
	}
	macTok, rest, _ := strings.Cut(rest, " ")
	mac, ok := normMAC(macTok)
	if !ok {
		return Observation{}, false
	}
	o.MAC = mac
	o.BSSID, o.Reason = keyValues(rest)
	return o, true
}

// hostapdModuleKind maps the text of a hostapd logger line of module.
func hostapdModuleKind(module, msg string) Kind {
	switch module {
	case "IEEE 802.11":
		switch {
		case strings.HasPrefix(msg, "associated"), strings.HasPrefix(msg, "reassociated"):
			return Associated
		case strings.HasPrefix(msg, "disassociated"), strings.HasPrefix(msg, "deauthenticated"):
			return Disconnected
		case strings.HasPrefix(msg, "No room for more AIDs"):
			return APFull
		case strings.HasPrefix(msg, "Station tried to associate"),
			strings.HasPrefix(msg, "Station tried to reassociate"),
			strings.HasPrefix(msg, "Could not add STA to kernel driver"),
			strings.Contains(msg, "association rejected"):
			return AssocRejected
		}
	case "WPA":
		switch {
		case strings.HasPrefix(msg, "pairwise key handshake completed"):
			return KeyHandshake
		case strings.HasPrefix(msg, "invalid MIC in msg 2/4"),
			strings.Contains(msg, "Retry limit") && strings.Contains(msg, "reached"):
			return PSKMismatch
		case strings.HasPrefix(msg, "EAPOL-Key timeout"):
			return KeyTimeout
		}
	case "IEEE 802.1X":
		switch {
		case strings.HasPrefix(msg, "authenticated"):
			return EAPSuccess
		case strings.HasPrefix(msg, "authentication failed"):
			return EAPFailure
		case strings.HasPrefix(msg, "start authentication"):
			return PortStart
		}
	}
	return KindNone
}

// keyValues finds "bssid=<mac>" (or "BSSID <mac>") and "reason=<n>" in s.
func keyValues(s string) (bssid string, reason int) {
	fields := strings.Fields(s)
	for i, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			if strings.EqualFold(f, "bssid") && i+1 < len(fields) {
				k, v, ok = "bssid", fields[i+1], true
			} else {
				continue
			}
		}
		v = strings.Trim(v, ",;()")
		switch strings.ToLower(k) {
		case "bssid":
			if b, ok := normMAC(v); ok && bssid == "" {
				bssid = b
			}
		case "reason", "reason_code":
			if n, err := strconv.Atoi(v); err == nil && n > 0 && n < 65536 && reason == 0 {
				reason = n
			}
		}
	}
	return bssid, reason
}

// ParseDnsmasq reads a dnsmasq DHCPv4 line: "[<xid> ]<TYPE>(<if>) [<ip>
// ]<mac> [<name or error>]", as dnsmasq logs them (the xid with
// --log-dhcp).
func ParseDnsmasq(text string) (Observation, bool) {
	s := text
	if w, rest, ok := strings.Cut(s, " "); ok && w != "" && strings.Trim(w, "0123456789") == "" {
		s = rest
	}
	open := strings.IndexByte(s, '(')
	shut := strings.Index(s, ") ")
	if open < 0 || shut < open {
		return Observation{}, false
	}
	typ := s[:open]
	o := Observation{Interface: s[open+1 : shut]}
	fields := strings.Fields(s[shut+2:])
	if len(fields) == 0 {
		return Observation{}, false
	}
	if ip, err := netip.ParseAddr(fields[0]); err == nil && ip.Is4() {
		o.IP, fields = ip, fields[1:]
	}
	if len(fields) == 0 {
		return Observation{}, false
	}
	mac, ok := normMAC(fields[0])
	if !ok {
		return Observation{}, false
	}
	o.MAC = mac
	tail := strings.Join(fields[1:], " ")
	switch typ {
	case "DHCPDISCOVER", "DHCPOFFER", "DHCPREQUEST":
		o.Kind = DHCPExchange
		if strings.Contains(tail, "no address available") {
			o.Kind = DHCPNoLease
		}
	case "DHCPACK":
		if !o.IP.IsValid() {
			return Observation{}, false
		}
		o.Kind = DHCPAck
		if len(fields) > 1 {
			o.HostName = hostName(fields[1])
		}
	case "DHCPNAK":
		o.Kind = DHCPNak
	default:
		return Observation{}, false
	}
	return o, true
}

// ParseDHCPD reads an ISC dhcpd line: "DHCPACK on <ip> to <mac> [(<name>)]
// via <if>", "DHCPNAK on <ip> to <mac> via <if>", "DHCPDISCOVER from <mac>
// via <if>[: network <net>: no free leases]", DHCPOFFER and DHCPREQUEST.
// dhcpd writes octets without leading zeros ("0:c:29:..."); they are read.
func ParseDHCPD(text string) (Observation, bool) {
	fields := strings.Fields(text)
	if len(fields) < 3 {
		return Observation{}, false
	}
	var o Observation
	switch fields[0] {
	case "DHCPDISCOVER", "DHCPOFFER", "DHCPREQUEST":
		o.Kind = DHCPExchange
		if strings.Contains(text, "no free leases") {
			o.Kind = DHCPNoLease
		}
	case "DHCPACK":
		o.Kind = DHCPAck
	case "DHCPNAK":
		o.Kind = DHCPNak
	default:
		return Observation{}, false
	}
	for i := 1; i+1 < len(fields); i++ {
		v := strings.TrimRight(fields[i+1], ":.,;")
		switch fields[i] {
		case "on", "for":
			if ip, err := netip.ParseAddr(v); err == nil && ip.Is4() && !o.IP.IsValid() {
				o.IP = ip
			}
		case "to", "from":
			if mac, ok := normMAC(v); ok && o.MAC == "" {
				o.MAC = mac
				// "to <mac> (<name>)": the client's host name.
				if n := fields[i+2:]; o.Kind == DHCPAck && len(n) > 0 && len(n[0]) > 2 && n[0][0] == '(' && n[0][len(n[0])-1] == ')' {
					o.HostName = hostName(n[0][1 : len(n[0])-1])
				}
			}
		case "via":
			if o.Interface == "" {
				o.Interface = v
			}
		}
	}
	// "DHCPACK to <ip> (<mac>) via <if>" answers a DHCPINFORM: no lease.
	if o.MAC == "" || (o.Kind == DHCPAck && !o.IP.IsValid()) {
		return Observation{}, false
	}
	return o, true
}

// normMAC reads six octets of one or two hex digits separated by ':' or
// '-' and returns them as wnms stores a MAC: "0A:1B:2C:3D:4E:5F".
func normMAC(s string) (string, bool) {
	if len(s) < 11 || len(s) > 17 {
		return "", false
	}
	var out [17]byte
	n, octet, digits := 0, 0, 0
	flush := func() bool {
		if digits == 0 || n == 6 {
			return false
		}
		const hex = "0123456789ABCDEF"
		if n > 0 {
			out[n*3-1] = ':'
		}
		out[n*3], out[n*3+1] = hex[octet>>4], hex[octet&15]
		n, octet, digits = n+1, 0, 0
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		var v int
		switch {
		case c >= '0' && c <= '9':
			v = int(c - '0')
		case c >= 'a' && c <= 'f':
			v = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v = int(c-'A') + 10
		case c == ':' || c == '-':
			if !flush() {
				return "", false
			}
			continue
		default:
			return "", false
		}
		if digits == 2 {
			return "", false
		}
		octet, digits = octet<<4|v, digits+1
	}
	if !flush() || n != 6 {
		return "", false
	}
	return string(out[:]), true
}
