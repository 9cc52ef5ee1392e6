package telemetry_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

func clientNames(cs []wnms.Client) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return strings.Join(out, ",")
}

// Clients over HTTP: boxIds on first sight, the latest state from events
// and samples (names and usernames included), the lists with their
// filters (the sample client's too), paging, observers, scope and
// customers.
func TestClients(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		_, floor, other := sites(t, e)
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(
			fmt.Sprintf(`{"macaddress":"00:11:74:00:00:0a","name":"Lobby","deviceCapability":2,"locationId":{"type":"locallocationid","id":%d},
				"radios":[{"macaddress":"00:11:74:00:10:0a","channel":36}]}`, floor.ID.ID),
			fmt.Sprintf(`{"macaddress":"00:11:74:00:00:0b","name":"Stairs","locationId":{"type":"locallocationid","id":%d},
				"radios":[{"macaddress":"00:11:74:00:10:0b","channel":6}]}`, floor.ID.ID),
			fmt.Sprintf(`{"macaddress":"00:11:74:00:00:0c","name":"Annex","locationId":{"type":"locallocationid","id":%d},
				"radios":[{"macaddress":"00:11:74:00:10:0c","channel":11}]}`, other.ID.ID)))
		now := time.Now()
		ms := func(ago time.Duration) int64 { return now.Add(-ago).UnixMilli() }
		var res ingestResult
		e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", body(
			fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:00:01","bssid":"00:11:74:00:10:0a","channel":36,"ssid":"corp","timestamp":%d,"eventType":"Success","clientName":"ada-laptop","username":"ada@corp"}`, ms(30*time.Minute)),
			fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:00:02","bssid":"00:11:74:00:10:0c","channel":11,"ssid":"guest","timestamp":%d,"eventType":"Failure","failureCode":3,"subFailureCode":301}`, ms(2*time.Minute)),
			fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:00:03","bssid":"00:11:74:00:10:0b","channel":6,"ssid":"corp","timestamp":%d,"eventType":"Success","clientName":"printer"}`, ms(3*time.Hour)),
		)).Decode(t, &res)
		if res.Accepted != 3 {
			t.Fatalf("events: %+v", res)
		}
		// Samples: ada moves to the 5 GHz radio of Lobby and is heard by
		// Stairs and Annex; one sample is older than the events and moves
		// nothing; a bad one is refused.
		e.Admin.Expect(200, "POST", "/V5/ingest/clientstats", body(
			fmt.Sprintf(`{"macAddress":"AA-BB-CC-00-00-01","timestamp":%d,"bssid":"00:11:74:00:10:0a","ssid":"corp","channel":36,"rssi":-52,"dataRateMbps":433.3,"retryRatePct":4,
				"observedBy":[{"bssid":"00:11:74:00:10:0b","rssi":-71},{"bssid":"00:11:74:00:10:0c","rssi":-80},{"bssid":"00:11:74:99:99:99","rssi":-60}]}`, ms(time.Minute)),
			fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:00:03","timestamp":%d,"bssid":"00:11:74:00:10:0a","ssid":"corp","channel":36,"rssi":-60,"dataRateMbps":100}`, ms(4*time.Hour)),
			`{"macAddress":"aa:bb:cc:00:00:01","timestamp":1,"bssid":"00:11:74:00:10:0a","channel":36,"rssi":5,"dataRateMbps":1}`,
		)).Decode(t, &res)
		if res.Accepted != 2 || len(res.Rejected) != 1 || res.Rejected[0].Index != 2 {
			t.Fatalf("samples: %+v", res)
		}
		// A retried sample (same client, same timestamp; the MAC in another
		// spelling) is a duplicate, in the same batch as well as a later one.
		retry := fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:00:03","timestamp":%d,"bssid":"00:11:74:00:10:0a","channel":36,"rssi":-61,"dataRateMbps":90}`, ms(4*time.Hour))
		e.Admin.Expect(200, "POST", "/V5/ingest/clientstats", body(retry, strings.Replace(retry, "aa:bb:cc:00:00:03", "AA-BB-CC-00-00-03", 1))).Decode(t, &res)
		if res.Accepted != 0 || res.Duplicates != 2 || len(res.Rejected) != 0 {
			t.Fatalf("retried samples: %+v", res)
		}

		var cs []wnms.Client
		r := e.Admin.Expect(200, "GET", "/V5/devices/clients", nil)
		r.Decode(t, &cs)
		if clientNames(cs) != "ada-laptop,AA:BB:CC:00:00:02,printer" || r.Header.Get("X-Total-Count") != "3" {
			t.Fatalf("clients: %s (%s)", clientNames(cs), r.Header.Get("X-Total-Count"))
		}
		ada := cs[0]
		if ada.BoxID == 0 || ada.Username != "ada@corp" || !ada.Active || ada.LastEventType != "Success" ||
			ada.AssociatedAPName != "Lobby" || ada.FrequencyBand != wnms.Band5GHz || ada.RSSI == nil || *ada.RSSI != -52 ||
			ada.DataRateMbps == nil || *ada.DataRateMbps != 433.3 || ada.LocationID != wnms.LocalID(floor.ID.ID) ||
			ada.LastSeen != ms(time.Minute) || ada.Type != "client" {
			t.Errorf("ada: %+v", ada)
		}
		if printer := cs[2]; printer.Active || printer.AssociatedAPName != "Stairs" || printer.RSSI != nil {
			t.Errorf("an older sample changed the printer: %+v", printer)
		}
		for _, tc := range []struct{ query, want string }{
			{"ssid=corp", "ada-laptop,printer"},
			{"active=true", "ada-laptop,AA:BB:CC:00:00:02"},
			{"active=false", "printer"},
			{fmt.Sprintf("locationid=%d", other.ID.ID), "AA:BB:CC:00:00:02"},
			{"filter=" + url.QueryEscape(`{"property":"username","value":["ADA@corp"],"operator":"="}`), "ada-laptop"},
			{"filter=" + url.QueryEscape(`{"property":"frequencyband","value":["BAND_2_4_GHZ"],"operator":"="}`), "AA:BB:CC:00:00:02,printer"},
			{"filter=" + url.QueryEscape(`{"property":"name","value":["print"],"operator":"contains"}`), "printer"},
			// The vendor's sample client: boxid 1 OR troubleshootingstatus 0.
			{"filter=" + url.QueryEscape(`{"value":[{"property":"boxid","value":[1],"operator":"="},{"property":"troubleshootingstatus","value":[0],"operator":"="}],"operator":"OR"}`),
				"ada-laptop,AA:BB:CC:00:00:02,printer"},
		} {
			e.Admin.Expect(200, "GET", "/V5/devices/clients?"+tc.query, nil).Decode(t, &cs)
			if got := clientNames(cs); got != tc.want {
				t.Errorf("%s: %s, want %s", tc.query, got, tc.want)
			}
		}
		var page struct {
			ClientList   []wnms.Client `json:"clientList"`
			TotalCount   int           `json:"totalCount"`
			PreviousLink *string       `json:"previousLink"`
			NextLink     *string       `json:"nextLink"`
		}
		e.Admin.Expect(200, "GET", "/V5/devices/clients/1/1?ssid=corp", nil).Decode(t, &page)
		if clientNames(page.ClientList) != "printer" || page.TotalCount != 2 || page.NextLink != nil ||
			*page.PreviousLink != "/devices/clients/0/1?ssid=corp" {
			t.Errorf("page: %s %d %v %v", clientNames(page.ClientList), page.TotalCount, page.PreviousLink, page.NextLink)
		}

		var obs []telemetry.Observer
		e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/devices/clients/%d/observingmanageddevices", ada.BoxID), nil).Decode(t, &obs)
		if len(obs) != 3 || obs[0].Name != "Lobby" || obs[0].SignalStrength != -52 || obs[1].Name != "Stairs" ||
			obs[1].SignalStrength != -71 || obs[2].Name != "Annex" || obs[2].MacAddress != "00:11:74:00:00:0C" {
			t.Errorf("observers: %+v", obs)
		}

		// Scope: a caller of Other sees the client there, and of ada's
		// observers only the AP it sees.
		_, scoped := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer, Locations: []int64{other.ID.ID}})
		scoped.Expect(200, "GET", "/V5/devices/clients", nil).Decode(t, &cs)
		if clientNames(cs) != "AA:BB:CC:00:00:02" {
			t.Errorf("scoped: %s", clientNames(cs))
		}
		if r := scoped.Do("GET", fmt.Sprintf("/V5/devices/clients/%d/observingmanageddevices", ada.BoxID), nil); r.Status != 404 {
			t.Errorf("scoped caller, client outside: %d", r.Status)
		}
		_, stranger := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
		stranger.Expect(200, "GET", "/V5/devices/clients/0/10", nil).Decode(t, &page)
		if page.TotalCount != 0 {
			t.Errorf("another customer sees %d clients", page.TotalCount)
		}
		stranger.Expect(404, "GET", fmt.Sprintf("/V5/devices/clients/%d/observingmanageddevices", ada.BoxID), nil)

		for _, tc := range []struct{ path, code string }{
			{"/V5/devices/clients?active=sometimes", wnms.InvalidParameter},
			{"/V5/devices/clients?filter=" + url.QueryEscape(`{"property":"rssi","value":[1],"operator":"="}`), wnms.InvalidFilter},
			{"/V5/devices/clients?locationid=424242", wnms.InvalidParameter},
			{"/V5/devices/clients/0/1001", wnms.PageSizeExceeded},
			{"/V5/devices/clients/-1/10", wnms.InvalidParameter},
			{"/V5/devices/clients/x/observingmanageddevices", wnms.InvalidParameter},
		} {
			if r := e.Admin.Do("GET", tc.path, nil); r.Status != 400 || r.ErrorCode() != tc.code {
				t.Errorf("GET %s: %d %s, want 400 %s", tc.path, r.Status, r.ErrorCode(), tc.code)
			}
		}
	})
}

// A client's ipAddress over HTTP (decisions §21): that of the newest
// event that carried one, whatever its type; an event without one keeps
// it, an older one changes nothing, and a client never given one answers
// null.
func TestClientIPAddress(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		now := time.Now()
		ms := func(ago time.Duration) int64 { return now.Add(-ago).UnixMilli() }
		const carol, dave = "aa:bb:cc:00:00:61", "aa:bb:cc:00:00:62"
		success := func(mac string, ago time.Duration, extra string) string {
			return fmt.Sprintf(`{"macAddress":%q,"bssid":"00:11:74:00:10:0a","channel":36,"ssid":"corp","timestamp":%d,"eventType":"Success"%s}`,
				mac, ms(ago), extra)
		}
		intermediate := func(mac string, ago time.Duration, extra string) string {
			return fmt.Sprintf(`{"macAddress":%q,"bssid":"00:11:74:00:10:0a","channel":36,"ssid":"corp","timestamp":%d,"eventType":"Intermediate","categoryCode":1,"typeCode":2,"subTypeCode":1%s}`,
				mac, ms(ago), extra)
		}
		for _, step := range []struct {
			name    string
			records []string
			carol   string // "": null
		}{
			{"a Success gives its ip", []string{success(carol, 50*time.Minute, `,"ip":"10.0.0.61","username":"carol@corp"`),
				success(dave, 50*time.Minute, `,"username":"dave@corp"`)}, "10.0.0.61"},
			{"a later event without one keeps it", []string{intermediate(carol, 40*time.Minute, ""),
				success(carol, 35*time.Minute, `,"ip":""`)}, "10.0.0.61"},
			{"a newer one replaces it", []string{intermediate(carol, 30*time.Minute, `,"ip":"10.0.0.99"`)}, "10.0.0.99"},
			{"an older one changes nothing", []string{success(carol, 2*time.Hour, `,"ip":"10.0.0.1"`)}, "10.0.0.99"},
			{"newest of one batch wins", []string{success(carol, 10*time.Minute, `,"ip":"10.0.0.70"`),
				intermediate(carol, 5*time.Minute, `,"ip":"10.0.0.71"`), success(carol, 1*time.Minute, ``)}, "10.0.0.71"},
		} {
			var res ingestResult
			e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", body(step.records...)).Decode(t, &res)
			if res.Accepted != len(step.records) {
				t.Fatalf("%s: ingest %+v", step.name, res)
			}
			var cs []map[string]any
			e.Admin.Expect(200, "GET", "/V5/devices/clients", nil).Decode(t, &cs)
			ips := map[string]any{}
			for _, c := range cs {
				v, ok := c["ipAddress"]
				if !ok {
					t.Fatalf("%s: client without ipAddress: %v", step.name, c)
				}
				ips[fmt.Sprint(c["macAddress"])] = v
			}
			var want any
			if step.carol != "" {
				want = step.carol
			}
			if got := ips[strings.ToUpper(carol)]; got != want {
				t.Errorf("%s: carol's ipAddress %v, want %v", step.name, got, want)
			}
			if got, ok := ips[strings.ToUpper(dave)]; !ok || got != nil {
				t.Errorf("%s: dave's ipAddress %v (listed %v), want null", step.name, got, ok)
			}
		}
	})
}
