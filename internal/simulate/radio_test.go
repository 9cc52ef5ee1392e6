package simulate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// A client's desk is on its floor, at the distance where its usual AP
// gives it its usual signal; but for the few in far corners it is in that
// AP's cell (no other AP is heard better).
func TestDeskSignal(t *testing.T) {
	for _, sz := range []Sizes{defaults, {1, 1, 1, 100}, {1, 2, 2, 100}, {1, 1, 12, 300}} {
		n := NewNetwork(3, sz, time.UTC)
		for _, c := range n.Clients {
			home := c.Home.APs[c.HomeAP]
			if got := math.Round(c.desk.signal(home, c.Band5, txPower(c.Band5))); got != float64(c.BaseRSSI) {
				t.Errorf("%+v client %d: %v dBm at its desk, want %d", sz, c.Index, got, c.BaseRSSI)
			}
			if c.desk.X < 0 || c.desk.X > floorLength(c.Home) || c.desk.Y < 0 || c.desk.Y > FloorWidth {
				t.Errorf("%+v client %d: its desk %+v is off the floor", sz, c.Index, c.desk)
			}
			if _, other := strongest(c.desk, home, c.Band5); c.BaseRSSI > -76 && other > float64(c.BaseRSSI)+0.5 {
				t.Errorf("%+v client %d: its desk %+v hears another AP at %.1f dBm, its own at %d", sz, c.Index, c.desk, other, c.BaseRSSI)
			}
		}
	}
}

// radiosBy indexes radio samples by BSSID and time.
func radiosBy(radios []RadioSample) map[string]map[int64]RadioSample {
	out := map[string]map[int64]RadioSample{}
	for _, r := range radios {
		if out[r.BSSID] == nil {
			out[r.BSSID] = map[int64]RadioSample{}
		}
		out[r.BSSID][r.Timestamp] = r
	}
	return out
}

// Every radio of every AP reports every SampleEvery what the server takes:
// its channel and band, a utilisation that grows with its clients, a quiet
// noise floor, the clients associated then and its power; a client's SNR
// is its signal over its radio's noise floor then.
func TestRadioSamples(t *testing.T) {
	for _, tc := range []struct {
		sizes    Sizes
		from, to time.Time
	}{
		{defaults, wed.Add(-6 * time.Hour), wed},
		{Sizes{1, 1, 3, 60}, wed.Add(-90*time.Minute - 7*time.Second), wed.Add(-13 * time.Second)},
		{Sizes{1, 3, 1, 40}, wed.Add(-24 * time.Hour), wed},
	} {
		t.Run(fmt.Sprintf("%+v", tc.sizes), func(t *testing.T) {
			n := NewNetwork(2, tc.sizes, time.UTC)
			g := NewGenerator(n, nil)
			rec := g.Records(ms(tc.from), ms(tc.to))
			by := radiosBy(rec.Radios)
			var times []int64
			for t := bucket(ms(tc.from) + SampleEvery - 1); t < ms(tc.to); t += SampleEvery {
				times = append(times, t)
			}
			if want := 2 * len(n.APs()) * len(times); len(rec.Radios) != want {
				t.Fatalf("%d radio samples, want %d", len(rec.Radios), want)
			}
			var busyUtil, idleUtil, busyN, idleN float64
			for _, ap := range n.APs() {
				for _, at := range times {
					clients := 0
					for _, band5 := range []bool{false, true} {
						r, ok := by[ap.Radio(band5).BSSID][at]
						if !ok {
							t.Fatalf("no sample of %s at %d", ap.Radio(band5).BSSID, at)
						}
						b, _ := json.Marshal(r)
						if _, err := telemetry.ParseRadioSample(b, tc.to); err != nil {
							t.Fatalf("%s: %v", b, err)
						}
						if r.Channel != ap.Radio(band5).Channel || r.FrequencyBand != bandName(band5) || r.NoiseDBm < -95 || r.NoiseDBm > -90 ||
							r.UtilizationPct < 0 || r.UtilizationPct > 60 || r.TxPowerDBm != int(txPower(band5)) {
							t.Errorf("%s", b)
						}
						clients += r.Clients
						if band5 && r.Clients >= 4 {
							busyUtil, busyN = busyUtil+r.UtilizationPct, busyN+1
						} else if band5 && r.Clients == 0 {
							idleUtil, idleN = idleUtil+r.UtilizationPct, idleN+1
						}
					}
					if a := g.Associated(at)[ap]; clients != a {
						t.Errorf("%s at %d: its radios report %d clients, %d are associated", ap.Name, at, clients, a)
					}
				}
			}
			if busyN > 0 && idleN > 0 && busyUtil/busyN < idleUtil/idleN+5 {
				t.Errorf("5 GHz utilisation %.1f %% with 4 clients or more, %.1f %% with none", busyUtil/busyN, idleUtil/idleN)
			}
			for _, s := range rec.Samples {
				r, ok := by[s.BSSID][bucket(s.Timestamp)]
				if ok && s.SNR != s.RSSI-r.NoiseDBm {
					t.Errorf("sample %+v: SNR %d, its radio's noise %d", s, s.SNR, r.NoiseDBm)
				}
			}
		})
	}
}

// roamOf is a roam in the simulator's events: the client left one radio
// (a Disassociated) and its next event is a Success at another radio of
// its SSID within 10 s.
type roamOf struct {
	mac, from, to string
	left          int64
	latency       int64
	ft            bool
	after         int
}

func roamsIn(events []Event) []roamOf {
	last := map[string]Event{}
	var out []roamOf
	for _, e := range events {
		p, ok := last[e.MacAddress]
		last[e.MacAddress] = e
		if !ok || p.EventType != "Intermediate" || p.CategoryCode != 1 || p.TypeCode != 3 || e.EventType != "Success" ||
			e.BSSID == p.BSSID || e.SSID != p.SSID || e.Timestamp-p.Timestamp > wnms.RoamWindowMs {
			continue
		}
		r := roamOf{mac: e.MacAddress, from: p.BSSID, to: e.BSSID, left: p.Timestamp, latency: e.AuthenticationTimestamp - p.Timestamp}
		if e.FastTransition != nil {
			r.ft = *e.FastTransition
		}
		if e.RSSI != nil {
			r.after = *e.RSSI
		}
		out = append(out, r)
	}
	return out
}

// Clients that move to a neighbouring AP roam: a Disassociated at the old
// one, then a Success at the new one, 50 to 150 ms later with a fast
// transition (corp laptops) and 0.4 to 1.5 s later with a full
// authentication; every Success that says it is a roam is one.
func TestRoams(t *testing.T) {
	n := NewNetwork(1, defaults, time.UTC)
	events, _ := NewGenerator(n, nil).Window(ms(wed.Add(-10*time.Hour)), ms(wed))
	roams := roamsIn(events)
	said := 0
	for _, e := range events {
		if e.EventType == "Success" && e.FastTransition != nil {
			said++
		}
	}
	kinds := map[bool]int{}
	for _, r := range roams {
		kinds[r.ft]++
		lo, hi := int64(400), int64(1500)
		if r.ft {
			lo, hi = 50, 150
		}
		if r.latency < lo || r.latency > hi {
			t.Errorf("roam %+v: latency %d ms, want %d to %d", r, r.latency, lo, hi)
		}
		if r.after == 0 {
			t.Errorf("roam %+v: no RSSI on the Success", r)
		}
	}
	if kinds[true] < 20 || kinds[false] < 20 || said != len(roams) {
		t.Errorf("%d roams with a fast transition, %d without; %d Successes say they roamed", kinds[true], kinds[false], said)
	}
}

// The radio incidents do what they say on the air: a coverage hole drops
// its AP's power and its clients' signal, and some of them roam away; a
// co-channel interference fills its AP's 5 GHz channel and raises its
// noise, and its clients retry; interference raises the noise and the
// utilisation of its channel. Other radios are as they were.
func TestRadioIncidents(t *testing.T) {
	for seed := range uint64(3) {
		n := NewNetwork(seed+1, defaults, time.UTC)
		incs := n.Place([]Incident{{Kind: CoverageHole, Ago: 5 * time.Hour}, {Kind: CoChannel, Ago: 5 * time.Hour},
			{Kind: Interference, Ago: 3 * time.Hour}}, wed)
		rec := NewGenerator(n, incs).Records(ms(wed.Add(-8*time.Hour)), ms(wed))
		quiet := NewGenerator(n, nil).Records(ms(wed.Add(-8*time.Hour)), ms(wed))
		hitBy := func(r RadioSample) *Incident {
			for i := range incs {
				in := &incs[i]
				if r.Timestamp < in.From || r.Timestamp >= in.To {
					continue
				}
				switch {
				case in.Kind == CoverageHole && (r.BSSID == in.AP.Radio24.BSSID || r.BSSID == in.AP.Radio5.BSSID),
					in.Kind == CoChannel && r.BSSID == in.AP.Radio5.BSSID,
					in.Kind == Interference && r.Channel == InterferenceChannel && bssidSite(n, r.BSSID) == in.Site:
					return in
				}
			}
			return nil
		}
		calm := radiosBy(quiet.Radios)
		hits := map[string]int{}
		for _, r := range rec.Radios {
			q := calm[r.BSSID][r.Timestamp]
			in := hitBy(r)
			if in == nil {
				if r.TxPowerDBm != q.TxPowerDBm || r.NoiseDBm != q.NoiseDBm || r.UtilizationPct >= 80 {
					t.Errorf("seed %d: a radio no incident hits: %+v, quiet %+v", seed+1, r, q)
				}
				continue
			}
			hits[in.Kind]++
			switch in.Kind {
			case CoverageHole:
				if d := q.TxPowerDBm - r.TxPowerDBm; d < 15 || d > 20 || d != in.PowerDrop || r.NoiseDBm != q.NoiseDBm {
					t.Errorf("seed %d coverage-hole: %+v, quiet %+v", seed+1, r, q)
				}
			case CoChannel:
				if r.UtilizationPct < 80 || r.UtilizationPct > 95 || r.NoiseDBm-q.NoiseDBm < 8 || r.TxPowerDBm != q.TxPowerDBm {
					t.Errorf("seed %d co-channel: %+v, quiet %+v", seed+1, r, q)
				}
			default:
				if r.UtilizationPct < q.UtilizationPct+30 || r.NoiseDBm-q.NoiseDBm < 6 {
					t.Errorf("seed %d interference: %+v, quiet %+v", seed+1, r, q)
				}
			}
		}
		// 9 samples in the window: a coverage hole's 2 radios, co-channel's
		// 1, interference's channel on 4 APs.
		if hits[CoverageHole] != 18 || hits[CoChannel] != 9 || hits[Interference] != 36 {
			t.Errorf("seed %d: radio samples hit %v", seed+1, hits)
		}

		// The clients of the coverage hole: weaker, troubled, some gone.
		hole, co := incs[0], incs[1]
		var drop, dropN, troubled, onHole float64
		qs := map[[2]any]Sample{}
		for _, s := range quiet.Samples {
			qs[[2]any{s.MacAddress, s.Timestamp}] = s
		}
		var retry, qretry, coN float64
		for _, s := range rec.Samples {
			if s.Timestamp < hole.From+10*time.Minute.Milliseconds() || s.Timestamp >= hole.To {
				continue
			}
			q, ok := qs[[2]any{s.MacAddress, s.Timestamp}]
			switch {
			case s.BSSID == hole.AP.Radio24.BSSID || s.BSSID == hole.AP.Radio5.BSSID:
				onHole++
				if s.RSSI < -75 || s.DataRateMbps < 12 || s.RetryRatePct > 15 {
					troubled++
				}
				if ok && q.BSSID == s.BSSID {
					drop, dropN = drop+float64(q.RSSI-s.RSSI), dropN+1
				}
			case s.BSSID == co.AP.Radio5.BSSID && ok:
				retry, qretry, coN = retry+s.RetryRatePct, qretry+q.RetryRatePct, coN+1
			}
		}
		if dropN < 5 || drop/dropN < 14 || drop/dropN > 21 || troubled < 3 || troubled < 0.1*onHole {
			t.Errorf("seed %d coverage-hole: signal %.1f dB lower over %v samples; %v of %v samples troubled", seed+1, drop/dropN, dropN, troubled, onHole)
		}
		if coN < 5 || retry/coN < qretry/coN+15 {
			t.Errorf("seed %d co-channel: retries %.1f %%, usually %.1f %% (%v samples)", seed+1, retry/coN, qretry/coN, coN)
		}
		away := 0
		for _, r := range roamsIn(rec.Events) {
			if (r.from == hole.AP.Radio24.BSSID || r.from == hole.AP.Radio5.BSSID) && r.left >= hole.From && r.left < hole.To {
				away++
			}
		}
		if away == 0 {
			t.Errorf("seed %d coverage-hole: no client roamed away", seed+1)
		}
	}
}

// bssidSite is the site of the AP with the radio.
func bssidSite(n *Network, bssid string) *Site {
	for _, ap := range n.APs() {
		if ap.Radio24.BSSID == bssid || ap.Radio5.BSSID == bssid {
			return ap.Floor.Site
		}
	}
	return nil
}

// The server finds the simulator's roams, each as the simulator made it,
// and takes every radio sample: a small network driven through the API
// for a day, on each store.
func TestServerFindsTheRoams(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		sz := Sizes{Sites: 1, Floors: 1, APsPerFloor: 3, Clients: 40}
		end := wed
		a := &API{URL: e.HTTP.URL, KeyID: e.AdminKeyID, KeyValue: e.AdminKeyValue, HTTP: &http.Client{Timeout: time.Minute},
			RetryFor: 10 * time.Second}
		var sum Summary
		if err := Run(context.Background(), a, Config{Sizes: sz, Days: 1, Seed: 4, End: end, TZ: time.UTC, Batch: 700}, &sum); err != nil {
			t.Fatal(err)
		}
		n := NewNetwork(4, sz, time.UTC)
		rec := NewGenerator(n, nil).Records(ms(end.Add(-24*time.Hour)), ms(end))
		if sum.Rejected != 0 || sum.RadioStats != int64(len(rec.Radios)) || len(rec.Radios) != 24*12*3*2 {
			t.Fatalf("summary %+v; %d radio samples drawn", sum, len(rec.Radios))
		}
		// The server knows where a client was from its events before, and
		// from its samples of an earlier hour: the backfill sends an
		// hour's events before its samples.
		from := ms(end.Add(-24 * time.Hour))
		hour := func(ts int64) int64 { return (ts - from) / time.Hour.Milliseconds() }
		firstEvent, firstSample := map[string]int64{}, map[string]int64{}
		for _, e := range rec.Events {
			if _, ok := firstEvent[e.MacAddress]; !ok {
				firstEvent[e.MacAddress] = e.Timestamp
			}
		}
		for _, s := range rec.Samples {
			if _, ok := firstSample[s.MacAddress]; !ok {
				firstSample[s.MacAddress] = s.Timestamp
			}
		}
		want := map[string][]roamOf{}
		for _, r := range roamsIn(rec.Events) {
			fs, sampled := firstSample[r.mac]
			if firstEvent[r.mac] < r.left || sampled && hour(fs) < hour(r.left) {
				want[r.mac] = append(want[r.mac], r)
			}
		}
		if len(want) < 3 {
			t.Fatalf("%d clients roamed", len(want))
		}
		type stored struct {
			CategoryCode     int
			Timestamp        int64
			BSSID, FromBssid string
			RoamLatencyMs    int64
			FastTransition   bool
			RSSIAfter        *int
		}
		found := 0
		for mac, roams := range want {
			var page struct {
				ClientEvents []stored `json:"clientEvents"`
			}
			e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/devices/clientevents/%s/0/100?clienteventtype=Intermediate", mac), nil).Decode(t, &page)
			var got []stored
			for _, s := range page.ClientEvents {
				if s.CategoryCode == wnms.CategoryRoaming {
					got = append([]stored{s}, got...) // oldest first
				}
			}
			if len(got) != len(roams) {
				t.Errorf("%s: the server found %d roams, the simulator made %d: %+v", mac, len(got), len(roams), got)
				continue
			}
			for i, r := range roams {
				g := got[i]
				if !strings.EqualFold(g.FromBssid, r.from) || !strings.EqualFold(g.BSSID, r.to) || g.RoamLatencyMs != r.latency ||
					g.FastTransition != r.ft || g.RSSIAfter == nil || *g.RSSIAfter != r.after {
					t.Errorf("%s: found %+v, made %+v", mac, g, r)
				}
				found++
			}
		}
		t.Logf("%d roams of %d clients found", found, len(want))
	})
}
