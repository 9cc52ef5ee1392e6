package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

const incidentSlot = 15 * time.Minute

// incidentEnv is a server at 12:00:30 with two sites: A with floors A1 and
// A2, B with floor B1.
type incidentEnv struct {
	e          *apitest.Env
	clock      *apitest.Clock
	a, b       *wnms.Location
	a1, a2, b1 *wnms.Location
}

var incidentNow = time.Date(2026, 11, 20, 12, 0, 30, 0, time.UTC)

func newIncidentEnv(t *testing.T, b apitest.Backend) *incidentEnv {
	e := apitest.New(t, b)
	clock := apitest.NewClock(incidentNow)
	e.UseClock(clock)
	e.API.Baselines.Now = clock.Now
	x := &incidentEnv{e: e, clock: clock}
	x.a = e.NewLocation(t, 0, wnms.FolderLocation, "Site A", 1)
	x.a1 = e.NewLocation(t, x.a.ID.ID, wnms.FloorLocation, "A1", 1)
	x.a2 = e.NewLocation(t, x.a.ID.ID, wnms.FloorLocation, "A2", 1)
	x.b = e.NewLocation(t, 0, wnms.FolderLocation, "Site B", 1)
	x.b1 = e.NewLocation(t, x.b.ID.ID, wnms.FloorLocation, "B1", 1)
	return x
}

// at is the start of the slot h:m today.
func at(h, m int) int64 { return time.Date(2026, 11, 20, h, m, 0, 0, time.UTC).UnixMilli() }

// anomaly records a connectivity anomaly of floor l in slot as the
// evaluation would, raised now.
func (x *incidentEnv) anomaly(t *testing.T, l *wnms.Location, slot int64) {
	t.Helper()
	if _, err := x.e.Store.RecordAnomaly(context.Background(), wnms.Anomaly{CustomerID: 1, LocationID: l.ID.ID,
		Kind: "clientsconnectivity", Slot: slot, Observation: 50, Baseline: 0, Threshold: 10, RaisedAt: x.clock.Now().UnixMilli()}); err != nil {
		t.Fatal(err)
	}
}

// evaluate runs the anomaly evaluation (which marks how far it got) and
// then the grouping, as the server does every minute.
func (x *incidentEnv) evaluate(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := x.e.API.Baselines.EvaluateCustomer(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := x.e.API.Incidents.Group(ctx, 1); err != nil {
		t.Fatal(err)
	}
}

type incidentList struct {
	Incidents    []wnms.Incident `json:"incidents"`
	TotalCount   int             `json:"totalCount"`
	PreviousLink *string         `json:"previousLink"`
	NextLink     *string         `json:"nextLink"`
}

// spans lists the incidents as "site floors from-to" in local clock
// times, "open" for an open one, oldest first.
func (x *incidentEnv) spans(t *testing.T, c *apitest.Client, query string) []string {
	t.Helper()
	var page incidentList
	c.Expect(http.StatusOK, "GET", "/V5/incidents?fromtime="+fmt.Sprint(at(6, 0))+query, nil).Decode(t, &page)
	names := map[int64]string{x.a.ID.ID: "A", x.b.ID.ID: "B", x.a1.ID.ID: "A1", x.a2.ID.ID: "A2", x.b1.ID.ID: "B1"}
	out := []string{}
	for _, in := range slices.Backward(page.Incidents) {
		var floors []string
		for _, f := range in.Floors {
			floors = append(floors, names[f])
		}
		to := "open"
		if in.To != nil {
			to = time.UnixMilli(*in.To).UTC().Format("15:04")
		}
		out = append(out, fmt.Sprintf("%s %s %s-%s", names[in.SiteLocationID], strings.Join(floors, ","),
			time.UnixMilli(in.From).UTC().Format("15:04"), to))
	}
	if page.TotalCount != len(page.Incidents) {
		t.Errorf("totalCount %d, %d incidents", page.TotalCount, len(page.Incidents))
	}
	return out
}

// Anomalous slots group per site: two floors of one site in adjacent
// slots are one incident, another site's are its own, a gap of two slots
// starts a new incident, one slot between them does not; an incident
// closes once the evaluation passed its last slot by more than one slot;
// anomalies recorded late join (and may merge) the incidents of their
// slots or form their own; each opening and closing is announced once on
// the event stream, also when two replicas group at once.
func TestIncidentGrouping(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		x := newIncidentEnv(t, b)
		e := x.e
		startHub(t, e)
		stream := openStream(t, e, e.Admin, -1, "?kinds=incidentOpened,incidentClosed")
		x.anomaly(t, x.a1, at(10, 0))
		x.anomaly(t, x.a2, at(10, 15))
		x.anomaly(t, x.b1, at(10, 0))
		x.anomaly(t, x.a1, at(11, 0)) // 10:30 and 10:45 clear: a new incident
		x.anomaly(t, x.a2, at(11, 30))
		x.evaluate(t) // evaluated through 11:45
		if b == apitest.Postgres {
			// Two replicas group the same anomalies at once (each from
			// its own cursor): each incident is opened and closed once.
			x.e.Store.PutSetting(context.Background(), "incident_cursor:1", "")
			other := apitest.NewAt(t, b, e.Config)
			other.API.Incidents.Now, other.API.Baselines.Now = x.clock.Now, x.clock.Now
			errs := make(chan error, 2)
			for _, r := range []*apitest.Env{e, other} {
				go func() { errs <- r.API.Incidents.Group(context.Background(), 1) }()
			}
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
		}
		want := []string{"A A1,A2 10:00-10:30", "B B1 10:00-10:15", "A A1,A2 11:00-open"}
		if got := x.spans(t, e.Admin, ""); !slices.Equal(got, want) {
			t.Fatalf("incidents %q, want %q", got, want)
		}
		if got := x.spans(t, e.Admin, "&state=open"); !slices.Equal(got, want[2:]) {
			t.Errorf("open incidents %q", got)
		}
		if got := x.spans(t, e.Admin, "&state=closed"); !slices.Equal(got, want[:2]) {
			t.Errorf("closed incidents %q", got)
		}
		if got := x.spans(t, e.Admin, fmt.Sprintf("&locationid=%d", x.b1.ID.ID)); !slices.Equal(got, want[1:2]) {
			t.Errorf("incidents of floor B1 %q", got)
		}

		// 12:15: the evaluation passed 11:30 by two slots; the incident
		// closes at the end of its last slot.
		x.clock.Set(incidentNow.Add(incidentSlot))
		x.evaluate(t)
		want[2] = "A A1,A2 11:00-11:45"
		if got := x.spans(t, e.Admin, ""); !slices.Equal(got, want) {
			t.Fatalf("incidents %q, want %q", got, want)
		}

		// Late data: an anomaly of A1 at 10:45 chains both incidents of A
		// (one slot from each); one of B1 at 08:00 is an incident of its
		// own, closed at once.
		x.clock.Advance(time.Minute)
		x.anomaly(t, x.a1, at(10, 45))
		x.anomaly(t, x.b1, at(8, 0))
		x.evaluate(t)
		want = []string{"B B1 08:00-08:15", "A A1,A2 10:00-11:45", "B B1 10:00-10:15"}
		if got := x.spans(t, e.Admin, ""); !slices.Equal(got, want) {
			t.Fatalf("after late anomalies: incidents %q, want %q", got, want)
		}
		// Grouping again changes nothing and announces nothing.
		x.evaluate(t)
		if got := x.spans(t, e.Admin, ""); !slices.Equal(got, want) {
			t.Fatalf("grouped again: incidents %q, want %q", got, want)
		}

		// 12:30: a new incident of A opens at 12:15; a late anomaly at
		// 12:00 bridges it with the closed one before (one slot from
		// each): one incident, open, until the evaluation passes 12:15.
		x.clock.Set(incidentNow.Add(2*incidentSlot + 2*time.Minute))
		x.anomaly(t, x.a2, at(12, 15))
		x.evaluate(t)
		x.clock.Advance(time.Minute)
		x.anomaly(t, x.a1, at(12, 0))
		x.evaluate(t)
		want[1] = "A A1,A2 10:00-open"
		if got := x.spans(t, e.Admin, ""); !slices.Equal(got, want) {
			t.Fatalf("after a bridge to an open incident: incidents %q, want %q", got, want)
		}
		x.clock.Advance(2 * incidentSlot)
		x.evaluate(t)
		want[1] = "A A1,A2 10:00-12:30"
		if got := x.spans(t, e.Admin, ""); !slices.Equal(got, want) {
			t.Fatalf("closed: incidents %q, want %q", got, want)
		}

		// Announced: three opened and closed by the first runs, then the
		// 11:00 incident closed, then the late incident of B opened and
		// closed, then the 12:15 incident opened and (merged) closed.
		got := stream.next(t, 10)
		var kinds []string
		for _, ev := range got {
			kinds = append(kinds, ev.Kind)
		}
		opened, closed := 0, 0
		for _, k := range kinds {
			switch k {
			case wnms.EventIncidentOpened:
				opened++
			case wnms.EventIncidentClosed:
				closed++
			}
		}
		if opened != 5 || closed != 5 {
			t.Errorf("events %q: want 5 opened and 5 closed", kinds)
		}
		stream.none(t, "admin")
	})
}

// ingestAPAndEvents makes floor's AP (channel 36, SSIDs corp and guest)
// and posts the records.
func ingestAP(t *testing.T, e *apitest.Env, floor *wnms.Location, mac, bssid, name string) {
	t.Helper()
	e.Admin.Expect(http.StatusOK, "POST", "/V5/ingest/aps", apitest.Raw{ContentType: "application/json", Body: []byte(fmt.Sprintf(
		`[{"macaddress":%q,"name":%q,"locationId":{"type":"locallocationid","id":%d},
		"radios":[{"macaddress":%q,"channel":36,"ssid":"corp"}]}]`, mac, name, floor.ID.ID, bssid))})
}

// clientEvents are n clients' events at t on the AP of bssid and ssid:
// when fail, each client's three attempts, two failing with 2/203 (RADIUS
// server unreachable) and one with 2/202 (credentials rejected), as
// clients retrying through an outage see; else a Success.
func clientEvents(prefix string, first, n int, bssid, ssid string, t time.Time, fail bool) []string {
	var out []string
	for i := first; i < first+n; i++ {
		head := fmt.Sprintf(`{"eventId":"%s-%d","macAddress":"aa:bb:cc:00:01:%02x","bssid":%q,"channel":36,"ssid":%q,"timestamp":%d`,
			prefix, i, i, bssid, ssid, t.UnixMilli()+int64(i)*1000)
		if fail {
			for k, sub := range []int{202, 203, 203} {
				head := fmt.Sprintf(`{"eventId":"%s-%d-%d","macAddress":"aa:bb:cc:00:01:%02x","bssid":%q,"channel":36,"ssid":%q,"timestamp":%d`,
					prefix, i, k, i, bssid, ssid, t.UnixMilli()+int64(i)*1000+int64(k)*100_000)
				out = append(out, head+fmt.Sprintf(`,"eventType":"Failure","failureCode":2,"subFailureCode":%d}`, sub))
			}
		} else {
			out = append(out, head+`,"eventType":"Success","dhcpLatency":1,"aaaLatency":1,"dnsLatency":0}`)
		}
	}
	return out
}

// A RADIUS outage: every corp client fails authentication, mostly with
// 2/203, once with 2/202. The cause is stage authentication with 2/203
// for all of them (each client counts for its most frequent failure); the
// scope is the SSID corp when guest clients of the same AP got on, and the
// site when corp was all there was. The peak counts the slot's clients.
func TestIncidentCauseAndScope(t *testing.T) {
	for _, tc := range []struct {
		name          string
		guests        int
		scope, id     string
		attempting    int
		evidenceTypes string
	}{
		{"ssid", 5, "ssid", "corp", 15, "reason ap ssid band floor"},
		{"site", 0, "site", "", 10, "reason ap ssid band floor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
				x := newIncidentEnv(t, b)
				e := x.e
				const bssid = "00:11:74:00:0b:01"
				ingestAP(t, e, x.a1, "00:11:74:00:0b:00", bssid, "AP corridor")
				slot := time.UnixMilli(at(11, 30))
				records := clientEvents("corp", 0, 10, bssid, "corp", slot, true)
				records = append(records, clientEvents("guest", 10, tc.guests, bssid, "guest", slot, false)...)
				e.Admin.Expect(http.StatusOK, "POST", "/V5/ingest/clientevents", apitest.Raw{ContentType: "application/json",
					Body: []byte("[" + strings.Join(records, ",") + "]")})
				x.evaluate(t) // computes the slot's observations
				x.anomaly(t, x.a1, at(11, 30))
				x.evaluate(t)

				var page incidentList
				e.Admin.Expect(http.StatusOK, "GET", "/V5/incidents", nil).Decode(t, &page)
				if len(page.Incidents) != 1 {
					t.Fatalf("incidents %+v", page)
				}
				in := page.Incidents[0]
				c := in.Cause
				if c == nil || c.Stage != "authentication" || c.Reason.FailureCode == nil || *c.Reason.FailureCode != 2 ||
					c.Reason.SubFailureCode == nil || *c.Reason.SubFailureCode != 203 || c.Reason.Text != "RADIUS server unreachable" ||
					c.Share != 1 {
					t.Errorf("cause %+v", c)
				}
				wantID := tc.id
				wantName := tc.id
				if tc.scope == "site" {
					wantID, wantName = fmt.Sprint(x.a.ID.ID), "Site A"
				}
				if in.Scope != (wnms.IncidentScope{Type: tc.scope, ID: wantID, Name: wantName, Share: 1}) {
					t.Errorf("scope %+v", in.Scope)
				}
				if in.Peak != (wnms.IncidentPeak{Timestamp: at(11, 30), Observation: 50, AffectedClients: 10, AttemptingClients: tc.attempting}) {
					t.Errorf("peak %+v", in.Peak)
				}
				if in.Kind != "clientsconnectivity" || in.To != nil || in.Acknowledged || !slices.Equal(in.Floors, []int64{x.a1.ID.ID}) {
					t.Errorf("incident %+v", in)
				}
				var types []string
				for _, f := range in.Evidence {
					types = append(types, f.Type)
					if f.Clients != 10 {
						t.Errorf("evidence %+v: want 10 clients", f)
					}
					switch f.Type {
					case "reason":
						if f.ID != "2/203" || f.Name != "RADIUS server unreachable" {
							t.Errorf("evidence %+v", f)
						}
					case "ap":
						if !strings.EqualFold(f.ID, "00:11:74:00:0b:00") || f.Name != "AP corridor" {
							t.Errorf("evidence %+v", f)
						}
					case "band":
						if f.ID != wnms.Band5GHz {
							t.Errorf("evidence %+v", f)
						}
					}
				}
				if strings.Join(types, " ") != tc.evidenceTypes {
					t.Errorf("evidence %+v", in.Evidence)
				}
				var one wnms.Incident
				e.Admin.Expect(http.StatusOK, "GET", fmt.Sprintf("/V5/incidents/%d", in.ID), nil).Decode(t, &one)
				if one.ID != in.ID || one.Scope != in.Scope {
					t.Errorf("GET by id: %+v", one)
				}
			})
		})
	}
}

// Who may do what: every role reads the incidents of the sites it sees;
// OPERATOR and above acknowledge (audited), a VIEWER may not; another
// customer's incident is not found; one at a site outside the caller's
// locations is not found, and a locationid outside them is refused.
// Bad parameters are refused with the error body and change nothing.
func TestIncidentAccess(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		x := newIncidentEnv(t, b)
		e := x.e
		x.anomaly(t, x.a1, at(11, 0))
		x.anomaly(t, x.b1, at(11, 0))
		x.evaluate(t)
		var page incidentList
		e.Admin.Expect(http.StatusOK, "GET", "/V5/incidents", nil).Decode(t, &page)
		if len(page.Incidents) != 2 {
			t.Fatalf("incidents %+v", page)
		}
		ids := map[int64]int64{} // site → incident
		for _, in := range page.Incidents {
			ids[in.SiteLocationID] = in.ID
		}
		inA, inB := ids[x.a.ID.ID], ids[x.b.ID.ID]

		_, viewer := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer})
		_, operator := e.NewUser(t, apitest.UserSpec{Role: wnms.Operator})
		_, siteB := e.NewUser(t, apitest.UserSpec{Role: wnms.Operator, Locations: []int64{x.b.ID.ID}})
		_, foreign := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
		ack := func(id int64) string { return fmt.Sprintf("/V5/incidents/%d/acknowledge", id) }

		cases := []struct {
			who    string
			c      *apitest.Client
			method string
			path   string
			status int
			code   string
		}{
			{"viewer reads", viewer, "GET", fmt.Sprintf("/V5/incidents/%d", inA), 200, ""},
			{"viewer acknowledges", viewer, "POST", ack(inA), 403, "ACCESS_DENIED"},
			{"other customer reads", foreign, "GET", fmt.Sprintf("/V5/incidents/%d", inA), 404, "RESOURCE_NOT_FOUND"},
			{"other customer acknowledges", foreign, "POST", ack(inA), 404, "RESOURCE_NOT_FOUND"},
			{"site B reads A's", siteB, "GET", fmt.Sprintf("/V5/incidents/%d", inA), 404, "RESOURCE_NOT_FOUND"},
			{"site B acknowledges A's", siteB, "POST", ack(inA), 404, "RESOURCE_NOT_FOUND"},
			{"site B lists at A", siteB, "GET", fmt.Sprintf("/V5/incidents?locationid=%d", x.a.ID.ID), 403, "LOCATION_ACCESS_DENIED"},
			{"unknown id", e.Admin, "GET", "/V5/incidents/999999", 404, "RESOURCE_NOT_FOUND"},
			{"bad id", e.Admin, "GET", "/V5/incidents/x", 400, "INVALID_PARAMETER"},
			{"bad state", e.Admin, "GET", "/V5/incidents?state=gone", 400, "INVALID_PARAMETER"},
			{"bad time", e.Admin, "GET", "/V5/incidents?fromtime=soon", 400, "INVALID_PARAMETER"},
			{"window backwards", e.Admin, "GET", fmt.Sprintf("/V5/incidents?fromtime=%d&totime=%d", at(11, 0), at(10, 0)), 400, "INVALID_PARAMETER"},
			{"window too long", e.Admin, "GET", fmt.Sprintf("/V5/incidents?fromtime=%d", at(11, 0)-32*24*3600*1000), 400, "INVALID_PARAMETER"},
			{"page too large", e.Admin, "GET", "/V5/incidents?limit=1001", 400, "PAGE_SIZE_EXCEEDED"},
			{"page empty", e.Admin, "GET", "/V5/incidents?limit=0", 400, "INVALID_PARAMETER"},
			{"negative offset", e.Admin, "GET", "/V5/incidents?offset=-1", 400, "INVALID_PARAMETER"},
			{"unknown location", e.Admin, "GET", "/V5/incidents?locationid=999999", 404, "RESOURCE_NOT_FOUND"},
		}
		for _, tc := range cases {
			r := tc.c.Expect(tc.status, tc.method, tc.path, nil)
			if tc.code != "" && r.ErrorCode() != tc.code {
				t.Errorf("%s: %s", tc.who, r.ErrorCode())
			}
		}
		for _, tc := range []struct {
			who  string
			c    *apitest.Client
			want []int64
		}{{"viewer", viewer, []int64{inA, inB}}, {"site B", siteB, []int64{inB}}, {"other customer", foreign, []int64{}}} {
			var p incidentList
			tc.c.Expect(http.StatusOK, "GET", "/V5/incidents", nil).Decode(t, &p)
			got := []int64{}
			for _, in := range p.Incidents {
				got = append(got, in.ID)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s lists %v, want %v", tc.who, got, tc.want)
			}
		}
		// Nothing was acknowledged by the refused calls.
		var one wnms.Incident
		e.Admin.Expect(http.StatusOK, "GET", fmt.Sprintf("/V5/incidents/%d", inA), nil).Decode(t, &one)
		if one.Acknowledged {
			t.Fatal("a refused acknowledge acknowledged")
		}
		// An OPERATOR acknowledges, twice (the same answer), audited.
		for range 2 {
			operator.Expect(http.StatusOK, "POST", ack(inA), nil).Decode(t, &one)
			if !one.Acknowledged || one.ID != inA {
				t.Fatalf("acknowledged %+v", one)
			}
		}
		siteB.Expect(http.StatusOK, "POST", ack(inB), nil)
		var audit struct {
			AuditRecords []struct {
				Path       string `json:"path"`
				Status     int    `json:"status"`
				ResourceID string `json:"resourceId"`
			} `json:"auditRecords"`
		}
		e.Admin.Expect(http.StatusOK, "GET", "/V5/auditlog?resourcetype=incidents", nil).Decode(t, &audit)
		n := 0
		for _, r := range audit.AuditRecords {
			if strings.HasSuffix(r.Path, ack(inA)[3:]) && r.Status == 200 {
				n++
			}
		}
		if n != 2 {
			t.Errorf("audit records of the acknowledgements: %+v", audit.AuditRecords)
		}
		// Paging: one a page, with links.
		var p1 incidentList
		e.Admin.Expect(http.StatusOK, "GET", "/V5/incidents?limit=1", nil).Decode(t, &p1)
		if len(p1.Incidents) != 1 || p1.TotalCount != 2 || p1.PreviousLink != nil || p1.NextLink == nil ||
			!strings.Contains(*p1.NextLink, "offset=1") {
			t.Errorf("first page %+v", p1)
		}
	})
}

// A performance anomaly (recorded as the evaluation records them) with
// the slot's samples: six clients at −80 dBm of whom two also at a low
// data rate, four fine. The cause is performance, Low RSSI, for all six
// troubled clients; the incident is of kind clientsperformance and its
// peak counts the slot's measured clients. A connectivity anomaly of the
// next slot on the same site makes it mixed.
func TestIncidentPerformance(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		x := newIncidentEnv(t, b)
		e := x.e
		const bssid = "00:11:74:00:0c:01"
		ingestAP(t, e, x.a2, "00:11:74:00:0c:00", bssid, "AP hall")
		slot := time.UnixMilli(at(11, 0))
		var records []string
		for i := range 10 {
			rssi, rate := -60, 100.0
			if i < 6 {
				rssi = -80
			}
			if i < 2 {
				rate = 5
			}
			for k := range 3 {
				records = append(records, fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:02:%02x","bssid":%q,"channel":36,"ssid":"corp",
					"timestamp":%d,"rssi":%d,"dataRateMbps":%g,"retryRatePct":1}`, i, bssid, slot.Add(time.Duration(k)*time.Minute).UnixMilli(), rssi, rate))
			}
		}
		e.Admin.Expect(http.StatusOK, "POST", "/V5/ingest/clientstats", apitest.Raw{ContentType: "application/json",
			Body: []byte("[" + strings.Join(records, ",") + "]")})
		x.evaluate(t)
		if _, err := e.Store.RecordAnomaly(context.Background(), wnms.Anomaly{CustomerID: 1, LocationID: x.a2.ID.ID,
			Kind: "clientsperformance", Slot: at(11, 0), Observation: 60, Threshold: 20, RaisedAt: x.clock.Now().UnixMilli()}); err != nil {
			t.Fatal(err)
		}
		x.evaluate(t)
		var page incidentList
		e.Admin.Expect(http.StatusOK, "GET", "/V5/incidents", nil).Decode(t, &page)
		if len(page.Incidents) != 1 {
			t.Fatalf("incidents %+v", page)
		}
		in := page.Incidents[0]
		if c := in.Cause; c == nil || c.Stage != "performance" || c.Reason.Text != "Low RSSI" || c.Reason.FailureCode != nil || c.Share != 1 {
			t.Errorf("cause %+v", c)
		}
		if in.Kind != "clientsperformance" || in.Peak != (wnms.IncidentPeak{Timestamp: at(11, 0), Observation: 60, AffectedClients: 6,
			AttemptingClients: 10}) {
			t.Errorf("incident %+v", in)
		}
		reasons := map[string]int{}
		for _, f := range in.Evidence {
			if f.Type == "reason" {
				reasons[f.ID] = f.Clients
			}
		}
		if len(reasons) != 2 || reasons["lowRssi"] != 6 || reasons["lowDataRate"] != 2 {
			t.Errorf("evidence %+v", in.Evidence)
		}
		x.anomaly(t, x.a1, at(11, 15))
		x.evaluate(t)
		e.Admin.Expect(http.StatusOK, "GET", "/V5/incidents", nil).Decode(t, &page)
		if len(page.Incidents) != 1 || page.Incidents[0].Kind != "mixed" || !slices.Equal(page.Incidents[0].Floors, []int64{x.a1.ID.ID, x.a2.ID.ID}) {
			t.Errorf("incidents %+v", page.Incidents)
		}
	})
}

// incidentOpened and incidentClosed reach a webhook that selects them at
// the incident's site (a history incident is opened and closed at once),
// signed like every delivery; a site outside the webhook's location sends
// it nothing.
func TestIncidentWebhook(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		x := newIncidentEnv(t, b)
		e := x.e
		allowLocalReceivers(e)
		startHub(t, e)
		startDispatcher(t, e, 0)
		r := newReceiver(t)
		createHook(t, e.Admin, r.srv.URL, map[string]any{"kinds": []string{"incidentOpened", "incidentClosed"},
			"locationId": map[string]any{"type": "locallocationid", "id": x.a.ID.ID}})
		x.anomaly(t, x.b1, at(10, 0))
		x.anomaly(t, x.a1, at(10, 0))
		x.evaluate(t)
		acked := r.waitAcked(t, 2, 10*time.Second)
		r.mu.Lock()
		defer r.mu.Unlock()
		var kinds []string
		for id := range acked {
			kinds = append(kinds, r.kinds[id])
		}
		slices.Sort(kinds)
		if !slices.Equal(kinds, []string{"incidentClosed", "incidentOpened"}) {
			t.Errorf("delivered %q", kinds)
		}
		if r.hits.Load() != 2 {
			t.Errorf("%d deliveries, want 2 (none of site B)", r.hits.Load())
		}
	})
}

// Interference on one channel: the clients of the two APs on 5 GHz
// channel 36 have high retries and low data rates, those on channel 40
// and on 2.4 GHz are fine. The scope is the channel (narrower than the 5
// GHz band, which also holds every troubled client; neither AP holds 80 %
// of them), named with its band; the evidence names the channel and both
// APs, counted from the samples.
func TestIncidentChannelScope(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		x := newIncidentEnv(t, b)
		e := x.e
		aps := []struct{ mac, name, radios string }{
			{"00:11:74:00:0d:00", "AP west", `[{"macaddress":"00:11:74:00:0d:01","channel":36,"ssid":"corp"}]`},
			{"00:11:74:00:0e:00", "AP east", `[{"macaddress":"00:11:74:00:0e:01","channel":36,"ssid":"corp"}]`},
			{"00:11:74:00:0f:00", "AP north", `[{"macaddress":"00:11:74:00:0f:01","channel":40,"ssid":"corp"},
				{"macaddress":"00:11:74:00:0f:02","channel":6,"ssid":"corp"}]`},
		}
		for _, ap := range aps {
			e.Admin.Expect(http.StatusOK, "POST", "/V5/ingest/aps", apitest.Raw{ContentType: "application/json", Body: []byte(fmt.Sprintf(
				`[{"macaddress":%q,"name":%q,"locationId":{"type":"locallocationid","id":%d},"radios":%s}]`, ap.mac, ap.name, x.a1.ID.ID, ap.radios))})
		}
		slot := time.UnixMilli(at(11, 0))
		var records []string
		for i := range 25 {
			bssid, channel, retry, rate := "00:11:74:00:0f:01", 40, 3.0, 300.0
			switch {
			case i < 5:
				bssid, channel, retry, rate = "00:11:74:00:0d:01", 36, 45, 8
			case i < 10:
				bssid, channel, retry, rate = "00:11:74:00:0e:01", 36, 45, 8
			case i >= 20:
				bssid, channel, rate = "00:11:74:00:0f:02", 6, 100
			}
			for k := range 3 {
				records = append(records, fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:03:%02x","bssid":%q,"channel":%d,"ssid":"corp",
					"timestamp":%d,"rssi":-55,"dataRateMbps":%g,"retryRatePct":%g}`, i, bssid, channel,
					slot.Add(time.Duration(k)*time.Minute).UnixMilli(), rate, retry))
			}
		}
		e.Admin.Expect(http.StatusOK, "POST", "/V5/ingest/clientstats", apitest.Raw{ContentType: "application/json",
			Body: []byte("[" + strings.Join(records, ",") + "]")})
		x.evaluate(t)
		if _, err := e.Store.RecordAnomaly(context.Background(), wnms.Anomaly{CustomerID: 1, LocationID: x.a1.ID.ID,
			Kind: "clientsperformance", Slot: at(11, 0), Observation: 40, Threshold: 20, RaisedAt: x.clock.Now().UnixMilli()}); err != nil {
			t.Fatal(err)
		}
		x.evaluate(t)
		var page incidentList
		e.Admin.Expect(http.StatusOK, "GET", "/V5/incidents", nil).Decode(t, &page)
		if len(page.Incidents) != 1 {
			t.Fatalf("incidents %+v", page)
		}
		in := page.Incidents[0]
		if in.Scope != (wnms.IncidentScope{Type: "channel", ID: "36", Name: "5 GHz channel 36", Share: 1}) {
			t.Errorf("scope %+v", in.Scope)
		}
		if c := in.Cause; c == nil || c.Stage != "performance" || c.Share != 1 {
			t.Errorf("cause %+v", c)
		}
		got := map[string]int{}
		for _, f := range in.Evidence {
			got[f.Type+" "+f.Name] = f.Clients
		}
		for k, n := range map[string]int{"channel 5 GHz channel 36": 10, "ap AP west": 5, "ap AP east": 5, "band " + wnms.Band5GHz: 10} {
			if got[k] != n {
				t.Errorf("evidence %s: %d clients, want %d (%+v)", k, got[k], n, in.Evidence)
			}
		}
	})
}
