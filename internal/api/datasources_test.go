package api_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/datasource"
	"github.com/wnms/wnms/internal/radius"
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
		// requireMessageAuthenticator, absent from the PUT, is true, and
		// shown.
		for i, s := range got.Sources {
			if s.RequireMessageAuthenticator == nil || !*s.RequireMessageAuthenticator {
				t.Errorf("GET: sources[%d].requireMessageAuthenticator = %v, want true", i, s.RequireMessageAuthenticator)
			}
		}
		off := dataSourcesBody(f.Floor.ID.ID)
		src(off, 0)["requireMessageAuthenticator"] = false
		e.Admin.Expect(http.StatusOK, "PUT", dataSourcesPath, off).Decode(t, &got)
		if s := got.Sources[0]; s.RequireMessageAuthenticator == nil || *s.RequireMessageAuthenticator {
			t.Errorf("PUT false: requireMessageAuthenticator = %v", s.RequireMessageAuthenticator)
		}
		e.Admin.Expect(http.StatusOK, "PUT", dataSourcesPath, dataSourcesBody(f.Floor.ID.ID))
		e.Admin.Expect(http.StatusOK, "GET", dataSourcesPath, nil).Decode(t, &got)

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
			{"requireMessageAuthenticator not a boolean", "", func(m map[string]any) { src(m, 0)["requireMessageAuthenticator"] = "no" }},
		}
		before, _ := json.Marshal(stored)
		for _, tc := range bad {
			m := dataSourcesBody(f.Floor.ID.ID)
			tc.change(m)
			r := e.Admin.Do("PUT", dataSourcesPath, m)
			if r.Status != http.StatusBadRequest || (tc.field != "" && r.MoreInfo() != tc.field) {
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

		// Another customer may not claim the same prefix; its own is its.
		_, foreign := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
		fm := dataSourcesBody(f.ForeignFloor.ID.ID)
		if r := foreign.Do("PUT", dataSourcesPath, fm); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "another customer") {
			t.Errorf("a prefix of customer 1 claimed by customer 2: status %d; %s", r.Status, r.Body)
		}
		src(fm, 0)["cidr"], src(fm, 1)["cidr"] = "10.2.0.0/16", "10.9.0.6"
		foreign.Expect(http.StatusOK, "PUT", dataSourcesPath, fm)
		r = foreign.Expect(http.StatusOK, "GET", dataSourcesPath, nil)
		if strings.Contains(string(r.Body), "10.1.0.0/16") {
			t.Errorf("customer 2 sees customer 1's sources: %s", r.Body)
		}
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

// Upstream addresses that are wnms's own RADIUS listeners (a loop),
// link-local or cloud metadata addresses are refused (400 naming the
// address); a FreeRADIUS on loopback, on another port, is not.
func TestDataSourcesUpstreamAddresses(t *testing.T) {
	var local []string // this host's addresses, besides loopback
	if as, err := net.InterfaceAddrs(); err == nil {
		for _, a := range as {
			if p, err := netip.ParsePrefix(a.String()); err == nil && !p.Addr().IsLoopback() && !p.Addr().IsLinkLocalUnicast() {
				local = append(local, netip.AddrPortFrom(p.Addr(), 1812).String())
			}
		}
	}
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := newAuthzFixture(t, b)
		e := f.E
		rs := &radius.Settings{}
		// As `--radius-auth-listen 0.0.0.0:1812 --radius-acct-listen 127.0.0.1:1813`.
		rs.SetListeners(netip.MustParseAddrPort("0.0.0.0:1812"), netip.MustParseAddrPort("127.0.0.1:1813"))
		e.API.CheckDataSources = (&datasource.Bridge{Store: e.Store, Radius: rs}).Check
		for _, tc := range []struct {
			list, address string
			ok            bool
		}{
			{"upstreams", "127.0.0.1:1812", false},
			{"upstreams", "127.0.0.2:1812", false},
			{"upstreams", "localhost:1812", false},
			{"upstreams", "[::1]:1812", false},
			{"upstreams", "[::ffff:127.0.0.1]:1812", false},
			{"upstreams", "0.0.0.0:1812", false},
			{"accountingUpstreams", "127.0.0.1:1813", false},
			{"upstreams", "127.0.0.1:1813", false},
			{"upstreams", "169.254.169.254:1812", false},
			{"upstreams", "169.254.10.1:1812", false},
			{"upstreams", "[fe80::1]:1812", false},
			{"upstreams", "[fd00:ec2::254]:1812", false},
			{"upstreams", "100.100.100.200:1812", false},
			{"accountingUpstreams", "[::ffff:169.254.169.254]:1813", false},
			{"upstreams", "127.0.0.1:18120", true},
			{"accountingUpstreams", "127.0.0.2:1813", true},
			{"upstreams", "localhost:18121", true},
			{"upstreams", "192.0.2.10:1812", true},
		} {
			m := dataSourcesBody(f.Floor.ID.ID)
			m["radius"].(map[string]any)[tc.list] = []any{map[string]any{"address": tc.address, "secret": "s", "timeoutMs": 0}}
			r := e.Admin.Do("PUT", dataSourcesPath, m)
			if tc.ok {
				if r.Status != http.StatusOK {
					t.Errorf("%s %s: status %d, want 200; %s", tc.list, tc.address, r.Status, r.Body)
				}
				continue
			}
			if field := "radius." + tc.list + "[0].address"; r.Status != http.StatusBadRequest || r.MoreInfo() != field {
				t.Errorf("%s %s: status %d moreInfo %q, want 400 %q; %s", tc.list, tc.address, r.Status, r.MoreInfo(), field, r.Body)
			}
		}
		for _, a := range local {
			m := dataSourcesBody(f.Floor.ID.ID)
			up(m, 0)["address"] = a
			if r := e.Admin.Do("PUT", dataSourcesPath, m); r.Status != http.StatusBadRequest {
				t.Errorf("this host's %s, on the port of a listener on 0.0.0.0: status %d; %s", a, r.Status, r.Body)
			}
		}
	})
}

// One customer's upstream whose host name stopped resolving (stored
// when it did) does not fail another customer's save.
func TestDataSourcesOtherCustomersUpstreamDoesNotResolve(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := newAuthzFixture(t, b)
		e := f.E
		e.API.CheckDataSources = (&datasource.Bridge{Store: e.Store}).Check
		ctx := context.Background()
		const gone = "no-such-host.invalid:1812" // .invalid never resolves (RFC 6761)
		if _, err := e.Store.UpdateDataSources(ctx, 2, func(*wnms.DataSources) (*wnms.DataSources, error) {
			return &wnms.DataSources{Radius: wnms.RadiusUpstreams{Upstreams: []wnms.RadiusUpstream{{Address: gone, Secret: "s"}},
				AccountingUpstreams: []wnms.RadiusUpstream{}},
				Sources: []wnms.DataSource{{Name: "b", CIDR: "10.2.0.0/16", RadiusSecret: "t", LocationID: wnms.LocalID(f.ForeignFloor.ID.ID)}}}, nil
		}); err != nil {
			t.Fatal(err)
		}
		r := e.Admin.Do("PUT", dataSourcesPath, dataSourcesBody(f.Floor.ID.ID))
		if r.Status != http.StatusOK || strings.Contains(string(r.Body), "invalid") {
			t.Fatalf("customer 1's save beside customer 2's upstream that does not resolve: %d %s", r.Status, r.Body)
		}
		// Its own name that does not resolve is refused, named.
		m := dataSourcesBody(f.Floor.ID.ID)
		up(m, 1)["address"] = gone
		if r := e.Admin.Do("PUT", dataSourcesPath, m); r.Status != http.StatusBadRequest || r.MoreInfo() != "radius.upstreams[1].address" {
			t.Errorf("its own name that does not resolve: %d %q; %s", r.Status, r.MoreInfo(), r.Body)
		}
	})
}
