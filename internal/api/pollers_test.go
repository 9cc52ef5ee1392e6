package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/datasource"
	"github.com/wnms/wnms/internal/wnms"
)

// Pollers live in the data source configuration: their passwords leave
// only masked (the mask sent back keeps them), the interval in force is
// shown, bad pollers are refused naming the field and change nothing,
// and a site's ADMINISTRATOR sees and replaces only its site's pollers.
func TestDataSourcePollers(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := newAuthzFixture(t, b)
		e := f.E
		e.API.CheckDataSources = (&datasource.Bridge{Store: e.Store}).Check
		ctx := context.Background()
		loc := func(l *wnms.Location) map[string]any { return map[string]any{"type": "locallocationid", "id": l.ID.ID} }
		const fp = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89"
		body := func() map[string]any {
			return map[string]any{
				"radius":  map[string]any{"upstreams": []any{}, "accountingUpstreams": []any{}},
				"sources": []any{},
				"pollers": []any{
					map[string]any{"name": "ap lobby", "kind": "ubus", "url": "https://10.1.0.2/ubus", "username": "wnms",
						"password": "rpcd-secret-1", "tlsFingerprint": fp, "locationId": loc(f.Floor)},
					map[string]any{"name": "ap hall", "kind": "prometheus", "url": "http://10.2.0.3:9100/metrics",
						"locationId": loc(f.OtherFloor), "intervalSeconds": 60},
				},
			}
		}
		r := e.Admin.Expect(http.StatusOK, "PUT", dataSourcesPath, body())
		if strings.Contains(string(r.Body), "rpcd-secret-1") {
			t.Fatalf("the PUT answer shows the password: %s", r.Body)
		}
		var got wnms.DataSources
		e.Admin.Expect(http.StatusOK, "GET", dataSourcesPath, nil).Decode(t, &got)
		if len(got.Pollers) != 2 || got.Pollers[0].Password != wnms.SecretMask || got.Pollers[1].Password != "" ||
			got.Pollers[0].IntervalSeconds != wnms.DefaultPollSeconds || got.Pollers[1].IntervalSeconds != 60 ||
			got.Pollers[0].TLSFingerprint != fp {
			t.Fatalf("GET: %+v", got.Pollers)
		}
		got.Pollers[1].IntervalSeconds = 120
		e.Admin.Expect(http.StatusOK, "PUT", dataSourcesPath, got)
		stored, err := e.Store.DataSources(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Pollers[0].Password != "rpcd-secret-1" || stored.Pollers[1].IntervalSeconds != 120 {
			t.Fatalf("after the masked round trip: %+v", stored.Pollers)
		}

		poller := func(m map[string]any, i int) map[string]any { return m["pollers"].([]any)[i].(map[string]any) }
		for _, tc := range []struct {
			name, field string
			change      func(m map[string]any)
		}{
			{"unknown kind", "pollers[0].kind", func(m map[string]any) { poller(m, 0)["kind"] = "snmp" }},
			{"no name", "pollers[0].name", func(m map[string]any) { poller(m, 0)["name"] = "" }},
			{"same name twice", "pollers[1].name", func(m map[string]any) { poller(m, 1)["name"] = "ap lobby" }},
			{"not http", "pollers[0].url", func(m map[string]any) { poller(m, 0)["url"] = "ftp://10.1.0.2/" }},
			{"credentials in the url", "pollers[0].url", func(m map[string]any) { poller(m, 0)["url"] = "https://root:x@10.1.0.2/ubus" }},
			{"link-local", "pollers[1].url", func(m map[string]any) { poller(m, 1)["url"] = "http://169.254.169.254/metrics" }},
			{"link-local v6", "pollers[1].url", func(m map[string]any) { poller(m, 1)["url"] = "http://[fe80::1]:9100/metrics" }},
			{"metadata", "pollers[1].url", func(m map[string]any) { poller(m, 1)["url"] = "http://100.100.100.200/metrics" }},
			{"ubus without user", "pollers[0].username", func(m map[string]any) { poller(m, 0)["username"] = "" }},
			{"fingerprint over http", "pollers[0].tlsFingerprint", func(m map[string]any) { poller(m, 0)["url"] = "http://10.1.0.2/ubus" }},
			{"short fingerprint", "pollers[0].tlsFingerprint", func(m map[string]any) { poller(m, 0)["tlsFingerprint"] = "abcd" }},
			{"interval too short", "pollers[1].intervalSeconds", func(m map[string]any) { poller(m, 1)["intervalSeconds"] = 2 }},
			{"password too long", "pollers[0].password", func(m map[string]any) { poller(m, 0)["password"] = strings.Repeat("p", 129) }},
			{"mask of no stored poller", "pollers[0].password", func(m map[string]any) {
				poller(m, 0)["name"], poller(m, 0)["password"] = "new ap", wnms.SecretMask
			}},
			{"a source's name", "pollers[0].name", func(m map[string]any) {
				m["sources"] = []any{map[string]any{"name": "ap lobby", "cidr": "10.1.0.0/16", "syslog": true, "locationId": loc(f.Floor)}}
			}},
		} {
			before, _ := json.Marshal(stored)
			m := body()
			tc.change(m)
			r := e.Admin.Do("PUT", dataSourcesPath, m)
			if r.Status != http.StatusBadRequest || r.MoreInfo() != tc.field || strings.Contains(string(r.Body), "rpcd-secret-1") {
				t.Errorf("%s: status %d moreInfo %q, want 400 %q; %s", tc.name, r.Status, r.MoreInfo(), tc.field, r.Body)
			}
			after, _ := e.Store.DataSources(ctx, 1)
			if a, _ := json.Marshal(after); string(a) != string(before) {
				t.Errorf("%s changed the configuration", tc.name)
			}
		}

		// The site's ADMINISTRATOR sees its site's poller only; its PUT
		// keeps the other site's.
		_, siteAd := e.NewUser(t, apitest.UserSpec{Role: wnms.Administrator, Locations: []int64{f.Site.ID.ID}})
		siteAd.Expect(http.StatusOK, "GET", dataSourcesPath, nil).Decode(t, &got)
		if len(got.Pollers) != 1 || got.Pollers[0].Name != "ap lobby" {
			t.Fatalf("the site's ADMINISTRATOR sees %+v", got.Pollers)
		}
		got.Pollers[0].IntervalSeconds = 15
		siteAd.Expect(http.StatusOK, "PUT", dataSourcesPath, got)
		if r := siteAd.Do("PUT", dataSourcesPath, map[string]any{"radius": map[string]any{"upstreams": []any{}, "accountingUpstreams": []any{}}, "sources": []any{},
			"pollers": []any{map[string]any{"name": "ap hall", "kind": "prometheus", "url": "http://10.1.0.9/metrics", "locationId": loc(f.Floor)}}}); r.Status != http.StatusBadRequest {
			t.Errorf("the site's ADMINISTRATOR takes the name of a poller it does not see: %d %s", r.Status, r.Body)
		}
		if r := siteAd.Do("PUT", dataSourcesPath, map[string]any{"radius": map[string]any{"upstreams": []any{}, "accountingUpstreams": []any{}}, "sources": []any{},
			"pollers": []any{map[string]any{"name": "elsewhere", "kind": "prometheus", "url": "http://10.1.0.9/metrics", "locationId": loc(f.OtherFloor)}}}); r.Status != http.StatusForbidden {
			t.Errorf("the site's ADMINISTRATOR places a poller outside its site: %d %s", r.Status, r.Body)
		}
		stored, _ = e.Store.DataSources(ctx, 1)
		if len(stored.Pollers) != 2 || stored.Pollers[0].IntervalSeconds != 15 || stored.Pollers[0].Password != "rpcd-secret-1" ||
			stored.Pollers[1].Name != "ap hall" {
			t.Errorf("after the site's PUT: %+v", stored.Pollers)
		}
	})
}
