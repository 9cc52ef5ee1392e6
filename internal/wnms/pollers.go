package wnms

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// The kinds of poller.
const (
	// PollerUbus polls an OpenWrt AP's rpcd over HTTP (JSON-RPC), and
	// follows its hostapd events through uhttpd.
	PollerUbus = "ubus"
	// PollerPrometheus scrapes an AP's Prometheus node exporter with its
	// Wi-Fi collectors.
	PollerPrometheus = "prometheus"
)

// Limits of a poller.
const (
	MaxPollers             = 2000
	DefaultPollSeconds     = 30
	MinPollSeconds         = 5
	MaxPollSeconds         = 3600
	maxPollerURL           = 512
	maxPollerUser          = 64
	MaxPollerPassword      = 128
	fingerprintHexChars    = 64 // SHA-256
	maxFingerprintWithSeps = fingerprintHexChars + 31
)

// Poller is an AP that wnms asks for its radio data, rather than one
// that sends it: its kind (PollerUbus, PollerPrometheus), where it
// answers, the credentials it takes (the password kept in clear, since
// wnms must send it, and leaving only masked), the SHA-256 fingerprint of
// the certificate it presents over https (APs carry self-signed ones),
// where what it reports is placed (its APs lie at or below LocationID),
// and how often it is asked (0: DefaultPollSeconds).
type Poller struct {
	Name            string     `json:"name"`
	Kind            string     `json:"kind"`
	URL             string     `json:"url"`
	Username        string     `json:"username"`
	Password        string     `json:"password"`
	TLSFingerprint  string     `json:"tlsFingerprint"`
	LocationID      LocationID `json:"locationId"`
	IntervalSeconds int        `json:"intervalSeconds"`
}

// Interval is how often the poller is asked, in seconds.
func (p Poller) Interval() int {
	if p.IntervalSeconds == 0 {
		return DefaultPollSeconds
	}
	return p.IntervalSeconds
}

// Fingerprint is the pinned certificate's SHA-256 (nil: none pinned).
func (p Poller) Fingerprint() []byte {
	if p.TLSFingerprint == "" {
		return nil
	}
	b, _ := parseFingerprint(p.TLSFingerprint)
	return b
}

// parseFingerprint reads 64 hex digits, with ':' or ' ' between pairs
// allowed, as tools print them.
func parseFingerprint(v string) ([]byte, error) {
	if len(v) > maxFingerprintWithSeps {
		return nil, fmt.Errorf("too long")
	}
	h := strings.NewReplacer(":", "", " ", "").Replace(v)
	if len(h) != fingerprintHexChars {
		return nil, fmt.Errorf("64 hex digits (SHA-256)")
	}
	return hex.DecodeString(h)
}

// PollerAddressRefused reports why a poller may not be sent to a:
// link-local and cloud metadata addresses are refused, while private and
// loopback ones, where APs live, are allowed ("" then).
func PollerAddressRefused(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return "a link-local address"
	case a == netip.AddrFrom4([4]byte{100, 100, 100, 200}) || a == netip.MustParseAddr("fd00:ec2::254"):
		return "a cloud metadata address"
	case a.IsMulticast() || a.IsUnspecified():
		return "not a unicast address"
	}
	return ""
}

// checkPoller reports the first problem of poller i.
func checkPoller(i int, p *Poller) error {
	f := fmt.Sprintf("pollers[%d]", i)
	if err := CheckText(f+".name", p.Name, 1, maxSourceName); err != nil {
		return err
	}
	if p.Kind != PollerUbus && p.Kind != PollerPrometheus {
		return Invalid(f+".kind", "%q or %q", PollerUbus, PollerPrometheus)
	}
	if len(p.URL) > maxPollerURL {
		return Invalid(f+".url", "at most %d octets", maxPollerURL)
	}
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return Invalid(f+".url", "an http or https URL without credentials, such as http://10.0.0.2/ubus")
	}
	if a, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil {
		if why := PollerAddressRefused(a); why != "" {
			return Invalid(f+".url", "%s is %s", a, why)
		}
	}
	if err := CheckText(f+".username", p.Username, 0, maxPollerUser); err != nil {
		return err
	}
	if len(p.Password) > MaxPollerPassword {
		return Invalid(f+".password", "at most %d octets", MaxPollerPassword)
	}
	if p.Kind == PollerUbus && p.Username == "" {
		return Invalid(f+".username", "required: the rpcd user the poller logs in as")
	}
	if p.TLSFingerprint != "" {
		if u.Scheme != "https" {
			return Invalid(f+".tlsFingerprint", "only with an https url")
		}
		if _, err := parseFingerprint(p.TLSFingerprint); err != nil {
			return Invalid(f+".tlsFingerprint", "the certificate's SHA-256: %s", err)
		}
	}
	if p.LocationID.Type != LocalLocationID || p.LocationID.ChildID != nil {
		return Invalid(f+".locationId", "a %s of this server", LocalLocationID)
	}
	if p.IntervalSeconds != 0 && (p.IntervalSeconds < MinPollSeconds || p.IntervalSeconds > MaxPollSeconds) {
		return Invalid(f+".intervalSeconds", "%d to %d (0: %d)", MinPollSeconds, MaxPollSeconds, DefaultPollSeconds)
	}
	return nil
}
