package api_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/datasource"
	"github.com/wnms/wnms/internal/wnms"
)

// auditChangeWant is a change a record must list: before and after as
// JSON ("null" for none).
type auditChangeWant struct{ field, before, after string }

// Every kind of resource changed through either listener has records that
// name it (resourceName) and list its field-level changes, creations with
// before null and deletions with after null; secrets show as "***" on both
// sides, and no secret value is anywhere in the stored audit table.
func TestAuditLogChanges(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		e.API.Webhooks.Targets.AllowPrivate = true
		e.API.CheckDataSources = (&datasource.Bridge{Store: e.Store}).Check
		secrets := []string{"Audit-User-Pw-1", "Audit-User-Pw-2", "Audit-Own-Pw-3", "audit-passphrase-1", "audit-passphrase-2",
			"audit-webhook-secret-0001", "audit-webhook-secret-0002", "s3cret-comm", "agent-auth-pw", "agent-priv-pw",
			"trap-auth-1", "trap-priv-1", "trap-auth-2"}
		secrets = append(secrets, dataSourceSecrets...)

		type step struct {
			name    string
			do      func(t *testing.T) *apitest.Response
			typ     string
			resName string
			changes []auditChangeWant
			absent  []string // fields a change must not list
			none    bool     // the call committed no change: changes is []
		}
		var (
			userID, locID, floorID, profileID, hookID int64
			keyID, mac                                string
		)
		do := func(c *apitest.Client, want int, method, path string, body any) func(t *testing.T) *apitest.Response {
			return func(t *testing.T) *apitest.Response { return c.WithT(t).Expect(want, method, path, body) }
		}
		_, apiUser := e.NewUser(t, apitest.UserSpec{Login: "robot", Role: wnms.Viewer})
		_ = apiUser
		robot, _, err := e.Store.UserByLogin(context.Background(), "robot")
		if err != nil {
			t.Fatal(err)
		}
		steps := []step{
			{name: "create user", typ: "users", resName: "auditee",
				do: func(t *testing.T) *apitest.Response {
					body := newUserBody("auditee", "VIEWER", nil)
					body["password"] = "Audit-User-Pw-1"
					r := e.Admin.WithT(t).Expect(200, "PUT", "/V5/users", body)
					var u wnms.User
					r.Decode(t, &u)
					userID = u.UserID
					return r
				},
				changes: []auditChangeWant{{"loginId", "null", `"auditee"`}, {"password", "null", `"***"`}, {"role", "null", `"VIEWER"`}}},
			{name: "modify user", typ: "users", resName: "auditee",
				do: func(t *testing.T) *apitest.Response {
					return e.Admin.WithT(t).Expect(200, "POST", "/V5/users", map[string]any{
						"user": map[string]any{"userId": userID, "firstName": "Grace"}, "password": "Audit-User-Pw-2"})
				},
				changes: []auditChangeWant{{"firstName", `"Ada"`, `"Grace"`}, {"password", `"***"`, `"***"`}},
				absent:  []string{"lastName", "loginId", "email"}},
			{name: "own password", typ: "users", resName: "auditee",
				do: func(t *testing.T) *apitest.Response {
					c := e.NewClient().WithT(t)
					c.Expect(200, "POST", "/login/c/600", passwordBody("auditee", "Audit-User-Pw-2"))
					return c.Expect(200, "POST", "/V5/users/ownpassword", map[string]string{"oldPassword": "Audit-User-Pw-2", "newPassword": "Audit-Own-Pw-3"})
				},
				changes: []auditChangeWant{{"password", `"***"`, `"***"`}}},
			{name: "custom field", typ: "users", resName: "Badge", do: do(e.Admin, 200, "PUT", "/V5/users/customfields", map[string]string{"name": "Badge"}),
				changes: []auditChangeWant{{"name", "null", `"Badge"`}}},
			{name: "create location", typ: "locations", resName: "Audit HQ",
				do: func(t *testing.T) *apitest.Response {
					r := e.Admin.WithT(t).Expect(200, "PUT", "/V2/locations", map[string]any{
						"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
						"location":       map[string]any{"type": "folderlocation", "name": "Audit HQ", "timezoneId": "Europe/Berlin"}})
					var l wnms.Location
					r.Decode(t, &l)
					locID = l.ID.ID
					return r
				},
				changes: []auditChangeWant{{"name", "null", `"Audit HQ"`}, {"timezoneId", "null", `"Europe/Berlin"`}, {"parentId", "null", "0"}}},
			{name: "rename location", typ: "locations", resName: "Audit Head Office",
				do: func(t *testing.T) *apitest.Response {
					return e.Admin.WithT(t).Expect(200, "POST", "/V2/locations", map[string]any{
						"id": map[string]any{"type": "locallocationid", "id": locID}, "name": "Audit Head Office"})
				},
				changes: []auditChangeWant{{"name", `"Audit HQ"`, `"Audit Head Office"`}}, absent: []string{"timezoneId", "parentId"}},
			{name: "create floor", typ: "locations", resName: "Audit Floor",
				do: func(t *testing.T) *apitest.Response {
					r := e.Admin.WithT(t).Expect(200, "PUT", "/V2/locations", map[string]any{
						"parentLocation": map[string]any{"type": "locallocationid", "id": locID},
						"location":       map[string]any{"type": "floorlocation", "name": "Audit Floor", "timezoneId": "Europe/Berlin"}})
					var l wnms.Location
					r.Decode(t, &l)
					floorID = l.ID.ID
					return r
				},
				changes: []auditChangeWant{{"type", "null", `"floorlocation"`}}},
			{name: "layout", typ: "layouts", resName: "Audit Floor",
				do: func(t *testing.T) *apitest.Response {
					return e.Admin.WithT(t).Expect(204, "POST", layoutsPath("", floorID), layoutsBody(floorID))
				},
				changes: []auditChangeWant{{"layout.length", "null", "120"}, {"layout.unit", "null", `"FEET"`}}},
			{name: "layout image", typ: "layouts", resName: "Audit Floor",
				do: func(t *testing.T) *apitest.Response {
					return e.Admin.WithT(t).Expect(200, "POST", layoutsPath("/image", floorID), layoutsFile(t, "a.png", layoutsPNG(t, 4, 4)))
				},
				changes: []auditChangeWant{{"image.contentType", "null", `"image/png"`}}},
			{name: "create profile", typ: "templates", resName: "audit-profile",
				do: func(t *testing.T) *apitest.Response {
					r := e.Admin.WithT(t).Expect(200, "PUT", "/V5/templates?locationid=0", profilesBody("audit-profile", profilesSet("passphrase", "audit-passphrase-1")))
					var p wnms.Template
					r.Decode(t, &p)
					profileID = p.TemplateID
					return r
				},
				changes: []auditChangeWant{{"templateName", "null", `"audit-profile"`}, {"passphrase", "null", `"***"`}, {"ssid", "null", `"Corp WiFi"`}}},
			{name: "refused profile", typ: "templates", resName: "audit-profile", none: true,
				do: do(e.Admin, 409, "PUT", "/V5/templates?locationid=0", profilesBody("audit-profile"))},
			{name: "edit profile", typ: "templates", resName: "audit-profile",
				do: func(t *testing.T) *apitest.Response {
					return e.Admin.WithT(t).Expect(200, "POST", "/V5/templates", profilesBody("audit-profile",
						profilesSet("templateId", profileID), profilesSet("createdAtLocationId", map[string]any{"type": "locallocationid", "id": 0}),
						profilesSet("description", "new lobby test"), profilesSet("passphrase", "audit-passphrase-2")))
				},
				changes: []auditChangeWant{{"description", `"lobby test"`, `"new lobby test"`}, {"passphrase", `"***"`, `"***"`}},
				absent:  []string{"ssid", "templateName"}},
			{name: "delete profile", typ: "templates", resName: "audit-profile",
				do: func(t *testing.T) *apitest.Response {
					return e.Admin.WithT(t).Expect(204, "DELETE", fmt.Sprintf("/V5/templates/%d/CL_CONN_TEST_PROFILE", profileID), nil)
				},
				changes: []auditChangeWant{{"templateName", `"audit-profile"`, "null"}, {"passphrase", `"***"`, "null"}}},
			{name: "SNMP policy", typ: "configuration/snmp", resName: "SNMP policy", do: do(e.Admin, 200, "PUT", policiesSNMPPath, policiesFullSNMP()),
				changes: []auditChangeWant{{"snmpIntegrationEnabled", "false", "true"},
					{"snmpSettings.versionOneTwoSettings.communityString", `"***"`, `"***"`},
					{"snmpSettings.versionThreeSettings.authenticationPassword", `"***"`, `"***"`},
					{"snmpServerlist", "[]", "null"}, {"snmpServerlist[0].authenticationPassword", "null", `"***"`}}},
			{name: "hotspot policy", typ: "configuration/hotspotssid", resName: "hotspot SSID policy",
				do:      do(e.Admin, 200, "PUT", policiesHotspotPath, map[string]any{"policyType": wnms.HotspotSSIDPolicyType, "ssids": []string{"guest-a"}}),
				changes: []auditChangeWant{{"ssids", "[]", `["guest-a"]`}}},
			{name: "create webhook", typ: "webhooks", resName: "127.0.0.1:9",
				do: func(t *testing.T) *apitest.Response {
					r := e.Admin.WithT(t).Expect(200, "PUT", "/V5/webhooks", map[string]any{"url": "http://127.0.0.1:9/hook", "secret": "audit-webhook-secret-0001"})
					var h wnms.Webhook
					r.Decode(t, &h)
					hookID = h.ID
					return r
				},
				changes: []auditChangeWant{{"url", "null", `"http://127.0.0.1:9/hook"`}, {"secret", "null", `"***"`}}},
			{name: "modify webhook", typ: "webhooks", resName: "127.0.0.1:9",
				do: func(t *testing.T) *apitest.Response {
					return e.Admin.WithT(t).Expect(200, "POST", fmt.Sprintf("/V5/webhooks/%d", hookID), map[string]any{"secret": "audit-webhook-secret-0002", "enabled": false})
				},
				changes: []auditChangeWant{{"secret", `"***"`, `"***"`}, {"enabled", "true", "false"}}, absent: []string{"url"}},
			{name: "delete webhook", typ: "webhooks", resName: "127.0.0.1:9",
				do: func(t *testing.T) *apitest.Response {
					return e.Admin.WithT(t).Expect(204, "DELETE", fmt.Sprintf("/V5/webhooks/%d", hookID), nil)
				},
				changes: []auditChangeWant{{"url", `"http://127.0.0.1:9/hook"`, "null"}, {"secret", `"***"`, "null"}}},
			{name: "data sources", typ: "datasources", resName: "data sources",
				do: func(t *testing.T) *apitest.Response {
					return e.Admin.WithT(t).Expect(200, "PUT", dataSourcesPath, dataSourcesBody(floorID))
				},
				changes: []auditChangeWant{{"sources[floor 1 APs].radiusSecret", "null", `"***"`}, {"sources[floor 1 APs].cidr", "null", `"10.1.0.0/16"`},
					{"radius.upstreams[0].secret", "null", `"***"`}}},
			{name: "create key", typ: "apikeys",
				do: func(t *testing.T) *apitest.Response {
					r := e.Admin.WithT(t).Expect(200, "PUT", "/V5/apikeys", map[string]int64{"userId": robot.UserID})
					var k struct{ KeyID, KeyValue string }
					r.Decode(t, &k)
					keyID = k.KeyID
					secrets = append(secrets, k.KeyValue)
					return r
				},
				changes: []auditChangeWant{{"loginId", "null", `"robot"`}}},
			{name: "revoke key", typ: "apikeys",
				do: func(t *testing.T) *apitest.Response {
					return e.Admin.WithT(t).Expect(204, "DELETE", "/V5/apikeys/"+keyID, nil)
				},
				changes: []auditChangeWant{{"loginId", `"robot"`, "null"}}},
			{name: "zones", typ: "analytics", resName: "Audit Floor",
				do: func(t *testing.T) *apitest.Response {
					return e.Admin.AnalyticsClient().WithT(t).Expect(200, "PUT", fmt.Sprintf("/api/v1.14/analytics/graphs/locationtracking/zones/ap/config?server_id=1&location_id=%d&node_type=location", floorID), map[string]any{
						"server_id": 1, "location_id": floorID, "node_type": "location", "config": map[string]any{"range": map[string]any{"footfall": map[string]any{"min": 2, "max": 9}}}})
				},
				changes: []auditChangeWant{{"footfall.min", "null", "2"}, {"footfall.max", "null", "9"}}},
			{name: "AP heartbeat", typ: "ingest/aps", resName: "ap-audit (00:11:74:AA:BB:CC)",
				do: func(t *testing.T) *apitest.Response {
					mac = "00:11:74:aa:bb:cc"
					return e.Admin.WithT(t).Expect(200, "POST", "/V5/ingest/aps", json.RawMessage(fmt.Sprintf(
						`[{"macaddress":%q,"name":"ap-audit","locationId":{"type":"locallocationid","id":%d}}]`, mac, floorID)))
				},
				changes: []auditChangeWant{{"00:11:74:AA:BB:CC.name", "null", `"ap-audit"`}}},
			{name: "AP heartbeat, nothing changed", typ: "ingest/aps", resName: "ap-audit (00:11:74:AA:BB:CC)", none: true,
				do: func(t *testing.T) *apitest.Response {
					return e.Admin.WithT(t).Expect(200, "POST", "/V5/ingest/aps", json.RawMessage(fmt.Sprintf(
						`[{"macaddress":%q,"name":"ap-audit","locationId":{"type":"locallocationid","id":%d}}]`, mac, floorID)))
				}},
			{name: "delete user", typ: "users", resName: "auditee",
				do: func(t *testing.T) *apitest.Response {
					return e.Admin.WithT(t).Expect(204, "DELETE", fmt.Sprintf("/V5/users/%d", userID), nil)
				},
				changes: []auditChangeWant{{"loginId", `"auditee"`, "null"}, {"firstName", `"Grace"`, "null"}}},
		}
		var recs []struct {
			step
			r *apitest.Response
		}
		for _, s := range steps {
			r := s.do(t)
			recs = append(recs, struct {
				step
				r *apitest.Response
			}{s, r})
		}
		admin := e.LoginKey(t, e.AdminKeyID, e.AdminKeyValue)
		all := readAudit(t, admin, "?limit=1000")
		for _, s := range recs {
			t.Run(s.name, func(t *testing.T) {
				var rec *wnms.AuditRecord
				for _, c := range findAudit(all, s.r) {
					if c.ResourceType == s.typ {
						rec = &c
					}
				}
				if rec == nil {
					t.Fatalf("no %s record among %+v", s.typ, findAudit(all, s.r))
				}
				wantName := s.resName
				switch s.name {
				case "create key", "revoke key":
					wantName = "robot key " + keyID
				}
				if rec.ResourceName != wantName {
					t.Errorf("resourceName %q, want %q", rec.ResourceName, wantName)
				}
				if s.none {
					if rec.Changes == nil || len(rec.Changes) != 0 {
						t.Errorf("changes %s, want []", changesText(rec.Changes))
					}
					return
				}
				got := map[string]wnms.AuditChange{}
				for _, c := range rec.Changes {
					got[c.Field] = c
				}
				if s.name == "create profile" { // its id, known only once it ran, is filled in its transaction
					if c := got["templateId"]; !jsonEqual(c.Before, "null") || !jsonEqual(c.After, strconv.FormatInt(profileID, 10)) {
						t.Errorf("templateId: %s -> %s, want null -> %d", c.Before, c.After, profileID)
					}
				}
				for _, w := range s.changes {
					c, ok := got[w.field]
					if !ok {
						t.Errorf("no change of %s in %s", w.field, changesText(rec.Changes))
						continue
					}
					if !jsonEqual(c.Before, w.before) || !jsonEqual(c.After, w.after) {
						t.Errorf("%s: %s -> %s, want %s -> %s", w.field, c.Before, c.After, w.before, w.after)
					}
				}
				for _, f := range s.absent {
					if c, ok := got[f]; ok {
						t.Errorf("%s did not change but is listed: %s -> %s", f, c.Before, c.After)
					}
				}
			})
		}

		// The whole stored table, every column of every record, as read
		// from the database by another program.
		dump := dumpTable(t, e.DB(), "audit_log")
		for _, s := range secrets {
			if strings.Contains(dump, s) {
				t.Errorf("the audit table holds the secret %q", s)
			}
		}
	})
}

// dumpTable returns every value of every row of table in db as text,
// one row a line.
func dumpTable(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT * FROM `+table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	vals := make([]sql.NullString, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			b.WriteString(v.String)
			b.WriteByte('\t')
		}
		b.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func jsonEqual(got json.RawMessage, want string) bool {
	if len(got) == 0 {
		got = json.RawMessage("null")
	}
	var a, b bytes.Buffer
	if json.Compact(&a, got) != nil || json.Compact(&b, []byte(want)) != nil {
		return false
	}
	var x, y any
	json.Unmarshal(a.Bytes(), &x)
	json.Unmarshal(b.Bytes(), &y)
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func changesText(cs []wnms.AuditChange) string {
	b, _ := json.Marshal(cs)
	return string(b)
}

var _ = http.StatusOK
