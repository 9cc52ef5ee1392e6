package baseline_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// bandAttempts makes n clients attempt at t on the floor's AP in one band
// (channel 1: 2.4 GHz, 36: 5 GHz), the first failing of them rejected by
// the AP (1/101), as a broken radio rejects them.
func bandAttempts(id string, t time.Time, channel, n, failing int) []string {
	var out []string
	for i := 0; i < n; i++ {
		head := fmt.Sprintf(`{"eventId":"%s-%d","macAddress":"aa:bb:cc:00:%02x:%02x","bssid":"00:11:74:00:0b:%02x","channel":%d,"ssid":"corp","timestamp":%d`,
			id, i, channel, i, channel, channel, t.UnixMilli()+int64(i)*1000)
		if i < failing {
			out = append(out, head+`,"eventType":"Failure","failureCode":1,"subFailureCode":101}`)
		} else {
			out = append(out, head+`,"eventType":"Success","dhcpLatency":1,"aaaLatency":1,"dnsLatency":0}`)
		}
	}
	return out
}

// A trouble on one band of a floor (a broken 5 GHz radio): 4 of the
// floor's 10 clients fail, all of them among the 7 on 5 GHz, against a
// history without failures. The floor alone would need 5 of 10 (at 5 %,
// P(X ≥ 4 | 10) = 0.00103 is not below 0.001); its 5 GHz clients pass the
// rule at 0.001 / 2 (P(X ≥ 4 | 7, 5 %) = 0.00019): the slot is anomalous,
// its threshold the floor with 3 of them failing (30 %), in the baseline
// call and in the anomalies list alike. With 3 failing it is not (40).
func TestOneBandOfAFloor(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		clock := apitest.NewClock(time.Date(2026, 11, 20, 12, 0, 30, 0, time.UTC))
		e.UseClock(clock)
		e.API.Baselines.Now = clock.Now
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		floor := e.NewLocation(t, site.ID.ID, wnms.FloorLocation, "Floor 1", 1)
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", raw([]string{fmt.Sprintf(`{"macaddress":"00:11:74:00:0b:00","name":"AP 1",
			"locationId":{"type":"locallocationid","id":%d},"radios":[{"macaddress":"00:11:74:00:0b:01","channel":1,"ssid":"corp"},
			{"macaddress":"00:11:74:00:0b:24","channel":36,"ssid":"corp"}]}`, floor.ID.ID)}))

		// 11:30 and 11:45 on the three days before: 3 clients on 2.4 GHz
		// and 7 on 5 GHz, none failing. Today 4 of the 7 fail at 11:45, 3
		// at 11:30.
		at := func(h, m int) time.Time { return time.Date(2026, 11, 20, h, m, 0, 0, time.UTC) }
		var records []string
		for _, s := range []time.Time{at(11, 30), at(11, 45)} {
			for d := 1; d <= 3; d++ {
				day := s.AddDate(0, 0, -d)
				id := fmt.Sprintf("%d-%d", day.Unix(), d)
				records = append(records, bandAttempts(id+"a", day, 1, 3, 0)...)
				records = append(records, bandAttempts(id+"b", day, 36, 7, 0)...)
			}
			failing := 4
			if s.Minute() == 30 {
				failing = 3
			}
			records = append(records, bandAttempts(fmt.Sprint(s.Unix(), "a"), s, 1, 3, 0)...)
			records = append(records, bandAttempts(fmt.Sprint(s.Unix(), "b"), s, 36, 7, failing)...)
		}
		e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", raw(records))

		window := fmt.Sprintf("fromtime=%d&totime=%d", at(11, 30).UnixMilli(), at(11, 45).UnixMilli())
		for _, loc := range []int64{floor.ID.ID, site.ID.ID} {
			var pts []point
			e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/clientsconnectivity?locationid=%d&%s", loc, window), nil).Decode(t, &pts)
			if len(pts) != 2 || !near(pts[0].Baseline, 0) || !near(pts[0].StandardDeviation, 0) ||
				pts[0].NoOfSamplesForObservation != 10 || pts[0].AbsoluteObservation != 3 || !near(pts[0].Threshold, 40) || pts[0].Anomalous ||
				pts[1].NoOfSamplesForObservation != 10 || pts[1].AbsoluteObservation != 4 || !near(pts[1].Threshold, 30) || !pts[1].Anomalous ||
				pts[1].Observation != 40 {
				t.Fatalf("location %d: %+v", loc, pts)
			}
		}
		// The band itself, against its own history: 4 of 7.
		var band []point
		e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/clientsconnectivity?locationid=%d&frequencyband=2.4GHz&%s", floor.ID.ID, window), nil).Decode(t, &band)
		if len(band) != 2 || band[1].NoOfSamplesForObservation != 3 || band[1].Anomalous {
			t.Fatalf("2.4 GHz: %+v", band)
		}

		// The evaluation lists the same slot, with the same threshold.
		if err := e.API.Baselines.EvaluateCustomer(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		var list []map[string]any
		e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/anomalies?locationid=%d&%s", floor.ID.ID, window), nil).Decode(t, &list)
		if len(list) != 1 || list[0]["kind"] != "clientsconnectivity" || list[0]["timestamp"] != float64(at(11, 45).UnixMilli()) ||
			list[0]["observation"] != float64(40) || list[0]["threshold"] != float64(30) {
			t.Fatalf("anomalies: %v", list)
		}
	})
}
