package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/datasource"
	"github.com/wnms/wnms/internal/wnms"
)

// GET /V5/datasources/status answers SUPERUSERs and ADMINISTRATORs with
// the sources of their customer inside their locations, and the RADIUS
// upstreams to callers allowed at the root only: a source whose listener
// is off is down, one that sent nothing idle, an upstream not tried yet
// idle. Every answer matches the OpenAPI document (checked by apitest).
func TestDataSourceStatusScope(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := newAuthzFixture(t, b)
		e := f.E
		// This server runs the RADIUS listeners but no syslog listener.
		bridge := &datasource.Bridge{Store: e.Store, RadiusOn: true}
		e.API.CheckDataSources = bridge.Check
		e.API.OnDataSourcesChange = func() {
			if err := bridge.Reload(context.Background()); err != nil {
				t.Error(err)
			}
		}
		e.API.DataSourceStatus = bridge.Status
		body := dataSourcesBody(f.Floor.ID.ID)
		src(body, 1)["locationId"] = map[string]any{"type": "locallocationid", "id": f.OtherFloor.ID.ID}
		src(body, 1)["radiusSecret"] = "nas-secret-floor1"
		src(body, 1)["syslog"] = false
		e.Admin.Expect(http.StatusOK, "PUT", dataSourcesPath, body)

		var st wnms.DataSourceStatus
		r := e.Admin.Expect(http.StatusOK, "GET", dataSourcesPath+"/status", nil)
		noSecrets(t, "status", r.Body)
		r.Decode(t, &st)
		if len(st.Sources) != 2 || st.Sources[0].Name != "floor 1 APs" || st.Sources[0].State != wnms.StateDown ||
			st.Sources[1].Name != "dhcp server" || st.Sources[1].State != wnms.StateIdle || st.Sources[1].LastPacket != nil ||
			st.Sources[1].Counts["accepted"] != 0 || len(st.Sources[1].Unmatched) != 0 {
			t.Errorf("sources: %+v", st.Sources)
		}
		want := []wnms.UpstreamStatus{{Address: "192.0.2.10:1812", Kind: "auth"}, {Address: "[2001:db8::2]:1812", Kind: "auth"},
			{Address: "192.0.2.10:1813", Kind: "accounting"}}
		if len(st.Upstreams) != len(want) {
			t.Fatalf("upstreams: %+v", st.Upstreams)
		}
		for i, u := range st.Upstreams {
			if u.Address != want[i].Address || u.Kind != want[i].Kind || u.State != wnms.StateIdle || u.LastAnswer != nil {
				t.Errorf("upstream %d: %+v, want %+v idle", i, u, want[i])
			}
		}

		// A caller scoped to the other folder sees its source only, and no
		// upstream.
		_, scoped := e.NewUser(t, apitest.UserSpec{Role: wnms.Administrator, Locations: []int64{f.Other.ID.ID}})
		scoped.Expect(http.StatusOK, "GET", dataSourcesPath+"/status", nil).Decode(t, &st)
		if len(st.Sources) != 1 || st.Sources[0].Name != "dhcp server" || len(st.Upstreams) != 0 {
			t.Errorf("scoped: %+v", st)
		}
		// Another customer sees none of these.
		_, foreign := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
		foreign.Expect(http.StatusOK, "GET", dataSourcesPath+"/status", nil).Decode(t, &st)
		if len(st.Sources) != 0 || len(st.Upstreams) != 0 {
			t.Errorf("another customer: %+v", st)
		}
		// Operators and viewers may not read it.
		for _, role := range []wnms.Role{wnms.Operator, wnms.Viewer} {
			_, c := e.NewUser(t, apitest.UserSpec{Role: role})
			if r := c.Do("GET", dataSourcesPath+"/status", nil); r.Status != http.StatusForbidden {
				t.Errorf("%s: status %d", role, r.Status)
			}
		}
	})
}
