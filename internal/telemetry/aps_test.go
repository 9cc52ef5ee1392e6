package telemetry_test

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

func mac(i int) string { return fmt.Sprintf("00:11:74:00:%02x:%02x", i/256, i%256) }

func apRecord(i int, loc int64, extra string) string {
	return fmt.Sprintf(`{"macaddress":%q,"name":"AP %03d","ipAddress":"10.0.%d.%d","deviceCapability":%d,
		"locationId":{"type":"locallocationid","id":%d},"radios":[{"macaddress":%q,"channel":%d,"ssid":"corp"}]%s}`,
		mac(i), i, i/256, i%256, 1+(i%2)*2, loc, mac(1000+i), 1+i%11, extra)
}

func body(records ...string) apitest.Raw {
	return apitest.Raw{ContentType: "application/json", Body: []byte("[" + strings.Join(records, ",") + "]")}
}

type ingestResult = telemetry.Result

// The AP inventory over HTTP: ingest (partial rejection, NDJSON,
// heartbeats), the 100-AP list with its filters and X-Total-Count, the
// paged list with links, location scope and customers.
func TestAPsIngestAndList(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		clock := apitest.NewClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
		e.UseClock(clock)
		site, floor, other := sites(t, e)
		foreign := e.NewLocation(t, 0, wnms.FolderLocation, "Foreign", 2)

		var res ingestResult
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(
			apRecord(1, floor.ID.ID, ""),
			apRecord(2, floor.ID.ID, ""),
			`{"macaddress":"not a mac"}`,
			apRecord(3, other.ID.ID, ""),
			apRecord(4, foreign.ID.ID, ""), // another customer's location: as unknown
			apRecord(5, 99999, ""),
			apRecord(6, floor.ID.ID, `,"radios":[{"macaddress":"00:11:74:aa:00:01","channel":300}]`),
		)).Decode(t, &res)
		if res.Accepted != 3 || res.Duplicates != 0 || len(res.Rejected) != 4 {
			t.Fatalf("ingest: %+v", res)
		}
		for i, want := range []struct {
			index int
			code  string
			text  string
		}{{2, wnms.ValidationFailed, "macaddress"}, {4, wnms.ValidationFailed, "no location"},
			{5, wnms.ValidationFailed, "no location 99999"}, {6, wnms.ValidationFailed, "radios[0].channel"}} {
			got := res.Rejected[i]
			if got.Index != want.index || got.ErrorCode != want.code || !strings.Contains(got.Message, want.text) {
				t.Errorf("rejection %d: %+v, want index %d %s %q", i, got, want.index, want.code, want.text)
			}
		}

		// NDJSON, with a broken line that sinks only itself.
		nd := strings.ReplaceAll(apRecord(7, site.ID.ID, ""), "\n", " ") + "\n{\"macaddress\":\n" +
			strings.ReplaceAll(apRecord(8, site.ID.ID, ""), "\n", " ")
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", apitest.Raw{ContentType: "application/x-ndjson", Body: []byte(nd)}).Decode(t, &res)
		if res.Accepted != 2 || len(res.Rejected) != 1 || res.Rejected[0].Index != 1 || res.Rejected[0].ErrorCode != wnms.InvalidRequestBody {
			t.Fatalf("ndjson: %+v", res)
		}

		var aps []wnms.AP
		r := e.Admin.Expect(200, "GET", "/v2/devices/aps", nil)
		r.Decode(t, &aps)
		if r.Header.Get("X-Total-Count") != "5" || len(aps) != 5 || aps[0].Name != "AP 001" || aps[4].Name != "AP 008" {
			t.Fatalf("list: %s %v", r.Header.Get("X-Total-Count"), names(aps))
		}
		a := aps[0]
		if a.BoxID == 0 || a.MacAddress != "00:11:74:00:00:01" || !a.ActiveStatus || a.UpSince != clock.Now().UnixMilli() ||
			a.LastSeen != a.UpSince || a.DeviceCapability != 3 || !a.Dot11ACCapability || a.Group != "AUTHORIZED" ||
			a.LocationID != wnms.LocalID(floor.ID.ID) || len(a.Radios) != 1 || a.Radios[0].Type != "apradio" {
			t.Errorf("AP 1 reads back as %+v", a)
		}

		// A heartbeat later keeps boxId and upSince and moves lastSeen.
		clock.Advance(time.Minute)
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(apRecord(1, floor.ID.ID, `,"name":"Lobby"`)))
		e.Admin.Expect(200, "GET", "/v2/devices/aps?macaddress=00-11-74-00-00-01", nil).Decode(t, &aps)
		if len(aps) != 1 || aps[0].BoxID != a.BoxID || aps[0].Name != "Lobby" || aps[0].UpSince != a.UpSince ||
			aps[0].LastSeen != clock.Now().UnixMilli() {
			t.Errorf("after a heartbeat: %+v", aps)
		}

		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"locationid=" + fmt.Sprint(site.ID.ID), []string{"Lobby", "AP 002", "AP 007", "AP 008"}},
			{"locationid=" + fmt.Sprint(floor.ID.ID) + "&locationid=" + fmt.Sprint(other.ID.ID), []string{"Lobby", "AP 002", "AP 003"}},
			{"capability=2", []string{"Lobby", "AP 003", "AP 007"}},
			{"name=ap%200", []string{"AP 002", "AP 003", "AP 007", "AP 008"}},
			{"macaddress=00:11:74:00:00:02&macaddress=00-11-74-00-00-03", []string{"AP 002", "AP 003"}},
			{"sortcolumn=devicename&sortascending=false", []string{"Lobby", "AP 008", "AP 007", "AP 003", "AP 002"}},
			// The vendor's sample client: boxid 1 OR group AUTHORIZED.
			{"filter=" + url.QueryEscape(`{"value":[{"property":"boxid","value":[1],"operator":"="},{"property":"group","value":["AUTHORIZED"],"operator":"="}],"operator":"OR"}`),
				[]string{"Lobby", "AP 002", "AP 003", "AP 007", "AP 008"}},
			{"filter=" + url.QueryEscape(`{"property":"name","value":["ap 00"],"operator":"contains"}`) +
				"&filter=" + url.QueryEscape(`{"property":"ipaddress","value":["10.0.0.7","10.0.0.8"],"operator":"!="}`),
				[]string{"AP 002", "AP 003"}},
			{"filter=" + url.QueryEscape(`{"property":"devicecapability","value":[2],"operator":"bitwise_and"}`) +
				"&filter=" + url.QueryEscape(`{"property":"name","value":["lobby"],"operator":"="}`) + "&operator=OR",
				[]string{"Lobby", "AP 003", "AP 007"}},
			{"filter=" + url.QueryEscape(`{"property":"name","value":["%"],"operator":"contains"}`), nil},
		} {
			var got []wnms.AP
			e.Admin.Expect(200, "GET", "/v2/devices/aps?"+tc.query, nil).Decode(t, &got)
			if strings.Join(names(got), ",") != strings.Join(tc.want, ",") {
				t.Errorf("%s: %v, want %v", tc.query, names(got), tc.want)
			}
		}

		// Liveness: silent past the timeout is inactive, and announced
		// down once; a heartbeat brings it up again.
		var mu sync.Mutex
		var changes []string
		e.API.Telemetry.OnAPChange = func(ap wnms.AP, up bool) {
			mu.Lock()
			defer mu.Unlock()
			changes = append(changes, fmt.Sprintf("%s %v", ap.Name, up))
		}
		clock.Advance(4 * time.Minute)
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(apRecord(2, floor.ID.ID, "")))
		clock.Advance(2 * time.Minute) // AP 2: 2 min silent; the others 6 or more
		e.API.Telemetry.CheckAPs(t.Context())
		e.API.Telemetry.CheckAPs(t.Context())
		e.Admin.Expect(200, "GET", "/v2/devices/aps?active=true", nil).Decode(t, &aps)
		if strings.Join(names(aps), ",") != "AP 002" {
			t.Errorf("active: %v", names(aps))
		}
		e.Admin.Expect(200, "GET", "/v2/devices/aps?active=false", nil).Decode(t, &aps)
		if len(aps) != 4 || aps[0].ActiveStatus {
			t.Errorf("inactive: %v", names(aps))
		}
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(apRecord(3, other.ID.ID, "")))
		mu.Lock()
		got := strings.Join(changes, "; ")
		mu.Unlock()
		if got != "Lobby false; AP 003 false; AP 007 false; AP 008 false; AP 003 true" {
			t.Errorf("announced: %s", got)
		}
		e.Admin.Expect(200, "GET", "/v2/devices/aps?macaddress=00:11:74:00:00:03", nil).Decode(t, &aps)
		if !aps[0].ActiveStatus || aps[0].UpSince != clock.Now().UnixMilli() {
			t.Errorf("back up: %+v", aps[0])
		}

		// Scope and customers.
		_, scoped := e.NewUser(t, apitest.UserSpec{Role: wnms.Operator, Locations: []int64{other.ID.ID}})
		scoped.Expect(200, "GET", "/v2/devices/aps", nil).Decode(t, &aps)
		if strings.Join(names(aps), ",") != "AP 003" {
			t.Errorf("scoped caller sees %v", names(aps))
		}
		if r := scoped.Expect(403, "GET", fmt.Sprintf("/v2/devices/aps?locationid=%d", floor.ID.ID), nil); r.ErrorCode() != wnms.LocationAccessDenied {
			t.Errorf("scoped caller, floor outside: %s", r.ErrorCode())
		}
		scoped.Expect(200, "POST", "/V5/ingest/aps", body(apRecord(9, floor.ID.ID, ""))).Decode(t, &res)
		if res.Accepted != 0 || res.Rejected[0].ErrorCode != wnms.LocationAccessDenied {
			t.Errorf("scoped ingest outside its locations: %+v", res)
		}
		_, stranger := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
		stranger.Expect(200, "GET", "/v2/devices/aps", nil).Decode(t, &aps)
		if len(aps) != 0 {
			t.Errorf("another customer sees %v", names(aps))
		}
		stranger.Expect(200, "POST", "/V5/ingest/aps", body(apRecord(1, foreign.ID.ID, ""))).Decode(t, &res)
		if res.Accepted != 1 {
			t.Errorf("another customer's ingest of the same MAC: %+v", res)
		}
		stranger.Expect(200, "GET", "/v2/devices/aps", nil).Decode(t, &aps)
		if len(aps) != 1 || aps[0].BoxID == a.BoxID || aps[0].Name != "AP 001" {
			t.Errorf("another customer's AP: %+v", aps)
		}
	})
}

func names(aps []wnms.AP) []string {
	out := make([]string, len(aps))
	for i, a := range aps {
		out[i] = a.Name
	}
	return out
}

// The paged list (the vendor's managed-device call), the 100-AP cap, the
// cluster session rule and every bad parameter.
func TestAPListsPagingAndBadInput(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		floor := e.NewLocation(t, 0, wnms.FloorLocation, "Floor", 1)
		var recs []string
		for i := 1; i <= 130; i++ {
			recs = append(recs, apRecord(i, floor.ID.ID, ""))
		}
		var res ingestResult
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(recs...)).Decode(t, &res)
		if res.Accepted != 130 {
			t.Fatalf("ingest: %+v", res)
		}
		var aps []wnms.AP
		r := e.Admin.Expect(200, "GET", "/V4/devices/aps", nil) // the sample client's spelling
		r.Decode(t, &aps)
		if len(aps) != telemetry.MaxAPList || r.Header.Get("X-Total-Count") != "130" {
			t.Errorf("capped list: %d, X-Total-Count %q", len(aps), r.Header.Get("X-Total-Count"))
		}

		type page struct {
			ManagedDevices []wnms.AP `json:"managedDevices"`
			TotalCount     int       `json:"totalCount"`
			PreviousLink   *string   `json:"previousLink"`
			NextLink       *string   `json:"nextLink"`
		}
		var p page
		e.Admin.Expect(200, "GET", "/V5/devices/manageddevices", nil).Decode(t, &p)
		if p.TotalCount != 130 || len(p.ManagedDevices) != 100 || p.ManagedDevices[0].Name != "AP 130" || p.PreviousLink != nil ||
			p.NextLink == nil || *p.NextLink != "/devices/manageddevices?limit=100&offset=100" {
			t.Fatalf("first page: %d %d %s prev %v next %v", p.TotalCount, len(p.ManagedDevices), p.ManagedDevices[0].Name, p.PreviousLink, p.NextLink)
		}
		e.Admin.Expect(200, "GET", "/V5"+*p.NextLink, nil).Decode(t, &p)
		if len(p.ManagedDevices) != 30 || p.ManagedDevices[29].Name != "AP 001" || p.NextLink != nil ||
			p.PreviousLink == nil || *p.PreviousLink != "/devices/manageddevices?limit=100&offset=0" {
			t.Errorf("last page: %d prev %v next %v", len(p.ManagedDevices), p.PreviousLink, p.NextLink)
		}
		// The vendor's sample client: boxid 1 OR troubleshootingstatus 0.
		f := url.QueryEscape(`{"value":[{"property":"boxid","value":[1],"operator":"="},{"property":"troubleshootingstatus","value":[0],"operator":"="}],"operator":"OR"}`)
		e.Admin.Expect(200, "GET", "/V4/devices/manageddevices?filter="+f+"&offset=10&limit=20&sortby=devicename&ascending=true", nil).Decode(t, &p)
		if p.TotalCount != 130 || len(p.ManagedDevices) != 20 || p.ManagedDevices[0].Name != "AP 011" ||
			!strings.Contains(*p.NextLink, "offset=30") || !strings.Contains(*p.NextLink, "sortby=devicename") ||
			!strings.Contains(*p.NextLink, "filter=") {
			t.Errorf("filtered page: %d %d %s next %v", p.TotalCount, len(p.ManagedDevices), p.ManagedDevices[0].Name, *p.NextLink)
		}

		for _, tc := range []struct {
			path, code string
			status     int
		}{
			{"/v2/devices/aps?macaddress=00:11:74", wnms.InvalidParameter, 400},
			{"/v2/devices/aps?locationid=abc", wnms.InvalidParameter, 400},
			{"/v2/devices/aps?locationid=424242", wnms.InvalidParameter, 400},
			{"/v2/devices/aps?capability=8", wnms.InvalidParameter, 400},
			{"/v2/devices/aps?active=maybe", wnms.InvalidParameter, 400},
			{"/v2/devices/aps?sortcolumn=colour", wnms.InvalidParameter, 400},
			{"/v2/devices/aps?sortascending=2", wnms.InvalidParameter, 400},
			{"/v2/devices/aps?filter=%7Bnot%20json", wnms.InvalidFilter, 400},
			{"/v2/devices/aps?filter=" + url.QueryEscape(`{"property":"colour","value":["red"],"operator":"="}`), wnms.InvalidFilter, 400},
			{"/v2/devices/aps?filter=" + url.QueryEscape(`{"property":"name","value":["x"],"operator":">"}`), wnms.InvalidFilter, 400},
			{"/v2/devices/aps?operator=XOR&filter=" + url.QueryEscape(`{"property":"boxid","value":[1],"operator":"="}`), wnms.InvalidParameter, 400},
			{"/v2/devices/aps?nodeid=3", wnms.InvalidParameter, 400},
			{"/V5/devices/manageddevices?limit=1001", wnms.PageSizeExceeded, 400},
			{"/V5/devices/manageddevices?limit=0", wnms.InvalidParameter, 400},
			{"/V5/devices/manageddevices?offset=-1", wnms.InvalidParameter, 400},
			{"/V5/devices/manageddevices?sortby=colour", wnms.InvalidParameter, 400},
		} {
			if r := e.Admin.Do("GET", tc.path, nil); r.Status != tc.status || r.ErrorCode() != tc.code {
				t.Errorf("GET %s: %d %s, want %d %s", tc.path, r.Status, r.ErrorCode(), tc.status, tc.code)
			}
		}
		// Bodies: not a list, too many records, too large, not JSON.
		for _, tc := range []struct {
			name string
			body apitest.Raw
			code string
		}{
			{"a scalar", apitest.Raw{ContentType: "application/json", Body: []byte(`42`)}, wnms.InvalidRequestBody},
			{"10,001 records", body(strings.Split(strings.Repeat(`{},`, telemetry.MaxRecords)+`{}`, ",")...), wnms.PayloadTooLarge},
			{"17 MiB", apitest.Raw{ContentType: "application/json", Body: append([]byte(`[{"macaddress":"00:11:74:00:00:01","name":"`),
				append([]byte(strings.Repeat("x", 17<<20)), []byte(`"}]`)...)...)}, wnms.PayloadTooLarge},
			{"a form", apitest.Raw{ContentType: "application/x-www-form-urlencoded", Body: []byte(`a=1`)}, wnms.UnsupportedMediaType},
		} {
			if r := e.Admin.Do("POST", "/V5/ingest/aps", tc.body); r.ErrorCode() != tc.code {
				t.Errorf("%s: %d %s, want %s", tc.name, r.Status, r.ErrorCode(), tc.code)
			}
		}
		// Nothing of the refused bodies was stored.
		e.Admin.Expect(200, "GET", "/V5/devices/manageddevices?limit=1", nil).Decode(t, &p)
		if p.TotalCount != 130 {
			t.Errorf("after refused bodies: %d APs", p.TotalCount)
		}
	})
}

// A session opened for cluster data may not use the 100-AP list.
func TestAPListNotInClusterSession(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	c := e.NewClient()
	c.Expect(200, "POST", "/login/key/tests/600?getClusterChildrenData=true",
		map[string]string{"type": "apikeycredentials", "keyId": e.AdminKeyID, "keyValue": e.AdminKeyValue})
	if r := c.Expect(400, "GET", "/v2/devices/aps", nil); r.ErrorCode() != wnms.NotSupportedInCluster {
		t.Errorf("cluster session: %s", r.ErrorCode())
	}
	c.Expect(200, "GET", "/V5/devices/manageddevices", nil)
}

// Two replicas on one PostgreSQL: an AP that falls silent is announced
// down by exactly one of them.
func TestAPDownAnnouncedOnce(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			cfg := apitest.StoreConfig(t, b)
			e1 := apitest.NewAt(t, b, cfg)
			e2 := apitest.NewAt(t, b, cfg)
			clock := apitest.NewClock(time.Now())
			e1.UseClock(clock)
			e2.UseClock(clock)
			var mu sync.Mutex
			downs := 0
			for _, e := range []*apitest.Env{e1, e2} {
				e.API.Telemetry.OnAPChange = func(_ wnms.AP, up bool) {
					if !up {
						mu.Lock()
						downs++
						mu.Unlock()
					}
				}
			}
			var recs []string
			for i := 1; i <= 50; i++ {
				recs = append(recs, apRecord(i, -1, ""))
			}
			e1.Admin.Expect(200, "POST", "/V5/ingest/aps", body(recs...))
			clock.Advance(telemetry.DefaultAPTimeout + time.Second)
			var wg sync.WaitGroup
			for _, e := range []*apitest.Env{e1, e2, e1, e2} {
				wg.Add(1)
				go func() { defer wg.Done(); e.API.Telemetry.CheckAPs(t.Context()) }()
			}
			wg.Wait()
			if downs != 50 {
				t.Errorf("50 silent APs announced down %d times", downs)
			}
		})
	}
}

// sites makes the locations the telemetry tests use: a Site folder with a
// Floor, and an Other folder beside it, all of customer 1.
func sites(t *testing.T, e *apitest.Env) (site, floor, other *wnms.Location) {
	t.Helper()
	site = e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
	floor = e.NewLocation(t, site.ID.ID, wnms.FloorLocation, "Floor", 1)
	other = e.NewLocation(t, 0, wnms.FolderLocation, "Other", 1)
	return site, floor, other
}

// An AP's position on its floor's layout: set by a record, kept by the
// heartbeats that do not carry it, forgotten when the AP moves to another
// location; a bad position refuses its record alone.
func TestAPPosition(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		floor := e.NewLocation(t, 0, wnms.FloorLocation, "Floor", 1)
		other := e.NewLocation(t, 0, wnms.FloorLocation, "Other floor", 1)
		position := func() *wnms.Position {
			t.Helper()
			var aps []wnms.AP
			e.Admin.Expect(200, "GET", "/v2/devices/aps?macaddress="+mac(1), nil).Decode(t, &aps)
			if len(aps) != 1 {
				t.Fatalf("%d APs", len(aps))
			}
			return aps[0].Position
		}
		for _, step := range []struct {
			name   string
			record string
			want   *wnms.Position
		}{
			{"no position yet", apRecord(1, floor.ID.ID, ""), nil},
			{"placed", apRecord(1, floor.ID.ID, `,"position":{"x":12.5,"y":4}`), &wnms.Position{X: 12.5, Y: 4}},
			{"a heartbeat keeps it", apRecord(1, floor.ID.ID, ""), &wnms.Position{X: 12.5, Y: 4}},
			{"moved", apRecord(1, floor.ID.ID, `,"position":{"x":0,"y":19.75}`), &wnms.Position{X: 0, Y: 19.75}},
			{"another floor forgets it", apRecord(1, other.ID.ID, ""), nil},
		} {
			var res ingestResult
			e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(step.record)).Decode(t, &res)
			if res.Accepted != 1 {
				t.Fatalf("%s: %+v", step.name, res)
			}
			if got := position(); (got == nil) != (step.want == nil) || got != nil && *got != *step.want {
				t.Errorf("%s: position %+v, want %+v", step.name, got, step.want)
			}
		}
		var res ingestResult
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(
			apRecord(1, floor.ID.ID, `,"position":{"x":-1,"y":4}`),
			apRecord(1, floor.ID.ID, `,"position":{"x":1}`),
			apRecord(1, floor.ID.ID, `,"position":{"x":1,"y":100001}`),
			apRecord(1, floor.ID.ID, `,"position":{"x":"left","y":4}`),
			apRecord(2, floor.ID.ID, `,"position":{"x":3,"y":4}`),
		)).Decode(t, &res)
		if res.Accepted != 1 || len(res.Rejected) != 4 {
			t.Fatalf("bad positions: %+v", res)
		}
		for i, want := range []string{"position.x", "position.y", "position.y", ""} {
			if !strings.Contains(res.Rejected[i].Message, want) {
				t.Errorf("record %d: %+v", i, res.Rejected[i])
			}
		}
		if got := position(); got != nil {
			t.Errorf("a refused record changed the position: %+v", got)
		}
	})
}
