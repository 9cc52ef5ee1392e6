package api_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// isLocal says whether the address of addrPort is still one of this
// host's: other packages' tests, run at the same time, add and remove
// addresses (the lab's veth pairs), and one gone by the time the server
// checks it is rightly not refused.
func isLocal(addrPort string) bool {
	ap, err := netip.ParseAddrPort(addrPort)
	if err != nil {
		return true
	}
	as, err := net.InterfaceAddrs()
	if err != nil {
		return true
	}
	for _, a := range as {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr() == ap.Addr() {
			return true
		}
	}
	return false
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
			if r := e.Admin.Do("PUT", dataSourcesPath, m); r.Status != http.StatusBadRequest && isLocal(a) {
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

// Who owns a source: a site-scoped ADMINISTRATOR sees and changes only
// its sites' sources (its PUT leaves the others as they are) and may not
// change the RADIUS upstreams, which a SUPERUSER and a root ADMINISTRATOR
// may; OPERATORs and VIEWERs have no access; another customer's
// ADMINISTRATOR reaches nothing of customer 1's.
func TestDataSourcesScoped(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := newAuthzFixture(t, b)
		e := f.E
		e.API.CheckDataSources = (&datasource.Bridge{Store: e.Store}).Check
		ctx := context.Background()
		loc := func(l *wnms.Location) map[string]any {
			return map[string]any{"type": "locallocationid", "id": l.ID.ID}
		}
		upstream := func(addr, secret string, timeout int) map[string]any {
			return map[string]any{"address": addr, "secret": secret, "timeoutMs": timeout}
		}
		source := func(name, cidr, secret string, l *wnms.Location) map[string]any {
			return map[string]any{"name": name, "cidr": cidr, "radiusSecret": secret, "locationId": loc(l), "syslog": secret == ""}
		}
		_, rootAd := e.NewUser(t, apitest.UserSpec{Role: wnms.Administrator, Locations: []int64{0}})
		_, siteAd := e.NewUser(t, apitest.UserSpec{Role: wnms.Administrator, Locations: []int64{f.Site.ID.ID}})
		_, op := e.NewUser(t, apitest.UserSpec{Role: wnms.Operator, Locations: []int64{0}})
		_, viewer := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer, Locations: []int64{0}})
		_, foreignAd := e.NewUser(t, apitest.UserSpec{Role: wnms.Administrator, Customer: 2, Locations: []int64{0}})

		rootAd.Expect(http.StatusOK, "PUT", dataSourcesPath, map[string]any{
			"radius": map[string]any{"upstreams": []any{upstream("192.0.2.10:1812", "upstream-secret-1", 2000)},
				"accountingUpstreams": []any{upstream("192.0.2.10:1813", "acct-secret-1", 0)}},
			"sources": []any{
				source("site A aps", "10.1.0.0/16", "nas-secret-floor1", f.Floor),
				source("site B aps", "10.2.0.0/16", "nas-secret-site-b", f.OtherFloor),
				source("site B dhcp", "10.9.0.5", "", f.Other),
			},
		})
		stored := func() *wnms.DataSources {
			t.Helper()
			d, err := e.Store.DataSources(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		names := func(d *wnms.DataSources) []string {
			var out []string
			for _, s := range d.Sources {
				out = append(out, s.Name)
			}
			return out
		}
		siteB := func(d *wnms.DataSources) []wnms.DataSource {
			var out []wnms.DataSource
			for _, s := range d.Sources {
				if strings.HasPrefix(s.Name, "site B") {
					out = append(out, s)
				}
			}
			return out
		}
		before := stored()

		// Everyone allowed the call sees the radius block masked; the
		// site's ADMINISTRATOR sees only its site's source.
		for _, tc := range []struct {
			name   string
			c      *apitest.Client
			status int
			want   []string
		}{
			{"SUPERUSER", e.Admin, http.StatusOK, []string{"site A aps", "site B aps", "site B dhcp"}},
			{"root ADMINISTRATOR", rootAd, http.StatusOK, []string{"site A aps", "site B aps", "site B dhcp"}},
			{"site ADMINISTRATOR", siteAd, http.StatusOK, []string{"site A aps"}},
			{"OPERATOR", op, http.StatusForbidden, nil},
			{"VIEWER", viewer, http.StatusForbidden, nil},
			{"another customer's ADMINISTRATOR", foreignAd, http.StatusOK, nil},
		} {
			r := tc.c.Expect(tc.status, "GET", dataSourcesPath, nil)
			noSecrets(t, tc.name+"'s GET", r.Body)
			if tc.status != http.StatusOK {
				if r.ErrorCode() != wnms.AccessDenied {
					t.Errorf("%s: %s", tc.name, r.Body)
				}
				continue
			}
			var got wnms.DataSources
			r.Decode(t, &got)
			if diff := cmp.Diff(tc.want, names(&got)); diff != "" {
				t.Errorf("%s sees (-want +got):\n%s", tc.name, diff)
			}
			if want := 1; tc.c != foreignAd && (len(got.Radius.Upstreams) != want || got.Radius.Upstreams[0].Secret != wnms.SecretMask) {
				t.Errorf("%s sees the upstreams %+v", tc.name, got.Radius.Upstreams)
			}
		}

		// The site's ADMINISTRATOR changes its source and adds one, from
		// what it read: site B's stay as they were, secrets included.
		var mine map[string]any
		siteAd.Expect(http.StatusOK, "GET", dataSourcesPath, nil).Decode(t, &mine)
		src(mine, 0)["syslog"] = true
		mine["sources"] = append(mine["sources"].([]any), source("site A dhcp", "10.1.200.1", "", f.Floor))
		r := siteAd.Expect(http.StatusOK, "PUT", dataSourcesPath, mine)
		if strings.Contains(string(r.Body), "site B") {
			t.Errorf("the PUT's answer shows another site's sources: %s", r.Body)
		}
		after := stored()
		if diff := cmp.Diff([]string{"site A aps", "site A dhcp", "site B aps", "site B dhcp"}, names(after)); diff != "" {
			t.Errorf("stored after the site's PUT (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(siteB(before), siteB(after)); diff != "" {
			t.Errorf("the site's PUT changed site B's sources (-want +got):\n%s", diff)
		}
		if after.Sources[0].RadiusSecret != "nas-secret-floor1" || !after.Sources[0].Syslog || !after.SameUpstreams(before) {
			t.Errorf("after the site's PUT: %+v", after)
		}
		// Removing all it sees removes nothing else.
		siteAd.Expect(http.StatusOK, "PUT", dataSourcesPath, map[string]any{"radius": mine["radius"], "sources": []any{}})
		if diff := cmp.Diff([]string{"site B aps", "site B dhcp"}, names(stored())); diff != "" {
			t.Errorf("stored after the site emptied its sources (-want +got):\n%s", diff)
		}
		src(mine, 0)["radiusSecret"] = "nas-secret-floor1"
		siteAd.Expect(http.StatusOK, "PUT", dataSourcesPath, mine)

		// The site's ADMINISTRATOR may not change the upstreams, nor take
		// or reach another site's source; nothing changes.
		kept := stored()
		radius := func(ups ...any) map[string]any {
			return map[string]any{"upstreams": ups, "accountingUpstreams": []any{upstream("192.0.2.10:1813", wnms.SecretMask, 0)}}
		}
		for _, tc := range []struct {
			name   string
			change func(m map[string]any)
			status int
			code   string
		}{
			{"re-point the upstream", func(m map[string]any) {
				m["radius"] = radius(upstream("198.51.100.66:1812", "mine-now", 2000))
			}, http.StatusForbidden, wnms.LocationAccessDenied},
			{"a new upstream secret", func(m map[string]any) {
				m["radius"] = radius(upstream("192.0.2.10:1812", "guess", 2000))
			}, http.StatusForbidden, wnms.LocationAccessDenied},
			{"another timeout", func(m map[string]any) {
				m["radius"] = radius(upstream("192.0.2.10:1812", wnms.SecretMask, 3000))
			}, http.StatusForbidden, wnms.LocationAccessDenied},
			{"no upstreams", func(m map[string]any) { m["radius"] = radius() }, http.StatusForbidden, wnms.LocationAccessDenied},
			{"a source at another site", func(m map[string]any) {
				m["sources"] = append(m["sources"].([]any), source("mine", "10.3.0.0/16", "x", f.OtherFloor))
			}, http.StatusForbidden, wnms.LocationAccessDenied},
			{"another site's source by name, secret masked", func(m map[string]any) {
				m["sources"] = append(m["sources"].([]any), source("site B aps", "10.4.0.0/16", wnms.SecretMask, f.Floor))
			}, http.StatusBadRequest, wnms.ValidationFailed},
			{"another site's source by name", func(m map[string]any) {
				m["sources"] = append(m["sources"].([]any), source("site B aps", "10.4.0.0/16", "x", f.Floor))
			}, http.StatusBadRequest, wnms.ValidationFailed},
			{"another site's prefix", func(m map[string]any) {
				m["sources"] = append(m["sources"].([]any), source("mine", "10.2.0.0/16", "x", f.Floor))
			}, http.StatusBadRequest, wnms.ValidationFailed},
		} {
			var m map[string]any
			siteAd.Expect(http.StatusOK, "GET", dataSourcesPath, nil).Decode(t, &m)
			tc.change(m)
			r := siteAd.Do("PUT", dataSourcesPath, m)
			if r.Status != tc.status || r.ErrorCode() != tc.code {
				t.Errorf("%s: status %d %s, want %d %s; %s", tc.name, r.Status, r.ErrorCode(), tc.status, tc.code, r.Body)
			}
			if strings.Contains(string(r.Body), "nas-secret-site-b") || strings.Contains(string(r.Body), "10.2.0.0/16") && tc.name != "another site's prefix" {
				t.Errorf("%s: the refusal shows another site's source: %s", tc.name, r.Body)
			}
		}
		if diff := cmp.Diff(kept, stored()); diff != "" {
			t.Errorf("refused PUTs changed the configuration (-want +got):\n%s", diff)
		}

		// A SUPERUSER and a root ADMINISTRATOR change the upstreams.
		for i, c := range []*apitest.Client{e.Admin, rootAd} {
			var m map[string]any
			c.Expect(http.StatusOK, "GET", dataSourcesPath, nil).Decode(t, &m)
			m["radius"].(map[string]any)["upstreams"].([]any)[0].(map[string]any)["timeoutMs"] = 2501 + i
			c.Expect(http.StatusOK, "PUT", dataSourcesPath, m)
		}
		if got := stored().Radius.Upstreams[0]; got.TimeoutMs != 2502 || got.Secret != "upstream-secret-1" {
			t.Errorf("upstream after the root's PUTs: %+v", got)
		}
		kept = stored()

		// OPERATOR and VIEWER may not PUT; another customer's ADMINISTRATOR
		// finds no location of customer 1.
		for _, c := range []*apitest.Client{op, viewer} {
			if r := c.Do("PUT", dataSourcesPath, mine); r.Status != http.StatusForbidden || r.ErrorCode() != wnms.AccessDenied {
				t.Errorf("OPERATOR/VIEWER PUT: %d %s", r.Status, r.Body)
			}
		}
		if r := foreignAd.Do("PUT", dataSourcesPath, map[string]any{"radius": map[string]any{"upstreams": []any{}, "accountingUpstreams": []any{}}, "sources": []any{source("x", "10.50.0.0/16", "s", f.Floor)}}); r.Status != http.StatusNotFound {
			t.Errorf("another customer's ADMINISTRATOR with customer 1's location: %d %s", r.Status, r.Body)
		}
		if diff := cmp.Diff(kept.Sources, stored().Sources); diff != "" {
			t.Errorf("sources changed (-want +got):\n%s", diff)
		}
	})
}
