package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

func root() []map[string]any { return []map[string]any{{"type": "locallocationid", "id": 0}} }

func newUserBody(login, role string, extra map[string]any) map[string]any {
	u := map[string]any{"loginId": login, "role": role, "userType": "LOCAL", "allowedLocations": root(),
		"firstName": "Ada", "lastName": "Lovelace", "email": login + "@example.net", "timeZone": "Asia/Kolkata"}
	for k, v := range extra {
		u[k] = v
	}
	return map[string]any{"user": u, "password": "s3cret-pass"}
}

func listUsers(t *testing.T, c *apitest.Client) map[string]wnms.User {
	t.Helper()
	var us []wnms.User
	c.Expect(200, "GET", "/V5/users", nil).Decode(t, &us)
	out := map[string]wnms.User{}
	for _, u := range us {
		out[u.LoginID] = u
	}
	return out
}

func TestUserCreateReadModifyDelete(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		e.Admin.Expect(200, "PUT", "/V5/users/customfields", map[string]string{"name": "Department"})
		var created wnms.User
		e.Admin.Expect(200, "PUT", "/V5/users", newUserBody("ada", "OPERATOR", map[string]any{
			"fontPref": "MULTILINGUAL", "logoutInterval": 30, "timezonOffSetInMins": 330,
			"userDefinedFields": []map[string]any{{"name": "department", "value": "NOC"}},
			"passwdSettings":    map[string]any{"passwordExpires": false, "passwordExpiryWarningDays": 5},
		})).Decode(t, &created)
		want := wnms.User{UserID: created.UserID, CustomerID: 1, LoginID: "ada", FirstName: "Ada", LastName: "Lovelace",
			Email: "ada@example.net", Role: wnms.Operator, TimeZone: "Asia/Kolkata", TimeZoneOffsetInMins: 330,
			FontPref: "MULTILINGUAL", PasswdSettings: wnms.PasswdSettings{PasswordExpiryWarningDays: 5}, LogoutInterval: 30,
			AllowedLocations: []wnms.LocationID{wnms.LocalID(0)}, UserLockedState: wnms.NotLocked, UserType: wnms.UserTypeLocal,
			AllowAccessMgmt: true, AllowSecurityMgmt: true, UserLanguage: wnms.English,
			UserDefinedFields: []wnms.UserDefinedField{{ID: 1, Name: "Department", Value: "NOC"}}}
		ignore := cmp.FilterPath(func(p cmp.Path) bool {
			s := p.String()
			return s == "PasswordSetAt" || s == "UserDefinedFields.ID"
		}, cmp.Ignore())
		if diff := cmp.Diff(want, created, ignore); diff != "" {
			t.Errorf("created user (-want +got):\n%s", diff)
		}
		// Both offset spellings are in the output.
		var raw map[string]any
		e.Admin.Expect(200, "GET", "/V5/users", nil)
		r := e.Admin.Expect(200, "PUT", "/V5/users", newUserBody("grace", "VIEWER", nil))
		r.Decode(t, &raw)
		if raw["timeZonOffSetInMins"] != float64(330) || raw["timezonOffSetInMins"] != float64(330) {
			t.Errorf("offset fields: %v %v", raw["timeZonOffSetInMins"], raw["timezonOffSetInMins"])
		}
		if got := listUsers(t, e.Admin); len(got) != 3 || got["ada"].UserID != created.UserID {
			t.Fatalf("list: %v", got)
		}

		// Modify: only the fields sent change; the user logs in with the new password.
		var mod wnms.User
		e.Admin.Expect(200, "POST", "/V5/users", map[string]any{
			"user": map[string]any{"userId": created.UserID, "firstName": "Augusta", "role": "VIEWER"}, "password": "another-pass"}).Decode(t, &mod)
		if mod.FirstName != "Augusta" || mod.Role != wnms.Viewer || mod.LastName != "Lovelace" || mod.Email != "ada@example.net" {
			t.Errorf("modified: %+v", mod)
		}
		e.NewClient().Expect(200, "POST", "/login/c/600", map[string]string{"type": "usernamepasswordcredentials", "username": "ada", "password": "another-pass"})
		// By loginId too.
		e.Admin.Expect(200, "POST", "/V5/users", map[string]any{"user": map[string]any{"loginId": "ADA", "lastName": "King"}})

		e.Admin.Expect(204, "DELETE", fmt.Sprintf("/V5/users/%d", created.UserID), nil)
		e.Admin.Expect(404, "DELETE", fmt.Sprintf("/V5/users/%d", created.UserID), nil)
		if _, ok := listUsers(t, e.Admin)["ada"]; ok {
			t.Error("deleted user still listed")
		}
	})
}

func TestUserValidation(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		e.Admin.Expect(200, "PUT", "/V5/users", newUserBody("taken", "VIEWER", nil))
		floor := e.NewLocation(t, 0, wnms.FloorLocation, "F", 1)
		_ = floor
		cases := []struct {
			name   string
			body   any
			status int
			code   string
		}{
			{"no user", map[string]any{"password": "s3cret-pass"}, 400, wnms.ValidationFailed},
			{"no loginId", newUserBody("", "VIEWER", nil), 400, wnms.ValidationFailed},
			{"loginId with space", newUserBody("a b", "VIEWER", nil), 400, wnms.ValidationFailed},
			{"loginId too long", newUserBody(strings.Repeat("x", 65), "VIEWER", nil), 400, wnms.ValidationFailed},
			{"loginId taken (any case)", newUserBody("TAKEN", "VIEWER", nil), 409, wnms.DuplicateEntity},
			{"unknown role", newUserBody("r1", "KING", nil), 400, wnms.ValidationFailed},
			{"role wrong type", newUserBody("r2", "VIEWER", map[string]any{"role": 3}), 400, wnms.InvalidRequestBody},
			{"unknown userType", newUserBody("r3", "VIEWER", map[string]any{"userType": "SAML"}), 400, wnms.ValidationFailed},
			{"bad email", newUserBody("r4", "VIEWER", map[string]any{"email": "not-an-email"}), 400, wnms.ValidationFailed},
			{"bad time zone", newUserBody("r5", "VIEWER", map[string]any{"timeZone": "Mars/Olympus"}), 400, wnms.ValidationFailed},
			{"bad fontPref", newUserBody("r6", "VIEWER", map[string]any{"fontPref": "KLINGON"}), 400, wnms.ValidationFailed},
			{"bad langId", newUserBody("r7", "VIEWER", map[string]any{"langId": 3}), 400, wnms.ValidationFailed},
			{"bad logoutInterval", newUserBody("r8", "VIEWER", map[string]any{"logoutInterval": 0}), 400, wnms.ValidationFailed},
			{"offset out of range", newUserBody("r9", "VIEWER", map[string]any{"timeZonOffSetInMins": 9999}), 400, wnms.ValidationFailed},
			{"expiry without date", newUserBody("r10", "VIEWER", map[string]any{"passwdSettings": map[string]any{"passwordExpires": true, "passwordExpiryDaysInterval": 30}}), 400, wnms.ValidationFailed},
			{"expiry without interval", newUserBody("r11", "VIEWER", map[string]any{"passwdSettings": map[string]any{"passwordExpires": true, "passwordExpiryDateTime": 1}}), 400, wnms.ValidationFailed},
			{"unknown location", newUserBody("r12", "VIEWER", map[string]any{"allowedLocations": []map[string]any{{"type": "locallocationid", "id": 999}}}), 400, wnms.ValidationFailed},
			{"remote location type", newUserBody("r13", "VIEWER", map[string]any{"allowedLocations": []map[string]any{{"type": "remotelocationid", "id": 0}}}), 400, wnms.ValidationFailed},
			{"unknown custom field", newUserBody("r14", "VIEWER", map[string]any{"userDefinedFields": []map[string]any{{"name": "Nope", "value": "x"}}}), 400, wnms.ValidationFailed},
			{"short password", map[string]any{"user": newUserBody("r15", "VIEWER", nil)["user"], "password": "short"}, 400, wnms.ValidationFailed},
			{"LOCAL without password", map[string]any{"user": newUserBody("r16", "VIEWER", nil)["user"]}, 400, wnms.ValidationFailed},
			{"control character in name", newUserBody("r18", "VIEWER", map[string]any{"firstName": "a\u0007b"}), 400, wnms.ValidationFailed},
			{"not JSON", "{\"user\":", 400, wnms.InvalidRequestBody},
			{"two values", `{"user":{}} {}`, 400, wnms.InvalidRequestBody},
			{"empty body", "", 400, wnms.InvalidRequestBody},
			{"text body", apitest.Raw{ContentType: "text/plain", Body: []byte("hi")}, 415, wnms.UnsupportedMediaType},
			{"too large", apitest.Raw{ContentType: "application/json", Body: []byte(`{"user":{"firstName":"` + strings.Repeat("a", 1<<20) + `"}}`)}, 413, wnms.PayloadTooLarge},
		}
		before := listUsers(t, e.Admin)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.Admin.Do("PUT", "/V5/users", tc.body)
				if r.Status != tc.status || r.ErrorCode() != tc.code {
					t.Fatalf("status %d %s, want %d %s; %s", r.Status, r.ErrorCode(), tc.status, tc.code, r.Body)
				}
			})
		}
		if after := listUsers(t, e.Admin); len(after) != len(before) {
			t.Errorf("rejected creates changed the users: %d before, %d after", len(before), len(after))
		}

		// Modify validation leaves the user as it was.
		var u wnms.User
		e.Admin.Expect(200, "PUT", "/V5/users", newUserBody("victim", "VIEWER", nil)).Decode(t, &u)
		for _, tc := range []struct {
			name   string
			user   map[string]any
			status int
			code   string
		}{
			{"no id", map[string]any{"firstName": "x"}, 400, wnms.ValidationFailed},
			{"unknown id", map[string]any{"userId": 99999, "firstName": "x"}, 404, wnms.ResourceNotFound},
			{"change userType", map[string]any{"userId": u.UserID, "userType": "API"}, 400, wnms.ValidationFailed},
			{"bad lock state", map[string]any{"userId": u.UserID, "userLockedState": "USER_LOCKED_CUSTOMER"}, 400, wnms.ValidationFailed},
			{"bad email", map[string]any{"userId": u.UserID, "email": "nope", "firstName": "changed"}, 400, wnms.ValidationFailed},
			{"rename onto taken", map[string]any{"userId": u.UserID, "loginId": "taken"}, 409, wnms.DuplicateEntity},
		} {
			t.Run("modify "+tc.name, func(t *testing.T) {
				r := e.Admin.Do("POST", "/V5/users", map[string]any{"user": tc.user})
				if r.Status != tc.status || r.ErrorCode() != tc.code {
					t.Fatalf("status %d %s, want %d %s; %s", r.Status, r.ErrorCode(), tc.status, tc.code, r.Body)
				}
			})
		}
		if got := listUsers(t, e.Admin)["victim"]; got.FirstName != "Ada" || got.Email != "victim@example.net" {
			t.Errorf("rejected modifies changed the user: %+v", got)
		}
		// Deleting oneself is a conflict; a bad id is a parameter error.
		if r := e.Admin.Expect(409, "DELETE", fmt.Sprintf("/V5/users/%d", e.Admin.User.UserID), nil); r.ErrorCode() != wnms.Conflict {
			t.Errorf("delete self: %s", r.ErrorCode())
		}
		if r := e.Admin.Expect(400, "DELETE", "/V5/users/abc", nil); r.ErrorCode() != wnms.InvalidParameter {
			t.Errorf("delete abc: %s", r.ErrorCode())
		}
	})
}

// A user may create, modify or delete only users whose role is not above
// its own, and grant only locations inside its own.
func TestUserEscalationRules(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		other := e.NewLocation(t, 0, wnms.FolderLocation, "Other", 1)
		_, op := e.NewUser(t, apitest.UserSpec{Role: wnms.Operator, Locations: []int64{site.ID.ID}})
		siteLocs := []map[string]any{{"type": "locallocationid", "id": site.ID.ID}}
		otherLocs := []map[string]any{{"type": "locallocationid", "id": other.ID.ID}}

		// An operator creates viewers and operators in its site…
		op.Expect(200, "PUT", "/V5/users", newUserBody("v1", "VIEWER", map[string]any{"allowedLocations": siteLocs}))
		op.Expect(200, "PUT", "/V5/users", newUserBody("o1", "OPERATOR", map[string]any{"allowedLocations": siteLocs}))
		// …defaulting to its own locations…
		var d wnms.User
		op.Expect(200, "PUT", "/V5/users", map[string]any{"user": map[string]any{"loginId": "v2", "role": "VIEWER"}, "password": "s3cret-pass"}).Decode(t, &d)
		if len(d.AllowedLocations) != 1 || d.AllowedLocations[0].ID != site.ID.ID {
			t.Errorf("default locations: %+v", d.AllowedLocations)
		}
		// …but no administrator, no location outside its own.
		if r := op.Expect(403, "PUT", "/V5/users", newUserBody("a1", "ADMINISTRATOR", map[string]any{"allowedLocations": siteLocs})); r.ErrorCode() != wnms.AccessDenied {
			t.Errorf("operator creating admin: %s", r.ErrorCode())
		}
		if r := op.Expect(403, "PUT", "/V5/users", newUserBody("v3", "VIEWER", map[string]any{"allowedLocations": otherLocs})); r.ErrorCode() != wnms.LocationAccessDenied {
			t.Errorf("operator granting other site: %s", r.ErrorCode())
		}
		if r := op.Expect(403, "PUT", "/V5/users", newUserBody("v4", "VIEWER", map[string]any{"allowedLocations": root()})); r.ErrorCode() != wnms.LocationAccessDenied {
			t.Errorf("operator granting root: %s", r.ErrorCode())
		}
		admin := listUsers(t, e.Admin)["admin"]
		// It may not promote itself or others above its role…
		if r := op.Expect(403, "POST", "/V5/users", map[string]any{"user": map[string]any{"userId": op.User.UserID, "role": "SUPERUSER"}}); r.ErrorCode() != wnms.AccessDenied {
			t.Errorf("self-promotion: %s", r.ErrorCode())
		}
		// …touch a user above it, or unlock anyone.
		if r := op.Do("DELETE", fmt.Sprintf("/V5/users/%d", admin.UserID), nil); r.Status != 403 {
			t.Errorf("operator deleting the superuser: %d", r.Status)
		}
		v1 := listUsers(t, op)["v1"]
		if r := op.Expect(403, "POST", "/V5/users", map[string]any{"user": map[string]any{"userId": v1.UserID, "userLockedState": "USER_LOCKED"}}); r.ErrorCode() != wnms.AccessDenied {
			t.Errorf("operator locking: %s", r.ErrorCode())
		}
		// The operator's list holds only users within its locations.
		seen := listUsers(t, op)
		if _, ok := seen["admin"]; ok {
			t.Error("operator scoped to a site sees the root superuser")
		}
		if _, ok := seen["v1"]; !ok {
			t.Error("operator does not see its own viewer")
		}
		op.Expect(204, "DELETE", fmt.Sprintf("/V5/users/%d", v1.UserID), nil)
	})
}

// Cloud customers see and touch only their own users; another customer's
// user is answered as not found.
func TestUserCustomerIsolation(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		_, c2 := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2, Login: "boss2"})
		var victim wnms.User
		e.Admin.Expect(200, "PUT", "/V5/users", newUserBody("c1user", "VIEWER", nil)).Decode(t, &victim)
		got := listUsers(t, c2)
		if len(got) != 1 || got["boss2"].CustomerID != 2 {
			t.Fatalf("customer 2 sees %v", got)
		}
		if r := c2.Expect(404, "DELETE", fmt.Sprintf("/V5/users/%d", victim.UserID), nil); r.ErrorCode() != wnms.ResourceNotFound {
			t.Errorf("cross-customer delete: %s", r.ErrorCode())
		}
		c2.Expect(404, "POST", "/V5/users", map[string]any{"user": map[string]any{"userId": victim.UserID, "firstName": "pwned"}})
		c2.Expect(404, "POST", "/V5/users", map[string]any{"user": map[string]any{"loginId": "c1user", "firstName": "pwned"}})
		// A new user of customer 2 belongs to customer 2 whatever the body says.
		var nu wnms.User
		c2.Expect(200, "PUT", "/V5/users", newUserBody("c2user", "VIEWER", map[string]any{"customerId": 1})).Decode(t, &nu)
		if nu.CustomerID != 2 {
			t.Errorf("customerId %d, want 2", nu.CustomerID)
		}
		if got := listUsers(t, e.Admin)["c1user"]; got.FirstName != "Ada" {
			t.Errorf("customer 1 user changed: %+v", got)
		}
		// Custom fields are per customer too.
		e.Admin.Expect(200, "PUT", "/V5/users/customfields", map[string]string{"name": "Dept"})
		var fs []wnms.CustomField
		c2.Expect(200, "GET", "/V5/users/customfields", nil).Decode(t, &fs)
		if len(fs) != 0 {
			t.Errorf("customer 2 sees customer 1 fields: %v", fs)
		}
	})
}

func TestFeaturesByRole(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		for _, role := range allRoles {
			_, c := e.NewUser(t, apitest.UserSpec{Role: role})
			var fs []string
			c.Expect(200, "GET", "/V5/users/features", nil).Decode(t, &fs)
			has := map[string]bool{}
			for _, f := range fs {
				has[f] = true
			}
			for _, f := range []string{"REPORTS_CREATION", "SENSOR_PLACEMENT", "AP_PLACEMENT", "SENSOR_IMPORT", "MANAGELOGS"} {
				if has[f] == (role == wnms.Viewer) {
					t.Errorf("%s: feature %s present=%v", role, f, has[f])
				}
			}
			if !has["WIFI"] || !has["HA"] {
				t.Errorf("%s lacks WIFI or HA: %v", role, fs)
			}
		}
	})
}

func TestCustomFields(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		e.Admin.Expect(200, "PUT", "/V5/users/customfields", map[string]string{"name": "Cost centre"})
		if r := e.Admin.Expect(409, "PUT", "/V5/users/customfields", map[string]string{"name": "COST CENTRE"}); r.ErrorCode() != wnms.DuplicateEntity {
			t.Errorf("duplicate: %s", r.ErrorCode())
		}
		e.Admin.Expect(400, "PUT", "/V5/users/customfields", map[string]string{"name": " "})
		var fs []wnms.CustomField
		e.Admin.Expect(200, "GET", "/V5/users/customfields", nil).Decode(t, &fs)
		if diff := cmp.Diff([]wnms.CustomField{{ID: fs[0].ID, Name: "Cost centre"}}, fs); diff != "" {
			t.Errorf("fields (-want +got):\n%s", diff)
		}
	})
}

// Secrets never leave through a response other than the one that issues
// them, and never reach the log.
func TestNoSecretsInResponsesOrLogs(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		const pw = "Very-Secret-Password-42"
		var u wnms.User
		e.Admin.Expect(200, "PUT", "/V5/users", map[string]any{"user": newUserBody("sec", "OPERATOR", nil)["user"], "password": pw}).Decode(t, &u)
		var api wnms.User
		e.Admin.Expect(200, "PUT", "/V5/users", map[string]any{"user": map[string]any{"loginId": "robot", "role": "VIEWER", "userType": "API"}}).Decode(t, &api)
		var key struct{ KeyID, KeyValue string }
		e.Admin.Expect(200, "PUT", "/V5/apikeys", map[string]any{"userId": api.UserID}).Decode(t, &key)
		c := e.NewClient()
		c.Expect(200, "POST", "/login/c/600", map[string]string{"type": "usernamepasswordcredentials", "username": "sec", "password": pw})
		token := c.Session()
		// Failures that carry secrets in their requests.
		e.NewClient().Do("POST", "/login/c/600", map[string]string{"type": "usernamepasswordcredentials", "username": "sec", "password": pw + "x"})
		e.NewClient().Do("POST", "/login/key/c/600", keyBody(key.KeyID, key.KeyValue+"x"))
		c.Do("POST", "/V5/users/ownpassword", map[string]string{"oldPassword": pw, "newPassword": "x"})
		bodies := []*apitest.Response{
			e.Admin.Expect(200, "GET", "/V5/users", nil),
			e.Admin.Expect(200, "GET", "/V5/apikeys", nil),
			c.Expect(200, "GET", "/V5/users/current", nil),
			e.Admin.Expect(200, "POST", "/V5/users", map[string]any{"user": map[string]any{"userId": u.UserID, "lastName": "x"}}),
		}
		e.Admin.Expect(200, "GET", "/V7/system/info", nil)
		for _, r := range bodies {
			for _, s := range []string{pw, key.KeyValue, token, e.AdminKeyValue} {
				if strings.Contains(string(r.Body), s) {
					t.Errorf("a response body holds a secret: %s", r.Body)
				}
			}
		}
		logs := e.Logs.String()
		for _, s := range []string{pw, key.KeyValue, token, e.AdminKeyValue, "argon2id"} {
			if strings.Contains(logs, s) {
				t.Errorf("the log holds a secret (%q…)", s[:4])
			}
		}
		// The store keeps no plain secret either.
		hash, err := e.Store.PasswordHash(t.Context(), u.UserID)
		if err != nil || !strings.HasPrefix(hash, "$argon2id$") || strings.Contains(hash, pw) {
			t.Errorf("stored password: %q %v", hash, err)
		}
		k, err := e.Store.APIKey(t.Context(), key.KeyID)
		if err != nil || len(k.Hash) != 32 || strings.Contains(string(k.Hash), key.KeyValue) {
			t.Errorf("stored key hash: %v", err)
		}
		b2, _ := json.Marshal(k)
		if strings.Contains(string(b2), "hash") {
			t.Errorf("key JSON shows its hash: %s", b2)
		}
	})
}

var _ = http.StatusOK

// A deleted user's id is never given to another user, even when it was the
// highest: records that name a user id (the audit log, a webhook's data)
// never come to name someone else. Before, SQLite gave the next user the
// id of the last one deleted.
func TestDeletedUserIDsAreNotReused(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		create := func(login string) int64 {
			var u wnms.User
			e.Admin.Expect(http.StatusOK, "PUT", "/V5/users", map[string]any{"user": map[string]any{
				"loginId": login, "role": "VIEWER", "userType": "API",
				"allowedLocations": []any{map[string]any{"type": "locallocationid", "id": 0}}}}).Decode(t, &u)
			return u.UserID
		}
		seen := map[int64]string{}
		last := int64(0)
		for i := range 3 {
			login := fmt.Sprintf("short-lived-%d", i)
			id := create(login)
			if was, ok := seen[id]; ok || id <= last {
				t.Fatalf("%s got id %d, after %d (held by %q)", login, id, last, was)
			}
			seen[id], last = login, id
			e.Admin.Expect(http.StatusNoContent, "DELETE", fmt.Sprintf("/V5/users/%d", id), nil)
		}
	})
}
