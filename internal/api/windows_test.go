package api_test

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// windowCalls are the calls that take a time window, as a format with one
// %s for the window's query string (or path, for the export).
var windowCalls = []string{
	"/V5/baselines/clientsconnectivity?%s",
	"/V5/baselines/clientsperformance?%s",
	"/V5/baselines/clientdatarate?macaddress=aa:bb:cc:00:00:01&%s",
	"/V5/baselines/anomalies?%s",
	"/V5/devices/clientevents/aa:bb:cc:00:00:01/0/10?%s",
	"/V5/devices/clients/connectionlogs?clientmacaddress=aa:bb:cc:00:00:01&%s",
	"/V5/devices/clients/statistics/trend?type=clientdatarate&macaddress=aa:bb:cc:00:00:01&%s",
	"/V5/devices/manageddevices/statistics/trend?devicecategory=MANAGED_AP&type=apclientcount&boxid=1&%s",
}

// windowPath fills a call's window: fromtime/totime in the query, or the
// export's startdate/enddate in the path.
func windowPath(call string, from, to string) string {
	q := url.Values{}
	if from != "" {
		q.Set("fromtime", from)
	}
	if to != "" {
		q.Set("totime", to)
	}
	return fmt.Sprintf(call, q.Encode())
}

// Every call that takes a time window checks it before any work: a time
// outside [0, now + 1 day] or a window over the call's limit is 400
// INVALID_PARAMETER naming the parameter. Before this check,
// totime=9223372036854775807 made the baseline calls loop forever (the
// slot loop overflowed int64) and held a core per request.
func TestTimeWindowsCheckedFirst(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	_, viewer := e.NewUser(t, apitest.UserSpec{Login: "viewer", Role: wnms.Viewer})
	now := time.Now()
	ms := func(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }
	bad := []struct {
		name, from, to, param string
	}{
		{"totime at the end of int64", "", "9223372036854775807", "totime"},
		{"both at the end of int64", "9223372036854775806", "9223372036854775807", ""},
		{"totime two days ahead", "", ms(now.Add(48 * time.Hour)), "totime"},
		{"fromtime far in the future", ms(now.Add(400 * 24 * time.Hour)), "", "fromtime"},
		{"fromtime at the start of int64", "-9223372036854775808", ms(now), "fromtime"},
		{"totime negative", ms(now.Add(-time.Hour)), "-5", "totime"},
		{"fromtime after totime", ms(now), ms(now.Add(-time.Hour)), "fromtime"},
		{"a year", ms(now.Add(-365 * 24 * time.Hour)), ms(now), "fromtime"},
	}
	for _, call := range windowCalls {
		for _, c := range bad {
			t.Run(call+"/"+c.name, func(t *testing.T) {
				path := windowPath(call, c.from, c.to)
				if c.name == "a year" && (call == windowCalls[4] || call == windowCalls[5]) {
					return // client events and connection logs take any window between the bounds
				}
				r := viewer.Do("GET", path, nil)
				if r.Status != 400 || r.ErrorCode() != wnms.InvalidParameter {
					t.Fatalf("GET %s: %d %s, want 400 INVALID_PARAMETER", path, r.Status, r.Body)
				}
				if info := r.MoreInfo(); c.param != "" && info != c.param || info == "" {
					t.Errorf("GET %s: moreInfo %q, want %q", path, info, c.param)
				}
			})
		}
	}
	// The export takes its window in the path.
	for _, p := range []string{
		"/V2/analytics/associationdata/0/9223372036854775807",
		"/V2/analytics/associationdata/" + ms(now.Add(72*time.Hour)) + "/" + ms(now.Add(96*time.Hour)),
	} {
		if r := viewer.Do("GET", p, nil); r.Status != 400 || r.ErrorCode() != wnms.InvalidParameter {
			t.Errorf("GET %s: %d %s, want 400 INVALID_PARAMETER", p, r.Status, r.Body)
		}
	}
	// A window ending within a day from now is still served (the trends
	// answer 404 for the client and AP this store does not know).
	for _, call := range windowCalls {
		path := windowPath(call, ms(now.Add(-time.Hour)), ms(now.Add(time.Hour)))
		if r := viewer.Do("GET", path, nil); r.Status != 200 && r.ErrorCode() != wnms.ResourceNotFound {
			t.Errorf("GET %s: %d %s", path, r.Status, r.Body)
		}
	}
}

// FuzzTimeWindows sends any fromtime/totime to every call that takes a
// window: each answers (200, 400, or 404 for the unknown client and AP), and none runs past a deadline that a
// bounded computation on an empty store never reaches.
func FuzzTimeWindows(f *testing.F) {
	for _, s := range [][2]string{
		{"", "9223372036854775807"},
		{"-9223372036854775808", "9223372036854775807"},
		{"0", "0"},
		{"-1", "-1"},
		{"1700000000000", "1700086400000"},
		{"9223372036854775000", ""},
		{"x", "1e3"},
	} {
		f.Add(s[0], s[1])
	}
	e := apitest.New(f, apitest.SQLite)
	f.Fuzz(func(t *testing.T, from, to string) {
		admin := e.Admin.WithT(t)
		for _, call := range windowCalls {
			path := windowPath(call, from, to)
			done := make(chan *apitest.Response, 1)
			go func() { done <- admin.Do("GET", path, nil) }()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			select {
			case r := <-done:
				cancel()
				if r.Status != 200 && r.Status != 400 && r.Status != 404 {
					t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
				}
			case <-ctx.Done():
				cancel()
				t.Fatalf("GET %s: no answer in 20 s", path)
			}
		}
	})
}
