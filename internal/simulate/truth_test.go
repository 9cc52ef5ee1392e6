package simulate

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/telemetry"
)

// everyKind places one incident of each kind on a Wednesday's office
// hours, alternating sites, one after the other.
func everyKind(n *Network) []Incident {
	var incs []Incident
	for i, k := range IncidentKinds {
		incs = append(incs, Incident{Kind: k, Ago: 7*time.Hour + 30*time.Minute - time.Duration(i)*IncidentLength})
	}
	return n.Place(incs, wed)
}

// tally is what the events of one site in a window show.
type tally struct {
	tried, failing map[string]bool            // clients
	byCause        map[[2]int]map[string]bool // each failing client by its most frequent failure
	failOnBSSID    map[[2]int]map[string]int  // failures by cause and BSSID
	dhcpLatency    []int64                    // of Successes that ran DHCP
}

func tallyOf(n *Network, events []Event, site *Site, from, to int64) tally {
	onSite := map[string]bool{}
	for _, f := range site.Floors {
		for _, ap := range f.APs {
			onSite[ap.Radio24.BSSID], onSite[ap.Radio5.BSSID] = true, true
		}
	}
	t := tally{tried: map[string]bool{}, failing: map[string]bool{}, byCause: map[[2]int]map[string]bool{}, failOnBSSID: map[[2]int]map[string]int{}}
	perClient := map[string]map[[2]int]int{}
	for _, e := range events {
		if e.Timestamp < from || e.Timestamp >= to || e.EventType == "Intermediate" || !onSite[e.BSSID] {
			continue
		}
		t.tried[e.MacAddress] = true
		if e.EventType == "Success" {
			if e.DHCPLatency > 0 {
				t.dhcpLatency = append(t.dhcpLatency, e.DHCPLatency)
			}
			continue
		}
		t.failing[e.MacAddress] = true
		k := [2]int{e.FailureCode, e.SubFailureCode}
		if perClient[e.MacAddress] == nil {
			perClient[e.MacAddress] = map[[2]int]int{}
		}
		perClient[e.MacAddress][k]++
		if t.failOnBSSID[k] == nil {
			t.failOnBSSID[k] = map[string]int{}
		}
		t.failOnBSSID[k][e.BSSID]++
	}
	// Each failing client counts for its most frequent failure (ties:
	// the lower codes), as the server counts it.
	for mac, causes := range perClient {
		var k [2]int
		most := 0
		for c, v := range causes {
			if v > most || v == most && (c[0] < k[0] || c[0] == k[0] && c[1] < k[1]) {
				k, most = c, v
			}
		}
		if t.byCause[k] == nil {
			t.byCause[k] = map[string]bool{}
		}
		t.byCause[k][mac] = true
	}
	return t
}

// dominant is the failure most failing clients have, and how many.
func (t tally) dominant() ([2]int, int) {
	var best [2]int
	n := 0
	for k, m := range t.byCause {
		if len(m) > n || len(m) == n && (k[0] < best[0] || k[0] == best[0] && k[1] < best[1]) {
			best, n = k, len(m)
		}
	}
	return best, n
}

// Every kind does what its ground truth says: at its site and in its
// window, many clients fail, most of them with the expected cause, and
// inside the expected scope; the other site and the same window the day
// before see only the background.
func TestEveryKindMatchesItsTruth(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed ", seed+1), func(t *testing.T) { everyKindMatches(t, seed+1) })
	}
}

func everyKindMatches(t *testing.T, seed uint64) {
	n := NewNetwork(seed, defaults, time.UTC)
	incs := everyKind(n)
	g := NewGenerator(n, incs)
	events, samples := g.Window(ms(wed.Add(-32*time.Hour)), ms(wed))
	clients := map[string]*Client{}
	for _, c := range n.Clients {
		clients[c.MAC] = c
	}
	day := 24 * time.Hour.Milliseconds()
	for _, in := range incs {
		truth := in.Truth()
		other := n.Sites[1-in.Site.Index]
		hit := tallyOf(n, events, in.Site, in.From, in.To)
		calm := tallyOf(n, events, other, in.From, in.To)
		before := tallyOf(n, events, in.Site, in.From-day, in.To-day)
		if 3*len(calm.failing) > len(calm.tried) || 3*len(before.failing) > len(before.tried) {
			t.Errorf("%s: %d of %d clients fail at the other site, %d of %d the day before", in.Kind,
				len(calm.failing), len(calm.tried), len(before.failing), len(before.tried))
		}
		if truth.Cause.Stage == "performance" {
			continue // below, and in radio_test.go
		}
		cause, k := hit.dominant()
		if cause != [2]int{truth.Cause.FailureCode, truth.Cause.SubFailureCode} || k < 5 || k < 3*len(before.byCause[cause]) {
			t.Errorf("%s: the dominant failure is %v for %d clients (truth %+v); %d had it the day before: %v",
				in.Kind, cause, k, truth.Cause, len(before.byCause[cause]), hit.byCause)
		}
		// The cause's text is the catalogue's.
		b, _ := json.Marshal(Event{EventID: "x", MacAddress: "02:00:00:00:00:01", EventType: "Failure", BSSID: in.Site.Floors[0].APs[0].Radio5.BSSID,
			Channel: 36, SSID: "corp", Timestamp: ms(wed), FailureCode: cause[0], SubFailureCode: cause[1]})
		var read struct{ SubFailure string }
		e, err := telemetry.ParseEvent(b, wed)
		if err == nil {
			b, err = e.Place(nil)
			json.Unmarshal(b, &read)
		}
		if err != nil || read.SubFailure != truth.Cause.Text {
			t.Errorf("%s: the cause's text %q, the catalogue's %q (%v)", in.Kind, truth.Cause.Text, read.SubFailure, err)
		}
		// The scope holds ≥ 80 % of the clients with that cause.
		inScope := 0
		for mac := range hit.byCause[cause] {
			c := clients[mac]
			switch truth.Scope.Type {
			case "site":
				inScope++
			case "ssid":
				if c.SSID == truth.Scope.ID {
					inScope++
				}
			}
		}
		if truth.Scope.Type == "ap" {
			bad := 0
			for bssid, k := range hit.failOnBSSID[cause] {
				if bssid == in.AP.Radio24.BSSID || bssid == in.AP.Radio5.BSSID {
					bad += k
				}
			}
			if f := hit.failOnBSSID[cause]; bad < 3 || 5*bad < 4*sum(f) {
				t.Errorf("%s: %d failures on %s, of %v", in.Kind, bad, in.AP.Name, f)
			}
			inScope = k
		}
		if 5*inScope < 4*k {
			t.Errorf("%s: %d of the %d clients failing with %v are in the scope %+v", in.Kind, inScope, k, cause, truth.Scope)
		}
		switch in.Kind {
		case SlowDHCP:
			slow := 0
			for _, l := range hit.dhcpLatency {
				if l >= 2500 {
					slow++
				}
			}
			if slow < 5 || 5*slow < 4*len(hit.dhcpLatency) {
				t.Errorf("slow-dhcp: %d of %d DHCP latencies ≥ 2.5 s", slow, len(hit.dhcpLatency))
			}
		case APDown, BadAP:
			// Nothing is heard on the AP (its 5 GHz radio) once it is
			// gone, and its clients are elsewhere.
			for _, s := range samples {
				if s.Timestamp >= in.From+10*time.Minute.Milliseconds() && s.Timestamp < in.To &&
					(s.BSSID == in.AP.Radio5.BSSID || in.Kind == APDown && s.BSSID == in.AP.Radio24.BSSID) {
					t.Fatalf("%s: a sample on %s while it is down: %+v", in.Kind, in.AP.Name, s)
				}
			}
		}
	}

	inf := incs[slices.Index(IncidentKinds, Interference)]
	var hitRetry, hitN float64
	for _, s := range samples {
		if s.Timestamp >= inf.From && s.Timestamp < inf.To && s.Channel == InterferenceChannel && clients[s.MacAddress].Home.Site == inf.Site {
			hitRetry += s.RetryRatePct
			hitN++
		}
	}
	if hitN < 10 || hitRetry/hitN < 25 {
		t.Errorf("interference: mean retry %.1f%% over %v samples", hitRetry/hitN, hitN)
	}
	// Its scope is the channel, not the band: every sample of the site
	// with retries over 25 % (more than the background ever has) is on
	// the channel, and other 5 GHz channels of the site carry clients that
	// do not have them.
	other5 := map[string]bool{}
	for _, s := range samples {
		if s.Timestamp < inf.From || s.Timestamp >= inf.To || clients[s.MacAddress].Home.Site != inf.Site {
			continue
		}
		if s.RetryRatePct >= 25 && s.Channel != InterferenceChannel {
			t.Errorf("interference: retries %.1f %% on channel %d: %+v", s.RetryRatePct, s.Channel, s)
		}
		if s.Channel > 14 && s.Channel != InterferenceChannel {
			other5[s.MacAddress] = true
		}
	}
	if tr := inf.Truth(); tr.Scope != (Scope{"channel", "36", "5 GHz channel 36"}) || len(tr.Equivalent) != 0 || len(other5) < 5 {
		t.Errorf("interference: scope %+v, equivalent %+v; %d clients on other 5 GHz channels", tr.Scope, tr.Equivalent, len(other5))
	}
}

// An interference incident's scope is the narrowest holding the radios on
// the channel: the channel when several APs of the site have it, the AP
// when one does, the band too when every 5 GHz radio is on the channel.
func TestInterferenceScope(t *testing.T) {
	for _, c := range []struct {
		sizes      Sizes
		scope      Scope
		equivalent []Scope
	}{
		{Sizes{1, 2, 6, 50}, Scope{"channel", "36", "5 GHz channel 36"}, nil},
		{Sizes{1, 1, 3, 50}, Scope{"ap", "", "S1-F1-AP1"}, []Scope{{"channel", "36", "5 GHz channel 36"}}},
		{Sizes{1, 1, 1, 50}, Scope{"ap", "", "S1-F1-AP1"}, []Scope{{"channel", "36", "5 GHz channel 36"}, {"band", "BAND_5_GHZ", "5 GHz"}}},
		{Sizes{1, 2, 1, 50}, Scope{"channel", "36", "5 GHz channel 36"}, []Scope{{"band", "BAND_5_GHZ", "5 GHz"}}},
	} {
		n := NewNetwork(1, c.sizes, time.UTC)
		if c.scope.Type == "ap" {
			c.scope.ID = n.Sites[0].Floors[0].APs[0].MAC
		}
		tr := Incident{Kind: Interference, Site: n.Sites[0]}.Truth()
		if tr.Scope != c.scope || !reflect.DeepEqual(tr.Equivalent, c.equivalent) {
			t.Errorf("%+v: scope %+v, equivalent %+v; want %+v, %+v", c.sizes, tr.Scope, tr.Equivalent, c.scope, c.equivalent)
		}
	}
}

func sum(m map[string]int) int {
	k := 0
	for _, v := range m {
		k += v
	}
	return k
}

// The ground truth: per kind its cause, scope and window, the same for the
// same seed, and named as wnms names things.
func TestTruth(t *testing.T) {
	n := NewNetwork(3, defaults, time.UTC)
	for _, s := range n.Sites {
		s.LocID = int64(10 + s.Index)
	}
	incs := everyKind(n)
	var truths []IncidentSummary
	for _, in := range incs {
		truths = append(truths, in.Truth())
	}
	want := map[string]struct {
		stage string
		sub   int
		scope Scope
	}{
		RadiusDown:     {"authentication", 203, Scope{"site", "10", "Sim Site 1"}},
		RadiusReject:   {"authentication", 202, Scope{"site", "11", "Sim Site 2"}},
		WrongPSK:       {"authentication", 201, Scope{"ssid", "iot", "iot"}},
		DHCPExhaustion: {"dhcp", 301, Scope{"site", "11", "Sim Site 2"}},
		SlowDHCP:       {"dhcp", 301, Scope{"site", "10", "Sim Site 1"}},
		APDown:         {"association", 102, Scope{"ap", incs[5].Site.Floors[0].APs[0].MAC, "S2-F1-AP1"}},
		BadAP:          {"association", 101, Scope{"ap", incs[6].Site.Floors[1].APs[3].MAC, "S1-F2-AP4"}},
		Interference:   {"performance", 0, Scope{"channel", "36", "5 GHz channel 36"}},
		CoverageHole:   {"performance", 0, Scope{"ap", incs[8].Site.Floors[0].APs[3].MAC, "S1-F1-AP4"}},
		CoChannel:      {"performance", 0, Scope{"ap", incs[9].Site.Floors[1].APs[2].MAC, "S2-F2-AP3"}},
	}
	for i, tr := range truths {
		w := want[tr.Kind]
		if tr.Cause.Stage != w.stage || tr.Cause.SubFailureCode != w.sub || tr.Scope != w.scope {
			t.Errorf("%s: %+v", tr.Kind, tr)
		}
		from := wed.Add(-7*time.Hour - 30*time.Minute + time.Duration(i)*IncidentLength)
		if tr.From != from.Format(time.RFC3339) || tr.FromMs != ms(from) || tr.ToMs-tr.FromMs != IncidentLength.Milliseconds() {
			t.Errorf("%s: window %s–%s", tr.Kind, tr.From, tr.To)
		}
	}
	again := NewNetwork(3, defaults, time.UTC)
	for _, s := range again.Sites {
		s.LocID = int64(10 + s.Index)
	}
	for i, in := range everyKind(again) {
		if !reflect.DeepEqual(in.Truth(), truths[i]) {
			t.Errorf("the truth of %s differs for the same seed", in.Kind)
		}
	}
}

// Place spreads incidents over sites so that no two at one site are
// within IncidentGap; Check refuses incidents that cannot be spread.
func TestPlaceKeepsIncidentsApart(t *testing.T) {
	n := NewNetwork(1, Sizes{3, 1, 2, 10}, time.UTC)
	incs := n.Place([]Incident{{Kind: RadiusDown, Ago: 3 * time.Hour}, {Kind: APDown, Ago: 3 * time.Hour},
		{Kind: WrongPSK, Ago: 4 * time.Hour}, {Kind: SlowDHCP, Ago: 2 * time.Hour}, {Kind: BadAP, Ago: 10 * time.Hour}}, wed)
	got := []string{}
	for _, in := range incs {
		got = append(got, in.Site.Name)
	}
	// 2 and 3 (AGO 4h and 2h) would be within 30 minutes of the first
	// at site 1 or 2; the last is far from everything.
	if want := []string{"Sim Site 1", "Sim Site 2", "Sim Site 3", "Sim Site 3", "Sim Site 2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sites %v, want %v", got, want)
	}
	if i, j := Clashes(incs); i >= 0 {
		t.Errorf("incidents %d and %d clash", i, j)
	}
	for _, tc := range []struct {
		sites int
		incs  []Incident
		err   string
	}{
		{2, []Incident{{Kind: RadiusDown, Ago: 3 * time.Hour}, {Kind: APDown, Ago: 3 * time.Hour}}, ""},
		{1, []Incident{{Kind: RadiusDown, Ago: 3 * time.Hour}, {Kind: APDown, Ago: 3*time.Hour + 74*time.Minute}}, "within 30m0s"},
		{1, []Incident{{Kind: RadiusDown, Ago: 3 * time.Hour}, {Kind: APDown, Ago: 3*time.Hour + 75*time.Minute}}, ""},
		{2, []Incident{{Kind: RadiusDown, Ago: 3 * time.Hour}, {Kind: APDown, Ago: 3 * time.Hour}, {Kind: BadAP, Ago: 2 * time.Hour}}, "radius-down@3h0m0s and one-bad-ap@2h0m0s"},
	} {
		cfg := Config{Sizes: Sizes{tc.sites, 2, 2, 10}, Days: 1, Incidents: tc.incs}
		err := cfg.Check()
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%d sites %v: %v, want %q", tc.sites, tc.incs, err, tc.err)
		}
	}
	if in, err := ParseIncident("one-bad-AP@2h"); err != nil || in.Kind != BadAP {
		t.Errorf("ParseIncident(one-bad-AP@2h) = %+v, %v", in, err)
	}
}

// A quiet network (no incident) still has its background: at each site a
// few failing clients an hour in office hours (1 to 8), with the causes
// of ordinary trouble, and not one hour where a fifth of the clients
// fail.
func TestQuietNetworkBackground(t *testing.T) {
	n := NewNetwork(5, defaults, time.UTC)
	g := NewGenerator(n, nil)
	day := time.Date(2026, 11, 17, 0, 0, 0, 0, time.UTC) // a Tuesday
	events, _ := g.Window(ms(day), ms(day.Add(24*time.Hour)))
	for _, s := range n.Sites {
		failing := 0
		for h := 9; h < 18; h++ {
			from := day.Add(time.Duration(h) * time.Hour)
			tl := tallyOf(n, events, s, ms(from), ms(from.Add(time.Hour)))
			failing += len(tl.failing)
			if 5*len(tl.failing) > len(tl.tried) {
				t.Errorf("%s %d:00: %d of %d clients fail", s.Name, h, len(tl.failing), len(tl.tried))
			}
			for k := range tl.byCause {
				if k[1] == 203 {
					t.Errorf("%s %d:00: a RADIUS server unreachable on a quiet network", s.Name, h)
				}
			}
		}
		if perHour := float64(failing) / 9; perHour < 1 || perHour > 8 {
			t.Errorf("%s: %.1f failing clients an hour in office hours, want 1 to 8", s.Name, perHour)
		} else {
			t.Logf("%s: %.1f failing clients an hour in office hours", s.Name, perHour)
		}
	}
}

// In live mode an AP that is down sends no heartbeat; an AP whose radio
// is broken still does, with the clients it still has.
func TestHeartbeatsDuringAPIncidents(t *testing.T) {
	n := NewNetwork(1, defaults, time.UTC)
	incs := n.Place([]Incident{{Kind: APDown, Ago: 3 * time.Hour}, {Kind: BadAP, Ago: 3 * time.Hour}}, wed)
	g := NewGenerator(n, incs)
	during := incs[0].From + 20*time.Minute.Milliseconds()
	reported := func(t int64) map[string]int {
		out := map[string]int{}
		for _, r := range heartbeatRecords(g, t) {
			out[r.MacAddress] = *r.NumAssocClients
		}
		return out
	}
	now, after := reported(during), reported(incs[0].To+time.Minute.Milliseconds())
	if _, ok := now[incs[0].AP.MAC]; ok || len(now) != len(n.APs())-1 {
		t.Errorf("the AP that is down reports (%d reports)", len(now))
	}
	if _, ok := now[incs[1].AP.MAC]; !ok {
		t.Error("the AP with a broken radio does not report")
	}
	if _, ok := after[incs[0].AP.MAC]; !ok {
		t.Error("the AP does not report once the incident is over")
	}
}
