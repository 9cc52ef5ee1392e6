package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/datasource"
	"github.com/wnms/wnms/internal/wnms"
)

const dataSourcesPath = "/V5/datasources"

// Secrets the data source tests store; none may come back.
var dataSourceSecrets = []string{"upstream-secret-1", "upstream-secret-2", "acct-secret-1", "nas-secret-floor1"}

func dataSourcesBody(floor int64) map[string]any {
	return map[string]any{
		"radius": map[string]any{
			"upstreams": []any{
				map[string]any{"address": "192.0.2.10:1812", "secret": "upstream-secret-1", "timeoutMs": 2000},
				map[string]any{"address": "[2001:db8::2]:1812", "secret": "upstream-secret-2", "timeoutMs": 0},
			},
			"accountingUpstreams": []any{map[string]any{"address": "192.0.2.10:1813", "secret": "acct-secret-1", "timeoutMs": 3000}},
		},
		"sources": []any{
			map[string]any{"name": "floor 1 APs", "cidr": "10.1.0.0/16", "radiusSecret": "nas-secret-floor1",
				"locationId": map[string]any{"type": "locallocationid", "id": floor}, "syslog": true},
			map[string]any{"name": "dhcp server", "cidr": "10.9.0.5", "radiusSecret": "",
				"locationId": map[string]any{"type": "locallocationid", "id": floor}, "syslog": true},
		},
	}
}

func noSecrets(t *testing.T, where string, body []byte) {
	t.Helper()
	for _, s := range dataSourceSecrets {
		if strings.Contains(string(body), s) {
			t.Errorf("%s shows the secret %q: %s", where, s, body)
		}
	}
}

func TestDataSources(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := newAuthzFixture(t, b)
		e := f.E
		e.API.CheckDataSources = (&datasource.Bridge{Store: e.Store}).Check
		ctx := context.Background()

		// Empty until stored.
		var got wnms.DataSources
		e.Admin.Expect(http.StatusOK, "GET", dataSourcesPath, nil).Decode(t, &got)
		if len(got.Sources) != 0 || got.Radius.Upstreams == nil || len(got.Radius.Upstreams) != 0 {
			t.Fatalf("before any PUT: %+v", got)
		}

		r := e.Admin.Expect(http.StatusOK, "PUT", dataSourcesPath, dataSourcesBody(f.Floor.ID.ID))
		noSecrets(t, "PUT's answer", r.Body)
		r = e.Admin.Expect(http.StatusOK, "GET", dataSourcesPath, nil)
		noSecrets(t, "GET", r.Body)
		r.Decode(t, &got)
		if got.Radius.Upstreams[0].Secret != wnms.SecretMask || got.Sources[0].RadiusSecret != wnms.SecretMask ||
			got.Sources[1].RadiusSecret != "" || got.Sources[0].CIDR != "10.1.0.0/16" || len(got.Radius.AccountingUpstreams) != 1 {
			t.Fatalf("GET: %+v", got)
		}

		// The masked answer sent back keeps every secret; a changed one
		// replaces it.
		got.Sources[0].Syslog = false
		got.Radius.Upstreams[1].Secret = "upstream-secret-2"
		e.Admin.Expect(http.StatusOK, "PUT", dataSourcesPath, got)
		stored, err := e.Store.DataSources(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Radius.Upstreams[0].Secret != "upstream-secret-1" || stored.Radius.Upstreams[1].Secret != "upstream-secret-2" ||
			stored.Radius.AccountingUpstreams[0].Secret != "acct-secret-1" || stored.Sources[0].RadiusSecret != "nas-secret-floor1" ||
			stored.Sources[0].Syslog {
			t.Fatalf("after the masked round trip: %+v", stored)
		}

		// Bad input: 400 naming the field, and nothing changes.
		bad := []struct {
			name, field string
			change      func(m map[string]any)
		}{
			{"no radius", "radius", func(m map[string]any) { delete(m, "radius") }},
			{"no sources", "sources", func(m map[string]any) { delete(m, "sources") }},
			{"bad cidr", "sources[0].cidr", func(m map[string]any) { src(m, 0)["cidr"] = "10.1.0.0/33" }},
			{"no name", "sources[0].name", func(m map[string]any) { src(m, 0)["name"] = "" }},
			{"same name twice", "sources[1].name", func(m map[string]any) { src(m, 1)["name"] = "floor 1 APs" }},
			{"same prefix twice", "sources[1].cidr", func(m map[string]any) { src(m, 1)["cidr"] = "10.1.255.255/16" }},
			{"sends nothing", "sources[1]", func(m map[string]any) { src(m, 1)["syslog"] = false }},
			{"mask of no stored source", "sources[1].radiusSecret", func(m map[string]any) {
				src(m, 1)["name"], src(m, 1)["radiusSecret"] = "new source", wnms.SecretMask
			}},
			{"upstream without port", "radius.upstreams[0].address", func(m map[string]any) { up(m, 0)["address"] = "192.0.2.10" }},
			{"upstream without secret", "radius.upstreams[0].secret", func(m map[string]any) { up(m, 0)["secret"] = "" }},
			{"upstream timeout", "radius.upstreams[1].timeoutMs", func(m map[string]any) { up(m, 1)["timeoutMs"] = 60001 }},
			{"mask of no stored upstream", "radius.upstreams[0].secret", func(m map[string]any) {
				up(m, 0)["address"], up(m, 0)["secret"] = "192.0.2.99:1812", wnms.SecretMask
			}},
			{"secret too long", "sources[0].radiusSecret", func(m map[string]any) { src(m, 0)["radiusSecret"] = strings.Repeat("s", 129) }},
		}
		before, _ := json.Marshal(stored)
		for _, tc := range bad {
			m := dataSourcesBody(f.Floor.ID.ID)
			tc.change(m)
			r := e.Admin.Do("PUT", dataSourcesPath, m)
			if r.Status != http.StatusBadRequest || r.MoreInfo() != tc.field {
				t.Errorf("%s: status %d moreInfo %q, want 400 %q; %s", tc.name, r.Status, r.MoreInfo(), tc.field, r.Body)
			}
			noSecrets(t, tc.name, r.Body)
		}
		// A location of another customer is not found; a location outside
		// a scoped administrator's is refused.
		m := dataSourcesBody(f.ForeignFloor.ID.ID)
		if r := e.Admin.Do("PUT", dataSourcesPath, m); r.Status != http.StatusNotFound {
			t.Errorf("another customer's location: status %d; %s", r.Status, r.Body)
		}
		_, scoped := e.NewUser(t, apitest.UserSpec{Role: wnms.Administrator, Locations: []int64{f.Other.ID.ID}})
		if r := scoped.Do("PUT", dataSourcesPath, dataSourcesBody(f.Floor.ID.ID)); r.Status != http.StatusForbidden ||
			r.ErrorCode() != wnms.LocationAccessDenied {
			t.Errorf("outside the caller's locations: status %d %s", r.Status, r.ErrorCode())
		}
		after, err := e.Store.DataSources(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if a, _ := json.Marshal(after); string(a) != string(before) {
			t.Errorf("refused PUTs changed the configuration:\n%s\n%s", before, a)
		}

		// Another customer may claim no prefix that overlaps one of
		// customer 1's (10.1.0.0/16 and 10.9.0.5), either way: 409, naming
		// neither customer 1 nor its source. Its own prefixes are its.
		_, foreign := e.NewUser(t, apitest.UserSpec{Role: wnms.Administrator, Customer: 2})
		for _, cidr := range []string{"10.1.0.0/16", "10.1.255.255/16", "10.1.2.10/32", "10.1.2.10", "10.0.0.0/8", "0.0.0.0/0",
			"::ffff:10.1.2.10/128", "::ffff:10.9.0.5", "::ffff:10.0.0.0/104", "10.9.0.0/24"} {
			fm := dataSourcesBody(f.ForeignFloor.ID.ID)
			src(fm, 0)["cidr"], src(fm, 1)["cidr"] = "10.2.0.0/16", cidr
			r := foreign.Do("PUT", dataSourcesPath, fm)
			if r.Status != http.StatusConflict || r.ErrorCode() != wnms.Conflict || !strings.Contains(string(r.Body), "sources[1].cidr") {
				t.Errorf("customer 2 claims %s: status %d %s; %s", cidr, r.Status, r.ErrorCode(), r.Body)
			}
			for _, leak := range []string{"floor 1 APs", "dhcp server", "customer 1", "customer 2"} {
				if strings.Contains(string(r.Body), leak) {
					t.Errorf("customer 2 claims %s: the refusal names %q: %s", cidr, leak, r.Body)
				}
			}
		}
		fm := dataSourcesBody(f.ForeignFloor.ID.ID)
		src(fm, 0)["cidr"], src(fm, 1)["cidr"] = "10.2.0.0/16", "10.9.0.6"
		foreign.Expect(http.StatusOK, "PUT", dataSourcesPath, fm)
		r = foreign.Expect(http.StatusOK, "GET", dataSourcesPath, nil)
		if strings.Contains(string(r.Body), "10.1.0.0/16") {
			t.Errorf("customer 2 sees customer 1's sources: %s", r.Body)
		}
		// The reverse: customer 1 may not take a prefix around customer 2's.
		for _, cidr := range []string{"10.0.0.0/8", "10.2.3.4", "::ffff:10.9.0.6", "0.0.0.0/0"} {
			m := dataSourcesBody(f.Floor.ID.ID)
			src(m, 1)["cidr"] = cidr
			if r := e.Admin.Do("PUT", dataSourcesPath, m); r.Status != http.StatusConflict || r.ErrorCode() != wnms.Conflict ||
				strings.Contains(string(r.Body), "10.2.0.0/16") {
				t.Errorf("customer 1 claims %s around customer 2's: status %d %s; %s", cidr, r.Status, r.ErrorCode(), r.Body)
			}
		}
		// Nesting inside one customer is fine.
		m = dataSourcesBody(f.Floor.ID.ID)
		src(m, 1)["cidr"] = "10.1.2.0/24"
		e.Admin.Expect(http.StatusOK, "PUT", dataSourcesPath, m)
		all, err := e.Store.AllDataSources(ctx)
		if err != nil || len(all) != 2 {
			t.Fatalf("AllDataSources: %d, %v", len(all), err)
		}

		// No audit record holds a secret.
		recs, _, err := e.Store.AuditRecords(ctx, wnms.AuditQuery{CustomerID: 1, From: -1, To: -1, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			b, _ := json.Marshal(rec)
			noSecrets(t, "an audit record", b)
		}
	})
}

func src(m map[string]any, i int) map[string]any { return m["sources"].([]any)[i].(map[string]any) }
func up(m map[string]any, i int) map[string]any {
	return m["radius"].(map[string]any)["upstreams"].([]any)[i].(map[string]any)
}

func TestAuthzDataSources(t *testing.T) {
	runAuthz(t, []authzCase{
		{name: "GET datasources", request: func(*testing.T, *authzFixture, authzTarget) (string, string, any) {
			return "GET", dataSourcesPath, nil
		}, allowed: adUp, ok: http.StatusOK},
		{name: "PUT datasources", request: func(_ *testing.T, _ *authzFixture, target authzTarget) (string, string, any) {
			return "PUT", dataSourcesPath, dataSourcesBody(target.Floor.ID.ID)
		}, allowed: adUp, ok: http.StatusOK, location: true, foreign: http.StatusNotFound, foreignCode: wnms.ResourceNotFound},
	})
}

// Two customers saving overlapping prefixes at the same time: at most one
// is stored, whichever engine (each save checks against the other's
// committed configuration).
func TestDataSourcesConcurrentOverlap(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := newAuthzFixture(t, b)
		e := f.E
		e.API.CheckDataSources = (&datasource.Bridge{Store: e.Store}).Check
		_, foreign := e.NewUser(t, apitest.UserSpec{Role: wnms.Administrator, Customer: 2})
		empty := map[string]any{"radius": map[string]any{"upstreams": []any{}, "accountingUpstreams": []any{}}, "sources": []any{}}
		body := func(floor int64, cidr string) map[string]any {
			return map[string]any{"radius": map[string]any{"upstreams": []any{}, "accountingUpstreams": []any{}}, "sources": []any{map[string]any{
				"name": "aps", "cidr": cidr, "radiusSecret": "", "syslog": true, "locationId": map[string]any{"type": "locallocationid", "id": floor}}}}
		}
		for round := range 20 {
			var wg sync.WaitGroup
			var one, two int
			wg.Go(func() { one = e.Admin.Do("PUT", dataSourcesPath, body(f.Floor.ID.ID, "10.7.0.0/16")).Status })
			wg.Go(func() { two = foreign.Do("PUT", dataSourcesPath, body(f.ForeignFloor.ID.ID, "10.7.1.1")).Status })
			wg.Wait()
			if one == http.StatusOK && two == http.StatusOK {
				t.Fatalf("round %d: both customers stored overlapping prefixes", round)
			}
			if one != http.StatusOK && two != http.StatusOK {
				t.Fatalf("round %d: neither stored (%d, %d)", round, one, two)
			}
			e.Admin.Expect(http.StatusOK, "PUT", dataSourcesPath, empty)
			foreign.Expect(http.StatusOK, "PUT", dataSourcesPath, empty)
		}
	})
}
