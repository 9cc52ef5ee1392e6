package wnms_test

import (
	"testing"

	"github.com/wnms/wnms/internal/wnms"
)

// A channel's band and default protocol; channel 0 (a data source's
// record at no known AP) has neither.
func TestBandOfChannel(t *testing.T) {
	for _, tc := range []struct {
		channel        int
		band, protocol string
	}{
		{0, wnms.BandUnknown, "UNKNOWN"},
		{1, wnms.Band24GHz, "BG"},
		{14, wnms.Band24GHz, "BG"},
		{36, wnms.Band5GHz, "A"},
		{196, wnms.Band5GHz, "A"},
	} {
		if b, p := wnms.BandOf(tc.channel), wnms.ProtocolOf(tc.channel); b != tc.band || p != tc.protocol {
			t.Errorf("channel %d: band %q protocol %q, want %q %q", tc.channel, b, p, tc.band, tc.protocol)
		}
	}
}
