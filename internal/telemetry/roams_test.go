package telemetry_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// Roams are found at ingest from what the records say of the client:
// leaving or last being heard on one radio, then joining another of the
// same SSID within 10 s. Each is stored once (a retried batch finds it
// again and stores nothing), with its latency to authorized, its fast
// transition and its signal before and after, judged slow or
// suboptimal; joins that are no roam (too late, another SSID, the same
// radio, a failure) find none.
func TestRoamsFoundAtIngest(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		const a1, a2, a3 = "02:00:00:00:01:01", "02:00:00:00:02:01", "02:00:00:00:03:01"
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", json.RawMessage(fmt.Sprintf(
			`[{"macaddress":"02:00:00:00:01:00","name":"ap-1","locationId":{"type":"locallocationid","id":%[1]d},"radios":[{"macaddress":%[2]q,"channel":36,"ssid":"corp"}]},
			  {"macaddress":"02:00:00:00:02:00","name":"ap-2","locationId":{"type":"locallocationid","id":%[1]d},"radios":[{"macaddress":%[3]q,"channel":40,"ssid":"corp"}]},
			  {"macaddress":"02:00:00:00:03:00","name":"ap-3","locationId":{"type":"locallocationid","id":%[1]d},"radios":[{"macaddress":%[4]q,"channel":44,"ssid":"corp"}]}]`,
			site.ID.ID, a1, a2, a3)))
		t0 := time.Now().Add(-time.Hour).UnixMilli()
		at := func(ms int64) int64 { return t0 + ms }
		sample := func(mac, bssid string, ts int64, rssi int) string {
			return fmt.Sprintf(`{"macAddress":%q,"bssid":%q,"channel":36,"ssid":"corp","timestamp":%d,"rssi":%d,"dataRateMbps":100}`, mac, bssid, ts, rssi)
		}
		success := func(mac, bssid string, ts, auth int64, rssi int, extra string) string {
			return fmt.Sprintf(`{"macAddress":%q,"bssid":%q,"channel":40,"ssid":"corp","timestamp":%d,"eventType":"Success","associationTimestamp":%d,"authenticationTimestamp":%d,"rssi":%d%s}`,
				mac, bssid, ts, ts, auth, rssi, extra)
		}
		leave := func(mac, bssid string, ts int64) string {
			return fmt.Sprintf(`{"macAddress":%q,"bssid":%q,"channel":36,"ssid":"corp","timestamp":%d,"eventType":"Intermediate","categoryCode":1,"typeCode":3,"subTypeCode":8}`, mac, bssid, ts)
		}
		const good, ft, weak, late, other, failed = "aa:00:00:00:00:01", "aa:00:00:00:00:02", "aa:00:00:00:00:03", "aa:00:00:00:00:04", "aa:00:00:00:00:05", "aa:00:00:00:00:06"
		const stepped, failedJoin = "aa:00:00:00:00:07", "aa:00:00:00:00:08"
		step := func(mac, bssid string, ts int64, cat, typ int, rssi string) string {
			return fmt.Sprintf(`{"macAddress":%q,"bssid":%q,"channel":40,"ssid":"corp","timestamp":%d,"eventType":"Intermediate","categoryCode":%d,"typeCode":%d%s}`,
				mac, bssid, ts, cat, typ, rssi)
		}
		e.Admin.Expect(200, "POST", "/V5/ingest/clientstats", json.RawMessage("["+strings.Join([]string{
			sample(good, a1, at(0), -70), sample(ft, a1, at(0), -65), sample(weak, a1, at(0), -66),
			sample(late, a1, at(0), -70), sample(other, a1, at(0), -70), sample(failed, a1, at(0), -70), sample(stepped, a1, at(0), -70), sample(failedJoin, a1, at(0), -70),
		}, ",")+"]"))
		events := "[" + strings.Join([]string{
			// Leaves ap-1 at 1 s, authorized on ap-2 at 2.2 s: 1.2 s, not slow.
			leave(good, a1, at(1000)), success(good, a2, at(1500), at(2200), -60, ""),
			// Fast transition, 600 ms after last heard: slow for one.
			success(ft, a2, at(400), at(600), -62, `,"fastTransition":true`),
			// Lands 8 dB weaker: suboptimal.
			success(weak, a2, at(3000), at(3100), -74, ""),
			// 11 s after last heard: a new connection, no roam.
			success(late, a2, at(11_000), at(11_100), -60, ""),
			// Another SSID: no roam.
			strings.Replace(success(other, a2, at(2000), at(2100), -60, ""), `"ssid":"corp"`, `"ssid":"guest"`, 1),
			// A failure to join: no roam.
			fmt.Sprintf(`{"macAddress":%q,"bssid":%q,"channel":40,"ssid":"corp","timestamp":%d,"eventType":"Failure","failureCode":2,"subFailureCode":201}`, failed, a2, at(2000)),
			// Leaves at 1 s (its signal then -77), associates to ap-2 at
			// 1.2 s, 802.1X there, authorized at 1.8 s: the roam is
			// recorded at the Success, 800 ms, from -77 to the association's -58.
			strings.Replace(leave(stepped, a1, at(1000)), `"subTypeCode":8`, `"subTypeCode":8,"rssi":-77`, 1),
			step(stepped, a2, at(1200), 1, 1, `,"rssi":-58`), step(stepped, a2, at(1300), 2, 10, ""),
			strings.Replace(success(stepped, a2, at(1900), at(1800), -58, ""), `,"rssi":-58`, "", 1),
			// Leaves, associates to ap-2, fails there (a wrong key): its
			// Success 19 s later is a connection of its own, no roam.
			leave(failedJoin, a1, at(1000)), step(failedJoin, a2, at(1200), 1, 1, ""),
			fmt.Sprintf(`{"macAddress":%q,"bssid":%q,"channel":40,"ssid":"corp","timestamp":%d,"eventType":"Failure","failureCode":2,"subFailureCode":201}`, failedJoin, a2, at(1500)),
			success(failedJoin, a2, at(20_000), at(20_100), -60, ""),
		}, ",") + "]"
		for range 2 { // the retry stores no roam twice
			var res struct{ Accepted, Duplicates int }
			e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", json.RawMessage(events)).Decode(t, &res)
			if res.Accepted+res.Duplicates != 15 {
				t.Fatalf("ingest: %+v, want the 15 records counted (roams are not)", res)
			}
		}
		type roam struct {
			CategoryCode, TypeCode, SubTypeCode int
			BSSID, FromBssid                    string
			AssociatedAPName                    string
			RoamLatencyMs                       int64
			FastTransition, SlowRoam            bool
			SuboptimalRoam                      *bool
			RSSIBefore, RSSIAfter               *int
		}
		roams := func(mac string) []roam {
			var page struct {
				ClientEvents []roam `json:"clientEvents"`
			}
			e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/devices/clientevents/%s/0/100?clienteventtype=Intermediate&fromtime=%d", mac, t0-1), nil).Decode(t, &page)
			var out []roam
			for _, r := range page.ClientEvents {
				if r.CategoryCode == wnms.CategoryRoaming {
					out = append(out, r)
				}
			}
			return out
		}
		for _, tc := range []struct {
			mac                    string
			latency                int64
			ft, slow, suboptimal   bool
			before, after, subType int
		}{
			{good, 1200, false, false, false, -70, -60, 0},
			{ft, 600, true, true, false, -65, -62, 1},
			{weak, 3100, false, true, true, -66, -74, 0},
			{stepped, 800, false, false, false, -77, -58, 0},
		} {
			got := roams(tc.mac)
			if len(got) != 1 {
				t.Errorf("%s: %d roams, want 1: %+v", tc.mac, len(got), got)
				continue
			}
			r := got[0]
			if r.TypeCode != wnms.TypeRoam || r.SubTypeCode != tc.subType || !strings.EqualFold(r.FromBssid, a1) || !strings.EqualFold(r.BSSID, a2) ||
				r.AssociatedAPName != "ap-2" || r.RoamLatencyMs != tc.latency || r.FastTransition != tc.ft || r.SlowRoam != tc.slow ||
				r.SuboptimalRoam == nil || *r.SuboptimalRoam != tc.suboptimal || *r.RSSIBefore != tc.before || *r.RSSIAfter != tc.after {
				t.Errorf("%s: %+v, want latency %d ft %v slow %v suboptimal %v rssi %d → %d", tc.mac, r, tc.latency, tc.ft, tc.slow, tc.suboptimal, tc.before, tc.after)
			}
		}
		for _, mac := range []string{late, other, failed, failedJoin} {
			if got := roams(mac); len(got) != 0 {
				t.Errorf("%s: roams %+v, want none", mac, got)
			}
		}
		// The client that roamed to ap-2 roams on to ap-3, known from
		// what the server kept of its last radio.
		e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", json.RawMessage("["+success(good, a3, at(5000), at(5050), -58, "")+"]"))
		if got := roams(good); len(got) != 2 {
			t.Errorf("the second roam: %+v", got)
		}
	})
}
