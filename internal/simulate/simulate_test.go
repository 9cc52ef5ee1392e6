package simulate

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// wed is a Wednesday afternoon: the busy part of a working day in UTC.
var wed = time.Date(2026, 11, 18, 17, 0, 0, 0, time.UTC)

var defaults = Sizes{Sites: 2, Floors: 2, APsPerFloor: 6, Clients: 300}

func ms(t time.Time) int64 { return t.UnixMilli() }

// The same seed and sizes draw the same records, whatever the windows
// they are asked for in; another seed draws other devices.
func TestDeterministic(t *testing.T) {
	from, mid, to := ms(wed.Add(-30*time.Hour)), ms(wed.Add(-7*time.Hour-123*time.Millisecond)), ms(wed)
	g1 := NewGenerator(NewNetwork(1, defaults, time.UTC), nil)
	e1, s1 := g1.Window(from, to)
	g2 := NewGenerator(NewNetwork(1, defaults, time.UTC), nil)
	ea, sa := g2.Window(from, mid)
	eb, sb := g2.Window(mid, to)
	if len(e1) == 0 || len(s1) == 0 {
		t.Fatal("no records")
	}
	if !reflect.DeepEqual(e1, append(ea, eb...)) || !reflect.DeepEqual(s1, append(sa, sb...)) {
		t.Error("the records of a window depend on how it is cut")
	}
	ids := map[string]bool{}
	for _, e := range e1 {
		if ids[e.EventID] {
			t.Fatalf("eventId %s twice", e.EventID)
		}
		ids[e.EventID] = true
	}
	other := NewNetwork(2, defaults, time.UTC)
	one := NewNetwork(1, defaults, time.UTC)
	if other.Clients[0].MAC == one.Clients[0].MAC || other.APs()[0].MAC == one.APs()[0].MAC {
		t.Error("seeds 1 and 2 share MACs")
	}
	// More clients keep the first ones as they were.
	bigger := NewNetwork(1, Sizes{2, 2, 6, 400}, time.UTC)
	if !reflect.DeepEqual(*bigger.Clients[299], *one.Clients[299]) {
		t.Error("adding clients changed client 300")
	}
}

// Every record is one the server takes.
func TestRecordsAreValid(t *testing.T) {
	n := NewNetwork(7, Sizes{1, 2, 3, 200}, time.UTC)
	incs := n.Place([]Incident{{Kind: RadiusDown, Ago: 3 * time.Hour}, {Kind: Interference, Ago: 2 * time.Hour},
		{Kind: DHCPExhaustion, Ago: 6 * time.Hour}, {Kind: APDown, Ago: 4 * time.Hour}}, wed)
	events, samples := NewGenerator(n, incs).Window(ms(wed.Add(-48*time.Hour)), ms(wed))
	kinds := map[string]int{}
	for i, e := range events {
		b, _ := json.Marshal(e)
		if _, err := telemetry.ParseEvent(b, wed); err != nil {
			t.Fatalf("event %d %s: %v", i, b, err)
		}
		kinds[e.EventType]++
	}
	for i, s := range samples {
		b, _ := json.Marshal(s)
		if _, err := telemetry.ParseSample(b, wed); err != nil {
			t.Fatalf("sample %d %s: %v", i, b, err)
		}
		if s.ClientName == "" || s.BestNeighborRSSI == nil || s.TxBytes == 0 {
			t.Fatalf("sample %d lacks optional fields: %s", i, b)
		}
	}
	if kinds["Success"] == 0 || kinds["Failure"] == 0 || kinds["Intermediate"] == 0 {
		t.Errorf("event kinds: %v", kinds)
	}
	for _, ap := range n.APs() {
		b, _ := json.Marshal(apRecordOf(ap))
		if _, err := telemetry.ParseAP(b); err != nil {
			t.Fatalf("AP %s: %v", b, err)
		}
	}
}

// present counts the clients with a sample in the 5 minutes from t.
func present(g *Generator, t time.Time) int {
	_, samples := g.Window(ms(t), ms(t.Add(5*time.Minute)))
	return len(samples)
}

// Busy in office hours, quiet at night and at weekends; sensors always
// there.
func TestDailyCurve(t *testing.T) {
	g := NewGenerator(NewNetwork(1, defaults, time.UTC), nil)
	noon := time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)
	night := time.Date(2026, 11, 18, 3, 0, 0, 0, time.UTC)
	sunday := time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC)
	busy, quiet, weekend := present(g, noon), present(g, night), present(g, sunday)
	if busy < 150 || quiet == 0 || busy < 3*quiet || weekend*2 > busy || weekend < quiet {
		t.Errorf("present at noon %d, at 3:00 %d, on Sunday noon %d", busy, quiet, weekend)
	}
	// Open at weekends, a Sunday is busy like a working day.
	open := NewNetwork(1, defaults, time.UTC)
	open.OpenWeekends = true
	go7 := NewGenerator(open, nil)
	if sun, wed := present(go7, sunday), present(go7, noon); sun < 150 || sun*10 < wed*8 {
		t.Errorf("open at weekends: present on Sunday noon %d, on Wednesday noon %d", sun, wed)
	}
	// The curve follows the site's clock.
	tokyo, _ := wnms.LoadLocation("Asia/Tokyo")
	gt := NewGenerator(NewNetwork(1, defaults, tokyo), nil)
	if n := present(gt, noon); n > quiet*2 { // 21:00 in Tokyo
		t.Errorf("Tokyo at 21:00 has %d clients present", n)
	}
}

// failing answers, per site, the MACs that failed and the MACs that tried
// to connect in [from, to), and the failure codes seen.
func failing(n *Network, events []Event, from, to int64) (fail, tried map[string]map[string]bool, codes map[int]int) {
	site := map[string]string{}
	for _, ap := range n.APs() {
		site[ap.Radio24.BSSID], site[ap.Radio5.BSSID] = ap.Floor.Site.Name, ap.Floor.Site.Name
	}
	fail, tried, codes = map[string]map[string]bool{}, map[string]map[string]bool{}, map[int]int{}
	for _, s := range n.Sites {
		fail[s.Name], tried[s.Name] = map[string]bool{}, map[string]bool{}
	}
	for _, e := range events {
		if e.Timestamp < from || e.Timestamp >= to || e.EventType == "Intermediate" {
			continue
		}
		tried[site[e.BSSID]][e.MacAddress] = true
		if e.EventType == "Failure" {
			fail[site[e.BSSID]][e.MacAddress] = true
			codes[e.SubFailureCode]++
		}
	}
	return fail, tried, codes
}

// Each incident does what it says, where and when it says.
func TestIncidents(t *testing.T) {
	n := NewNetwork(1, defaults, time.UTC)
	incs := n.Place([]Incident{{Kind: RadiusDown, Ago: 3 * time.Hour}, {Kind: DHCPExhaustion, Ago: 5 * time.Hour},
		{Kind: APDown, Ago: 7 * time.Hour}, {Kind: Interference, Ago: 7 * time.Hour}}, wed)
	if incs[0].Site.Name != "Sim Site 1" || incs[1].Site.Name != "Sim Site 2" || incs[2].Site.Name != "Sim Site 1" ||
		incs[0].From != ms(wed.Add(-3*time.Hour)) || incs[0].To-incs[0].From != IncidentLength.Milliseconds() {
		t.Fatalf("placed: %+v", incs[:2])
	}
	g := NewGenerator(n, incs)
	events, samples := g.Window(ms(wed.Add(-24*time.Hour)), ms(wed))

	for _, tc := range []struct {
		in        Incident
		codes     []int
		hit, calm string
	}{
		{incs[0], []int{202, 203}, "Sim Site 1", "Sim Site 2"},
		{incs[1], []int{301, 302}, "Sim Site 2", "Sim Site 1"},
	} {
		fail, tried, codes := failing(n, events, tc.in.From, tc.in.To)
		if f, a := len(fail[tc.hit]), len(tried[tc.hit]); a < 20 || 2*f < a {
			t.Errorf("%s: %d of %d clients failed at %s", tc.in.Kind, f, a, tc.hit)
		}
		if f, a := len(fail[tc.calm]), len(tried[tc.calm]); 5*f > a {
			t.Errorf("%s: %d of %d clients failed at %s, which it does not touch", tc.in.Kind, f, a, tc.calm)
		}
		if codes[tc.codes[0]]+codes[tc.codes[1]] < 20 {
			t.Errorf("%s: failure codes %v", tc.in.Kind, codes)
		}
		// The same hour the day before is calm.
		fail, tried, _ = failing(n, events, tc.in.From-24*time.Hour.Milliseconds(), tc.in.To-24*time.Hour.Milliseconds())
		if f, a := len(fail[tc.hit]), len(tried[tc.hit]); 5*f > a {
			t.Errorf("%s: the day before, %d of %d failed", tc.in.Kind, f, a)
		}
	}

	// ap-down: a minute after the AP goes, nothing is heard on it, and
	// its clients are on its neighbour.
	down := incs[2]
	var onDown, movedOn int
	for _, s := range samples {
		if s.Timestamp < down.From+time.Minute.Milliseconds() || s.Timestamp >= down.To {
			continue
		}
		switch s.BSSID {
		case down.AP.Radio24.BSSID, down.AP.Radio5.BSSID:
			onDown++
		case down.AP.Floor.APs[1].Radio24.BSSID, down.AP.Floor.APs[1].Radio5.BSSID:
			movedOn++
		}
	}
	var before int
	for _, s := range samples {
		if s.Timestamp >= down.From-IncidentLength.Milliseconds() && s.Timestamp < down.From &&
			(s.BSSID == down.AP.Radio24.BSSID || s.BSSID == down.AP.Radio5.BSSID) {
			before++
		}
	}
	if onDown != 0 || before == 0 || movedOn <= before {
		t.Errorf("ap-down: %d samples on the AP while down, %d before; %d on its neighbour", onDown, before, movedOn)
	}
	if a := g.Associated(down.From + 10*time.Minute.Milliseconds()); a[down.AP] != 0 {
		t.Errorf("ap-down: %d clients associated to the AP while down", a[down.AP])
	}

	// interference: retries up and rates down on the channel at the site,
	// not on other channels.
	inf := incs[3]
	var hitRetry, calmRetry, hitN, calmN float64
	for _, s := range samples {
		if s.Timestamp < inf.From || s.Timestamp >= inf.To || !strings.HasPrefix(s.BSSID, "1E") {
			continue
		}
		if s.Channel == InterferenceChannel && n.Clients[clientIndex(n, s.MacAddress)].Home.Site == inf.Site {
			hitRetry += s.RetryRatePct
			hitN++
		} else {
			calmRetry += s.RetryRatePct
			calmN++
		}
	}
	if hitN == 0 || calmN == 0 || hitRetry/hitN < 25 || calmRetry/calmN > 12 {
		t.Errorf("interference: mean retry %.1f%% on channel %d (%v samples), %.1f%% elsewhere", hitRetry/hitN, InterferenceChannel, hitN, calmRetry/calmN)
	}
}

func clientIndex(n *Network, mac string) int {
	for i, c := range n.Clients {
		if c.MAC == mac {
			return i
		}
	}
	return -1
}

func TestParseIncidentAndChecks(t *testing.T) {
	for _, tc := range []struct {
		in, err string
	}{
		{"radius-down@3h", ""},
		{"interference@90m", ""},
		{"radius-down", "expected KIND@AGO"},
		{"meteor@3h", "the kind must be one of"},
		{"ap-down@-3h", "positive duration"},
		{"ap-down@soon", "positive duration"},
		{"ap-down@0s", "positive duration"},
	} {
		_, err := ParseIncident(tc.in)
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseIncident(%q) = %v, want %q", tc.in, err, tc.err)
		}
	}
	for _, tc := range []struct {
		cfg Config
		err string
	}{
		{Config{Sizes: defaults, Days: 7}, ""},
		{Config{Sizes: Sizes{0, 2, 6, 300}}, "--sites must be 1 to 100"},
		{Config{Sizes: Sizes{2, 51, 6, 300}}, "--floors must be 1 to 50"},
		{Config{Sizes: Sizes{2, 2, -1, 300}}, "--aps-per-floor must be 1 to 64"},
		{Config{Sizes: Sizes{2, 2, 6, 1_000_000}}, "--clients must be 1 to 100000"},
		{Config{Sizes: defaults, Days: -1}, "--days must be 0 to 30"},
		{Config{Sizes: defaults, Days: 365}, "--days must be 0 to 30"},
		{Config{Sizes: defaults, Days: 1, Incidents: []Incident{{Kind: RadiusDown, Ago: 25 * time.Hour}}}, "starts before the backfill"},
	} {
		err := tc.cfg.Check()
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Check(%+v) = %v, want %q", tc.cfg.Sizes, err, tc.err)
		}
	}
}
