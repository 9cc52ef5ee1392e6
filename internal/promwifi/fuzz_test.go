package promwifi

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse feeds Parse arbitrary expositions: it must not panic, must stay
// within its caps, and must only return values that pass its own checks.
// Seeds: testdata/fuzz/FuzzParse and the recordings in testdata.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"openwrt-22.03-x86-wifi-wifi_stations.txt", "openwrt-hostapd-assembled.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := Parse(bytes.NewReader(in))
		if err != nil {
			// Only a read error or the size cap can fail a parse, and the
			// fuzzer's inputs are far below the cap.
			t.Fatalf("Parse: %v", err)
		}
		again, err := Parse(bytes.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(s, again); diff != "" {
			t.Fatalf("Parse is not deterministic (-first +second):\n%s", diff)
		}
		checkSnapshot(t, s)
	})
}

// checkSnapshot checks the invariants the package documents.
func checkSnapshot(t *testing.T, s *Snapshot) {
	t.Helper()
	if len(s.Radios) > MaxRadios || len(s.Stations) > MaxStations {
		t.Fatalf("%d radios, %d stations: over the caps", len(s.Radios), len(s.Stations))
	}
	sk := s.Skipped
	if sk.Malformed < 0 || sk.NoMAC < 0 || sk.NoInterface < 0 || sk.NaN < 0 || sk.OutOfRange < 0 || sk.OverLimit < 0 {
		t.Fatalf("negative skip count: %+v", sk)
	}
	if !slices.IsSortedFunc(s.Radios, func(a, b Radio) int { return strings.Compare(a.IfName, b.IfName) }) {
		t.Fatal("radios not sorted")
	}
	radios := map[string]bool{}
	for _, r := range s.Radios {
		if r.IfName == "" || radios[r.IfName] {
			t.Fatalf("radio with an empty or repeated IfName %q", r.IfName)
		}
		radios[r.IfName] = true
		if r.BSSID != "" && normalizeMAC(r.BSSID) != r.BSSID {
			t.Fatalf("BSSID %q not normalised", r.BSSID)
		}
		if r.Channel < 0 || r.Channel > 255 || r.FrequencyMHz < 0 || r.FrequencyMHz > 100000 {
			t.Fatalf("channel %d frequency %d", r.Channel, r.FrequencyMHz)
		}
		checkDBm(t, r.NoiseDBm)
		checkDBm(t, r.SignalDBm)
		checkRate(t, r.BitrateKbps)
		if r.Stations != nil && (*r.Stations < 0 || *r.Stations > maxCount) {
			t.Fatalf("Stations %d", *r.Stations)
		}
	}
	for i, st := range s.Stations {
		if i > 0 {
			p := s.Stations[i-1]
			if p.IfName > st.IfName || p.IfName == st.IfName && p.MAC >= st.MAC {
				t.Fatalf("stations not sorted or repeated: %s/%s then %s/%s", p.IfName, p.MAC, st.IfName, st.MAC)
			}
		}
		if !radios[st.IfName] && len(s.Radios) < MaxRadios {
			t.Fatalf("station on %q, which has no radio", st.IfName)
		}
		if st.MAC == "" || normalizeMAC(st.MAC) != st.MAC {
			t.Fatalf("MAC %q not normalised", st.MAC)
		}
		checkDBm(t, st.SignalDBm)
		checkDBm(t, st.NoiseDBm)
		checkRate(t, st.RxRateKbps)
		checkRate(t, st.TxRateKbps)
		checkRate(t, st.ExpectedThroughputKbps)
	}
}

func checkDBm(t *testing.T, v *float64) {
	t.Helper()
	if v != nil && (*v >= 0 || *v < minDBm) {
		t.Fatalf("dBm value %v", *v)
	}
}

func checkRate(t *testing.T, v *float64) {
	t.Helper()
	if v != nil && (*v <= 0 || *v > maxRateKbp) {
		t.Fatalf("rate %v", *v)
	}
}
