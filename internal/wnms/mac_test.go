package wnms

import "testing"

// MACBits reads the stored form only, into the MAC's 48 bits.
func TestMACBits(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"00:1A:2B:3C:4D:5E", 0x001A2B3C4D5E, true},
		{"FF:FF:FF:FF:FF:FF", 0xFFFFFFFFFFFF, true},
		{"00:00:00:00:00:00", 0, true},
		{"00:1a:2b:3c:4d:5e", 0, false}, // not the stored form
		{"00-1A-2B-3C-4D-5E", 0, false},
		{"00:1A:2B:3C:4D", 0, false},
		{"00:1A:2B:3C:4D:5G", 0, false},
		{"00:1A:2B:3C:4D:5E:", 0, false},
		{"", 0, false},
	} {
		got, ok := MACBits(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("MACBits(%q) = %#x %v, want %#x %v", tc.in, got, ok, tc.want, tc.ok)
		}
		if ok && MACText(got) != tc.in {
			t.Errorf("MACText(%#x) = %q, want %q", got, MACText(got), tc.in)
		}
	}
}
