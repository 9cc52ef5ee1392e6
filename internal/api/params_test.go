package api

import (
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// Each call's parameters are read into its params struct: the first bad
// parameter is the one the error names, whatever comes after it, and what
// is read is what the service gets.
func TestParamsFirstErrorWins(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	clock := func() time.Time { return now }
	for _, tc := range []struct {
		name, query string
		p           params
		field       string // "" when the parameters are good
	}{
		{"trend: a bad boxid, then a bad MAC", "type=clientdatarate&boxid=x&macaddress=nope",
			&trendParams{types: []string{"clientdatarate"}, clientOK: true}, "boxid"},
		{"trend: a bad MAC alone", "type=clientdatarate&macaddress=nope",
			&trendParams{types: []string{"clientdatarate"}, clientOK: true}, "macaddress"},
		{"trend: the type is checked before the window", "type=cpu&fromtime=5&totime=1",
			&trendParams{types: []string{"clientdatarate"}, clientOK: true}, "type"},
		{"trend: an AP named", "type=apclientcount&boxid=7", &trendParams{types: []string{"apclientcount"}}, ""},
		{"baseline: a node is the router's to check, the MAC the call's", "nodeid=9&macaddress=nope", &baselineParams{mac: 1}, "macaddress"},
		{"baseline: a bad MAC", "macaddress=nope", &baselineParams{mac: 1}, "macaddress"},
		{"baseline: a required MAC missing", "", &baselineParams{mac: 2}, "macaddress"},
		{"baseline: a band", "frequencyband=5GHz", &baselineParams{scope: true}, ""},
		{"baseline: a bad band", "frequencyband=6GHz", &baselineParams{scope: true}, "frequencyband"},
		{"baseline: a window too wide", "fromtime=0", &baselineParams{}, "fromtime"},
		{"logs: missing client", "logtype=all", &connectionLogsParams{}, "clientmacaddress"},
		{"logs: a bad log type", "clientmacaddress=aa:bb:cc:dd:ee:ff&logtype=some", &connectionLogsParams{}, "logtype"},
		{"logs: a page too big", "clientmacaddress=aa:bb:cc:dd:ee:ff&limit=5000", &connectionLogsParams{}, "limit"},
		{"clients: a bad active", "active=maybe", &clientParams{}, "active"},
		{"APs: a bad sort column", "sortcolumn=color", &apParams{sortParam: "sortcolumn", ascParam: "sortascending"}, "sortcolumn"},
		{"APs: a bad capability", "capability=9", &apParams{sortParam: "sortcolumn", ascParam: "sortascending"}, "capability"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/x?"+tc.query, nil)
			err := bindAt(r, tc.p, clock)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *wnms.Error
			if !errors.As(err, &e) || e.MoreInfo != tc.field {
				t.Fatalf("error %v, want one naming %s", err, tc.field)
			}
		})
	}
}
