package telemetry_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

func TestParseEvent(t *testing.T) {
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	ts := now.Add(-time.Hour).UnixMilli()
	base := func(extra string) string {
		return fmt.Sprintf(`{"macAddress":"aa-bb-cc-00-00-01","bssid":"00:11:74:aa:10:01","channel":36,"ssid":"corp","timestamp":%d%s}`, ts, extra)
	}
	for _, tc := range []struct {
		name, rec, want, field string
	}{
		{"success", base(`,"eventType":"success","dhcpLatency":2`), "", ""},
		{"failure", base(`,"eventType":"Failure","failureCode":2,"subFailureCode":202`), "", ""},
		{"intermediate", base(`,"eventType":"Intermediate","categoryCode":1,"typeCode":2,"subTypeCode":1`), "", ""},
		{"disassociated takes any reason", base(`,"eventType":"Intermediate","categoryCode":1,"typeCode":3,"subTypeCode":8`), "", ""},
		{"no type", base(``), wnms.ValidationFailed, "eventType"},
		{"unknown type", base(`,"eventType":"Maybe"`), wnms.InvalidRequestBody, "eventType"},
		{"failure not in the catalogue", base(`,"eventType":"Failure","failureCode":2,"subFailureCode":299`), wnms.ValidationFailed, "subFailureCode"},
		{"failure cause of another category", base(`,"eventType":"Failure","failureCode":1,"subFailureCode":202`), wnms.ValidationFailed, "subFailureCode"},
		{"failure without codes", base(`,"eventType":"Failure"`), wnms.ValidationFailed, "failureCode"},
		{"intermediate not in the catalogue", base(`,"eventType":"Intermediate","categoryCode":9,"typeCode":1`), wnms.ValidationFailed, "typeCode"},
		{"unnamed subtype", base(`,"eventType":"Intermediate","categoryCode":5,"typeCode":103,"subTypeCode":7`), wnms.ValidationFailed, "typeCode"},
		{"negative latency", base(`,"eventType":"Success","dnsLatency":-1`), wnms.ValidationFailed, "dnsLatency"},
		{"bad mac", `{"macAddress":"x","eventType":"Success"}`, wnms.ValidationFailed, "macAddress"},
		{"no bssid", fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:00:01","eventType":"Success","channel":1,"timestamp":%d}`, ts), wnms.ValidationFailed, "bssid"},
		{"no timestamp", `{"macAddress":"aa:bb:cc:00:00:01","bssid":"00:11:74:aa:10:01","eventType":"Success","channel":1}`, wnms.ValidationFailed, "timestamp"},
		{"in the future", strings.Replace(base(`,"eventType":"Success"`), fmt.Sprint(ts), fmt.Sprint(now.Add(48*time.Hour).UnixMilli()), 1), wnms.ValidationFailed, "timestamp"},
		{"channel", strings.Replace(base(`,"eventType":"Success"`), `"channel":36`, `"channel":0`, 1), wnms.ValidationFailed, "channel"},
		{"protocol", base(`,"eventType":"Success","protocol":"N"`), wnms.InvalidRequestBody, "protocol"},
		{"empty fileId means none", base(`,"eventType":"Failure","failureCode":2,"subFailureCode":202,"fileId":""`), "", ""},
		{"empty eventId means none", base(`,"eventType":"Success","eventId":""`), "", ""},
		{"empty strings in optional text", base(`,"eventType":"Success","username":"","clientName":"","associatedAPName":"","autoTestStatus":""`), "", ""},
		{"roam", base(`,"eventType":"Intermediate","categoryCode":6,"typeCode":40,"fromBssid":"00:11:74:aa:10:02","roamLatencyMs":80,"rssiBefore":-70,"rssiAfter":-60`), "", ""},
		{"roam without fromBssid", base(`,"eventType":"Intermediate","categoryCode":6,"typeCode":40`), wnms.ValidationFailed, "fromBssid"},
		{"roam from a bad BSSID", base(`,"eventType":"Intermediate","categoryCode":6,"typeCode":40,"fromBssid":"x"`), wnms.ValidationFailed, "fromBssid"},
		{"roam latency", base(`,"eventType":"Intermediate","categoryCode":6,"typeCode":40,"fromBssid":"00:11:74:aa:10:02","roamLatencyMs":-1`), wnms.ValidationFailed, "roamLatencyMs"},
		{"roam rssi", base(`,"eventType":"Intermediate","categoryCode":6,"typeCode":40,"fromBssid":"00:11:74:aa:10:02","rssiBefore":3`), wnms.ValidationFailed, "rssiBefore"},
		{"roam fields of another event are dropped", base(`,"eventType":"Intermediate","categoryCode":1,"typeCode":1,"fromBssid":"x"`), "", ""},
		{"long event id", base(`,"eventType":"Success","eventId":"` + strings.Repeat("e", 129) + `"`), wnms.ValidationFailed, "eventId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := telemetry.ParseEvent(json.RawMessage(tc.rec), now)
			if code(err) != tc.want {
				t.Fatalf("ParseEvent = %v, want %q", err, tc.want)
			}
			if err != nil && err.(*wnms.Error).MoreInfo != tc.field {
				t.Errorf("names %q, want %q", err.(*wnms.Error).MoreInfo, tc.field)
			}
		})
	}
	e, _ := telemetry.ParseEvent(json.RawMessage(base(`,"eventType":"Failure","failureCode":3,"subFailureCode":301,"failure":"lies","associatedAPName":"given"`)), now)
	b, _ := e.Place(&wnms.RadioAP{BoxID: 4, Name: "Lobby", LocationID: 7, Dot11AC: true})
	var got map[string]any
	json.Unmarshal(b, &got)
	if got["failure"] != "Network" || got["subFailure"] != "No DHCP offer" || got["associatedAPName"] != "Lobby" ||
		got["protocol"] != "A" || got["macAddress"] != "AA:BB:CC:00:00:01" || got["locationId"].(map[string]any)["id"] != 7.0 ||
		e.LocationID != 7 || !e.Dot11AC || *e.APBoxID != 4 {
		t.Errorf("placed failure: %s", b)
	}
}

type eventPage struct {
	PreviousLink *string           `json:"previousLink"`
	NextLink     *string           `json:"nextLink"`
	TotalCount   int               `json:"totalCount"`
	ClientEvents []json.RawMessage `json:"clientEvents"`
}

// stamps lists the events of a page by their timestamps' minute offsets
// from base.
func stamps(t *testing.T, events []json.RawMessage, base int64) []int64 {
	out := []int64{}
	for _, e := range events {
		var v struct{ Timestamp int64 }
		if err := json.Unmarshal(e, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, (v.Timestamp-base)/60000)
	}
	return out
}

// Client events over HTTP: ingest against the catalogues, idempotent
// retries, the location of the BSSID's AP, every read filter, paging,
// scope, customers, and the connection logs of 802.11ac APs.
func TestClientEvents(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		site, floor, other := sites(t, e)
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(
			fmt.Sprintf(`{"macaddress":"00:11:74:00:00:0a","name":"AC AP","deviceCapability":2,"locationId":{"type":"locallocationid","id":%d},
				"radios":[{"macaddress":"00:11:74:00:10:0a","channel":36,"ssid":"corp"}]}`, floor.ID.ID),
			fmt.Sprintf(`{"macaddress":"00:11:74:00:00:0b","name":"N AP","deviceCapability":1,"locationId":{"type":"locallocationid","id":%d},
				"radios":[{"macaddress":"00:11:74:00:10:0b","channel":6,"ssid":"guest"}]}`, other.ID.ID)))
		base := time.Now().Add(-2 * time.Hour).Truncate(time.Minute).UnixMilli()
		ev := func(minute int, bssid, ssid string, channel int, extra string) string {
			return fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:00:01","bssid":%q,"channel":%d,"ssid":%q,"timestamp":%d%s}`,
				bssid, channel, ssid, base+int64(minute)*60000, extra)
		}
		const ac, n, unknown = "00:11:74:00:10:0a", "00:11:74:00:10:0b", "00:11:74:ff:ff:ff"
		var res ingestResult
		e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", body(
			ev(1, ac, "corp", 36, `,"eventType":"Success","eventId":"s1","dhcpLatency":1,"aaaLatency":2,"dnsLatency":0`),
			ev(2, ac, "corp", 36, `,"eventType":"Failure","failureCode":2,"subFailureCode":202,"eventId":"f2"`),
			ev(3, n, "guest", 6, `,"eventType":"Intermediate","categoryCode":1,"typeCode":2,"subTypeCode":1`),
			ev(4, n, "guest", 6, `,"eventType":"Failure","failureCode":3,"subFailureCode":301`),
			ev(5, unknown, "corp", 36, `,"eventType":"Success"`),
			ev(6, ac, "corp", 36, `,"eventType":"Failure","failureCode":2,"subFailureCode":299`),
			ev(7, ac, "corp", 36, `,"eventType":"Intermediate","categoryCode":9,"typeCode":1`),
			`{"macAddress":"nope"}`,
			ev(1, ac, "corp", 36, `,"eventType":"Success","eventId":"s1"`), // a retry within the batch
		)).Decode(t, &res)
		if res.Accepted != 5 || res.Duplicates != 1 || len(res.Rejected) != 3 ||
			res.Rejected[0].Index != 5 || res.Rejected[1].Index != 6 || res.Rejected[2].Index != 7 {
			t.Fatalf("ingest: %+v", res)
		}
		// A retried batch is all duplicates.
		e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", apitest.Raw{ContentType: "application/x-ndjson",
			Body: []byte(ev(1, ac, "corp", 36, `,"eventType":"Success","eventId":"s1"`) + "\n" +
				ev(2, ac, "corp", 36, `,"eventType":"Failure","failureCode":2,"subFailureCode":202,"eventId":"f2"`))}).Decode(t, &res)
		if res.Accepted != 0 || res.Duplicates != 2 {
			t.Fatalf("retry: %+v", res)
		}

		var p eventPage
		e.Admin.Expect(200, "GET", "/V5/devices/clientevents/AA-BB-CC-00-00-01/0/10", nil).Decode(t, &p)
		if p.TotalCount != 5 || fmt.Sprint(stamps(t, p.ClientEvents, base)) != "[5 4 3 2 1]" || p.NextLink != nil || p.PreviousLink != nil {
			t.Fatalf("all: %d %v", p.TotalCount, stamps(t, p.ClientEvents, base))
		}
		var failure map[string]any
		json.Unmarshal(p.ClientEvents[3], &failure)
		if failure["failure"] != "Authentication" || failure["subFailure"] != "Credentials rejected by RADIUS" ||
			failure["associatedAPName"] != "AC AP" || failure["locationId"].(map[string]any)["id"] != float64(floor.ID.ID) {
			t.Errorf("failure event: %v", failure)
		}
		json.Unmarshal(p.ClientEvents[0], &failure)
		if failure["locationId"].(map[string]any)["id"] != float64(wnms.UnknownLocation) {
			t.Errorf("an unknown BSSID's event: %v", failure)
		}
		for _, tc := range []struct {
			query string
			want  string
		}{
			{fmt.Sprintf("locationid=%d", site.ID.ID), "[2 1]"},
			{"clienteventtype=failure", "[4 2]"},
			{"eventcategory=2", "[2]"},
			{"failureoreventtypecode=2", "[3]"},
			{"eventcategory=1&failureoreventtypecode=2", "[3]"},
			{"protocol=BG", "[4 3]"},
			{"ssid=guest", "[4 3]"},
			{"ssid=guest,corp&ssid=x", "[5 4 3 2 1]"},
			{fmt.Sprintf("fromtime=%d&totime=%d", base+2*60000, base+4*60000), "[4 3 2]"},
			{"totalcountrequired=true&clienteventtype=Intermediate", "[3]"},
		} {
			e.Admin.Expect(200, "GET", "/V5/devices/clientevents/aa:bb:cc:00:00:01/0/10?"+tc.query, nil).Decode(t, &p)
			if got := fmt.Sprint(stamps(t, p.ClientEvents, base)); got != tc.want || p.TotalCount != len(p.ClientEvents) {
				t.Errorf("%s: %s (total %d), want %s", tc.query, got, p.TotalCount, tc.want)
			}
		}
		// Paging and links.
		e.Admin.Expect(200, "GET", "/V5/devices/clientevents/aa-bb-cc-00-00-01/2/2?ssid=corp,guest", nil).Decode(t, &p)
		if fmt.Sprint(stamps(t, p.ClientEvents, base)) != "[3 2]" || p.TotalCount != 5 ||
			*p.PreviousLink != "/aa-bb-cc-00-00-01/0/2?ssid=corp,guest" || *p.NextLink != "/aa-bb-cc-00-00-01/4/2?ssid=corp,guest" {
			t.Errorf("page: %v prev %v next %v", stamps(t, p.ClientEvents, base), *p.PreviousLink, *p.NextLink)
		}

		// Connection logs: Success and Failure at 802.11ac APs only.
		var logs struct {
			SuccessLogs []json.RawMessage `json:"successLogs"`
			FailureLogs []json.RawMessage `json:"failureLogs"`
		}
		e.Admin.Expect(200, "GET", "/V5/devices/clients/connectionlogs?clientmacaddress=AA:BB:CC:00:00:01", nil).Decode(t, &logs)
		if fmt.Sprint(stamps(t, logs.SuccessLogs, base)) != "[1]" || fmt.Sprint(stamps(t, logs.FailureLogs, base)) != "[2]" {
			t.Errorf("connection logs: %v %v", stamps(t, logs.SuccessLogs, base), stamps(t, logs.FailureLogs, base))
		}
		e.Admin.Expect(200, "GET", "/V5/devices/clients/connectionlogs?clientmacaddress=AA:BB:CC:00:00:01&logtype=failure&failuretype=3", nil).Decode(t, &logs)
		if len(logs.SuccessLogs) != 0 || len(logs.FailureLogs) != 0 {
			t.Errorf("failure type 3 at 802.11ac APs: %v %v", logs.SuccessLogs, logs.FailureLogs)
		}

		// Scope and customers.
		_, scoped := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer, Locations: []int64{other.ID.ID}})
		scoped.Expect(200, "GET", "/V5/devices/clientevents/aa:bb:cc:00:00:01/0/10", nil).Decode(t, &p)
		if fmt.Sprint(stamps(t, p.ClientEvents, base)) != "[4 3]" || p.TotalCount != 2 {
			t.Errorf("scoped: %v %d", stamps(t, p.ClientEvents, base), p.TotalCount)
		}
		if r := scoped.Do("GET", fmt.Sprintf("/V5/devices/clientevents/aa:bb:cc:00:00:01/0/10?locationid=%d", floor.ID.ID), nil); r.ErrorCode() != wnms.LocationAccessDenied {
			t.Errorf("scoped, floor outside: %d %s", r.Status, r.ErrorCode())
		}
		_, stranger := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
		stranger.Expect(200, "GET", "/V5/devices/clientevents/aa:bb:cc:00:00:01/0/10", nil).Decode(t, &p)
		if len(p.ClientEvents) != 0 || p.TotalCount != 0 {
			t.Errorf("another customer sees %d events", p.TotalCount)
		}
		// The same eventId under another customer is its own event.
		stranger.Expect(200, "POST", "/V5/ingest/clientevents", body(ev(1, ac, "corp", 36, `,"eventType":"Success","eventId":"s1"`))).Decode(t, &res)
		if res.Accepted != 1 || res.Duplicates != 0 {
			t.Errorf("another customer's event with the same id: %+v", res)
		}
		// A scoped key may not report events of APs outside its locations.
		_, scopedOp := e.NewUser(t, apitest.UserSpec{Role: wnms.Operator, Locations: []int64{other.ID.ID}})
		scopedOp.Expect(200, "POST", "/V5/ingest/clientevents", body(ev(9, ac, "corp", 36, `,"eventType":"Success"`))).Decode(t, &res)
		if res.Accepted != 0 || len(res.Rejected) != 1 || res.Rejected[0].ErrorCode != wnms.LocationAccessDenied {
			t.Errorf("scoped ingest outside: %+v", res)
		}

		for _, tc := range []struct{ path, code string }{
			{"/V5/devices/clientevents/aa:bb:cc/0/10", wnms.InvalidParameter},
			{"/V5/devices/clientevents/aa:bb:cc:00:00:01/-1/10", wnms.InvalidParameter},
			{"/V5/devices/clientevents/aa:bb:cc:00:00:01/0/1001", wnms.PageSizeExceeded},
			{"/V5/devices/clientevents/aa:bb:cc:00:00:01/0/0", wnms.InvalidParameter},
			{"/V5/devices/clientevents/aa:bb:cc:00:00:01/x/10", wnms.InvalidParameter},
			{"/V5/devices/clientevents/aa:bb:cc:00:00:01/0/10?fromtime=5&totime=4", wnms.InvalidParameter},
			{"/V5/devices/clientevents/aa:bb:cc:00:00:01/0/10?fromtime=-7", wnms.InvalidParameter},
			{"/V5/devices/clientevents/aa:bb:cc:00:00:01/0/10?clienteventtype=Bogus", wnms.InvalidParameter},
			{"/V5/devices/clientevents/aa:bb:cc:00:00:01/0/10?protocol=N", wnms.InvalidParameter},
			{"/V5/devices/clientevents/aa:bb:cc:00:00:01/0/10?eventcategory=one", wnms.InvalidParameter},
			{"/V5/devices/clientevents/aa:bb:cc:00:00:01/0/10?totalcountrequired=perhaps", wnms.InvalidParameter},
			{"/V5/devices/clientevents/aa:bb:cc:00:00:01/0/10?locationid=987654", wnms.InvalidParameter},
			{"/V5/devices/clientevents/aa:bb:cc:00:00:01/0/10?nodeid=2", wnms.InvalidParameter},
			{"/V5/devices/clients/connectionlogs", wnms.MissingParameter},
			{"/V5/devices/clients/connectionlogs?clientmacaddress=zz", wnms.InvalidParameter},
			{"/V5/devices/clients/connectionlogs?clientmacaddress=aa:bb:cc:00:00:01&logtype=some", wnms.InvalidParameter},
			{"/V5/devices/clients/connectionlogs?clientmacaddress=aa:bb:cc:00:00:01&limit=5000", wnms.PageSizeExceeded},
			{"/V5/devices/clients/connectionlogs?clientmacaddress=aa:bb:cc:00:00:01&failuretype=x", wnms.InvalidParameter},
		} {
			if r := e.Admin.Do("GET", tc.path, nil); r.Status != 400 || r.ErrorCode() != tc.code {
				t.Errorf("GET %s: %d %s, want 400 %s", tc.path, r.Status, r.ErrorCode(), tc.code)
			}
		}
		var meta []telemetry.Metadata
		e.Admin.Expect(200, "GET", "/V5/devices/clientevents/metadata", nil).Decode(t, &meta)
		if len(meta) != 6 || meta[0].Description != "Association" || meta[0].EventTypeMetaData[1].EventSubTypeMetaData[1].Description != "Fast transition" ||
			meta[5].CategoryType != wnms.CategoryRoaming || meta[5].EventTypeMetaData[0].EventType != wnms.TypeRoam {
			t.Errorf("metadata: %+v", meta)
		}
	})
}
