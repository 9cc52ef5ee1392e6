package telemetry_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// A data source's records (RADIUS, syslog) that no known AP matches are
// placed at the source's location with no radio (channel and band null,
// not 0): they are client events and clients of that location with no
// band, left out of band filters, and count in the baselines of any band
// only. The ingest API still requires a BSSID and a channel.
func TestSourceRecordsAtNoKnownAP(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		ctx := context.Background()
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		floor := e.NewLocation(t, site.ID.ID, wnms.FloorLocation, "Floor 1", 1)
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(fmt.Sprintf(`{"macaddress":"00:11:74:00:0a:00","name":"AP 1",
			"locationId":{"type":"locallocationid","id":%d},"radios":[{"macaddress":"00:11:74:00:0a:01","channel":36,"ssid":"corp"}]}`, floor.ID.ID)))
		src := wnms.SourceCaller(1, "lab", site.ID.ID, e.Store.LocationPaths)

		slot := time.Now().Add(-30 * time.Minute).Truncate(15 * time.Minute)
		at := func(i int) int64 { return slot.UnixMilli() + int64(i)*1000 }
		event := func(mac, bssid string, channel int, ts int64, typ string) wnms.EventRecord {
			r := wnms.EventRecord{MacAddress: &mac, Channel: channel, Timestamp: &ts, EventType: &typ}
			if bssid != "" {
				r.BSSID, r.SSID = &bssid, "corp"
			}
			return r
		}
		failure := event("02:00:00:00:00:02", "02:99:00:00:00:01", 0, at(1), wnms.Failure)
		failure.FailureCode, failure.SubFailureCode = wnms.Ptr(wnms.CategoryAuthentication), wnms.Ptr(wnms.FailRadiusDown)
		events := []wnms.EventRecord{
			// At the AP: the bridge gave it the radio's channel.
			event("02:00:00:00:00:01", "00:11:74:00:0a:01", 36, at(0), wnms.Success),
			// An AP wnms does not know: the BSSID it named, no channel.
			failure,
			// No BSSID at all.
			event("02:00:00:00:00:03", "", 0, at(2), wnms.Success),
			// A channel is still checked.
			event("02:00:00:00:00:04", "", 300, at(3), wnms.Success),
		}
		res, err := e.API.Telemetry.IngestSourceEvents(ctx, src, events, site.ID.ID)
		if err != nil {
			t.Fatal(err)
		}
		if res.Accepted != 3 || len(res.Rejected) != 1 || res.Rejected[0].Index != 3 {
			t.Fatalf("source events: %+v", res)
		}
		traffic := wnms.SampleRecord{MacAddress: wnms.Ptr("02:00:00:00:00:03"), Timestamp: wnms.Ptr(at(4)),
			TxBytes: wnms.Ptr[int64](100), RxBytes: wnms.Ptr[int64](900)}
		if res, err := e.API.Telemetry.IngestSourceSamples(ctx, src, []wnms.SampleRecord{traffic}, site.ID.ID); err != nil || res.Accepted != 1 {
			t.Fatalf("source traffic: %+v %v", res, err)
		}

		// The ingest API refuses what only a data source may leave out
		// (NDJSON: the OpenAPI document, which forbids them, is not
		// checked against the request).
		var api ingestResult
		e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", apitest.Raw{ContentType: "application/x-ndjson", Body: []byte(
			fmt.Sprintf(`{"macAddress":"02:00:00:00:00:05","bssid":"02:99:00:00:00:01","channel":0,"timestamp":%d,"eventType":"Success"}`, at(5)) + "\n" +
				fmt.Sprintf(`{"macAddress":"02:00:00:00:00:05","channel":36,"timestamp":%d,"eventType":"Success"}`, at(6)))}).Decode(t, &api)
		if api.Accepted != 0 || len(api.Rejected) != 2 || api.Rejected[0].Message == "" || api.Rejected[1].Message == "" {
			t.Fatalf("ingest API: %+v", api)
		}
		for i, field := range []string{"channel", "bssid"} {
			if !strings.HasPrefix(api.Rejected[i].Message, field) {
				t.Errorf("record %d refused for %q, want %s", i, api.Rejected[i].Message, field)
			}
		}

		for _, tc := range []struct {
			mac, bssid, protocol string
			band                 any // nil: null
			channel              any
			loc                  int64
			apName               string
		}{
			{"02:00:00:00:00:01", "00:11:74:00:0A:01", "A", wnms.Band5GHz, float64(36), floor.ID.ID, "AP 1"},
			{"02:00:00:00:00:02", "02:99:00:00:00:01", "UNKNOWN", nil, nil, site.ID.ID, ""},
			{"02:00:00:00:00:03", "", "UNKNOWN", nil, nil, site.ID.ID, ""},
		} {
			t.Run(tc.mac, func(t *testing.T) {
				var page struct {
					ClientEvents []map[string]any
				}
				e.Admin.Expect(200, "GET", "/V5/devices/clientevents/"+tc.mac+"/0/10", nil).Decode(t, &page)
				if len(page.ClientEvents) != 1 {
					t.Fatalf("events: %+v", page)
				}
				ev := page.ClientEvents[0]
				if ch, present := ev["channel"]; ev["bssid"] != tc.bssid || !present || ch != tc.channel || ev["protocol"] != tc.protocol ||
					ev["locationId"].(map[string]any)["id"] != float64(tc.loc) || ev["associatedAPName"] != tc.apName {
					t.Errorf("event %+v", ev)
				}
				var clients []map[string]any
				e.Admin.Expect(200, "GET", "/V5/devices/clients?filter="+url.QueryEscape(
					`{"property":"macaddress","value":["`+tc.mac+`"],"operator":"="}`), nil).Decode(t, &clients)
				if len(clients) != 1 || clients[0]["frequencyBand"] != tc.band || clients[0]["channel"] != tc.channel ||
					clients[0]["locationId"].(map[string]any)["id"] != float64(tc.loc) {
					t.Errorf("clients %+v", clients)
				}
			})
		}
		// The band filter of the client list finds the 5 GHz client only.
		var clients []wnms.Client
		e.Admin.Expect(200, "GET", "/V5/devices/clients?filter="+url.QueryEscape(`{"property":"frequencyband","value":["BAND_5_GHZ"],"operator":"="}`), nil).Decode(t, &clients)
		if len(clients) != 1 || clients[0].MacAddress != "02:00:00:00:00:01" {
			t.Errorf("5 GHz clients: %+v", clients)
		}

		// Connectivity at the site: any band counts the three attempts
		// (one failed); 5 GHz only the one at the AP; 2.4 GHz none.
		window := fmt.Sprintf("fromtime=%d&totime=%d", slot.UnixMilli(), slot.UnixMilli()+60_000)
		for _, tc := range []struct {
			band          string
			samples, fail int
		}{{"ANY", 3, 1}, {"5GHz", 1, 0}, {"2.4GHz", 0, 0}} {
			var pts []struct {
				NoOfSamplesForObservation int `json:"noOfSamplesForObservation"`
				AbsoluteObservation       int `json:"absoluteObservation"`
			}
			e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/clientsconnectivity?locationid=%d&frequencyband=%s&%s",
				site.ID.ID, tc.band, window), nil).Decode(t, &pts)
			if len(pts) != 1 || pts[0].NoOfSamplesForObservation != tc.samples || pts[0].AbsoluteObservation != tc.fail {
				t.Errorf("band %s: %+v", tc.band, pts)
			}
		}
	})
}
