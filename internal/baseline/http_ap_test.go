package baseline_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// A coverage hole at one AP of a floor: the signal of its clients falls
// 17 to 23 dB, and 2 of the floor's 20 clients are troubled (10 %), under
// the floor's own bar (20 %: 5 of 20 are needed at the rate of 5 %). The
// AP's paired clients' signal fell by 18.2 dB on average against a history
// of no change: the AP test passes, the slot is anomalous with the
// threshold the floor without the AP's troubled clients (0 %), and the AP
// is named in the baseline call, in the anomalies list and as the scope of
// the incident, whose cause is what the test found (Low RSSI).
func TestOneAPOfAFloor(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		clock := apitest.NewClock(time.Date(2026, 11, 20, 12, 0, 30, 0, time.UTC))
		e.UseClock(clock)
		e.API.Baselines.Now = clock.Now
		e.API.Incidents.Now = func() time.Time { return clock.Now().Add(10 * time.Minute) }
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		floor := e.NewLocation(t, site.ID.ID, wnms.FloorLocation, "Floor 1", 1)
		radios := map[string]string{"AP 1": "00:11:74:00:0c:24", "AP 2": "00:11:74:00:0d:24"}
		for name, mac := range map[string]string{"AP 1": "00:11:74:00:0c:00", "AP 2": "00:11:74:00:0d:00"} {
			e.Admin.Expect(200, "POST", "/V5/ingest/aps", raw([]string{fmt.Sprintf(`{"macaddress":%q,"name":%q,
				"locationId":{"type":"locallocationid","id":%d},"radios":[{"macaddress":%q,"channel":36,"ssid":"corp"}]}`,
				mac, name, floor.ID.ID, radios[name])}))
		}
		at := func(h, m int) time.Time { return time.Date(2026, 11, 20, h, m, 0, 0, time.UTC) }
		// 10 clients on each AP at 11:15 and 11:45 on the three days
		// before and today, at −55 dBm; today at 11:45 AP 1's are at −72
		// dBm, two of them at −78 (low RSSI).
		var records []string
		for d := 0; d <= 3; d++ {
			for _, s := range []time.Time{at(11, 15), at(11, 45)} {
				s = s.AddDate(0, 0, -d)
				for ap, bssid := range []string{radios["AP 1"], radios["AP 2"]} {
					for i := range 10 {
						rssi := -55
						if d == 0 && s.Minute() == 45 && ap == 0 {
							rssi = -72
							if i < 2 {
								rssi = -78
							}
						}
						records = append(records, fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:%02x:%02x","bssid":%q,"channel":36,"ssid":"corp",
							"timestamp":%d,"rssi":%d,"dataRateMbps":300,"retryRatePct":2}`, ap, i, bssid, s.Add(time.Duration(i)*time.Second).UnixMilli(), rssi))
					}
				}
			}
		}
		e.Admin.Expect(200, "POST", "/V5/ingest/clientstats", raw(records))
		window := fmt.Sprintf("fromtime=%d&totime=%d", at(11, 15).UnixMilli(), at(11, 45).UnixMilli())

		var aps []wnms.AP
		e.Admin.Expect(200, "GET", "/v2/devices/aps?macaddress=00:11:74:00:0c:00", nil).Decode(t, &aps)
		if len(aps) != 1 {
			t.Fatalf("AP 1: %+v", aps)
		}
		wantAP := wnms.AnomalyAP{BoxID: aps[0].BoxID, Name: "AP 1", MacAddress: aps[0].MacAddress, Band: wnms.Band5GHz,
			Reason: wnms.APReasonLowRSSI, Observation: -(8*17.0 + 2*23) / 10, Baseline: 0, Threshold: -8}
		sameAP := func(got *wnms.AnomalyAP) bool {
			return got != nil && got.BoxID == wantAP.BoxID && got.Name == wantAP.Name && got.MacAddress == wantAP.MacAddress &&
				got.Band == wantAP.Band && got.Reason == wantAP.Reason && math.Abs(got.Observation-wantAP.Observation) < 1e-9 &&
				got.Baseline == 0 && got.Threshold == -8 && got.Observation < got.Threshold
		}

		var perf []struct {
			perfPoint
			Timestamp int64           `json:"timestamp"`
			AP        *wnms.AnomalyAP `json:"ap"`
		}
		e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/clientsperformance?locationid=%d&%s", floor.ID.ID, window), nil).Decode(t, &perf)
		if len(perf) != 3 || perf[0].Anomalous || perf[0].AP != nil || perf[2].Timestamp != at(11, 45).UnixMilli() ||
			perf[2].NoOfSamplesForObservation != 20 || perf[2].AbsoluteObservation != 2 || perf[2].Observation != 10 ||
			!near(perf[2].Baseline, 0) || perf[2].Threshold == nil || *perf[2].Threshold != 0 || !perf[2].Anomalous || !sameAP(perf[2].AP) {
			t.Fatalf("performance: %+v", perf)
		}
		// The site's slot is judged by its share alone (the anomalies are
		// the floors'): 2 of 20 is no anomaly.
		perf = nil
		e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/clientsperformance?locationid=%d&%s", site.ID.ID, window), nil).Decode(t, &perf)
		if len(perf) != 3 || perf[2].Anomalous || perf[2].AP != nil || perf[2].NoOfSamplesForObservation != 20 {
			t.Fatalf("performance of the site: %+v", perf)
		}
		// One SSID's slot is not judged by APs (their clients are of every
		// SSID): 2 of 20 is no anomaly.
		perf = nil
		e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/clientsperformance?locationid=%d&ssid=corp&%s", floor.ID.ID, window), nil).Decode(t, &perf)
		if len(perf) != 3 || perf[2].Anomalous || perf[2].AP != nil {
			t.Fatalf("performance of SSID corp: %+v", perf)
		}

		// The evaluation lists the slot with its AP, and the incident it
		// makes is the AP's.
		if err := e.API.Baselines.EvaluateCustomer(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		if err := e.API.Incidents.Group(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		var list []struct {
			Kind      string          `json:"kind"`
			Timestamp int64           `json:"timestamp"`
			Threshold float64         `json:"threshold"`
			AP        *wnms.AnomalyAP `json:"ap"`
		}
		e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/anomalies?locationid=%d&%s", floor.ID.ID, window), nil).Decode(t, &list)
		if len(list) != 1 || list[0].Kind != "clientsperformance" || list[0].Timestamp != at(11, 45).UnixMilli() || list[0].Threshold != 0 ||
			!sameAP(list[0].AP) {
			t.Fatalf("anomalies: %+v", list)
		}
		var incidents struct{ Incidents []wnms.Incident }
		e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/incidents?locationid=%d&fromtime=%d", site.ID.ID, at(11, 0).UnixMilli()), nil).Decode(t, &incidents)
		if len(incidents.Incidents) != 1 {
			t.Fatalf("incidents: %+v", incidents)
		}
		in := incidents.Incidents[0]
		if in.Scope.Type != wnms.ScopeAP || in.Scope.ID != aps[0].MacAddress || in.Scope.Name != "AP 1" || in.Cause == nil ||
			in.Cause.Stage != "performance" || in.Cause.Reason.Text != wnms.APReasonLowRSSI || in.Cause.Share != 1 {
			t.Fatalf("incident: scope %+v, cause %+v", in.Scope, in.Cause)
		}
	})
}
