package telemetry

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/wnms/wnms/internal/heaptest"
)

// The radio cache gives back what it was given: BSSID, SSID, time, fast
// transition, the radio left, and the signal (or none), clamped to an
// int16 (a real one is -120 to 0 dBm).
func TestRadioCacheKeepsWhatItIsGiven(t *testing.T) {
	rssi := func(v int) *int { return &v }
	from := &roamStart{bssid: "AA:BB:CC:00:00:01", left: 1000, rssi: rssi(-60)}
	for _, tc := range []struct {
		name string
		put  lastRadio
		want lastRadio
	}{
		{"signal", lastRadio{bssid: "AA:BB:CC:00:00:02", ssid: "corp", ts: 5000, rssi: rssi(-67)},
			lastRadio{bssid: "AA:BB:CC:00:00:02", ssid: "corp", ts: 5000, rssi: rssi(-67)}},
		{"no signal", lastRadio{bssid: "AA:BB:CC:00:00:02", ssid: "corp", ts: 5000},
			lastRadio{bssid: "AA:BB:CC:00:00:02", ssid: "corp", ts: 5000}},
		{"joining by fast transition", lastRadio{bssid: "AA:BB:CC:00:00:03", ssid: "", ts: 7000, rssi: rssi(0), ft: true, from: from},
			lastRadio{bssid: "AA:BB:CC:00:00:03", ssid: "", ts: 7000, rssi: rssi(0), ft: true, from: from}},
		{"signal out of range", lastRadio{bssid: "AA:BB:CC:00:00:02", ts: 1, rssi: rssi(-1 << 20)},
			lastRadio{bssid: "AA:BB:CC:00:00:02", ts: 1, rssi: rssi(-1 << 15)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c radioCache
			c.put(7, "02:00:00:00:00:01", tc.put)
			got, ok := c.get(7, "02:00:00:00:00:01")
			if !ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v %v, want %+v", got, ok, tc.want)
			}
			if _, ok := c.get(8, "02:00:00:00:00:01"); ok {
				t.Error("another customer's client found")
			}
			older := tc.put
			older.ts--
			older.bssid = "AA:BB:CC:00:00:09"
			c.put(7, "02:00:00:00:00:01", older)
			if got, _ := c.get(7, "02:00:00:00:00:01"); got.bssid != tc.want.bssid {
				t.Errorf("an older radio replaced a newer one: %s", got.bssid)
			}
		})
	}
}

// BenchmarkRadioCacheState measures what the radio cache keeps for each
// client, as a live heap, with the clients of 20 radios on 2 SSIDs.
func BenchmarkRadioCacheState(b *testing.B) {
	const clients = 20_000
	macs := make([]string, clients)
	for i := range macs {
		macs[i] = fmt.Sprintf("02:00:00:%02X:%02X:%02X", i>>16, i>>8&255, i&255)
	}
	var perClient float64
	for b.Loop() {
		before := heaptest.Live()
		c := &radioCache{}
		for i, mac := range macs {
			rssi := -50 - i%40
			c.put(1, mac, lastRadio{bssid: fmt.Sprintf("AA:BB:CC:00:00:%02X", i%20), ssid: []string{"corp", "guest"}[i%2],
				ts: int64(i), rssi: &rssi})
		}
		perClient = float64(heaptest.Live()-before) / clients
		runtime.KeepAlive(c)
	}
	b.ReportMetric(perClient, "B/client")
}
