package servicelevel_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/servicelevel"
	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/wnms"
)

func raw(records []string) apitest.Raw {
	return apitest.Raw{ContentType: "application/json", Body: []byte("[" + strings.Join(records, ",") + "]")}
}

// attempt is one connection attempt to ingest: at ms offset at of the
// hour, on radio bssid (channel ch, ssid), a Success with the phase
// timestamps given relative to its association (-1: absent), or a
// Failure code/sub.
type attempt struct {
	id         string
	bssid      string
	ch         int
	ssid       string
	code, sub  int   // Failure when code > 0
	auth, netw int64 // ms after association; -1 absent
	noAssoc    bool
}

func (a attempt) record(t0 int64, i int) string {
	ts := t0 + int64(i)*1000
	head := fmt.Sprintf(`{"eventId":%q,"macAddress":"aa:bb:cc:00:01:%02x","bssid":%q,"channel":%d,"ssid":%q,"timestamp":%d`,
		a.id, i, a.bssid, a.ch, a.ssid, ts+30_000)
	if a.code > 0 {
		return head + fmt.Sprintf(`,"eventType":"Failure","failureCode":%d,"subFailureCode":%d,"associationTimestamp":%d}`, a.code, a.sub, ts)
	}
	s := head + `,"eventType":"Success"`
	if !a.noAssoc {
		s += fmt.Sprintf(`,"associationTimestamp":%d`, ts)
	}
	if a.auth >= 0 {
		s += fmt.Sprintf(`,"authenticationTimestamp":%d`, ts+a.auth)
	}
	if a.netw >= 0 {
		s += fmt.Sprintf(`,"networkTimestamp":%d`, ts+a.netw)
	}
	return s + "}"
}

const (
	ap1corp  = "00:11:74:00:0a:01" // AP 1, floor 1, channel 36, corp
	ap1guest = "00:11:74:00:0a:02" // AP 1, floor 1, channel 6, guest
	ap2guest = "00:11:74:00:0b:01" // AP 2, floor 2, channel 1, guest
	ap3corp  = "00:11:74:00:0c:01" // AP 3, another folder
)

// The attempts of the test, worked out by hand below.
var attempts = []attempt{
	{id: "s1", bssid: ap1corp, ch: 36, ssid: "corp", auth: 500, netw: 1000},  // 1 s: within; phases equal
	{id: "s2", bssid: ap1corp, ch: 36, ssid: "corp", auth: 3000, netw: 4500}, // 4.5 s: slow in authentication
	{id: "s3", bssid: ap1corp, ch: 36, ssid: "corp", auth: 100, netw: 5100},  // 5.1 s: slow in DHCP
	{id: "s4", bssid: ap1corp, ch: 36, ssid: "corp", auth: -1, netw: -1},     // untimed: association only
	{id: "s5", bssid: ap1corp, ch: 36, ssid: "corp", auth: 4000, netw: -1},   // 4 s exactly, no DHCP: within
	{id: "f1", bssid: ap1corp, ch: 36, ssid: "corp", code: 2, sub: 203},
	{id: "f2", bssid: ap1corp, ch: 36, ssid: "corp", code: 3, sub: 303},
	{id: "s6", bssid: ap1guest, ch: 6, ssid: "guest", auth: 0, netw: 200}, // open network: within
	{id: "f3", bssid: ap1guest, ch: 6, ssid: "guest", code: 1, sub: 101},
	{id: "f4", bssid: ap1guest, ch: 6, ssid: "guest", code: 3, sub: 301},
	{id: "s7", bssid: ap2guest, ch: 1, ssid: "guest", auth: 100, netw: 4100}, // 4.1 s: slow in DHCP
	{id: "f5", bssid: ap2guest, ch: 1, ssid: "guest", code: 3, sub: 302},
	{id: "s8", bssid: ap3corp, ch: 36, ssid: "corp", auth: 100, netw: 200}, // elsewhere
	{id: "f6", bssid: ap3corp, ch: 36, ssid: "corp", code: 2, sub: 201},
}

func pct(v float64) *float64 { return &v }
func flag(v bool) *bool      { return &v }

// conn and ttc are the expected metrics: attempts and successes, the
// failures by association, authentication, dhcp, dns; timed Successes,
// those within, untimed, slow by authentication and dhcp.
func conn(goal float64, attempts, successes int64, assoc, auth, dhcp, dns int64) servicelevel.Metric {
	m := servicelevel.Metric{Metric: "successfulConnects", Target: servicelevel.Target{Goal: goal}, Count: attempts,
		Classifiers: []servicelevel.Classifier{{Name: "association", Count: assoc}, {Name: "authentication", Count: auth},
			{Name: "dhcp", Count: dhcp}, {Name: "dns", Count: dns}}}
	fill(&m, successes)
	return m
}

func ttc(goal, seconds float64, timed, within, untimed, auth, dhcp int64) servicelevel.Metric {
	m := servicelevel.Metric{Metric: "timeToConnect", Target: servicelevel.Target{Goal: goal, Seconds: &seconds}, Count: timed,
		Untimed: &untimed, Classifiers: []servicelevel.Classifier{{Name: "authentication", Count: auth}, {Name: "dhcp", Count: dhcp}}}
	fill(&m, within)
	return m
}

// lv is the metrics of attempts alone: conn and ttc, and the radio's
// (coverage, capacity, roaming) with nothing counted.
func lv(conn, ttc servicelevel.Metric) []servicelevel.Metric {
	return []servicelevel.Metric{conn, ttc, coverage(0, 0), capacity(0, 0), roaming(0, 0, 0)}
}

func coverage(samples, weak int64) servicelevel.Metric {
	rssi := wnms.CoverageRSSI
	m := servicelevel.Metric{Metric: "coverage", Target: servicelevel.Target{Goal: 90, RSSIDbm: &rssi}, Count: samples,
		Classifiers: []servicelevel.Classifier{{Name: "weakSignal", Count: weak}}}
	fill(&m, samples-weak)
	return m
}

func capacity(known, busy int64) servicelevel.Metric {
	util := wnms.BusyUtilizationPct
	m := servicelevel.Metric{Metric: "capacity", Target: servicelevel.Target{Goal: 90, UtilizationPct: &util}, Count: known,
		Classifiers: []servicelevel.Classifier{{Name: "busyRadio", Count: busy}}}
	fill(&m, known-busy)
	return m
}

func roaming(roams, slow, suboptimal int64) servicelevel.Metric {
	m := servicelevel.Metric{Metric: "roaming", Target: servicelevel.Target{Goal: 90}, Count: roams,
		Classifiers: []servicelevel.Classifier{{Name: "slowRoam", Count: slow}, {Name: "suboptimalRoam", Count: suboptimal}}}
	fill(&m, roams-slow-suboptimal)
	return m
}

// withGoal is m measured against goal instead.
func withGoal(m servicelevel.Metric, goal float64) servicelevel.Metric {
	m.Target.Goal = goal
	if m.Value != nil {
		m.Met = flag(*m.Value >= goal)
	}
	return m
}

// fill sets the value, met and shares the way the arithmetic of the
// answer says, rounded to two decimals by hand in the table below.
func fill(m *servicelevel.Metric, met int64) {
	if m.Count > 0 {
		v := roundPct(met, m.Count)
		m.Value, m.Met = &v, flag(v >= m.Target.Goal)
	}
	var rest int64
	for _, c := range m.Classifiers {
		rest += c.Count
	}
	for i := range m.Classifiers {
		if rest > 0 {
			m.Classifiers[i].Share = pct(roundPct(m.Classifiers[i].Count, rest))
		}
	}
}

// roundPct is the table of the percentages this test's counts give,
// worked out by hand (two decimals).
func roundPct(n, d int64) float64 {
	v, ok := map[[2]int64]float64{
		{7, 12}: 58.33, {1, 5}: 20, {2, 5}: 40, {3, 6}: 50, {1, 3}: 33.33, {2, 3}: 66.67, {5, 6}: 83.33,
		{6, 10}: 60, {1, 4}: 25, {3, 5}: 60, {1, 2}: 50, {0, 1}: 0, {1, 1}: 100, {0, 2}: 0, {2, 2}: 100,
		{5, 7}: 71.43, {2, 4}: 50, {0, 3}: 0, {3, 3}: 100, {0, 4}: 0, {4, 4}: 100, {4, 5}: 80, {0, 5}: 0, {5, 5}: 100,
		{8, 13}: 61.54, {6, 8}: 75, {6, 9}: 66.67, {3, 4}: 75, {4, 7}: 57.14, {2, 6}: 33.33, {4, 6}: 66.67, {6, 11}: 54.55, {7, 11}: 63.64,
	}[[2]int64{n, d}]
	if !ok {
		panic(fmt.Sprintf("no hand-worked value for %d/%d", n, d))
	}
	return v
}

type fixture struct {
	e                           *apitest.Env
	site, floor1, floor2, other *wnms.Location
	hour                        time.Time
	ap1, ap2                    int64
}

func setup(t *testing.T, b apitest.Backend) *fixture {
	e := apitest.New(t, b)
	now := time.Date(2026, 11, 20, 12, 0, 30, 0, time.UTC)
	clock := apitest.NewClock(now)
	e.UseClock(clock)
	e.API.Baselines.Now = clock.Now
	f := &fixture{e: e, hour: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)}
	f.site = e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
	f.floor1 = e.NewLocation(t, f.site.ID.ID, wnms.FloorLocation, "Floor 1", 1)
	f.floor2 = e.NewLocation(t, f.site.ID.ID, wnms.FloorLocation, "Floor 2", 1)
	f.other = e.NewLocation(t, 0, wnms.FolderLocation, "Other", 1)
	ap := func(mac, name string, l *wnms.Location, radios string) int64 {
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", raw([]string{fmt.Sprintf(`{"macaddress":%q,"name":%q,
			"locationId":{"type":"locallocationid","id":%d},"radios":[%s]}`, mac, name, l.ID.ID, radios)}))
		var aps []struct {
			BoxID      int64  `json:"boxId"`
			MacAddress string `json:"macAddress"`
		}
		e.Admin.Expect(200, "GET", "/V5/devices/aps?macaddress="+mac, nil).Decode(t, &aps)
		if len(aps) != 1 {
			t.Fatalf("AP %s: %+v", mac, aps)
		}
		return aps[0].BoxID
	}
	f.ap1 = ap("00:11:74:00:0a:00", "AP 1", f.floor1, fmt.Sprintf(`{"macaddress":%q,"channel":36,"ssid":"corp"},{"macaddress":%q,"channel":6,"ssid":"guest"}`, ap1corp, ap1guest))
	f.ap2 = ap("00:11:74:00:0b:00", "AP 2", f.floor2, fmt.Sprintf(`{"macaddress":%q,"channel":1,"ssid":"guest"}`, ap2guest))
	ap("00:11:74:00:0c:00", "AP 3", f.other, fmt.Sprintf(`{"macaddress":%q,"channel":36,"ssid":"corp"}`, ap3corp))
	var records []string
	for i, a := range attempts {
		records = append(records, a.record(f.hour.UnixMilli(), i))
	}
	e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", raw(records))
	return f
}

func (f *fixture) levels(t *testing.T, c *apitest.Client, query string) servicelevel.Levels {
	var got servicelevel.Levels
	c.Expect(200, "GET", fmt.Sprintf("/V5/servicelevels?fromtime=%d&totime=%d&%s", f.hour.UnixMilli()+10*60_000,
		f.hour.UnixMilli()+50*60_000, query), nil).Decode(t, &got)
	return got
}

// The service levels through HTTP, against numbers worked out by hand:
// the whole site and each grouping; another folder's attempts never
// count; an empty window counts nothing and has no value.
func TestServiceLevels(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := setup(t, b)
		e := f.e
		// The site: 12 attempts (s1–s7, f1–f5), 7 Successes; failures
		// association f3, authentication f1, dhcp f4 f5, dns f2. Timed: s1,
		// s2, s3, s5, s6, s7 (s4 untimed); within 4 s: s1, s5 (4 s exactly),
		// s6; slow: s2 in authentication, s3 and s7 in DHCP.
		site := lv(conn(95, 12, 7, 1, 1, 2, 1), ttc(90, 4, 6, 3, 1, 1, 2))
		floor1 := lv(conn(95, 10, 6, 1, 1, 1, 1), ttc(90, 4, 5, 3, 1, 1, 1))
		floor2 := lv(conn(95, 2, 1, 0, 0, 1, 0), ttc(90, 4, 1, 0, 0, 0, 1))
		corp := lv(conn(95, 7, 5, 0, 1, 0, 1), ttc(90, 4, 4, 2, 1, 1, 1))
		guest := lv(conn(95, 5, 2, 1, 0, 2, 0), ttc(90, 4, 2, 1, 0, 0, 1))
		from, to := f.hour.UnixMilli(), f.hour.UnixMilli()+3600_000
		loc := wnms.LocalID(f.site.ID.ID)
		for _, tc := range []struct {
			groupBy string
			groups  []servicelevel.Group
		}{
			{"none", []servicelevel.Group{}},
			{"floor", []servicelevel.Group{{Type: "floor", ID: float64(f.floor1.ID.ID), Name: "Floor 1", Metrics: floor1},
				{Type: "floor", ID: float64(f.floor2.ID.ID), Name: "Floor 2", Metrics: floor2}}},
			{"ap", []servicelevel.Group{{Type: "ap", ID: float64(f.ap1), Name: "AP 1", Metrics: floor1},
				{Type: "ap", ID: float64(f.ap2), Name: "AP 2", Metrics: floor2}}},
			{"ssid", []servicelevel.Group{{Type: "ssid", ID: "corp", Name: "corp", Metrics: corp},
				{Type: "ssid", ID: "guest", Name: "guest", Metrics: guest}}},
			{"band", []servicelevel.Group{{Type: "band", ID: wnms.Band5GHz, Name: wnms.Band5GHz, Metrics: corp},
				{Type: "band", ID: wnms.Band24GHz, Name: wnms.Band24GHz, Metrics: guest}}},
		} {
			got := f.levels(t, e.Admin, fmt.Sprintf("locationid=%d&groupby=%s", f.site.ID.ID, tc.groupBy))
			want := servicelevel.Levels{LocationID: loc, From: from, To: to, GroupBy: tc.groupBy, Metrics: site, Groups: tc.groups}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("groupby %s (-want +got):\n%s", tc.groupBy, d)
			}
		}
		// A floor alone; the other folder alone (s8, f6).
		if got := f.levels(t, e.Admin, fmt.Sprintf("locationid=%d", f.floor2.ID.ID)); cmp.Diff(floor2, got.Metrics) != "" {
			t.Errorf("floor 2: %s", cmp.Diff(floor2, got.Metrics))
		}
		other := lv(conn(95, 2, 1, 0, 1, 0, 0), ttc(90, 4, 1, 1, 0, 0, 0))
		if got := f.levels(t, e.Admin, fmt.Sprintf("locationid=%d", f.other.ID.ID)); cmp.Diff(other, got.Metrics) != "" {
			t.Errorf("other folder: %s", cmp.Diff(other, got.Metrics))
		}
		// An empty window: nothing counted, no value (never 100 %).
		var empty servicelevel.Levels
		e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/servicelevels?locationid=%d&groupby=ap&fromtime=%d&totime=%d", f.site.ID.ID,
			from-5*3600_000, from-3600_000-1), nil).Decode(t, &empty)
		wantEmpty := lv(conn(95, 0, 0, 0, 0, 0, 0), ttc(90, 4, 0, 0, 0, 0, 0))
		if d := cmp.Diff(wantEmpty, empty.Metrics); d != "" || len(empty.Groups) != 0 || empty.Metrics[0].Value != nil {
			t.Errorf("empty window: %s %+v", d, empty.Groups)
		}
	})
}

// A retried batch (some events stored already) recounts its hours from
// the stored events: the counts stay exact, with only the new event added.
func TestServiceLevelsRetry(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := setup(t, b)
		var records []string
		for i, a := range attempts {
			records = append(records, a.record(f.hour.UnixMilli(), i))
		}
		extra := attempt{id: "s9", bssid: ap2guest, ch: 1, ssid: "guest", auth: 100, netw: 300}
		records = append(records, extra.record(f.hour.UnixMilli(), len(attempts)))
		var res struct {
			Accepted, Duplicates int
		}
		f.e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", raw(records)).Decode(t, &res)
		if res.Accepted != 1 || res.Duplicates != len(attempts) {
			t.Fatalf("retry: %+v", res)
		}
		// The site: 13 attempts, 8 Successes; timed 7... s9 within.
		want := lv(conn(95, 13, 8, 1, 1, 2, 1), ttc(90, 4, 7, 4, 1, 1, 2))
		got := f.levels(t, f.e.Admin, fmt.Sprintf("locationid=%d", f.site.ID.ID))
		if d := cmp.Diff(want, got.Metrics); d != "" {
			t.Errorf("after the retry (-want +got):\n%s", d)
		}
	})
}

type targets struct {
	LocationID         wnms.LocationID  `json:"locationId"`
	DefinedAt          *wnms.LocationID `json:"definedAt"`
	SuccessfulConnects struct {
		Goal float64 `json:"goal"`
	} `json:"successfulConnects"`
	TimeToConnect struct {
		Seconds float64 `json:"seconds"`
		Goal    float64 `json:"goal"`
	} `json:"timeToConnect"`
	Coverage, Capacity, Roaming struct {
		Goal float64 `json:"goal"`
	}
}

func (f *fixture) targets(t *testing.T, l *wnms.Location) targets {
	var got targets
	f.e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/servicelevels/targets?locationid=%d", l.ID.ID), nil).Decode(t, &got)
	return got
}

// Targets per location: the defaults until set; a location's own
// targets apply to its subtree, a deeper location's own ones below it;
// the metrics are measured against locationid's applied targets; the
// change is audited with its fields; a bad target or parameter is the
// error body of decisions §3 and changes nothing.
func TestServiceLevelTargets(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := setup(t, b)
		e := f.e
		check := func(l *wnms.Location, definedAt *wnms.Location, goal, seconds, ttcGoal float64) {
			t.Helper()
			got := f.targets(t, l)
			if got.LocationID.ID != l.ID.ID || (definedAt == nil) != (got.DefinedAt == nil) ||
				(definedAt != nil && got.DefinedAt.ID != definedAt.ID.ID) || got.SuccessfulConnects.Goal != goal ||
				got.TimeToConnect.Seconds != seconds || got.TimeToConnect.Goal != ttcGoal {
				t.Errorf("targets of %s: %+v, want defined at %v: %v %v %v", l.Name, got, definedAt, goal, seconds, ttcGoal)
			}
		}
		check(f.floor1, nil, 95, 4, 90)
		put := func(l *wnms.Location, body string) *apitest.Response {
			return e.Admin.Do("PUT", fmt.Sprintf("/V5/servicelevels/targets?locationid=%d", l.ID.ID),
				apitest.Raw{ContentType: "application/json", Body: []byte(body)})
		}
		if r := put(f.site, `{"successfulConnects":{"goal":50},"timeToConnect":{"seconds":5,"goal":80}}`); r.Status != 200 {
			t.Fatalf("PUT site: %d %s", r.Status, r.Body)
		}
		check(f.site, f.site, 50, 5, 80)
		check(f.floor1, f.site, 50, 5, 80)
		check(f.other, nil, 95, 4, 90)
		// Within 5 s: s1, s2 (4.5 s), s5, s6, s7 (4.1 s) of 6; slow: s3 in DHCP.
		want := lv(conn(50, 12, 7, 1, 1, 2, 1), ttc(80, 5, 6, 5, 1, 0, 1))
		if got := f.levels(t, e.Admin, fmt.Sprintf("locationid=%d", f.site.ID.ID)); cmp.Diff(want, got.Metrics) != "" {
			t.Errorf("site against its targets (-want +got):\n%s", cmp.Diff(want, got.Metrics))
		}
		// The floor's own targets: 0.5 s; the site keeps its own.
		if r := put(f.floor1, `{"successfulConnects":{"goal":60},"timeToConnect":{"seconds":0.5,"goal":50}}`); r.Status != 200 {
			t.Fatalf("PUT floor: %d %s", r.Status, r.Body)
		}
		check(f.floor1, f.floor1, 60, 0.5, 50)
		check(f.site, f.site, 50, 5, 80)
		// Within 0.5 s on floor 1: s6 (0.2 s) of s1, s2, s3, s5, s6. Slow
		// in authentication: s1 (its phases are equal, 0.5 s each: the
		// tie goes to authentication), s2, s5 (4 s of authentication, no
		// DHCP); in DHCP: s3.
		want = lv(conn(60, 10, 6, 1, 1, 1, 1), ttc(50, 0.5, 5, 1, 1, 3, 1))
		if got := f.levels(t, e.Admin, fmt.Sprintf("locationid=%d", f.floor1.ID.ID)); cmp.Diff(want, got.Metrics) != "" {
			t.Errorf("floor 1 against its targets (-want +got):\n%s", cmp.Diff(want, got.Metrics))
		}
		// The audit record of the site's change names its fields.
		recs, _, err := e.Store.AuditRecords(t.Context(), wnms.AuditQuery{CustomerID: 1, From: -1, To: -1, ResourceType: "servicelevels", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 2 {
			t.Fatalf("audit records: %+v", recs)
		}
		site := recs[1]
		var fields []string
		for _, c := range site.Changes {
			fields = append(fields, c.Field+" "+string(c.Before)+"→"+string(c.After))
		}
		if site.ResourceID != fmt.Sprint(f.site.ID.ID) || site.Status != 200 || strings.Join(fields, ", ") !=
			"successfulConnects.goal 95→50, timeToConnect.goal 90→80, timeToConnect.seconds 4→5" {
			t.Errorf("audit record: %+v %v", site, fields)
		}

		// Bad targets change nothing.
		for _, tc := range []struct {
			query, body, code string
		}{
			{"", `{"successfulConnects":{"goal":101},"timeToConnect":{"seconds":4,"goal":90}}`, wnms.ValidationFailed},
			{"", `{"successfulConnects":{"goal":-1},"timeToConnect":{"seconds":4,"goal":90}}`, wnms.ValidationFailed},
			{"", `{"successfulConnects":{"goal":90},"timeToConnect":{"seconds":4,"goal":100.5}}`, wnms.ValidationFailed},
			{"", `{"successfulConnects":{"goal":90},"timeToConnect":{"seconds":0,"goal":90}}`, wnms.ValidationFailed},
			{"", `{"successfulConnects":{"goal":90},"timeToConnect":{"seconds":60.1,"goal":90}}`, wnms.ValidationFailed},
			{"", `{"successfulConnects":{"goal":90},"timeToConnect":{"seconds":4.05,"goal":90}}`, wnms.ValidationFailed},
			{"", `{"successfulConnects":{"goal":90},"timeToConnect":{"seconds":4.2,"goal":90}}`, wnms.ValidationFailed},
			{"", `{"successfulConnects":{"goal":90},"timeToConnect":{"goal":90}}`, wnms.ValidationFailed},
			{"", `{"successfulConnects":{"goal":90}}`, wnms.ValidationFailed},
			{"", `{"timeToConnect":{"seconds":4,"goal":90}}`, wnms.ValidationFailed},
			{"", `{"successfulConnects":{"goal":"high"},"timeToConnect":{"seconds":4,"goal":90}}`, wnms.InvalidRequestBody},
			{"", `[1]`, wnms.InvalidRequestBody},
			{"", `{`, wnms.InvalidRequestBody},
			{"none", `{"successfulConnects":{"goal":90},"timeToConnect":{"seconds":4,"goal":90}}`, wnms.MissingParameter},
			{"locationid=abc", `{"successfulConnects":{"goal":90},"timeToConnect":{"seconds":4,"goal":90}}`, wnms.InvalidParameter},
		} {
			path := fmt.Sprintf("/V5/servicelevels/targets?locationid=%d", f.site.ID.ID)
			switch tc.query {
			case "none":
				path = "/V5/servicelevels/targets"
			case "":
			default:
				path = "/V5/servicelevels/targets?" + tc.query
			}
			r := e.Admin.Do("PUT", path, apitest.Raw{ContentType: "application/json", Body: []byte(tc.body)})
			if r.Status != 400 || r.ErrorCode() != tc.code {
				t.Errorf("PUT %s %s: %d %s, want 400 %s", path, tc.body, r.Status, r.Body, tc.code)
			}
		}
		check(f.site, f.site, 50, 5, 80)
		check(f.floor1, f.floor1, 60, 0.5, 50)

		// The radio goals: 90 until set; one set is kept by a PUT that
		// leaves it out; its threshold may be sent back, not changed.
		radio := func(l *wnms.Location) [3]float64 {
			got := f.targets(t, l)
			return [3]float64{got.Coverage.Goal, got.Capacity.Goal, got.Roaming.Goal}
		}
		if got := radio(f.site); got != [3]float64{90, 90, 90} {
			t.Errorf("the site's radio goals before any: %v", got)
		}
		if r := put(f.site, `{"successfulConnects":{"goal":50},"timeToConnect":{"seconds":5,"goal":80},"coverage":{"goal":85,"rssiDbm":-72},"capacity":{"goal":75,"utilizationPct":70},"roaming":{"goal":99.5}}`); r.Status != 200 {
			t.Fatalf("PUT radio goals: %d %s", r.Status, r.Body)
		}
		if got := radio(f.site); got != [3]float64{85, 75, 99.5} {
			t.Errorf("the site's radio goals: %v", got)
		}
		if got := radio(f.floor1); got != [3]float64{90, 90, 90} {
			t.Errorf("floor 1 (targets of its own, radio goals never set): %v", got)
		}
		if r := put(f.site, `{"successfulConnects":{"goal":50},"timeToConnect":{"seconds":5,"goal":80},"capacity":{"goal":60}}`); r.Status != 200 {
			t.Fatalf("PUT one radio goal: %d %s", r.Status, r.Body)
		}
		if got := radio(f.site); got != [3]float64{85, 60, 99.5} {
			t.Errorf("the site's radio goals after a PUT of capacity alone: %v", got)
		}
		for _, body := range []string{
			`{"successfulConnects":{"goal":50},"timeToConnect":{"seconds":5,"goal":80},"coverage":{"goal":101}}`,
			`{"successfulConnects":{"goal":50},"timeToConnect":{"seconds":5,"goal":80},"roaming":{}}`,
			`{"successfulConnects":{"goal":50},"timeToConnect":{"seconds":5,"goal":80},"coverage":{"goal":80,"rssiDbm":-65}}`,
			`{"successfulConnects":{"goal":50},"timeToConnect":{"seconds":5,"goal":80},"capacity":{"goal":80,"utilizationPct":50}}`,
			`{"successfulConnects":{"goal":50},"timeToConnect":{"seconds":5,"goal":80},"roaming":{"goal":80,"rssiDbm":-72}}`,
		} {
			if r := put(f.site, body); r.Status != 400 || r.ErrorCode() != wnms.ValidationFailed {
				t.Errorf("PUT %s: %d %s, want 400 VALIDATION_FAILED", body, r.Status, r.Body)
			}
		}
		if got := radio(f.site); got != [3]float64{85, 60, 99.5} {
			t.Errorf("refused PUTs changed the site's radio goals: %v", got)
		}
		check(f.site, f.site, 50, 5, 80)

		// Bad parameters of the read.
		hour := f.hour.UnixMilli()
		for _, tc := range []struct{ query, code string }{
			{"groupby=room", wnms.InvalidParameter},
			{"groupby=", ""},
			{"locationid=abc", wnms.InvalidParameter},
			{fmt.Sprintf("fromtime=%d&totime=%d", hour, hour-1), wnms.InvalidParameter},
			{fmt.Sprintf("fromtime=%d&totime=%d", hour-32*24*3600_000, hour), wnms.InvalidParameter},
			{"fromtime=yesterday", wnms.InvalidParameter},
		} {
			r := e.Admin.Do("GET", "/V5/servicelevels?"+tc.query, nil)
			if tc.code == "" {
				if r.Status != 200 {
					t.Errorf("GET %s: %d %s", tc.query, r.Status, r.Body)
				}
				continue
			}
			if r.Status != 400 || r.ErrorCode() != tc.code {
				t.Errorf("GET %s: %d %s, want 400 %s", tc.query, r.Status, r.Body, tc.code)
			}
		}
		if r := e.Admin.Do("GET", "/V5/servicelevels/targets?locationid=x", nil); r.Status != 400 || r.ErrorCode() != wnms.InvalidParameter {
			t.Errorf("GET targets locationid=x: %d %s", r.Status, r.Body)
		}
	})
}

// A grouped answer lists the 50 groups with the most attempts and sums
// the rest into one group of type other.
func TestServiceLevelsGroupCap(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := setup(t, b)
		// 52 more SSIDs on AP 2: ssid-00 to ssid-49 with 2 attempts each
		// (a Success and a Failure), ssid-50 and ssid-51 with one Success.
		var records []string
		i := 0
		for s := range 52 {
			n := 2
			if s >= 50 {
				n = 1
			}
			for k := range n {
				a := attempt{id: fmt.Sprintf("g%d", i), bssid: ap2guest, ch: 1, ssid: fmt.Sprintf("ssid-%02d", s), auth: 100, netw: 200}
				if k == 1 {
					a.code, a.sub = 2, 201
				}
				records = append(records, a.record(f.hour.UnixMilli()+100_000, i))
				i++
			}
		}
		f.e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", raw(records))
		got := f.levels(t, f.e.Admin, fmt.Sprintf("locationid=%d&groupby=ssid", f.site.ID.ID))
		if len(got.Groups) != 51 {
			t.Fatalf("%d groups, want 50 and other", len(got.Groups))
		}
		// corp (7 attempts) and guest (5) first, then ssid-00 to ssid-47
		// (2 each, by name); ssid-48, ssid-49 (2 each), ssid-50 and ssid-51
		// (1 each) are the 4 more: 6 attempts, 4 Successes.
		if got.Groups[0].ID != "corp" || got.Groups[1].ID != "guest" || got.Groups[2].ID != "ssid-00" || got.Groups[49].ID != "ssid-47" {
			t.Errorf("groups: %v %v %v %v", got.Groups[0].ID, got.Groups[1].ID, got.Groups[2].ID, got.Groups[49].ID)
		}
		other := got.Groups[50]
		want := lv(conn(95, 6, 4, 0, 2, 0, 0), ttc(90, 4, 4, 4, 0, 0, 0))
		if other.Type != "other" || other.ID != nil || other.Name != "4 more" || cmp.Diff(want, other.Metrics) != "" {
			t.Errorf("other: %+v %s", other, cmp.Diff(want, other.Metrics))
		}
		if got.Metrics[0].Count != 12+102 {
			t.Errorf("the whole site counted %d attempts", got.Metrics[0].Count)
		}
	})
}

// rawTelemetry opens the env's telemetry database behind the store's
// back: to put it in the state of a store upgraded from before ingest
// kept the service level counts.
func rawTelemetry(t *testing.T, e *apitest.Env) *sql.DB {
	t.Helper()
	driver, dsn := "sqlite", filepath.Join(e.Config.DataDir, store.TelemetryFile)
	if e.Backend == apitest.Postgres {
		driver, dsn = "pgx", e.Config.DatabaseURL
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// An upgraded store's attempts stored before ingest kept their counts are
// counted by the background backfill, exactly as ingest counts them, from
// the oldest hour retention keeps; a new store has nothing to backfill;
// the backfill leaves nothing behind once done.
func TestServiceLevelsBackfill(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		for _, tc := range []struct {
			name      string
			retention time.Duration
			want      []servicelevel.Metric
		}{
			{"within retention", 30 * 24 * time.Hour, lv(conn(95, 12, 7, 1, 1, 2, 1), ttc(90, 4, 6, 3, 1, 1, 2))},
			{"older than retention", time.Hour, lv(conn(95, 0, 0, 0, 0, 0, 0), ttc(90, 4, 0, 0, 0, 0, 0))},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f := setup(t, b)
				db := rawTelemetry(t, f.e)
				ctx := context.Background()
				left := func() int {
					t.Helper()
					var n int
					if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM service_level_backfill`).Scan(&n); err != nil {
						t.Fatal(err)
					}
					return n
				}
				if n := left(); n != 0 {
					t.Fatalf("a new store has %d backfill rows", n)
				}
				// The state a migration leaves on a store whose attempts
				// were stored uncounted.
				for _, q := range []string{`DELETE FROM service_level_hours`, `DELETE FROM service_level_slow`,
					`INSERT INTO service_level_backfill (next_hour, until_ms)
					SELECT MIN(ts) - MIN(ts) % 3600000, MAX(ts) + 1 FROM client_events HAVING COUNT(*) > 0`} {
					if _, err := db.ExecContext(ctx, q); err != nil {
						t.Fatal(err)
					}
				}
				site := fmt.Sprintf("locationid=%d", f.site.ID.ID)
				if got := f.levels(t, f.e.Admin, site); got.Metrics[0].Count != 0 {
					t.Fatalf("uncounted store counts %d attempts", got.Metrics[0].Count)
				}
				f.e.API.ServiceLevels.Backfill(ctx, tc.retention, slog.New(slog.NewTextHandler(f.e.Logs, nil)))
				if d := cmp.Diff(tc.want, f.levels(t, f.e.Admin, site).Metrics); d != "" {
					t.Errorf("after the backfill (-want +got):\n%s", d)
				}
				if n := left(); n != 0 {
					t.Errorf("%d backfill rows left", n)
				}
				// Once done, a restart's backfill has nothing to do.
				f.e.API.ServiceLevels.Backfill(ctx, tc.retention, slog.New(slog.NewTextHandler(f.e.Logs, nil)))
				if d := cmp.Diff(tc.want, f.levels(t, f.e.Admin, site).Metrics); d != "" {
					t.Errorf("after a second backfill (-want +got):\n%s", d)
				}
			})
		}
	})
}

// The radio's service levels through HTTP, against numbers worked out by
// hand: coverage counts the client samples under -72 dBm, capacity those
// whose radio was known busy (a radio sample at or over 70 %), roaming
// the roams the ingest found, slow or suboptimal; a retried batch counts
// nothing twice, and one with a new sample among stored ones adds it.
func TestRadioServiceLevels(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := setup(t, b)
		e := f.e
		t0 := f.hour.UnixMilli() + 20*60_000
		e.Admin.Expect(200, "POST", "/V5/ingest/radiostats", raw([]string{
			fmt.Sprintf(`{"bssid":%q,"timestamp":%d,"utilizationPct":80}`, ap1corp, t0-1000),
			fmt.Sprintf(`{"bssid":%q,"timestamp":%d,"utilizationPct":20}`, ap2guest, t0-1000)}))
		sample := func(mac, bssid string, ch int, ssid string, ts int64, rssi int) string {
			return fmt.Sprintf(`{"macAddress":%q,"bssid":%q,"channel":%d,"ssid":%q,"timestamp":%d,"rssi":%d,"dataRateMbps":50}`,
				mac, bssid, ch, ssid, ts, rssi)
		}
		samples := []string{
			// AP 1 corp, busy: two of three weak.
			sample("02:00:00:00:00:0a", ap1corp, 36, "corp", t0, -60),
			sample("02:00:00:00:00:0b", ap1corp, 36, "corp", t0, -75),
			sample("02:00:00:00:00:0c", ap1corp, 36, "corp", t0, -80),
			// AP 2 guest, not busy.
			sample("02:00:00:00:00:0d", ap2guest, 1, "guest", t0, -50),
			sample("02:00:00:00:00:0e", ap2guest, 1, "guest", t0, -65),
			// AP 1 guest, utilisation not known: the roamers before they roam.
			sample("02:00:00:00:00:0f", ap1guest, 6, "guest", t0, -70),
			sample("02:00:00:00:00:10", ap1guest, 6, "guest", t0, -68),
			sample("02:00:00:00:00:11", ap1guest, 6, "guest", t0, -60),
		}
		for range 2 { // the retry counts nothing twice
			e.Admin.Expect(200, "POST", "/V5/ingest/clientstats", raw(samples))
		}
		join := func(mac string, ts, auth int64, rssi int) string {
			return fmt.Sprintf(`{"macAddress":%q,"bssid":%q,"channel":1,"ssid":"guest","timestamp":%d,"eventType":"Success","associationTimestamp":%d,"authenticationTimestamp":%d,"rssi":%d}`,
				mac, ap2guest, ts, ts, auth, rssi)
		}
		leave := fmt.Sprintf(`{"macAddress":"02:00:00:00:00:0f","bssid":%q,"channel":6,"ssid":"guest","timestamp":%d,"eventType":"Intermediate","categoryCode":1,"typeCode":3}`,
			ap1guest, t0+1000)
		e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", raw([]string{
			leave, join("02:00:00:00:00:0f", t0+1500, t0+1600, -60), // 600 ms, full authentication: good
			join("02:00:00:00:00:10", t0+3000, t0+3500, -66), // 3.5 s: slow
			join("02:00:00:00:00:11", t0+1000, t0+1200, -78), // under -72 dBm: suboptimal
		}))
		radio := func(m []servicelevel.Metric) []servicelevel.Metric { return m[2:] }
		want := []servicelevel.Metric{coverage(8, 2), capacity(5, 3), roaming(3, 1, 1)}
		got := f.levels(t, e.Admin, fmt.Sprintf("locationid=%d&groupby=floor", f.site.ID.ID))
		if d := cmp.Diff(want, radio(got.Metrics)); d != "" {
			t.Errorf("site (-want +got):\n%s", d)
		}
		floors := map[string][]servicelevel.Metric{
			"Floor 1": {coverage(6, 2), capacity(3, 3), roaming(0, 0, 0)},
			"Floor 2": {coverage(2, 0), capacity(2, 0), roaming(3, 1, 1)},
		}
		for _, g := range got.Groups {
			if d := cmp.Diff(floors[g.Name], radio(g.Metrics)); d != "" {
				t.Errorf("%s (-want +got):\n%s", g.Name, d)
			}
		}
		// A batch with one new sample among stored ones adds that one.
		e.Admin.Expect(200, "POST", "/V5/ingest/clientstats", raw(append(samples[:1:1],
			sample("02:00:00:00:00:12", ap1corp, 36, "corp", t0, -90))))
		got = f.levels(t, e.Admin, fmt.Sprintf("locationid=%d", f.site.ID.ID))
		want = []servicelevel.Metric{coverage(9, 3), capacity(6, 4), roaming(3, 1, 1)}
		if d := cmp.Diff(want, radio(got.Metrics)); d != "" {
			t.Errorf("after the partial retry (-want +got):\n%s", d)
		}
		// The site's own radio goals: the same counts measured against them.
		e.Admin.Expect(200, "PUT", fmt.Sprintf("/V5/servicelevels/targets?locationid=%d", f.site.ID.ID), json.RawMessage(
			`{"successfulConnects":{"goal":95},"timeToConnect":{"seconds":4,"goal":90},"coverage":{"goal":60,"rssiDbm":-72},"roaming":{"goal":30}}`))
		got = f.levels(t, e.Admin, fmt.Sprintf("locationid=%d", f.site.ID.ID))
		want = []servicelevel.Metric{withGoal(coverage(9, 3), 60), capacity(6, 4), withGoal(roaming(3, 1, 1), 30)}
		if d := cmp.Diff(want, radio(got.Metrics)); d != "" {
			t.Errorf("against the site's radio goals (-want +got):\n%s", d)
		}
		if *got.Metrics[2].Met != true || *got.Metrics[4].Met != true || *got.Metrics[3].Met != false {
			t.Errorf("met against the site's goals: coverage %v, capacity %v, roaming %v", *got.Metrics[2].Met, *got.Metrics[3].Met, *got.Metrics[4].Met)
		}
	})
}
