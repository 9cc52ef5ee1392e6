package poller

import (
	"strconv"
	"testing"

	"github.com/wnms/wnms/internal/wnms"
)

// A roam is found in scrapes only where they prove it: the client was
// last heard on another radio of its SSID at most RoamWindow before it
// associated to this one.
func TestRoamsFromScrapes(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	i := func(v int) *int { return &v }
	const t0 = 1_800_000_000_000 // ms
	at := func(bssid, ssid string, rssi int, inactiveMs, connectedS *uint64) polled {
		return polled{mac: "02:5E:10:AA:00:01", bssid: bssid, ssid: ssid, channel: 36, rssi: i(rssi),
			inactiveMs: inactiveMs, connectedSeconds: connectedS}
	}
	type scrape struct {
		now      int64
		customer int64
		s        polled
	}
	for _, tc := range []struct {
		name    string
		scrapes []scrape
		want    []int64 // roams' times
	}{
		{"heard 4 s before joining", []scrape{
			{t0, 1, at("A", "corp", -71, u(500), u(3000))},
			{t0 + 6000, 1, at("B", "corp", -55, u(100), u(2))}, // joined at t0+4000, heard at t0-500
		}, []int64{t0 + 4000}},
		{"heard 11 s before joining", []scrape{
			{t0, 1, at("A", "corp", -71, u(500), u(3000))},
			{t0 + 12_000, 1, at("B", "corp", -55, u(100), u(1))}, // joined t0+11000, heard t0-500
		}, nil},
		{"last heard long before the scrape", []scrape{
			{t0, 1, at("A", "corp", -71, u(30_000), u(3000))},
			{t0 + 3000, 1, at("B", "corp", -55, u(100), u(2))},
		}, nil},
		{"no inactive time, no association time", []scrape{
			{t0, 1, at("A", "corp", -71, nil, nil)},
			{t0 + 3000, 1, at("B", "corp", -55, u(100), u(2))},
		}, nil},
		{"associated long ago: on both, not a join", []scrape{
			{t0, 1, at("A", "corp", -71, u(500), u(3000))},
			{t0 + 3000, 1, at("B", "corp", -55, u(100), u(600))},
		}, nil},
		{"heard after joining", []scrape{
			{t0 + 5000, 1, at("A", "corp", -71, u(100), u(3000))}, // heard at t0+4900
			{t0 + 6000, 1, at("B", "corp", -55, u(100), u(4))},    // joined t0+2000
		}, nil},
		{"same radio again", []scrape{
			{t0, 1, at("A", "corp", -71, u(500), u(3000))},
			{t0 + 3000, 1, at("A", "corp", -60, u(100), u(2))},
		}, nil},
		{"another SSID", []scrape{
			{t0, 1, at("A", "corp", -71, u(500), u(3000))},
			{t0 + 3000, 1, at("B", "guest", -55, u(100), u(2))},
		}, nil},
		{"another customer's client", []scrape{
			{t0, 1, at("A", "corp", -71, u(500), u(3000))},
			{t0 + 3000, 2, at("B", "corp", -55, u(100), u(2))},
		}, nil},
		{"found once, and back again", []scrape{
			{t0, 1, at("A", "corp", -71, u(500), u(3000))},
			{t0 + 3000, 1, at("B", "corp", -55, u(100), u(2))},  // roam at t0+1000
			{t0 + 6000, 1, at("B", "corp", -55, u(100), u(5))},  // the same association
			{t0 + 6500, 1, at("A", "corp", -80, u(9000), u(9))}, // A's stale entry: older than B's
			{t0 + 9000, 1, at("A", "corp", -62, u(100), u(1))},  // back to A at t0+8000
		}, []int64{t0 + 1000, t0 + 8000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tr roamTracker
			var got []wnms.EventRecord
			for _, s := range tc.scrapes {
				got = append(got, tr.observe(s.customer, s.now, []polled{s.s})...)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d roams, want %d: %+v", len(got), len(tc.want), got)
			}
			for k, r := range got {
				if *r.Timestamp != tc.want[k] {
					t.Errorf("roam %d at %d, want %d", k, *r.Timestamp, tc.want[k])
				}
				if *r.CategoryCode != wnms.CategoryRoaming || *r.TypeCode != wnms.TypeRoam || *r.EventType != wnms.Intermediate ||
					r.RoamLatencyMs != nil || r.FromBSSID == nil || *r.FromBSSID == *r.BSSID {
					t.Errorf("roam %d: %+v", k, r)
				}
			}
			if len(got) > 0 {
				r := got[0]
				if *r.FromBSSID != "A" || *r.BSSID != "B" || *r.RSSIBefore != -71 || *r.RSSIAfter != -55 ||
					*r.EventID != "roam-025E10AA0001-"+strconv.FormatInt(tc.want[0], 10) {
					t.Errorf("the first roam: from %s to %s, %d → %d dBm, id %s", *r.FromBSSID, *r.BSSID, *r.RSSIBefore, *r.RSSIAfter, *r.EventID)
				}
			}
		})
	}
}

// The tracker's memory is bounded: past maxTracked clients it starts
// afresh.
func TestRoamTrackerBounded(t *testing.T) {
	var tr roamTracker
	batch := make([]polled, 1000)
	for n := 0; n < 2*maxTracked/len(batch); n++ {
		for k := range batch {
			batch[k] = polled{mac: strconv.Itoa(n*len(batch) + k), bssid: "A"}
		}
		tr.observe(1, 1_800_000_000_000, batch)
		if len(tr.heard) > maxTracked {
			t.Fatalf("%d clients remembered, at most %d", len(tr.heard), maxTracked)
		}
	}
}
