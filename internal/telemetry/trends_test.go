package telemetry_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// The trend calls, with numbers worked out by hand from a few samples and
// heartbeats.
func TestTrends(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		// Bucket-aligned times: t0 starts a 5-minute bucket.
		t0 := time.Now().Add(-time.Hour).Truncate(5 * time.Minute)
		clock := apitest.NewClock(t0)
		e.UseClock(clock)
		ap := func(tx, rx int64, clients int) string {
			return fmt.Sprintf(`{"macaddress":"00:11:74:00:00:0a","name":"Lobby","numAssocClients":%d,"txBytes":%d,"rxBytes":%d,
				"radios":[{"macaddress":"00:11:74:00:10:0a","channel":36}]}`, clients, tx, rx)
		}
		// Heartbeats at t0 (first: covers nothing), t0+1m and t0+2m (60 s
		// each), and t0+6m (the next bucket, 240 s).
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(ap(999, 999, 3)))
		clock.Advance(time.Minute)
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(ap(600_000, 150_000, 5)))
		clock.Advance(time.Minute)
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(ap(300_000, 150_000, 4)))
		clock.Advance(4 * time.Minute)
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", body(ap(1_200_000, 0, 2)))
		var aps []wnms.AP
		e.Admin.Expect(200, "GET", "/v2/devices/aps", nil).Decode(t, &aps)
		box := aps[0].BoxID

		ms := func(d time.Duration) int64 { return t0.Add(d).UnixMilli() }
		sample := func(at time.Duration, rate, retry float64, rssi int, bytes string) string {
			return fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:00:01","timestamp":%d,"bssid":"00:11:74:00:10:0a","ssid":"corp","channel":36,
				"rssi":%d,"dataRateMbps":%g,"retryRatePct":%g%s}`, ms(at), rssi, rate, retry, bytes)
		}
		e.Admin.Expect(200, "POST", "/V5/ingest/clientstats", body(
			sample(30*time.Second, 100, 2, -50, `,"txBytes":1000,"rxBytes":500`),
			sample(3*time.Minute, 200, 6, -61, `,"txBytes":2000,"rxBytes":0`),
			sample(7*time.Minute, 54, 10, -72, ``),
		))
		window := fmt.Sprintf("&fromtime=%d&totime=%d", ms(0), ms(10*time.Minute))
		for _, tc := range []struct {
			path string
			want string
		}{
			// (100 + 200) / 2 Mbps = 150,000 kbps; then 54,000.
			{"/V5/devices/clients/statistics/trend?type=clientdatarate&macaddress=aa-bb-cc-00-00-01" + window, "[{0 150000} {5 54000}]"},
			// (1000 + 500 + 2000) bytes = 3.5 kB; the second bucket reports no bytes.
			{"/V5/devices/clients/statistics/trend?type=clienttraffic&macaddress=aa:bb:cc:00:00:01" + window, "[{0 3.5}]"},
			{"/V5/devices/clients/statistics/trend?type=clientretransmissionrate&macaddress=AA:BB:CC:00:00:01" + window, "[{0 4} {5 10}]"},
			{"/V5/devices/clients/statistics/trend?type=clientrssi&macaddress=AA:BB:CC:00:00:01" + window, "[{0 -55.5} {5 -72}]"},
			// Bucket 0: 750,000 + 450,000 bytes over 120 s = 1,200,000 × 8 / 1000 / 120 = 80 kbps
			// (the first heartbeat covers nothing). Bucket 5: 1,200,000 × 8 / 1000 / 240 = 40 kbps.
			{fmt.Sprintf("/V5/devices/manageddevices/statistics/trend?devicecategory=MANAGED_AP&type=apdatatransferhistory&boxid=%d", box) + window, "[{0 80} {5 40}]"},
			{fmt.Sprintf("/V5/devices/manageddevices/statistics/trend?type=apclientcount&boxid=%d", box) + window, "[{0 5} {5 2}]"},
		} {
			var tr telemetry.Trend
			e.Admin.Expect(200, "GET", tc.path, nil).Decode(t, &tr)
			got := "["
			for i, p := range tr.Samples {
				if i > 0 {
					got += " "
				}
				got += fmt.Sprintf("{%d %g}", (p.Time-ms(0))/60000, p.Value)
			}
			got += "]"
			if got != tc.want {
				t.Errorf("%s: %s, want %s", tc.path, got, tc.want)
			}
		}
		// The default window is the last 2 hours before now (t0+6m: the
		// sample at t0+7m is not in it yet).
		var tr telemetry.Trend
		e.Admin.Expect(200, "GET", "/V5/devices/clients/statistics/trend?type=clientdatarate&macaddress=aa:bb:cc:00:00:01", nil).Decode(t, &tr)
		if len(tr.Samples) != 1 || tr.Type != "clientdatarate" || tr.BoxID == 0 {
			t.Errorf("default window: %+v", tr)
		}
		_, stranger := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
		stranger.Expect(404, "GET", "/V5/devices/clients/statistics/trend?type=clientdatarate&macaddress=aa:bb:cc:00:00:01", nil)
		stranger.Expect(404, "GET", fmt.Sprintf("/V5/devices/manageddevices/statistics/trend?type=apclientcount&boxid=%d", box), nil)
		for _, tc := range []struct{ path, code string }{
			{"/V5/devices/clients/statistics/trend?macaddress=aa:bb:cc:00:00:01", wnms.MissingParameter},
			{"/V5/devices/clients/statistics/trend?type=clientmood&macaddress=aa:bb:cc:00:00:01", wnms.InvalidParameter},
			{"/V5/devices/clients/statistics/trend?type=clientdatarate", wnms.MissingParameter},
			{"/V5/devices/clients/statistics/trend?type=clientdatarate&macaddress=zz", wnms.InvalidParameter},
			{fmt.Sprintf("/V5/devices/clients/statistics/trend?type=clientdatarate&boxid=1&fromtime=%d&totime=%d", ms(0), ms(8*24*time.Hour)), wnms.InvalidParameter},
			{"/V5/devices/manageddevices/statistics/trend?devicecategory=SENSOR&type=apclientcount&boxid=1", wnms.InvalidParameter},
			{"/V5/devices/manageddevices/statistics/trend?type=apclientcount", wnms.MissingParameter},
			{"/V5/devices/manageddevices/statistics/trend?type=apuptime&boxid=1", wnms.InvalidParameter},
		} {
			if r := e.Admin.Do("GET", tc.path, nil); r.Status != 400 || r.ErrorCode() != tc.code {
				t.Errorf("GET %s: %d %s, want 400 %s", tc.path, r.Status, r.ErrorCode(), tc.code)
			}
		}
	})
}
