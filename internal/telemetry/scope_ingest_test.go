package telemetry_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// An OPERATOR scoped to one site cannot change, through ingest, what lies
// outside its scope: it once re-homed, renamed and stripped another
// site's AP, took over another AP's BSSID so that later events landed in
// its own scope, and pulled another site's client name and 802.1X
// username into its view with a sample.
func TestScopedIngestStaysInScope(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		siteA := e.NewLocation(t, 0, wnms.FolderLocation, "Site A", 1)
		floorA := e.NewLocation(t, siteA.ID.ID, wnms.FloorLocation, "A1", 1)
		siteB := e.NewLocation(t, 0, wnms.FolderLocation, "Site B", 1)
		floorB := e.NewLocation(t, siteB.ID.ID, wnms.FloorLocation, "B1", 1)
		ap := func(mac, name string, loc int64, bssids ...string) string {
			radios := ""
			for i, b := range bssids {
				if i > 0 {
					radios += ","
				}
				radios += fmt.Sprintf(`{"macaddress":%q,"channel":36,"ssid":"corp"}`, b)
			}
			return fmt.Sprintf(`{"macaddress":%q,"name":%q,"locationId":{"type":"locallocationid","id":%d},"radios":[%s]}`, mac, name, loc, radios)
		}
		var res ingestResult
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(
			ap("00:11:74:00:0b:00", "Victim", floorB.ID.ID, "00:11:74:00:0b:01"),
			ap("00:11:74:00:0a:00", "Own", floorA.ID.ID, "00:11:74:00:0a:01"))).Decode(t, &res)
		if res.Accepted != 2 {
			t.Fatalf("setup: %+v", res)
		}
		_, op := e.NewUser(t, apitest.UserSpec{Role: wnms.Operator, Locations: []int64{siteA.ID.ID}})

		for _, c := range []struct {
			name, record, code string
		}{
			{"re-home and rename another site's AP", ap("00:11:74:00:0b:00", "Pwned", floorA.ID.ID, "00:11:74:00:0b:01"), wnms.LocationAccessDenied},
			{"strip another site's AP where it is", ap("00:11:74:00:0b:00", "Victim", floorB.ID.ID), wnms.LocationAccessDenied},
			{"claim another AP's BSSID with a new AP", ap("00:11:74:00:0c:00", "Thief", floorA.ID.ID, "00:11:74:00:0b:01"), wnms.Conflict},
			{"claim another AP's BSSID with its own AP", ap("00:11:74:00:0a:00", "Own", floorA.ID.ID, "00:11:74:00:0a:01", "00:11:74:00:0b:01"), wnms.Conflict},
		} {
			t.Run(c.name, func(t *testing.T) {
				var res ingestResult
				op.WithT(t).Expect(200, "POST", "/V5/ingest/aps", body(c.record, ap("00:11:74:00:0d:00", "Fine", floorA.ID.ID, "00:11:74:00:0d:01"))).Decode(t, &res)
				if res.Accepted != 1 || len(res.Rejected) != 1 || res.Rejected[0].Index != 0 || res.Rejected[0].ErrorCode != c.code {
					t.Errorf("%+v, want record 0 refused with %s and the other kept", res, c.code)
				}
			})
		}
		// Even the root's own admin cannot take a BSSID another AP holds.
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(ap("00:11:74:00:0e:00", "Admin's", floorA.ID.ID, "00:11:74:00:0b:01"))).Decode(t, &res)
		if res.Accepted != 0 || len(res.Rejected) != 1 || res.Rejected[0].ErrorCode != wnms.Conflict {
			t.Errorf("admin claiming a held BSSID: %+v", res)
		}
		var aps []wnms.AP
		e.Admin.Expect(200, "GET", "/v2/devices/aps?macaddress=00:11:74:00:0b:00", nil).Decode(t, &aps)
		if len(aps) != 1 || aps[0].Name != "Victim" || aps[0].LocationID.ID != floorB.ID.ID || len(aps[0].Radios) != 1 {
			t.Fatalf("the victim AP changed: %+v", aps)
		}

		// Events of the victim's BSSID still land at site B, out of the
		// operator's reach.
		now := time.Now()
		ev := fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:0b:01","bssid":"00:11:74:00:0b:01","channel":36,"ssid":"corp","timestamp":%d,"eventType":"Success"}`, now.Add(-time.Minute).UnixMilli())
		op.Expect(200, "POST", "/V5/ingest/clientevents", body(ev)).Decode(t, &res)
		if res.Accepted != 0 || len(res.Rejected) != 1 || res.Rejected[0].ErrorCode != wnms.LocationAccessDenied {
			t.Errorf("operator's event on the victim's BSSID: %+v", res)
		}

		// A client of site B with a name and username (from a sample) and
		// an address (from an event); the operator's sample at its own AP
		// moves the client into its view without them.
		stat := func(bssid, extra string, at time.Duration) string {
			return fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:0b:02","bssid":%q,"channel":36,"ssid":"corp","timestamp":%d,"frequencyBand":"BAND_5_GHZ","rssi":-60,"dataRateMbps":100,"retryRatePct":1%s}`,
				bssid, now.Add(-at).UnixMilli(), extra)
		}
		e.Admin.Expect(200, "POST", "/V5/ingest/clientstats", body(stat("00:11:74:00:0b:01", `,"clientName":"ceo-laptop","username":"ceo@corp"`, 3*time.Minute))).Decode(t, &res)
		if res.Accepted != 1 {
			t.Fatalf("admin's sample: %+v", res)
		}
		withIP := fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:0b:02","bssid":"00:11:74:00:0b:01","channel":36,"ssid":"corp","timestamp":%d,"eventType":"Success","ip":"10.9.9.9"}`,
			now.Add(-150*time.Second).UnixMilli())
		e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", body(withIP)).Decode(t, &res)
		if res.Accepted != 1 {
			t.Fatalf("admin's event: %+v", res)
		}
		op.Expect(200, "POST", "/V5/ingest/clientstats", body(stat("00:11:74:00:0a:01", "", 2*time.Minute))).Decode(t, &res)
		if res.Accepted != 1 {
			t.Fatalf("operator's sample: %+v", res)
		}
		var page struct{ ClientList []wnms.Client }
		op.Expect(200, "GET", "/V5/devices/clients/0/100", nil).Decode(t, &page)
		for _, cl := range page.ClientList {
			if cl.MacAddress == "AA:BB:CC:00:0B:02" && (cl.Name != cl.MacAddress || cl.Username != "" || cl.IPAddress != nil) {
				t.Errorf("the operator sees the other site's client as %q / %q / %v", cl.Name, cl.Username, cl.IPAddress)
			}
		}
		// A caller at the root moving a client keeps its identity.
		e.Admin.Expect(200, "POST", "/V5/ingest/clientstats", body(stat("00:11:74:00:0b:01", `,"clientName":"ceo-laptop","username":"ceo@corp"`, time.Minute))).Decode(t, &res)
		var all struct{ ClientList []wnms.Client }
		e.Admin.Expect(200, "GET", "/V5/devices/clients/0/100", nil).Decode(t, &all)
		for _, cl := range all.ClientList {
			if cl.MacAddress == "AA:BB:CC:00:0B:02" && (cl.Name != "ceo-laptop" || cl.Username != "ceo@corp") {
				t.Errorf("the client at site B again: %q / %q", cl.Name, cl.Username)
			}
		}
	})
}
