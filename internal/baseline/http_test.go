package baseline_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/baseline"
	"github.com/wnms/wnms/internal/wnms"
)

const bssid = "00:11:74:00:0a:01"

func raw(records []string) apitest.Raw {
	return apitest.Raw{ContentType: "application/json", Body: []byte("[" + strings.Join(records, ",") + "]")}
}

// attempts makes n clients attempt at t on the floor's AP (5 GHz, SSID
// corp), the first failing of them failing with an authentication failure
// (RADIUS unreachable).
func attempts(day string, t time.Time, n, failing int) []string {
	var out []string
	for i := 0; i < n; i++ {
		head := fmt.Sprintf(`{"eventId":"%s-%d","macAddress":"aa:bb:cc:00:00:%02x","bssid":%q,"channel":36,"ssid":"corp","timestamp":%d`,
			day, i, i, bssid, t.UnixMilli()+int64(i)*1000)
		if i < failing {
			out = append(out, head+`,"eventType":"Failure","failureCode":2,"subFailureCode":203}`)
		} else {
			out = append(out, head+`,"eventType":"Success","dhcpLatency":1,"aaaLatency":1,"dnsLatency":0}`)
		}
	}
	return out
}

type point struct {
	Baseline                     *float64 `json:"baseline"`
	StandardDeviation            *float64 `json:"standardDeviation"`
	Anomalous                    bool     `json:"anomalous"`
	Timestamp                    int64    `json:"timestamp"`
	Observation                  float64  `json:"observation"`
	AbsoluteObservation          int      `json:"absoluteObservation"`
	NoOfSamplesForObservation    int      `json:"noOfSamplesForObservation"`
	Threshold                    *float64 `json:"threshold"`
	PercentageClientsAuthFailure float64  `json:"percentageClientsAuthFailure"`
	NoClientsAuthFailure         int      `json:"noClientsAuthFailure"`
}

func near(a *float64, b float64) bool { return a != nil && math.Abs(*a-b) < 1e-9 }

// The connectivity baseline through HTTP, against numbers worked out by
// hand, and the anomaly evaluation recording each anomaly once even when
// two replicas evaluate the same slot.
func TestConnectivityBaseline(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		now := time.Date(2026, 11, 20, 12, 0, 30, 0, time.UTC)
		clock := apitest.NewClock(now)
		e.UseClock(clock)
		e.API.Baselines.Now = clock.Now
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		floor := e.NewLocation(t, site.ID.ID, wnms.FloorLocation, "Floor 1", 1)
		other := e.NewLocation(t, 0, wnms.FolderLocation, "Other", 1)
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", raw([]string{fmt.Sprintf(`{"macaddress":"00:11:74:00:0a:00","name":"AP 1",
			"locationId":{"type":"locallocationid","id":%d},"radios":[{"macaddress":%q,"channel":36,"ssid":"corp"}]}`, floor.ID.ID, bssid)}))

		// The 11:45 slot on the three days before: 10 clients each, 1, 2
		// and 3 failing: 10 %, 20 %, 30 %. Today 10 clients, 6 failing.
		slot := time.Date(2026, 11, 20, 11, 45, 0, 0, time.UTC)
		var records []string
		for d, failing := range []int{1, 2, 3} {
			records = append(records, attempts(fmt.Sprintf("d%d", d+1), slot.AddDate(0, 0, -(d+1)), 10, failing)...)
		}
		records = append(records, attempts("today", slot, 10, 6)...)
		e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", raw(records))

		// Baseline: mean of 10, 20, 30 = 20; population σ = √(((−10)² + 0² +
		// 10²) / 3) = √66.67 = 8.1650; k·σ bar 20 + 2σ = 36.3299.
		// Observation 6/10 = 60 % with 10 samples ≥ 5. At the baseline's
		// rate of 20 %, 6 or more of 10 failing has the probability 0.0064,
		// not below α = 0.001; 7 or more has 0.00086. So the threshold is
		// the observation of 6 of 10, 60, and 60 is not anomalous.
		window := fmt.Sprintf("fromtime=%d&totime=%d", slot.UnixMilli(), slot.UnixMilli()+60_000)
		check := func(threshold float64, anomalous bool) {
			t.Helper()
			for _, loc := range []int64{site.ID.ID, floor.ID.ID, 0} {
				var pts []point
				e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/clientsconnectivity?locationid=%d&%s", loc, window), nil).Decode(t, &pts)
				sd := math.Sqrt(200.0 / 3)
				if len(pts) != 1 || !near(pts[0].Baseline, 20) || !near(pts[0].StandardDeviation, sd) || !near(pts[0].Threshold, threshold) ||
					pts[0].Observation != 60 || pts[0].AbsoluteObservation != 6 || pts[0].NoOfSamplesForObservation != 10 ||
					pts[0].Anomalous != anomalous || pts[0].PercentageClientsAuthFailure != 60 || pts[0].NoClientsAuthFailure != 6 ||
					pts[0].Timestamp != slot.UnixMilli() {
					t.Fatalf("location %d: %+v", loc, pts)
				}
			}
		}
		check(60, false)
		// At α = 1 %, 6 of 10 is improbable enough (0.0064 < 0.01) and 5
		// of 10 is not (0.033): the threshold is the observation of 5 of
		// 10, 50, and 60 is anomalous.
		e.API.Baselines.Alpha = 0.01
		check(50, true)
		// The slot's failing clients are the six the observation counts,
		// listed by MAC up to the limit; none in another folder or band.
		for _, tc := range []struct {
			query string
			total int
			macs  string
		}{
			{fmt.Sprintf("locationid=%d", floor.ID.ID), 6, "aa:bb:cc:00:00:00 aa:bb:cc:00:00:01 aa:bb:cc:00:00:02 aa:bb:cc:00:00:03 aa:bb:cc:00:00:04 aa:bb:cc:00:00:05"},
			{"limit=2", 6, "aa:bb:cc:00:00:00 aa:bb:cc:00:00:01"},
			{fmt.Sprintf("locationid=%d", other.ID.ID), 0, ""},
			{"frequencyband=2.4GHz", 0, ""},
		} {
			var got baseline.SlotFailures
			e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/clientsconnectivity/failingclients?timestamp=%d&%s",
				slot.UnixMilli()+5*60_000, tc.query), nil).Decode(t, &got)
			var macs []string
			for _, c := range got.Clients {
				macs = append(macs, strings.ToLower(c.MacAddress))
				if len(c.FailureCategories) != 1 || c.FailureCategories[0] != "Authentication" {
					t.Errorf("%s: %+v", tc.query, c)
				}
			}
			if got.Timestamp != slot.UnixMilli() || got.TotalCount != tc.total || strings.Join(macs, " ") != tc.macs {
				t.Errorf("failing clients %s: %+v", tc.query, got)
			}
		}
		// Another band, another SSID, another folder: no data, no baseline.
		for _, q := range []string{"frequencyband=2.4ghz&locationid=0", "ssid=guest&locationid=0", fmt.Sprintf("locationid=%d", other.ID.ID)} {
			var pts []point
			e.Admin.Expect(200, "GET", "/V5/baselines/clientsconnectivity?"+q+"&"+window, nil).Decode(t, &pts)
			if len(pts) != 1 || pts[0].Baseline != nil || pts[0].Anomalous || pts[0].NoOfSamplesForObservation != 0 {
				t.Fatalf("%s: %+v", q, pts)
			}
		}
		// The default window is the last 24 hours: 96 slots, oldest first.
		var day []point
		e.Admin.Expect(200, "GET", "/V5/baselines/clientsconnectivity", nil).Decode(t, &day)
		if len(day) != 96 || day[0].Timestamp >= day[95].Timestamp || day[95].Timestamp != time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC).UnixMilli() {
			t.Fatalf("default window: %d points", len(day))
		}

		// The evaluation finds the 11:45 slot anomalous on the floor, and
		// records and announces it once, with two replicas at it together.
		second := baseline.NewService(apitest.OpenStoreAt(t, e.Config), nil)
		second.Now, second.Alpha = clock.Now, 0.01
		var mu sync.Mutex
		var announced []string
		announce := func(a wnms.Anomaly, path string) {
			mu.Lock()
			announced = append(announced, fmt.Sprintf("%d %s %d", a.LocationID, path, a.Slot))
			mu.Unlock()
		}
		e.API.Baselines.OnAnomaly, second.OnAnomaly = announce, announce
		var wg sync.WaitGroup
		for _, svc := range []*baseline.Service{e.API.Baselines, second} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := svc.EvaluateCustomer(context.Background(), 1); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if err := e.API.Baselines.EvaluateCustomer(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%d /Site/Floor 1 %d", floor.ID.ID, slot.UnixMilli())
		if len(announced) != 1 || announced[0] != want {
			t.Fatalf("announced %q, want once %q", announced, want)
		}
		var list []map[string]any
		e.Admin.Expect(200, "GET", "/V5/baselines/anomalies", nil).Decode(t, &list)
		if len(list) != 1 || list[0]["kind"] != "clientsconnectivity" || list[0]["observation"] != float64(60) {
			t.Fatalf("anomalies: %v", list)
		}
		var none []map[string]any
		e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/anomalies?locationid=%d", other.ID.ID), nil).Decode(t, &none)
		if len(none) != 0 {
			t.Fatalf("anomalies elsewhere: %v", none)
		}
	})
}

func TestBaselineBadInput(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	foreign := e.NewLocation(t, 0, wnms.FolderLocation, "Foreign", 2)
	site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
	other := e.NewLocation(t, 0, wnms.FolderLocation, "Other", 1)
	_, scoped := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer, Locations: []int64{site.ID.ID}})
	day := int64(24 * time.Hour / time.Millisecond)
	for _, tc := range []struct {
		name   string
		c      *apitest.Client
		query  string
		status int
		code   string
		text   string
	}{
		{"6 GHz", e.Admin, "frequencyband=6GHz", 400, wnms.InvalidParameter, "frequencyband"},
		{"from after to", e.Admin, fmt.Sprintf("fromtime=%d&totime=%d", 2*day, day), 400, wnms.InvalidParameter, "after"},
		{"32 days", e.Admin, fmt.Sprintf("fromtime=%d&totime=%d", day, 33*day), 400, wnms.InvalidParameter, "31 days"},
		{"not a number", e.Admin, "fromtime=yesterday", 400, wnms.InvalidParameter, "fromtime"},
		{"unknown location", e.Admin, "locationid=999", 404, wnms.ResourceNotFound, "999"},
		{"another customer's location", e.Admin, fmt.Sprintf("locationid=%d", foreign.ID.ID), 404, wnms.ResourceNotFound, ""},
		{"out of scope", scoped, fmt.Sprintf("locationid=%d", other.ID.ID), 403, wnms.LocationAccessDenied, ""},
		{"a child", e.Admin, "nodeid=3", 400, wnms.InvalidParameter, "nodeid"},
		{"a slot in the future", e.Admin, fmt.Sprintf("timestamp=%d", time.Now().Add(48*time.Hour).UnixMilli()), 400, wnms.InvalidParameter, "timestamp"},
		{"a limit over 1000", e.Admin, "limit=1001", 400, wnms.InvalidParameter, "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slot := fmt.Sprintf("timestamp=%d&", time.Now().UnixMilli())
			if strings.Contains(tc.query, "timestamp") {
				slot = ""
			}
			for _, path := range []string{"/V5/baselines/clientsconnectivity?", "/V5/baselines/anomalies?", "/V5/baselines/clientsconnectivity/failingclients?" + slot} {
				if strings.Contains(path, "anomalies") && strings.Contains(tc.query, "frequencyband") ||
					!strings.Contains(path, "failingclients") && (strings.Contains(tc.query, "timestamp") || strings.Contains(tc.query, "limit")) {
					continue
				}
				r := tc.c.Do("GET", path+tc.query, nil)
				if r.Status != tc.status || r.ErrorCode() != tc.code || !strings.Contains(string(r.Body), tc.text) {
					t.Errorf("%s%s: %d %s", path, tc.query, r.Status, r.Body)
				}
			}
		})
	}
}

// sample is one statistics sample of a client on the floor's AP.
func sample(mac string, t time.Time, rate, retry float64, rssi int) string {
	return fmt.Sprintf(`{"macAddress":%q,"bssid":%q,"channel":36,"ssid":"corp","timestamp":%d,"rssi":%d,"dataRateMbps":%g,"retryRatePct":%g}`,
		mac, bssid, t.UnixMilli(), rssi, rate, retry)
}

type perfPoint struct {
	Baseline                     *float64 `json:"baseline"`
	StandardDeviation            *float64 `json:"standardDeviation"`
	Anomalous                    bool     `json:"anomalous"`
	Observation                  float64  `json:"observation"`
	AbsoluteObservation          int      `json:"absoluteObservation"`
	NoOfSamplesForObservation    int      `json:"noOfSamplesForObservation"`
	Threshold                    *int64   `json:"threshold"`
	PercentageClientsLowDataRate float64  `json:"percentageClientsLowDataRate"`
	NoClientsLowDataRate         int      `json:"noClientsLowDataRate"`
}

type ratePoint struct {
	point
	SSID          string `json:"ssid"`
	FrequencyBand string `json:"frequencyBand"`
}

// The performance and data-rate baselines through HTTP, against numbers
// worked out by hand.
func TestPerformanceAndDataRateBaselines(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		clock := apitest.NewClock(time.Date(2026, 11, 20, 12, 0, 30, 0, time.UTC))
		e.UseClock(clock)
		e.API.Baselines.Now = clock.Now
		floor := e.NewLocation(t, e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1).ID.ID, wnms.FloorLocation, "Floor 1", 1)
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", raw([]string{fmt.Sprintf(`{"macaddress":"00:11:74:00:0a:00","name":"AP 1",
			"locationId":{"type":"locallocationid","id":%d},"radios":[{"macaddress":%q,"channel":36,"ssid":"corp"}]}`, floor.ID.ID, bssid)}))
		slot := time.Date(2026, 11, 20, 11, 45, 0, 0, time.UTC)

		// Performance: 10 clients at 11:45 on each of the three days
		// before and today. Client 00 always has a good rate; clients 01
		// up to the day's count have 5 Mbps (low data rate): 1, 2, 3 of 10
		// on the days before (10 %, 20 %, 30 %), 6 of 10 today (60 %).
		// Baseline 20, σ = √((100 + 0 + 100) / 3) = 8.165, k·σ bar
		// round(20 + 16.33) = 36; but 6 of 10 at the rate of 20 % has the
		// probability 0.0064, not below α = 0.001 (7 of 10: 0.00086), so
		// the threshold is that of 6 of 10, 60: 60 is not anomalous.
		// Data rate of client 00: one sample each of 100, 120 and 140 Mbps
		// on the days before (mean 120, σ = √(800 / 3) = 16.33, threshold
		// 120 − 32.66 = 87.34), and today five samples of 80: anomalous.
		var records []string
		days := []struct {
			at   time.Time
			low  int
			rate float64
		}{{slot.AddDate(0, 0, -1), 1, 100}, {slot.AddDate(0, 0, -2), 2, 120}, {slot.AddDate(0, 0, -3), 3, 140}, {slot, 6, 80}}
		for _, d := range days {
			for i := 1; i <= 9; i++ {
				rate := 300.0
				if i <= d.low {
					rate = 5
				}
				records = append(records, sample(fmt.Sprintf("aa:bb:cc:00:01:%02x", i), d.at.Add(time.Duration(i)*time.Second), rate, 1, -50))
			}
			n := 1
			if d.at.Equal(slot) {
				n = 5
			}
			for j := 0; j < n; j++ {
				records = append(records, sample("aa:bb:cc:00:01:00", d.at.Add(time.Duration(j)*time.Minute), d.rate, 1, -50))
			}
		}
		e.Admin.Expect(200, "POST", "/V5/ingest/clientstats", raw(records))
		window := fmt.Sprintf("fromtime=%d&totime=%d", slot.UnixMilli(), slot.UnixMilli()+60_000)

		var perf []perfPoint
		e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/clientsperformance?locationid=%d&%s", floor.ID.ID, window), nil).Decode(t, &perf)
		sd := math.Sqrt(200.0 / 3)
		if len(perf) != 1 || !near(perf[0].Baseline, 20) || !near(perf[0].StandardDeviation, sd) || perf[0].Threshold == nil ||
			*perf[0].Threshold != 60 || perf[0].Observation != 60 || perf[0].NoOfSamplesForObservation != 10 || perf[0].AbsoluteObservation != 6 ||
			perf[0].NoClientsLowDataRate != 6 || perf[0].PercentageClientsLowDataRate != 60 || perf[0].Anomalous {
			t.Fatalf("performance: %+v", perf)
		}
		// One client alone: client 03 was low today and on day −3 only.
		e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/clientsperformance?macaddress=AA-BB-CC-00-01-03&%s", window), nil).Decode(t, &perf)
		if len(perf) != 1 || perf[0].Observation != 100 || perf[0].NoOfSamplesForObservation != 1 || perf[0].Anomalous {
			t.Fatalf("one client's performance: %+v", perf)
		}

		var rate []ratePoint
		e.Admin.Expect(200, "GET", "/V5/baselines/clientdatarate?macaddress=aa:bb:cc:00:01:00&"+window, nil).Decode(t, &rate)
		rsd := math.Sqrt(800.0 / 3)
		if len(rate) != 1 || !near(rate[0].Baseline, 120) || !near(rate[0].StandardDeviation, rsd) || rate[0].Observation != 80 ||
			rate[0].NoOfSamplesForObservation != 5 || !rate[0].Anomalous || rate[0].SSID != "corp" || rate[0].FrequencyBand != "BAND_5_GHZ" ||
			!near(rate[0].Threshold, 120-2*rsd) {
			t.Fatalf("data rate: %+v", rate)
		}
		if r := e.Admin.Do("GET", "/V5/baselines/clientdatarate?"+window, nil); r.Status != 400 || r.ErrorCode() != wnms.MissingParameter {
			t.Fatalf("data rate without a MAC: %d %s", r.Status, r.Body)
		}
		if r := e.Admin.Do("GET", "/V5/baselines/clientdatarate?macaddress=aa:bb&"+window, nil); r.Status != 400 || r.ErrorCode() != wnms.InvalidParameter {
			t.Fatalf("data rate with a bad MAC: %d %s", r.Status, r.Body)
		}
	})
}
