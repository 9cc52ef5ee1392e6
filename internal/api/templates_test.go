package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// profilesWorld is the authorization fixture's world (root ─ Site ─ Floor
// 1, root ─ Other ─ Other floor, and customer 2's folder and floor) with
// the callers the profile tests use.
type profilesWorld struct {
	*authzFixture
	ForeignAdmin *apitest.Client
	ScopedSite   *apitest.Client // OPERATOR with allowedLocations [Site]
}

func newProfilesWorld(t *testing.T, b apitest.Backend) *profilesWorld {
	t.Helper()
	w := &profilesWorld{authzFixture: newAuthzFixture(t, b)}
	_, w.ForeignAdmin = w.E.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
	_, w.ScopedSite = w.E.NewUser(t, apitest.UserSpec{Role: wnms.Operator, Locations: []int64{w.Site.ID.ID}})
	return w
}

// profilesBody is a valid create body: WPA2 with a PSK.
func profilesBody(name string, mods ...func(map[string]any)) map[string]any {
	b := map[string]any{
		"type":                   "clientconntestprofile",
		"templateName":           name,
		"description":            "lobby test",
		"ssid":                   "Corp WiFi",
		"frequencyBand":          "BAND_5_GHZ",
		"securityMode":           3,
		"securityType":           0,
		"passphrase":             "correct horse",
		"pingDestinationServers": []string{"8.8.8.8", "gw.example.com", "2001:db8::1"},
		"wanTestUrl":             "https://example.com/health",
		"pingTestEnabled":        true,
		"mncTemplateId":          7,
		"mnctemplate":            false,
	}
	for _, m := range mods {
		m(b)
	}
	return b
}

func profilesSet(k string, v any) func(map[string]any) {
	return func(b map[string]any) { b[k] = v }
}

func profilesDel(k string) func(map[string]any) {
	return func(b map[string]any) { delete(b, k) }
}

func profilesCreate(t *testing.T, c *apitest.Client, locID int64, body any) wnms.Template {
	t.Helper()
	var p wnms.Template
	c.Expect(http.StatusOK, "PUT", "/V5/templates?locationid="+profilesLoc(locID), body).Decode(t, &p)
	return p
}

// profilesSnapshot is every stored profile of customers 1 and 2, with
// secrets, for "nothing changed" checks.
func profilesSnapshot(t *testing.T, e *apitest.Env) []wnms.Template {
	t.Helper()
	var all []wnms.Template
	for _, cust := range []int64{1, 2} {
		ts, _, err := e.Store.Templates(context.Background(), wnms.TemplateFilter{CustomerID: cust, Subtrees: []string{wnms.RootPath}})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ts...)
	}
	return all
}

func profilesStored(t *testing.T, e *apitest.Env, cust, id int64) *wnms.Template {
	t.Helper()
	p, err := e.Store.Template(context.Background(), cust, id)
	if err != nil {
		t.Fatalf("template %d: %v", id, err)
	}
	return p
}

func profilesNames(ps []wnms.Template) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.TemplateName
	}
	sort.Strings(out)
	return out
}

func profilesStr(s string) *string { return &s }

// profilesCheckTotal checks that the paged list's totalCount (kept per
// location by the store) agrees with the whole list, at every location
// the client names.
func profilesCheckTotal(t *testing.T, c *apitest.Client, locs ...int64) {
	t.Helper()
	for _, l := range locs {
		for _, sub := range []string{"true", "false"} {
			q := "?fetchSubTreeTemplates=" + sub + "&locationid=" + profilesLoc(l)
			var all []json.RawMessage
			c.Expect(http.StatusOK, "GET", "/V5/templates/CL_CONN_TEST_PROFILE"+q+"&minimalinforequired=true", nil).Decode(t, &all)
			var page struct {
				TotalCount int `json:"totalCount"`
			}
			c.Expect(http.StatusOK, "GET", "/V5/templates/CL_CONN_TEST_PROFILE/0/1"+q, nil).Decode(t, &page)
			if page.TotalCount != len(all) {
				t.Errorf("location %d subtree %s: totalCount %d, list of %d", l, sub, page.TotalCount, len(all))
			}
		}
	}
}

var profilesSeq atomic.Int64

func profilesName(prefix string) string {
	return fmt.Sprintf("%s %d", prefix, profilesSeq.Add(1))
}

func TestProfilesCreateAndRead(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		w := newProfilesWorld(t, b)
		e := w.E
		got := profilesCreate(t, e.Admin, w.Site.ID.ID, profilesBody("Lobby"))
		mask := profilesStr(wnms.SecretMask)
		want := wnms.Template{
			Type: "clientconntestprofile", TemplateID: got.TemplateID, TemplateName: "Lobby",
			CreatedAtLocationID: wnms.LocalID(w.Site.ID.ID), Description: "lobby test",
			TemplateType: "CL_CONN_TEST_PROFILE", MncTemplateID: 7, SSID: "Corp WiFi", FrequencyBand: "BAND_5_GHZ",
			SecurityMode: 3, SecurityType: 0, Passphrase: mask,
			PingDestinationServers: []string{"8.8.8.8", "gw.example.com", "2001:db8::1"},
			WanTestURL:             "https://example.com/health", PingTestEnabled: true,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("created profile (-want +got):\n%s", diff)
		}
		if got.TemplateID <= 0 {
			t.Errorf("templateId %d", got.TemplateID)
		}
		// The secret is stored as sent, and only masked on the way out.
		if p := profilesStored(t, e, 1, got.TemplateID); p.Passphrase == nil || *p.Passphrase != "correct horse" {
			t.Errorf("stored passphrase %v", p.Passphrase)
		}
		var read wnms.Template
		e.Admin.Expect(http.StatusOK, "GET", fmt.Sprintf("/V5/templates/%d/CL_CONN_TEST_PROFILE", got.TemplateID), nil).Decode(t, &read)
		if diff := cmp.Diff(want, read); diff != "" {
			t.Errorf("read profile (-want +got):\n%s", diff)
		}
		if r := e.Admin.Expect(http.StatusOK, "GET", fmt.Sprintf("/v4/templates/%d/CL_CONN_TEST_PROFILE", got.TemplateID), nil); strings.Contains(string(r.Body), "correct horse") {
			t.Errorf("secret leaked: %s", r.Body)
		}

		// Accepted variations, and what is stored of them.
		ok := []struct {
			name  string
			body  map[string]any
			check func(t *testing.T, p wnms.Template)
		}{
			{"open, defaults", map[string]any{"type": "clientconntestprofile", "templateName": "Open", "ssid": "Guest", "frequencyBand": "ANY"},
				func(t *testing.T, p wnms.Template) {
					want := wnms.Template{Type: "clientconntestprofile", TemplateID: p.TemplateID, TemplateName: "Open",
						CreatedAtLocationID: wnms.LocalID(w.Site.ID.ID), TemplateType: "CL_CONN_TEST_PROFILE", SSID: "Guest",
						FrequencyBand: "ANY", PingDestinationServers: []string{}}
					if diff := cmp.Diff(want, p); diff != "" {
						t.Errorf("(-want +got):\n%s", diff)
					}
				}},
			{"case-insensitive enums and type", profilesBody("Cases", profilesSet("type", "ClientConnTestProfile"),
				profilesSet("frequencyBand", "band_2_4_ghz"), profilesSet("templateType", "cl_conn_test_profile")),
				func(t *testing.T, p wnms.Template) {
					if p.FrequencyBand != "BAND_2_4_GHZ" || p.Type != "clientconntestprofile" || p.TemplateType != "CL_CONN_TEST_PROFILE" {
						t.Errorf("got %+v", p)
					}
				}},
			{"WEP with key", profilesBody("WEP", profilesSet("securityMode", 1), profilesSet("passphrase", "0123456789")), nil},
			{"WPA/WPA2 EAP", profilesBody("EAP", profilesSet("securityMode", 4), profilesSet("securityType", 1),
				profilesSet("username", "tester"), profilesSet("password", "s3cret"), profilesDel("passphrase")),
				func(t *testing.T, p wnms.Template) {
					if p.Username == nil || *p.Username != "tester" || p.Password == nil || *p.Password != wnms.SecretMask || p.Passphrase != nil {
						t.Errorf("credentials %v %v %v", p.Username, p.Password, p.Passphrase)
					}
				}},
			{"OSEN", profilesBody("OSEN", profilesSet("securityMode", 5), profilesDel("passphrase")), nil},
			{"64-character name, 32-octet SSID", profilesBody(strings.Repeat("n", 64), profilesSet("ssid", strings.Repeat("é", 16))), nil},
			{"ten ping servers, trimmed name", profilesBody("  Padded  ", profilesSet("pingDestinationServers",
				[]string{"a.example", "b.example", "c.example", "d", "e", "f", "10.0.0.1", "::1", "h.", "x-y.z"})),
				func(t *testing.T, p wnms.Template) {
					if p.TemplateName != "Padded" {
						t.Errorf("name %q", p.TemplateName)
					}
				}},
			{"63-character passphrase, http URL", profilesBody("Long key", profilesSet("passphrase", strings.Repeat("k", 63)),
				profilesSet("wanTestUrl", "HTTP://10.1.2.3:8080/x?y=1")), nil},
			{"createdAtLocationId naming the location", profilesBody("With loc", profilesSet("createdAtLocationId",
				map[string]any{"type": "locallocationid", "id": w.Site.ID.ID})), nil},
			{"templateId ignored", profilesBody("With id", profilesSet("templateId", 999999)),
				func(t *testing.T, p wnms.Template) {
					if p.TemplateID == 999999 {
						t.Errorf("client-chosen id kept")
					}
				}},
			{"same name as a profile elsewhere", profilesBody("Lobby"), nil},
		}
		for _, tc := range ok {
			t.Run(tc.name, func(t *testing.T) {
				locID := w.Site.ID.ID
				if tc.body["templateName"] == "Lobby" {
					locID = w.Floor.ID.ID // Lobby exists at the site
				}
				p := profilesCreate(t, e.Admin, locID, tc.body)
				if tc.check != nil {
					tc.check(t, p)
				}
			})
		}
		// Another customer may use the same name at the shared root.
		profilesCreate(t, e.Admin, 0, profilesBody("Root profile"))
		profilesCreate(t, w.ForeignAdmin, 0, profilesBody("Root profile"))
	})
}

func TestProfilesCreateBadInput(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		w := newProfilesWorld(t, b)
		e := w.E
		site := "/V5/templates?locationid=" + profilesLoc(w.Site.ID.ID)
		profilesCreate(t, e.Admin, w.Site.ID.ID, profilesBody("Taken"))
		cases := []struct {
			name     string
			path     string
			body     any
			status   int
			code     string
			moreInfo string
		}{
			{"no locationid", "/V5/templates", profilesBody("x"), 400, wnms.MissingParameter, "locationid"},
			{"locationid not a number", "/V5/templates?locationid=abc", profilesBody("x"), 400, wnms.InvalidParameter, "locationid"},
			{"unknown locationid", "/V5/templates?locationid=987654", profilesBody("x"), 400, wnms.InvalidParameter, "locationid"},
			{"another customer's location", "/V5/templates?locationid=" + profilesLoc(w.Foreign.ID.ID), profilesBody("x"), 400, wnms.InvalidParameter, "locationid"},
			{"no type", site, profilesBody("x", profilesDel("type")), 400, wnms.ValidationFailed, "type"},
			{"wrong type", site, profilesBody("x", profilesSet("type", "snmppolicy")), 400, wnms.InvalidRequestBody, "type"},
			{"wrong templateType", site, profilesBody("x", profilesSet("templateType", "OTHER")), 400, wnms.InvalidRequestBody, "templateType"},
			{"no name", site, profilesBody("x", profilesDel("templateName")), 400, wnms.ValidationFailed, "templateName"},
			{"null name", site, profilesBody("x", profilesSet("templateName", nil)), 400, wnms.ValidationFailed, "templateName"},
			{"blank name", site, profilesBody("   "), 400, wnms.ValidationFailed, "templateName"},
			{"name of 65", site, profilesBody(strings.Repeat("n", 65)), 400, wnms.ValidationFailed, "templateName"},
			{"name with control character", site, profilesBody("a\u0007b"), 400, wnms.ValidationFailed, "templateName"},
			{"name taken", site, profilesBody("Taken"), 409, wnms.DuplicateEntity, ""},
			{"name taken, other case", site, profilesBody("tAKEN"), 409, wnms.DuplicateEntity, ""},
			{"name not a string", site, profilesBody("x", profilesSet("templateName", 5)), 400, wnms.InvalidRequestBody, "templateName"},
			{"no ssid", site, profilesBody("x", profilesDel("ssid")), 400, wnms.ValidationFailed, "ssid"},
			{"empty ssid", site, profilesBody("x", profilesSet("ssid", "")), 400, wnms.ValidationFailed, "ssid"},
			{"ssid of 33 octets", site, profilesBody("x", profilesSet("ssid", strings.Repeat("s", 33))), 400, wnms.ValidationFailed, "ssid"},
			{"ssid of 17 characters, 34 octets", site, profilesBody("x", profilesSet("ssid", strings.Repeat("é", 17))), 400, wnms.ValidationFailed, "ssid"},
			{"no band", site, profilesBody("x", profilesDel("frequencyBand")), 400, wnms.ValidationFailed, "frequencyBand"},
			{"unknown band", site, profilesBody("x", profilesSet("frequencyBand", "BAND_6_GHZ")), 400, wnms.InvalidRequestBody, "frequencyBand"},
			{"security mode 2", site, profilesBody("x", profilesSet("securityMode", 2)), 400, wnms.InvalidRequestBody, "securityMode"},
			{"security mode 6", site, profilesBody("x", profilesSet("securityMode", 6)), 400, wnms.InvalidRequestBody, "securityMode"},
			{"security mode as a string", site, profilesBody("x", profilesSet("securityMode", "3")), 400, wnms.InvalidRequestBody, "securityMode"},
			{"security type 2", site, profilesBody("x", profilesSet("securityType", 2)), 400, wnms.InvalidRequestBody, "securityType"},
			{"EAP with WEP", site, profilesBody("x", profilesSet("securityMode", 1), profilesSet("securityType", 1),
				profilesSet("username", "u"), profilesSet("password", "p")), 400, wnms.ValidationFailed, "securityType"},
			{"EAP with open", site, profilesBody("x", profilesSet("securityMode", 0), profilesSet("securityType", 1),
				profilesSet("username", "u"), profilesSet("password", "p")), 400, wnms.ValidationFailed, "securityType"},
			{"EAP with OSEN", site, profilesBody("x", profilesSet("securityMode", 5), profilesSet("securityType", 1),
				profilesSet("username", "u"), profilesSet("password", "p")), 400, wnms.ValidationFailed, "securityType"},
			{"PSK without passphrase", site, profilesBody("x", profilesDel("passphrase")), 400, wnms.ValidationFailed, "passphrase"},
			{"WEP without key", site, profilesBody("x", profilesSet("securityMode", 1), profilesSet("passphrase", nil)), 400, wnms.ValidationFailed, "passphrase"},
			{"passphrase of 7", site, profilesBody("x", profilesSet("passphrase", "1234567")), 400, wnms.ValidationFailed, "passphrase"},
			{"passphrase of 64", site, profilesBody("x", profilesSet("passphrase", strings.Repeat("p", 64))), 400, wnms.ValidationFailed, "passphrase"},
			{"passphrase as the mask", site, profilesBody("x", profilesSet("passphrase", wnms.SecretMask)), 400, wnms.ValidationFailed, "passphrase"},
			{"EAP without username", site, profilesBody("x", profilesSet("securityType", 1), profilesSet("password", "p")), 400, wnms.ValidationFailed, "username"},
			{"EAP without password", site, profilesBody("x", profilesSet("securityType", 1), profilesSet("username", "u")), 400, wnms.ValidationFailed, "password"},
			{"EAP password as the mask", site, profilesBody("x", profilesSet("securityType", 1), profilesSet("username", "u"),
				profilesSet("password", wnms.SecretMask)), 400, wnms.ValidationFailed, "password"},
			{"eleven ping servers", site, profilesBody("x", profilesSet("pingDestinationServers",
				[]string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"})), 400, wnms.ValidationFailed, "pingDestinationServers"},
			{"ping server with a space", site, profilesBody("x", profilesSet("pingDestinationServers", []string{"bad host"})), 400, wnms.ValidationFailed, "pingDestinationServers"},
			{"ping server empty", site, profilesBody("x", profilesSet("pingDestinationServers", []string{""})), 400, wnms.ValidationFailed, "pingDestinationServers"},
			{"ping server hyphen", site, profilesBody("x", profilesSet("pingDestinationServers", []string{"-a.example"})), 400, wnms.ValidationFailed, "pingDestinationServers"},
			{"ping server bad IPv4", site, profilesBody("x", profilesSet("pingDestinationServers", []string{"10.0.0.256"})), 400, wnms.ValidationFailed, "pingDestinationServers"},
			{"ping server URL", site, profilesBody("x", profilesSet("pingDestinationServers", []string{"http://a.example"})), 400, wnms.ValidationFailed, "pingDestinationServers"},
			{"ping servers not a list", site, profilesBody("x", profilesSet("pingDestinationServers", "a.example")), 400, wnms.InvalidRequestBody, "pingDestinationServers"},
			{"ftp WAN URL", site, profilesBody("x", profilesSet("wanTestUrl", "ftp://a.example/")), 400, wnms.ValidationFailed, "wanTestUrl"},
			{"WAN URL without host", site, profilesBody("x", profilesSet("wanTestUrl", "http://")), 400, wnms.ValidationFailed, "wanTestUrl"},
			{"WAN URL not a URL", site, profilesBody("x", profilesSet("wanTestUrl", "example.com/x")), 400, wnms.ValidationFailed, "wanTestUrl"},
			{"WAN URL with user", site, profilesBody("x", profilesSet("wanTestUrl", "https://u:p@a.example/")), 400, wnms.ValidationFailed, "wanTestUrl"},
			{"negative mncTemplateId", site, profilesBody("x", profilesSet("mncTemplateId", -1)), 400, wnms.ValidationFailed, "mncTemplateId"},
			{"description too long", site, profilesBody("x", profilesSet("description", strings.Repeat("d", 1025))), 400, wnms.ValidationFailed, "description"},
			{"createdAtLocationId elsewhere", site, profilesBody("x", profilesSet("createdAtLocationId",
				map[string]any{"type": "locallocationid", "id": w.Floor.ID.ID})), 400, wnms.ValidationFailed, "createdAtLocationId"},
			{"createdAtLocationId remote", site, profilesBody("x", profilesSet("createdAtLocationId",
				map[string]any{"type": "remotelocationid", "id": w.Site.ID.ID, "childId": 2})), 400, wnms.ValidationFailed, "createdAtLocationId"},
			{"pingTestEnabled not a boolean", site, profilesBody("x", profilesSet("pingTestEnabled", "yes")), 400, wnms.InvalidRequestBody, "pingTestEnabled"},
			{"body not JSON", site, apitest.Raw{ContentType: "application/json", Body: []byte(`{"type":`)}, 400, wnms.InvalidRequestBody, ""},
			{"body an array", site, apitest.Raw{ContentType: "application/json", Body: []byte(`[]`)}, 400, wnms.InvalidRequestBody, ""},
			{"empty body", site, apitest.Raw{ContentType: "application/json", Body: nil}, 400, wnms.InvalidRequestBody, ""},
			{"two JSON values", site, apitest.Raw{ContentType: "application/json", Body: []byte(`{} {}`)}, 400, wnms.InvalidRequestBody, ""},
			{"not JSON content type", site, apitest.Raw{ContentType: "text/plain", Body: []byte(`{}`)}, 415, wnms.UnsupportedMediaType, ""},
			{"body over 1 MiB", site, apitest.Raw{ContentType: "application/json",
				Body: []byte(`{"description":"` + strings.Repeat("d", 1<<20) + `"}`)}, 413, wnms.PayloadTooLarge, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := profilesSnapshot(t, e)
				r := e.Admin.Do("PUT", tc.path, tc.body)
				if r.Status != tc.status || r.ErrorCode() != tc.code {
					t.Fatalf("status %d %s, want %d %s; %s", r.Status, r.ErrorCode(), tc.status, tc.code, r.Body)
				}
				if tc.moreInfo != "" {
					var eb struct {
						Errors []struct{ MoreInfo string } `json:"errors"`
					}
					r.Decode(t, &eb)
					if eb.Errors[0].MoreInfo != tc.moreInfo {
						t.Errorf("moreInfo %q, want %q; %s", eb.Errors[0].MoreInfo, tc.moreInfo, r.Body)
					}
				}
				if diff := cmp.Diff(before, profilesSnapshot(t, e)); diff != "" {
					t.Errorf("a rejected request changed the store (-before +after):\n%s", diff)
				}
			})
		}
		// Viewers may not create: 403 and nothing stored.
		_, viewer := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer})
		before := profilesSnapshot(t, e)
		if r := viewer.Do("PUT", site, profilesBody("Viewer's")); r.Status != 403 || r.ErrorCode() != wnms.AccessDenied {
			t.Errorf("viewer create: %d %s", r.Status, r.ErrorCode())
		}
		if diff := cmp.Diff(before, profilesSnapshot(t, e)); diff != "" {
			t.Errorf("viewer changed the store:\n%s", diff)
		}
	})
}

func TestProfilesFields(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		w := newProfilesWorld(t, b)
		e := w.E
		p := profilesCreate(t, e.Admin, w.Site.ID.ID, profilesBody("Fields"))
		one := fmt.Sprintf("/V5/templates/%d/CL_CONN_TEST_PROFILE", p.TemplateID)
		list := "/V5/templates/CL_CONN_TEST_PROFILE?locationid=" + profilesLoc(w.Site.ID.ID) + "&minimalinforequired=false"
		keysOf := func(t *testing.T, body []byte) []string {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			var ks []string
			for k := range m {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			return ks
		}
		spellings := []struct{ name, query string }{
			{"comma list", "fields=templateName,ssid"},
			{"repeated", "fields=templateName&fields=ssid"},
			{"bracketed", "fields=%5BtemplateName,ssid%5D"},
			{"bracketed and quoted", `fields=%5B%22templateName%22,%20%22ssid%22%5D`},
			{"other case, repeats", "fields=TEMPLATENAME,ssid,ssid"},
		}
		for _, sp := range spellings {
			t.Run(sp.name, func(t *testing.T) {
				want := []string{"ssid", "templateName", "type"}
				r := e.Admin.Expect(http.StatusOK, "GET", one+"?"+sp.query, nil)
				if diff := cmp.Diff(want, keysOf(t, r.Body)); diff != "" {
					t.Errorf("one (-want +got):\n%s", diff)
				}
				var got map[string]any
				r.Decode(t, &got)
				if got["templateName"] != "Fields" || got["ssid"] != "Corp WiFi" || got["type"] != "clientconntestprofile" {
					t.Errorf("values %v", got)
				}
				var items []json.RawMessage
				e.Admin.Expect(http.StatusOK, "GET", list+"&"+sp.query, nil).Decode(t, &items)
				if len(items) != 1 {
					t.Fatalf("%d items", len(items))
				}
				if diff := cmp.Diff(want, keysOf(t, items[0])); diff != "" {
					t.Errorf("list (-want +got):\n%s", diff)
				}
			})
		}
		t.Run("secrets stay masked when selected", func(t *testing.T) {
			r := e.Admin.Expect(http.StatusOK, "GET", one+"?fields=passphrase", nil)
			if want := `{"type":"clientconntestprofile","passphrase":"********"}`; string(r.Body) != want {
				t.Errorf("body %s, want %s", r.Body, want)
			}
		})
		t.Run("empty selects all", func(t *testing.T) {
			r := e.Admin.Expect(http.StatusOK, "GET", one+"?fields=", nil)
			if n := len(keysOf(t, r.Body)); n != 18 {
				t.Errorf("%d fields", n)
			}
		})
		for _, bad := range []string{"fields=templateName,secret", "fields=templateName&fields=customerId", "fields=%5Bpath%5D", "fields=LocationPath"} {
			t.Run("unknown "+bad, func(t *testing.T) {
				for _, path := range []string{one + "?" + bad, list + "&" + bad} {
					r := e.Admin.Do("GET", path, nil)
					if r.Status != 400 || r.ErrorCode() != wnms.SelectiveFetch {
						t.Errorf("%s: %d %s, want 400 %s", path, r.Status, r.ErrorCode(), wnms.SelectiveFetch)
					}
				}
			})
		}
		t.Run("minimal information", func(t *testing.T) {
			var items []json.RawMessage
			e.Admin.Expect(http.StatusOK, "GET", "/V5/templates/CL_CONN_TEST_PROFILE?locationid="+profilesLoc(w.Site.ID.ID)+"&minimalinforequired=true", nil).Decode(t, &items)
			want := []string{"createdAtLocationId", "description", "templateId", "templateName", "templateType", "type"}
			if len(items) != 1 {
				t.Fatalf("%d items", len(items))
			}
			if diff := cmp.Diff(want, keysOf(t, items[0])); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// fields wins over minimal information.
			e.Admin.Expect(http.StatusOK, "GET", "/V5/templates/CL_CONN_TEST_PROFILE?locationid="+profilesLoc(w.Site.ID.ID)+"&minimalinforequired=true&fields=ssid", nil).Decode(t, &items)
			if diff := cmp.Diff([]string{"ssid", "type"}, keysOf(t, items[0])); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	})
}

func TestProfilesVisibility(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		w := newProfilesWorld(t, b)
		e := w.E
		for name, l := range map[string]int64{"R": 0, "S": w.Site.ID.ID, "F": w.Floor.ID.ID, "O": w.Other.ID.ID, "OF": w.OtherFloor.ID.ID} {
			profilesCreate(t, e.Admin, l, profilesBody(name))
		}
		profilesCreate(t, w.ForeignAdmin, 0, profilesBody("foreign root"))
		profilesCreate(t, w.ForeignAdmin, w.Foreign.ID.ID, profilesBody("foreign"))
		list := func(t *testing.T, c *apitest.Client, query string) []string {
			t.Helper()
			var ps []wnms.Template
			c.Expect(http.StatusOK, "GET", "/V5/templates/CL_CONN_TEST_PROFILE?minimalinforequired=false"+query, nil).Decode(t, &ps)
			for i := 1; i < len(ps); i++ {
				if ps[i-1].TemplateID >= ps[i].TemplateID {
					t.Errorf("not in id order: %d then %d", ps[i-1].TemplateID, ps[i].TemplateID)
				}
			}
			return profilesNames(ps)
		}
		site, floor, other := profilesLoc(w.Site.ID.ID), profilesLoc(w.Floor.ID.ID), profilesLoc(w.Other.ID.ID)
		_, floorViewer := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer, Locations: []int64{w.Floor.ID.ID, w.OtherFloor.ID.ID}})
		cases := []struct {
			name   string
			client *apitest.Client
			query  string
			want   []string
		}{
			{"root", e.Admin, "&locationid=0", []string{"R"}},
			{"no location is the root", e.Admin, "", []string{"R"}},
			{"root subtree", e.Admin, "&locationid=0&fetchSubTreeTemplates=true", []string{"F", "O", "OF", "R", "S"}},
			{"site", e.Admin, "&locationid=" + site, []string{"R", "S"}},
			{"site subtree", e.Admin, "&locationid=" + site + "&fetchSubTreeTemplates=true", []string{"F", "R", "S"}},
			{"site subtree false", e.Admin, "&locationid=" + site + "&fetchSubTreeTemplates=false", []string{"R", "S"}},
			{"floor", e.Admin, "&locationid=" + floor, []string{"F", "R", "S"}},
			{"other subtree", e.Admin, "&locationid=" + other + "&fetchSubTreeTemplates=1", []string{"O", "OF", "R"}},
			{"foreign customer at root", w.ForeignAdmin, "&fetchSubTreeTemplates=true", []string{"foreign", "foreign root"}},
			{"foreign customer at its folder", w.ForeignAdmin, "&locationid=" + profilesLoc(w.Foreign.ID.ID), []string{"foreign", "foreign root"}},
			{"scoped caller, no location", w.ScopedSite, "", []string{"R"}},
			{"scoped caller, no location, subtree", w.ScopedSite, "&fetchSubTreeTemplates=true", []string{"F", "R", "S"}},
			{"scoped caller at its floor", w.ScopedSite, "&locationid=" + floor, []string{"F", "R", "S"}},
			{"two floors, no location", floorViewer, "", []string{"R"}},
			{"two floors, no location, subtree", floorViewer, "&fetchSubTreeTemplates=true", []string{"F", "O", "OF", "R", "S"}},
			{"two floors, at one", floorViewer, "&locationid=" + floor + "&fetchSubTreeTemplates=true", []string{"F", "R", "S"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if diff := cmp.Diff(tc.want, list(t, tc.client, tc.query)); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
		bad := []struct {
			name   string
			client *apitest.Client
			query  string
			status int
			code   string
		}{
			{"minimalinforequired missing", e.Admin, "/V5/templates/CL_CONN_TEST_PROFILE?locationid=0", 400, wnms.MissingParameter},
			{"minimalinforequired bad", e.Admin, "/V5/templates/CL_CONN_TEST_PROFILE?minimalinforequired=maybe", 400, wnms.InvalidParameter},
			{"fetchSubTreeTemplates bad", e.Admin, "/V5/templates/CL_CONN_TEST_PROFILE?minimalinforequired=true&fetchSubTreeTemplates=2", 400, wnms.InvalidParameter},
			{"unknown location", e.Admin, "/V5/templates/CL_CONN_TEST_PROFILE?minimalinforequired=true&locationid=55555", 400, wnms.InvalidParameter},
			{"scoped caller elsewhere", w.ScopedSite, "/V5/templates/CL_CONN_TEST_PROFILE?minimalinforequired=true&locationid=" + other, 403, wnms.LocationAccessDenied},
			{"scoped caller at root", w.ScopedSite, "/V5/templates/CL_CONN_TEST_PROFILE?minimalinforequired=true&locationid=0", 403, wnms.LocationAccessDenied},
			{"foreign location", e.Admin, "/V5/templates/CL_CONN_TEST_PROFILE?minimalinforequired=true&locationid=" + profilesLoc(w.Foreign.ID.ID), 400, wnms.InvalidParameter},
		}
		for _, tc := range bad {
			t.Run(tc.name, func(t *testing.T) {
				r := tc.client.Do("GET", tc.query, nil)
				if r.Status != tc.status || r.ErrorCode() != tc.code {
					t.Errorf("status %d %s, want %d %s; %s", r.Status, r.ErrorCode(), tc.status, tc.code, r.Body)
				}
			})
		}

		// Reading one profile follows the same visibility.
		ids := map[string]int64{}
		var all []wnms.Template
		e.Admin.Expect(http.StatusOK, "GET", "/V5/templates/CL_CONN_TEST_PROFILE?minimalinforequired=true&fetchSubTreeTemplates=true", nil).Decode(t, &all)
		for _, p := range all {
			ids[p.TemplateName] = p.TemplateID
		}
		var foreign []wnms.Template
		w.ForeignAdmin.Expect(http.StatusOK, "GET", "/V5/templates/CL_CONN_TEST_PROFILE?minimalinforequired=true&fetchSubTreeTemplates=true", nil).Decode(t, &foreign)
		one := func(name string) string { return fmt.Sprintf("/V5/templates/%d/CL_CONN_TEST_PROFILE", ids[name]) }
		reads := []struct {
			name   string
			client *apitest.Client
			path   string
			status int
			code   string
		}{
			{"at an ancestor's location", e.Admin, one("R") + "?locationid=" + floor, 200, ""},
			{"below the location", e.Admin, one("F") + "?locationid=" + site, 200, ""},
			{"at its own location", e.Admin, one("S") + "?locationid=" + site, 200, ""},
			{"not visible at a sibling", e.Admin, one("O") + "?locationid=" + site, 404, wnms.ResourceNotFound},
			{"not visible at a sibling's floor", e.Admin, one("S") + "?locationid=" + profilesLoc(w.OtherFloor.ID.ID), 404, wnms.ResourceNotFound},
			{"scoped: root profile", w.ScopedSite, one("R"), 200, ""},
			{"scoped: below", w.ScopedSite, one("F"), 200, ""},
			{"scoped: outside", w.ScopedSite, one("O"), 403, wnms.LocationAccessDenied},
			{"scoped: outside with location", w.ScopedSite, one("O") + "?locationid=" + other, 403, wnms.LocationAccessDenied},
			{"another customer's profile", e.Admin, fmt.Sprintf("/V5/templates/%d/CL_CONN_TEST_PROFILE", foreign[0].TemplateID), 404, wnms.ResourceNotFound},
			{"no such profile", e.Admin, "/V5/templates/99999999/CL_CONN_TEST_PROFILE", 404, wnms.ResourceNotFound},
			{"templateId not a number", e.Admin, "/V5/templates/abc/CL_CONN_TEST_PROFILE", 400, wnms.InvalidParameter},
			{"wrong template type segment", e.Admin, fmt.Sprintf("/V5/templates/%d/OTHER_PROFILE", ids["R"]), 404, wnms.ResourceNotFound},
		}
		for _, tc := range reads {
			t.Run(tc.name, func(t *testing.T) {
				r := tc.client.Do("GET", tc.path, nil)
				if r.Status != tc.status || r.ErrorCode() != tc.code {
					t.Errorf("status %d %s, want %d %s; %s", r.Status, r.ErrorCode(), tc.status, tc.code, r.Body)
				}
			})
		}
	})
}

func TestProfilesPaging(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		w := newProfilesWorld(t, b)
		e := w.E
		var ids []int64
		for i := 0; i < 25; i++ {
			l := w.Site.ID.ID
			if i%3 == 0 {
				l = w.Floor.ID.ID
			}
			ids = append(ids, profilesCreate(t, e.Admin, l, profilesBody(fmt.Sprintf("P%02d", i))).TemplateID)
		}
		profilesCreate(t, e.Admin, w.Other.ID.ID, profilesBody("elsewhere"))
		q := "?locationid=" + profilesLoc(w.Site.ID.ID) + "&fetchSubTreeTemplates=true"
		type page struct {
			TemplateList []wnms.Template `json:"templateList"`
			PreviousLink *string         `json:"previousLink"`
			NextLink     *string         `json:"nextLink"`
			TotalCount   int             `json:"totalCount"`
		}
		link := func(from, size int) *string {
			s := fmt.Sprintf("/CL_CONN_TEST_PROFILE/%d/%d%s", from, size, q)
			return &s
		}
		cases := []struct {
			start, size int
			first, n    int
			prev, next  *string
		}{
			{0, 10, 0, 10, nil, link(10, 10)},
			{10, 10, 10, 10, link(0, 10), link(20, 10)},
			{20, 10, 20, 5, link(10, 10), nil},
			{5, 10, 5, 10, link(0, 10), link(15, 10)},
			{30, 10, 0, 0, link(20, 10), nil},
			{0, 25, 0, 25, nil, nil},
			{0, 1000, 0, 25, nil, nil},
			{24, 1, 24, 1, link(23, 1), nil},
		}
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%d/%d", tc.start, tc.size), func(t *testing.T) {
				var p page
				e.Admin.Expect(http.StatusOK, "GET", fmt.Sprintf("/V5/templates/CL_CONN_TEST_PROFILE/%d/%d%s", tc.start, tc.size, q), nil).Decode(t, &p)
				if p.TotalCount != 25 {
					t.Errorf("totalCount %d, want 25", p.TotalCount)
				}
				var got []int64
				for _, x := range p.TemplateList {
					got = append(got, x.TemplateID)
				}
				var want []int64
				if tc.n > 0 {
					want = ids[tc.first : tc.first+tc.n]
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("ids (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tc.prev, p.PreviousLink); diff != "" {
					t.Errorf("previousLink (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tc.next, p.NextLink); diff != "" {
					t.Errorf("nextLink (-want +got):\n%s", diff)
				}
			})
		}
		t.Run("following nextLink visits every profile once", func(t *testing.T) {
			var seen []int64
			next := "/CL_CONN_TEST_PROFILE/0/7" + q
			for n := 0; next != ""; n++ {
				if n > 10 {
					t.Fatal("too many pages")
				}
				var p page
				e.Admin.Expect(http.StatusOK, "GET", "/V5/templates"+next, nil).Decode(t, &p)
				for _, x := range p.TemplateList {
					seen = append(seen, x.TemplateID)
					if x.Passphrase == nil || *x.Passphrase != wnms.SecretMask {
						t.Errorf("passphrase %v not masked", x.Passphrase)
					}
				}
				next = ""
				if p.NextLink != nil {
					next = *p.NextLink
				}
			}
			if diff := cmp.Diff(ids, seen); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
		t.Run("far past the end", func(t *testing.T) {
			var p page
			e.Admin.Expect(http.StatusOK, "GET", "/V5/templates/CL_CONN_TEST_PROFILE/9223372036854775000/1000"+q, nil).Decode(t, &p)
			prev := "/CL_CONN_TEST_PROFILE/9223372036854774000/1000" + q
			if p.TotalCount != 25 || len(p.TemplateList) != 0 || p.NextLink != nil || p.PreviousLink == nil || *p.PreviousLink != prev {
				t.Errorf("page %+v", p)
			}
		})
		t.Run("no query string, no location", func(t *testing.T) {
			var p page
			e.Admin.Expect(http.StatusOK, "GET", "/V5/templates/CL_CONN_TEST_PROFILE/0/1", nil).Decode(t, &p)
			if p.TotalCount != 0 || p.NextLink != nil || p.PreviousLink != nil || len(p.TemplateList) != 0 {
				t.Errorf("root without subtree: %+v", p)
			}
			e.Admin.Expect(http.StatusOK, "GET", "/V5/templates/CL_CONN_TEST_PROFILE/1/1?nodeid=0&fetchSubTreeTemplates=true", nil).Decode(t, &p)
			if p.TotalCount != 26 || p.NextLink == nil || *p.NextLink != "/CL_CONN_TEST_PROFILE/2/1?nodeid=0&fetchSubTreeTemplates=true" ||
				p.PreviousLink == nil || *p.PreviousLink != "/CL_CONN_TEST_PROFILE/0/1?nodeid=0&fetchSubTreeTemplates=true" {
				t.Errorf("page %+v", p)
			}
		})
		bad := []struct {
			path     string
			code     string
			moreInfo string
		}{
			{"/0/1001", wnms.PageSizeExceeded, "pageSize"},
			{"/0/100000", wnms.PageSizeExceeded, "pageSize"},
			{"/0/0", wnms.InvalidParameter, "pageSize"},
			{"/0/-5", wnms.InvalidParameter, "pageSize"},
			{"/0/ten", wnms.InvalidParameter, "pageSize"},
			{"/-1/10", wnms.InvalidParameter, "startIndex"},
			{"/x/10", wnms.InvalidParameter, "startIndex"},
			{"/0/10?nodeid=3", wnms.InvalidParameter, "nodeid"},
			{"/0/10?nodeid=x", wnms.InvalidParameter, "nodeid"},
			{"/0/10?locationid=424242", wnms.InvalidParameter, "locationid"},
			{"/0/10?fetchSubTreeTemplates=yes", wnms.InvalidParameter, "fetchSubTreeTemplates"},
		}
		for _, tc := range bad {
			t.Run(tc.path, func(t *testing.T) {
				r := e.Admin.Do("GET", "/V5/templates/CL_CONN_TEST_PROFILE"+tc.path, nil)
				var eb struct {
					Errors []struct{ MoreInfo string } `json:"errors"`
				}
				r.Decode(t, &eb)
				if r.Status != 400 || r.ErrorCode() != tc.code || eb.Errors[0].MoreInfo != tc.moreInfo {
					t.Errorf("status %d %s, want 400 %s (%s); %s", r.Status, r.ErrorCode(), tc.code, tc.moreInfo, r.Body)
				}
			})
		}
		t.Run("scoped caller", func(t *testing.T) {
			r := w.ScopedSite.Do("GET", "/V5/templates/CL_CONN_TEST_PROFILE/0/10?locationid="+profilesLoc(w.Other.ID.ID), nil)
			if r.Status != 403 || r.ErrorCode() != wnms.LocationAccessDenied {
				t.Errorf("%d %s", r.Status, r.ErrorCode())
			}
			var p page
			w.ScopedSite.Expect(http.StatusOK, "GET", "/V5/templates/CL_CONN_TEST_PROFILE/0/100?fetchSubTreeTemplates=true", nil).Decode(t, &p)
			if p.TotalCount != 25 {
				t.Errorf("scoped caller sees %d, want the 25 of its site", p.TotalCount)
			}
		})
	})
}

func TestProfilesCopy(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		w := newProfilesWorld(t, b)
		e := w.E
		src := profilesCreate(t, e.Admin, w.Site.ID.ID, profilesBody("Lobby", profilesSet("mnctemplate", true)))
		copyPath := func(id int64, query string) string {
			return fmt.Sprintf("/V5/templates/copy/%d/CL_CONN_TEST_PROFILE%s", id, query)
		}
		dest := func(id int64) map[string]any { return map[string]any{"type": "locallocationid", "id": id} }
		copyTo := func(t *testing.T, c *apitest.Client, id, to int64, query string) wnms.Template {
			t.Helper()
			var p wnms.Template
			c.Expect(http.StatusOK, "PUT", copyPath(id, query), dest(to)).Decode(t, &p)
			return p
		}
		names := []struct {
			to   int64
			want string
		}{
			{w.Site.ID.ID, "Lobby (copy)"},
			{w.Site.ID.ID, "Lobby (copy 2)"},
			{w.Site.ID.ID, "Lobby (copy 3)"},
			{w.Floor.ID.ID, "Lobby"},
			{w.Floor.ID.ID, "Lobby (copy)"},
			{0, "Lobby"},
		}
		for i, tc := range names {
			p := copyTo(t, e.Admin, src.TemplateID, tc.to, "?locationid="+profilesLoc(w.Site.ID.ID)+"&nodeId=0")
			if p.TemplateName != tc.want || p.CreatedAtLocationID != wnms.LocalID(tc.to) || p.TemplateID == src.TemplateID {
				t.Errorf("copy %d: %q at %v id %d, want %q at %d", i, p.TemplateName, p.CreatedAtLocationID, p.TemplateID, tc.want, tc.to)
			}
			want := src
			want.TemplateID, want.TemplateName, want.CreatedAtLocationID = p.TemplateID, p.TemplateName, p.CreatedAtLocationID
			want.MncTemplateID, want.MncTemplate = 0, false
			if diff := cmp.Diff(want, p); diff != "" {
				t.Errorf("copy %d (-want +got):\n%s", i, diff)
			}
		}
		// The copy is independent and carries the secrets.
		last := copyTo(t, e.Admin, src.TemplateID, w.Other.ID.ID, "")
		stored := profilesStored(t, e, 1, last.TemplateID)
		if stored.Passphrase == nil || *stored.Passphrase != "correct horse" {
			t.Errorf("copy's passphrase %v", stored.Passphrase)
		}
		edit := profilesBody("Changed copy", profilesSet("templateId", last.TemplateID),
			profilesSet("createdAtLocationId", dest(w.Other.ID.ID)), profilesSet("passphrase", "another one"))
		e.Admin.Expect(http.StatusOK, "POST", "/V5/templates", edit)
		if s := profilesStored(t, e, 1, src.TemplateID); s.TemplateName != "Lobby" || *s.Passphrase != "correct horse" {
			t.Errorf("editing the copy changed the source: %+v", s)
		}
		e.Admin.Expect(http.StatusNoContent, "DELETE", fmt.Sprintf("/V5/templates/%d/CL_CONN_TEST_PROFILE", src.TemplateID), nil)
		e.Admin.Expect(http.StatusOK, "GET", fmt.Sprintf("/V5/templates/%d/CL_CONN_TEST_PROFILE", last.TemplateID), nil)

		t.Run("long names stay within 64 characters", func(t *testing.T) {
			long := strings.Repeat("L", 64)
			p := profilesCreate(t, e.Admin, w.Floor.ID.ID, profilesBody(long))
			c1 := copyTo(t, e.Admin, p.TemplateID, w.Floor.ID.ID, "")
			c2 := copyTo(t, e.Admin, p.TemplateID, w.Floor.ID.ID, "")
			if want := strings.Repeat("L", 57) + " (copy)"; c1.TemplateName != want {
				t.Errorf("first copy %q, want %q", c1.TemplateName, want)
			}
			if want := strings.Repeat("L", 55) + " (copy 2)"; c2.TemplateName != want {
				t.Errorf("second copy %q, want %q", c2.TemplateName, want)
			}
		})
		t.Run("scoped caller copies a root profile into its site", func(t *testing.T) {
			root := profilesCreate(t, e.Admin, 0, profilesBody("Root one"))
			p := copyTo(t, w.ScopedSite, root.TemplateID, w.Floor.ID.ID, "?locationid="+profilesLoc(w.Floor.ID.ID))
			if p.CreatedAtLocationID.ID != w.Floor.ID.ID || p.TemplateName != "Root one" {
				t.Errorf("copy %+v", p)
			}
		})

		profilesCheckTotal(t, e.Admin, 0, w.Site.ID.ID, w.Floor.ID.ID, w.Other.ID.ID)
		other := profilesCreate(t, e.Admin, w.Other.ID.ID, profilesBody("Other's"))
		foreign := profilesCreate(t, w.ForeignAdmin, w.Foreign.ID.ID, profilesBody("Foreign"))
		src2 := profilesCreate(t, e.Admin, w.Site.ID.ID, profilesBody("Source"))
		bad := []struct {
			name   string
			client *apitest.Client
			path   string
			body   any
			status int
			code   string
		}{
			{"no such profile", e.Admin, copyPath(9999999, ""), dest(w.Site.ID.ID), 404, wnms.ResourceNotFound},
			{"another customer's profile", e.Admin, copyPath(foreign.TemplateID, ""), dest(w.Site.ID.ID), 404, wnms.ResourceNotFound},
			{"to another customer's location", e.Admin, copyPath(src2.TemplateID, ""), dest(w.Foreign.ID.ID), 400, wnms.ValidationFailed},
			{"foreign caller to its own location", w.ForeignAdmin, copyPath(src2.TemplateID, ""), dest(w.Foreign.ID.ID), 404, wnms.ResourceNotFound},
			{"to an unknown location", e.Admin, copyPath(src2.TemplateID, ""), dest(7777777), 400, wnms.ValidationFailed},
			{"no destination id", e.Admin, copyPath(src2.TemplateID, ""), map[string]any{"type": "locallocationid"}, 400, wnms.ValidationFailed},
			{"remote destination", e.Admin, copyPath(src2.TemplateID, ""), map[string]any{"type": "remotelocationid", "id": 3, "childId": 2}, 400, wnms.ValidationFailed},
			{"destination with childId", e.Admin, copyPath(src2.TemplateID, ""), map[string]any{"type": "locallocationid", "id": w.Site.ID.ID, "childId": 2}, 400, wnms.ValidationFailed},
			{"destination of a bad type", e.Admin, copyPath(src2.TemplateID, ""), map[string]any{"type": "nolocation", "id": w.Site.ID.ID}, 400, wnms.InvalidRequestBody},
			{"destination not an object", e.Admin, copyPath(src2.TemplateID, ""), []int{1}, 400, wnms.InvalidRequestBody},
			{"destination id a string", e.Admin, copyPath(src2.TemplateID, ""), map[string]any{"id": "5"}, 400, wnms.InvalidRequestBody},
			{"cluster child", e.Admin, copyPath(src2.TemplateID, "?nodeId=2"), dest(w.Site.ID.ID), 400, wnms.InvalidParameter},
			{"templateId not a number", e.Admin, "/V5/templates/copy/x/CL_CONN_TEST_PROFILE", dest(w.Site.ID.ID), 400, wnms.InvalidParameter},
			{"from a location where it is not visible", e.Admin, copyPath(other.TemplateID, "?locationid="+profilesLoc(w.Site.ID.ID)), dest(w.Site.ID.ID), 404, wnms.ResourceNotFound},
			{"scoped: source outside", w.ScopedSite, copyPath(other.TemplateID, ""), dest(w.Site.ID.ID), 403, wnms.LocationAccessDenied},
			{"scoped: destination outside", w.ScopedSite, copyPath(src2.TemplateID, ""), dest(w.Other.ID.ID), 403, wnms.LocationAccessDenied},
			{"scoped: destination root", w.ScopedSite, copyPath(src2.TemplateID, ""), dest(0), 403, wnms.LocationAccessDenied},
		}
		for _, tc := range bad {
			t.Run(tc.name, func(t *testing.T) {
				before := profilesSnapshot(t, e)
				r := tc.client.Do("PUT", tc.path, tc.body)
				if r.Status != tc.status || r.ErrorCode() != tc.code {
					t.Errorf("status %d %s, want %d %s; %s", r.Status, r.ErrorCode(), tc.status, tc.code, r.Body)
				}
				if diff := cmp.Diff(before, profilesSnapshot(t, e)); diff != "" {
					t.Errorf("a rejected copy changed the store (-before +after):\n%s", diff)
				}
			})
		}
	})
}

func TestProfilesEdit(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		w := newProfilesWorld(t, b)
		e := w.E
		p := profilesCreate(t, e.Admin, w.Site.ID.ID, profilesBody("Edit me", profilesSet("securityMode", 4),
			profilesSet("securityType", 1), profilesSet("username", "alice"), profilesSet("password", "eap-secret")))
		profilesCreate(t, e.Admin, w.Site.ID.ID, profilesBody("Neighbour"))
		one := fmt.Sprintf("/V5/templates/%d/CL_CONN_TEST_PROFILE", p.TemplateID)

		t.Run("masks round-trip", func(t *testing.T) {
			r := e.Admin.Expect(http.StatusOK, "GET", one, nil)
			var body map[string]any
			r.Decode(t, &body)
			if body["password"] != wnms.SecretMask || body["passphrase"] != wnms.SecretMask {
				t.Fatalf("read %v %v", body["password"], body["passphrase"])
			}
			body["description"] = "round trip"
			var got wnms.Template
			e.Admin.Expect(http.StatusOK, "POST", "/V5/templates", body).Decode(t, &got)
			if got.Description != "round trip" || *got.Password != wnms.SecretMask {
				t.Errorf("edited %+v", got)
			}
			s := profilesStored(t, e, 1, p.TemplateID)
			if *s.Password != "eap-secret" || *s.Passphrase != "correct horse" || *s.Username != "alice" {
				t.Errorf("stored secrets %q %q %q", *s.Password, *s.Passphrase, *s.Username)
			}
		})
		base := func(mods ...func(map[string]any)) map[string]any {
			b := map[string]any{
				"type":                "clientconntestprofile",
				"templateId":          p.TemplateID,
				"templateName":        "Edit me",
				"createdAtLocationId": map[string]any{"type": "locallocationid", "id": w.Site.ID.ID},
				"ssid":                "Corp WiFi",
				"frequencyBand":       "BAND_5_GHZ",
			}
			for _, m := range mods {
				m(b)
			}
			return b
		}
		t.Run("partial edit keeps what is not sent", func(t *testing.T) {
			var got wnms.Template
			e.Admin.Expect(http.StatusOK, "POST", "/V5/templates", base(profilesSet("templateName", "Edited"),
				profilesSet("frequencyBand", "ANY"), profilesSet("pingDestinationServers", []string{}),
				profilesSet("mncTemplateId", 42), profilesSet("mnctemplate", true))).Decode(t, &got)
			want := wnms.Template{Type: "clientconntestprofile", TemplateID: p.TemplateID, TemplateName: "Edited",
				CreatedAtLocationID: wnms.LocalID(w.Site.ID.ID), Description: "round trip", TemplateType: "CL_CONN_TEST_PROFILE",
				MncTemplateID: 42, SSID: "Corp WiFi", FrequencyBand: "ANY", SecurityMode: 4, SecurityType: 1,
				Username: profilesStr("alice"), Password: profilesStr(wnms.SecretMask), Passphrase: profilesStr(wnms.SecretMask),
				PingDestinationServers: []string{}, WanTestURL: "https://example.com/health", PingTestEnabled: true, MncTemplate: true}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			var read wnms.Template
			e.Admin.Expect(http.StatusOK, "GET", one, nil).Decode(t, &read)
			if diff := cmp.Diff(want, read); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
		})
		t.Run("new secrets replace, null clears", func(t *testing.T) {
			e.Admin.Expect(http.StatusOK, "POST", "/V5/templates", base(profilesSet("templateName", "Edited"),
				profilesSet("password", "new-secret"), profilesSet("passphrase", nil)))
			s := profilesStored(t, e, 1, p.TemplateID)
			if *s.Password != "new-secret" || s.Passphrase != nil {
				t.Errorf("stored %v %v", s.Password, s.Passphrase)
			}
			var got wnms.Template
			e.Admin.Expect(http.StatusOK, "GET", one, nil).Decode(t, &got)
			if got.Passphrase != nil {
				t.Errorf("cleared passphrase reads %v", *got.Passphrase)
			}
		})
		t.Run("switch to PSK", func(t *testing.T) {
			e.Admin.Expect(http.StatusOK, "POST", "/V5/templates", base(profilesSet("templateName", "Edited"),
				profilesSet("securityMode", 3), profilesSet("securityType", 0), profilesSet("passphrase", "psk-passphrase")))
			if s := profilesStored(t, e, 1, p.TemplateID); s.SecurityType != 0 || *s.Passphrase != "psk-passphrase" {
				t.Errorf("stored %+v", s)
			}
		})
		foreign := profilesCreate(t, w.ForeignAdmin, w.Foreign.ID.ID, profilesBody("Foreign"))
		open := profilesCreate(t, e.Admin, w.Site.ID.ID, map[string]any{"type": "clientconntestprofile", "templateName": "Open", "ssid": "g", "frequencyBand": "ANY"})
		other := profilesCreate(t, e.Admin, w.Other.ID.ID, profilesBody("Other's"))
		bad := []struct {
			name   string
			client *apitest.Client
			body   any
			status int
			code   string
		}{
			{"no templateId", e.Admin, base(profilesDel("templateId")), 400, wnms.ValidationFailed},
			{"unknown templateId", e.Admin, base(profilesSet("templateId", 88888888)), 404, wnms.ResourceNotFound},
			{"another customer's", w.ForeignAdmin, base(), 404, wnms.ResourceNotFound},
			{"foreign id from us", e.Admin, base(profilesSet("templateId", foreign.TemplateID)), 404, wnms.ResourceNotFound},
			{"moved location", e.Admin, base(profilesSet("createdAtLocationId", map[string]any{"type": "locallocationid", "id": w.Floor.ID.ID})), 400, wnms.ValidationFailed},
			{"no createdAtLocationId", e.Admin, base(profilesDel("createdAtLocationId")), 400, wnms.ValidationFailed},
			{"no type", e.Admin, base(profilesDel("type")), 400, wnms.ValidationFailed},
			{"no ssid", e.Admin, base(profilesDel("ssid")), 400, wnms.ValidationFailed},
			{"no name", e.Admin, base(profilesDel("templateName")), 400, wnms.ValidationFailed},
			{"no band", e.Admin, base(profilesDel("frequencyBand")), 400, wnms.ValidationFailed},
			{"name of a neighbour", e.Admin, base(profilesSet("templateName", "neighbour")), 409, wnms.DuplicateEntity},
			{"bad band", e.Admin, base(profilesSet("frequencyBand", "6GHZ")), 400, wnms.InvalidRequestBody},
			{"EAP with WEP", e.Admin, base(profilesSet("securityMode", 1), profilesSet("securityType", 1)), 400, wnms.ValidationFailed},
			{"short passphrase", e.Admin, base(profilesSet("passphrase", "short")), 400, wnms.ValidationFailed},
			{"mask where none is stored", e.Admin, base(profilesSet("templateId", open.TemplateID), profilesSet("templateName", "Open"),
				profilesSet("securityMode", 3), profilesSet("passphrase", wnms.SecretMask)), 400, wnms.ValidationFailed},
			{"templateId a string", e.Admin, base(profilesSet("templateId", "1")), 400, wnms.InvalidRequestBody},
			{"scoped caller, profile outside", w.ScopedSite, base(profilesSet("templateId", other.TemplateID), profilesSet("templateName", "Other's"),
				profilesSet("createdAtLocationId", map[string]any{"type": "locallocationid", "id": w.Other.ID.ID})), 403, wnms.LocationAccessDenied},
		}
		for _, tc := range bad {
			t.Run(tc.name, func(t *testing.T) {
				before := profilesSnapshot(t, e)
				r := tc.client.Do("POST", "/V5/templates", tc.body)
				if r.Status != tc.status || r.ErrorCode() != tc.code {
					t.Errorf("status %d %s, want %d %s; %s", r.Status, r.ErrorCode(), tc.status, tc.code, r.Body)
				}
				if diff := cmp.Diff(before, profilesSnapshot(t, e)); diff != "" {
					t.Errorf("a rejected edit changed the store (-before +after):\n%s", diff)
				}
			})
		}
		t.Run("scoped caller edits a profile of its site", func(t *testing.T) {
			w.ScopedSite.Expect(http.StatusOK, "POST", "/V5/templates", base(profilesSet("templateName", "By scoped")))
		})
	})
}

func TestProfilesDelete(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		w := newProfilesWorld(t, b)
		e := w.E
		floorP := profilesCreate(t, e.Admin, w.Floor.ID.ID, profilesBody("On the floor"))
		rootP := profilesCreate(t, e.Admin, 0, profilesBody("At root"))
		otherP := profilesCreate(t, e.Admin, w.Other.ID.ID, profilesBody("Other's"))
		foreign := profilesCreate(t, w.ForeignAdmin, w.Foreign.ID.ID, profilesBody("Foreign"))
		del := func(id int64, q string) string { return fmt.Sprintf("/V5/templates/%d/CL_CONN_TEST_PROFILE%s", id, q) }

		// A location that has profiles cannot be deleted.
		before := profilesSnapshot(t, e)
		if r := e.Admin.Do("DELETE", "/V2/locations/"+profilesLoc(w.Floor.ID.ID), nil); r.Status != 409 || r.ErrorCode() != wnms.Conflict {
			t.Errorf("delete a floor with a profile: %d %s", r.Status, r.ErrorCode())
		}
		if diff := cmp.Diff(before, profilesSnapshot(t, e)); diff != "" {
			t.Errorf("(-before +after):\n%s", diff)
		}
		bad := []struct {
			name   string
			client *apitest.Client
			path   string
			status int
			code   string
		}{
			{"no such profile", e.Admin, del(99999999, ""), 404, wnms.ResourceNotFound},
			{"another customer's", e.Admin, del(foreign.TemplateID, ""), 404, wnms.ResourceNotFound},
			{"by another customer", w.ForeignAdmin, del(floorP.TemplateID, "?locationid="+profilesLoc(w.Foreign.ID.ID)), 404, wnms.ResourceNotFound},
			{"at an unrelated location", e.Admin, del(floorP.TemplateID, "?locationid="+profilesLoc(w.Other.ID.ID)), 404, wnms.ResourceNotFound},
			{"unknown location", e.Admin, del(floorP.TemplateID, "?locationid=5555555"), 400, wnms.InvalidParameter},
			{"scoped: outside", w.ScopedSite, del(otherP.TemplateID, ""), 403, wnms.LocationAccessDenied},
			{"scoped: root profile", w.ScopedSite, del(rootP.TemplateID, "?locationid="+profilesLoc(w.Site.ID.ID)), 403, wnms.LocationAccessDenied},
			{"templateId not a number", e.Admin, "/V5/templates/one/CL_CONN_TEST_PROFILE", 400, wnms.InvalidParameter},
		}
		for _, tc := range bad {
			t.Run(tc.name, func(t *testing.T) {
				before := profilesSnapshot(t, e)
				r := tc.client.Do("DELETE", tc.path, nil)
				if r.Status != tc.status || r.ErrorCode() != tc.code {
					t.Errorf("status %d %s, want %d %s; %s", r.Status, r.ErrorCode(), tc.status, tc.code, r.Body)
				}
				if diff := cmp.Diff(before, profilesSnapshot(t, e)); diff != "" {
					t.Errorf("a rejected delete changed the store (-before +after):\n%s", diff)
				}
			})
		}
		r := w.ScopedSite.Expect(http.StatusNoContent, "DELETE", del(floorP.TemplateID, "?locationid="+profilesLoc(w.Site.ID.ID)), nil)
		if len(r.Body) != 0 {
			t.Errorf("204 with body %q", r.Body)
		}
		e.Admin.Expect(http.StatusNotFound, "GET", del(floorP.TemplateID, ""), nil)
		profilesCheckTotal(t, e.Admin, 0, w.Site.ID.ID, w.Floor.ID.ID, w.Other.ID.ID)
		profilesCheckTotal(t, w.ForeignAdmin, 0, w.Foreign.ID.ID)
		e.Admin.Expect(http.StatusNotFound, "DELETE", del(floorP.TemplateID, ""), nil)
		if _, err := e.Store.Template(context.Background(), 1, floorP.TemplateID); wnms.ErrorCode(err) != wnms.ResourceNotFound {
			t.Errorf("after delete: %v", err)
		}
		// With its profile gone, the floor can go; the ids are never reused.
		e.Admin.Expect(http.StatusNoContent, "DELETE", "/V2/locations/"+profilesLoc(w.Floor.ID.ID), nil)
		w.ForeignAdmin.Expect(http.StatusNoContent, "DELETE", del(foreign.TemplateID, ""), nil)
		if next := profilesCreate(t, w.ForeignAdmin, w.Foreign.ID.ID, profilesBody("Foreign")); next.TemplateID <= foreign.TemplateID {
			t.Errorf("id %d handed out again after delete (new id %d)", foreign.TemplateID, next.TemplateID)
		}
	})
}

func TestProfilesMethods(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		for _, tc := range []struct{ method, path string }{
			{"PATCH", "/V5/templates"},
			{"DELETE", "/V5/templates/CL_CONN_TEST_PROFILE"},
			{"POST", "/V5/templates/1/CL_CONN_TEST_PROFILE"},
			{"GET", "/V5/templates/copy/1/CL_CONN_TEST_PROFILE"},
			{"PUT", "/V5/templates/CL_CONN_TEST_PROFILE/0/10"},
		} {
			r := e.Admin.Do(tc.method, tc.path, nil)
			if r.Status != 405 || r.ErrorCode() != wnms.MethodNotAllowed || r.Header.Get("Allow") == "" {
				t.Errorf("%s %s: %d %s Allow %q", tc.method, tc.path, r.Status, r.ErrorCode(), r.Header.Get("Allow"))
			}
		}
	})
}

// TestAuthzProfiles is the authorization matrix of the seven calls. A
// caller of another customer gets 404 for the calls that name a profile
// (it is not theirs) and 403 LOCATION_ACCESS_DENIED for the calls that
// name only a location.
func TestAuthzProfiles(t *testing.T) {
	seed := func(t *testing.T, f *authzFixture, target authzTarget) wnms.Template {
		t.Helper()
		p := wnms.NewTemplate()
		p.TemplateName, p.SSID = profilesName("authz"), "Corp"
		p.CustomerID, p.CreatedAtLocationID = target.Customer, wnms.LocalID(target.Floor.ID.ID)
		if err := f.E.Store.CreateTemplate(context.Background(), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	runAuthz(t, []authzCase{
		{name: "list", allowed: allRoles, ok: 200, location: true, foreign: 400, foreignCode: wnms.InvalidParameter,
			request: func(t *testing.T, f *authzFixture, target authzTarget) (string, string, any) {
				seed(t, f, target)
				return "GET", "/V5/templates/CL_CONN_TEST_PROFILE?minimalinforequired=true&locationid=" + profilesLoc(target.Floor.ID.ID), nil
			}},
		{name: "paged list", allowed: allRoles, ok: 200, location: true, foreign: 400, foreignCode: wnms.InvalidParameter,
			request: func(t *testing.T, f *authzFixture, target authzTarget) (string, string, any) {
				return "GET", "/V5/templates/CL_CONN_TEST_PROFILE/0/10?locationid=" + profilesLoc(target.Folder.ID.ID) + "&fetchSubTreeTemplates=true", nil
			}},
		{name: "read", allowed: allRoles, ok: 200, location: true, foreign: 404, foreignCode: wnms.ResourceNotFound,
			request: func(t *testing.T, f *authzFixture, target authzTarget) (string, string, any) {
				p := seed(t, f, target)
				return "GET", fmt.Sprintf("/V5/templates/%d/CL_CONN_TEST_PROFILE?locationid=%d", p.TemplateID, target.Floor.ID.ID), nil
			}},
		{name: "create", allowed: opUp, ok: 200, location: true, foreign: 400, foreignCode: wnms.InvalidParameter,
			request: func(t *testing.T, f *authzFixture, target authzTarget) (string, string, any) {
				return "PUT", "/V5/templates?locationid=" + profilesLoc(target.Floor.ID.ID), profilesBody(profilesName("created"))
			}},
		{name: "copy", allowed: opUp, ok: 200, location: true, foreign: 404, foreignCode: wnms.ResourceNotFound,
			request: func(t *testing.T, f *authzFixture, target authzTarget) (string, string, any) {
				p := seed(t, f, target)
				return "PUT", fmt.Sprintf("/V5/templates/copy/%d/CL_CONN_TEST_PROFILE?locationid=%d", p.TemplateID, target.Floor.ID.ID),
					map[string]any{"type": "locallocationid", "id": target.Floor.ID.ID}
			}},
		{name: "edit", allowed: opUp, ok: 200, location: true, foreign: 404, foreignCode: wnms.ResourceNotFound,
			request: func(t *testing.T, f *authzFixture, target authzTarget) (string, string, any) {
				p := seed(t, f, target)
				return "POST", "/V5/templates", map[string]any{"type": "clientconntestprofile", "templateId": p.TemplateID,
					"templateName": p.TemplateName + " edited", "createdAtLocationId": p.CreatedAtLocationID,
					"ssid": "Corp 2", "frequencyBand": "BAND_2_4_GHZ"}
			}},
		{name: "delete", allowed: opUp, ok: 204, location: true, foreign: 404, foreignCode: wnms.ResourceNotFound,
			request: func(t *testing.T, f *authzFixture, target authzTarget) (string, string, any) {
				p := seed(t, f, target)
				return "DELETE", fmt.Sprintf("/V5/templates/%d/CL_CONN_TEST_PROFILE?locationid=%d", p.TemplateID, target.Floor.ID.ID), nil
			}},
	})
}

// FuzzProfileDecode feeds arbitrary bodies to the profile decoder and
// validator. Properties: no panic; every rejection is a *wnms.Error with a
// 400 status; a profile that passes validation survives the trip through
// its JSON form (as a client would send it back) unchanged, masks and all.
func FuzzProfileDecode(f *testing.F) {
	seeds := []string{
		`{"type":"clientconntestprofile","templateName":"a","ssid":"x","frequencyBand":"ANY"}`,
		`{"type":"clientconntestprofile","templateName":"Lobby","ssid":"Corp","frequencyBand":"BAND_5_GHZ","securityMode":3,"securityType":0,"passphrase":"correct horse","pingDestinationServers":["8.8.8.8","a.example"],"wanTestUrl":"https://a.example/"}`,
		`{"type":"clientconntestprofile","templateName":"EAP","ssid":"C","frequencyBand":"band_2_4_ghz","securityMode":4,"securityType":1,"username":"u","password":"p"}`,
		`{"type":"clientconntestprofile","templateName":"m","ssid":"C","frequencyBand":"ANY","securityMode":3,"passphrase":"********"}`,
		`{"type":"x","securityMode":2,"securityType":7,"frequencyBand":"6"}`,
		`{"templateName":null,"password":null,"passphrase":12,"pingDestinationServers":[null,"-"]}`,
		`{"createdAtLocationId":{"type":"remotelocationid","id":1,"childId":2},"mncTemplateId":-1}`,
		`[]`, `null`, `"str"`, `{"ssid":"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	stored := wnms.NewTemplate()
	stored.TemplateName, stored.SSID, stored.SecurityMode = "stored", "S", wnms.SecurityWPA2
	stored.Passphrase, stored.Password = profilesStr("stored passphrase"), profilesStr("stored password")
	f.Fuzz(func(t *testing.T, body []byte, edit bool) {
		var in wnms.TemplateInput
		if err := json.Unmarshal(body, &in); err != nil {
			var we *wnms.Error
			if errors.As(err, &we) && httpkit.Status(we.Code) != 400 {
				t.Fatalf("decode error %v has status %d", we, httpkit.Status(we.Code))
			}
			return
		}
		p := wnms.NewTemplate()
		if edit {
			p = stored
		}
		err := in.ApplyTo(&p)
		if err == nil {
			err = p.Validate()
		}
		if err != nil {
			var we *wnms.Error
			if !errors.As(err, &we) || httpkit.Status(we.Code) != 400 || we.MoreInfo == "" {
				t.Fatalf("rejection %#v is not a 400 *wnms.Error naming a field", err)
			}
			return
		}
		if p.Type != wnms.ProfileType || p.TemplateType != wnms.ProfileTemplateType {
			t.Fatalf("type %q templateType %q", p.Type, p.TemplateType)
		}
		for _, s := range []*string{p.Password, p.Passphrase} {
			if s != nil && *s == wnms.SecretMask {
				t.Fatalf("the mask was stored as a secret")
			}
		}
		// What a client reads, sent back as an edit, yields the same profile.
		out, err := json.Marshal(p.Masked())
		if err != nil {
			t.Fatal(err)
		}
		var back wnms.TemplateInput
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("re-decode %s: %v", out, err)
		}
		again := p
		if err := back.ApplyTo(&again); err != nil {
			t.Fatalf("re-apply %s: %v", out, err)
		}
		if err := again.Validate(); err != nil {
			t.Fatalf("re-validate %s: %v", out, err)
		}
		if diff := cmp.Diff(p, again); diff != "" {
			t.Fatalf("round trip changed the profile (-first +second):\n%s", diff)
		}
	})
}

// profilesLoc formats a location id for a query string.
func profilesLoc(id int64) string { return strconv.FormatInt(id, 10) }
