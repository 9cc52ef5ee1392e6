package telemetry_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// The association data export as the vendor's sample client uses it:
// quoted parameters, a text link, and the download at /new/ + link (with
// the double slash the client's URL building makes).
func TestAssociationExport(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		floor := e.NewLocation(t, 0, wnms.FloorLocation, "Floor", 1)
		other := e.NewLocation(t, 0, wnms.FolderLocation, "Other", 1)
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(
			fmt.Sprintf(`{"macaddress":"00:11:74:00:00:0a","name":"Lobby","locationId":{"type":"locallocationid","id":%d},"radios":[{"macaddress":"00:11:74:00:10:0a","channel":36,"ssid":"corp"}]}`, floor.ID.ID),
			fmt.Sprintf(`{"macaddress":"00:11:74:00:00:0c","name":"Annex","locationId":{"type":"locallocationid","id":%d},"radios":[{"macaddress":"00:11:74:00:10:0c","channel":6}]}`, other.ID.ID)))
		base := time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()
		e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", body(
			fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:00:01","bssid":"00:11:74:00:10:0a","channel":36,"ssid":"corp","timestamp":%d,"eventType":"Success"}`, base+1000),
			fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:00:02","bssid":"00:11:74:00:10:0c","channel":6,"ssid":"guest, \"free\"","timestamp":%d,"eventType":"Success"}`, base+2000),
			fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:00:01","bssid":"00:11:74:00:10:0a","channel":36,"ssid":"corp","timestamp":%d,"eventType":"Failure","failureCode":1,"subFailureCode":101}`, base+3000),
			fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:00:03","bssid":"00:11:74:00:10:0a","channel":36,"ssid":"corp","timestamp":%d,"eventType":"Success"}`, base+9000),
		))
		window := fmt.Sprintf("/V4/analytics/associationdata/%d/%d", base, base+5000)
		download := func(c *apitest.Client, query string) (string, *apitest.Response) {
			t.Helper()
			r := c.Expect(200, "GET", window+"?"+query, nil)
			link := string(r.Body)
			if !regexp.MustCompile(`^webservice/sfiles\?id=[A-Z2-7]{52}$`).MatchString(link) || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
				t.Fatalf("link %q (%s)", link, r.Header.Get("Content-Type"))
			}
			return link, c.Expect(200, "GET", "/new//"+link, nil)
		}
		var rows []telemetry.Association
		_, f := download(e.Admin, `format="JSON"&tohashmac="false"`)
		if err := json.Unmarshal(f.Body, &rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || rows[0].MacAddress != "AA:BB:CC:00:00:01" || rows[0].AssociatedAPName != "Lobby" ||
			rows[0].LocationID != floor.ID.ID || rows[1].SSID != `guest, "free"` || rows[1].FrequencyBand != wnms.Band24GHz ||
			!strings.Contains(f.Header.Get("Content-Disposition"), "associations.json") {
			t.Fatalf("JSON export: %+v", rows)
		}
		// The sample client's query when it hashes: format="JSON"&tohashmac="true".
		_, f = download(e.Admin, `format="JSON"&tohashmac="true"`)
		var hashed []telemetry.Association
		json.Unmarshal(f.Body, &hashed)
		_, f2 := download(e.Admin, `format="JSON"&tohashmac=true`)
		var again []telemetry.Association
		json.Unmarshal(f2.Body, &again)
		if len(hashed) != 2 || !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(hashed[0].MacAddress) ||
			hashed[0].MacAddress == hashed[1].MacAddress || again[0].MacAddress != hashed[0].MacAddress ||
			strings.Contains(string(f.Body), "AA:BB:CC") {
			t.Errorf("hashed export: %+v then %+v", hashed, again)
		}
		// CSV, quoting what needs it.
		_, f = download(e.Admin, `format="CSV"`)
		recs, err := csv.NewReader(strings.NewReader(string(f.Body))).ReadAll()
		if err != nil || len(recs) != 3 || recs[0][0] != "macAddress" || recs[2][3] != `guest, "free"` ||
			!strings.HasPrefix(f.Header.Get("Content-Type"), "text/csv") {
			t.Errorf("CSV export: %v %q", err, f.Body)
		}
		// A location narrows it; a scoped caller gets its locations only;
		// the link is its maker's alone.
		_, f = download(e.Admin, fmt.Sprintf("locationid=%d", other.ID.ID))
		json.Unmarshal(f.Body, &rows)
		if len(rows) != 1 || rows[0].MacAddress != "AA:BB:CC:00:00:02" {
			t.Errorf("at Other: %+v", rows)
		}
		_, scoped := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer, Locations: []int64{floor.ID.ID}})
		link, f := download(scoped, "")
		json.Unmarshal(f.Body, &rows)
		if len(rows) != 1 || rows[0].MacAddress != "AA:BB:CC:00:00:01" {
			t.Errorf("scoped: %+v", rows)
		}
		e.Admin.Expect(404, "GET", "/new/"+link, nil)
		_, stranger := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
		stranger.Expect(404, "GET", "/new/"+link, nil)
		_, f = download(stranger, "")
		if string(f.Body) != "[]" {
			t.Errorf("another customer's export: %s", f.Body)
		}
		for _, tc := range []struct{ path, code string }{
			{fmt.Sprintf("/V2/analytics/associationdata/%d/%d", base, base), wnms.InvalidParameter},
			{fmt.Sprintf("/V2/analytics/associationdata/%d/%d", base, base-1), wnms.InvalidParameter},
			{"/V2/analytics/associationdata/x/5", wnms.InvalidParameter},
			{"/V2/analytics/associationdata/-5/5", wnms.InvalidParameter},
			{window + "?format=XML", wnms.InvalidParameter},
			{window + "?tohashmac=maybe", wnms.InvalidParameter},
			{window + "?locationid=999999", wnms.InvalidParameter},
		} {
			if r := e.Admin.Do("GET", tc.path, nil); r.Status != 400 || r.ErrorCode() != tc.code {
				t.Errorf("GET %s: %d %s, want 400 %s", tc.path, r.Status, r.ErrorCode(), tc.code)
			}
		}
	})
}
