// Package telemetry is the volume path of wnms: what APs and clients
// report (AP heartbeats now; client events and samples next), the reads
// over it, and the device list filters of the vendor's filter language.
// It stores through a narrow Store and serves HTTP through the listener
// kit; the rules of each call are in docs/api.md §15.
package telemetry

import (
	"strings"
)

// ParseMAC reads a MAC address in any case, with ':' or '-' between the
// six octets ("00:1a:2B-3c:4d:5e" too), and returns it in the one form
// wnms stores and answers: upper case, colon-separated.
func ParseMAC(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) != 17 {
		return "", false
	}
	b := []byte(strings.ToUpper(s))
	for i, c := range b {
		if i%3 == 2 {
			if c != ':' && c != '-' {
				return "", false
			}
			b[i] = ':'
			continue
		}
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'F') {
			return "", false
		}
	}
	return string(b), true
}

// macBits is the 48 bits of a MAC in ParseMAC's form ("00:1A:2B:3C:4D:5E"),
// for keys that should not keep the text; false for any other text.
func macBits(m string) (uint64, bool) {
	if len(m) != 17 {
		return 0, false
	}
	var v uint64
	for i := 0; i < 17; i++ {
		c := m[i]
		if i%3 == 2 {
			if c != ':' {
				return 0, false
			}
			continue
		}
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}
