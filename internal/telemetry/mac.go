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
