package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/wnms"
)

// TestAuthzFoundation is the authorization matrix of every call of the
// foundation that needs a session.
func TestAuthzFoundation(t *testing.T) {
	none := func(method, path string) func(*testing.T, *authzFixture, authzTarget) (string, string, any) {
		return func(*testing.T, *authzFixture, authzTarget) (string, string, any) { return method, path, nil }
	}
	// siteUser makes a LOCAL viewer allowed at the target's folder.
	siteUser := func(t *testing.T, f *authzFixture, tg authzTarget) *wnms.User {
		u, _ := f.E.NewUser(t, apitest.UserSpec{Role: wnms.Viewer, Type: wnms.UserTypeLocal, Locations: []int64{tg.Folder.ID.ID}})
		return u
	}
	siteKey := func(t *testing.T, f *authzFixture, tg authzTarget) (*wnms.User, *wnms.APIKey) {
		u, _ := f.E.NewUser(t, apitest.UserSpec{Role: wnms.Viewer, Type: wnms.UserTypeLocal, Locations: []int64{tg.Folder.ID.ID}})
		u.UserType = wnms.UserTypeAPI
		u2, _ := f.E.NewUser(t, apitest.UserSpec{Role: wnms.Viewer, Locations: []int64{tg.Folder.ID.ID}})
		k, _, err := f.E.Auth.NewKey(context.Background(), u2)
		if err != nil {
			t.Fatal(err)
		}
		return u2, k
	}
	locID := func(id int64) map[string]any { return map[string]any{"type": "locallocationid", "id": id} }
	cases := []authzCase{
		{name: "GET users", request: none("GET", "/V5/users"), allowed: allRoles, ok: 200, scoped: true,
			marker: func(t *testing.T, f *authzFixture) string {
				u, _ := f.E.NewUser(t, apitest.UserSpec{Role: wnms.Viewer, Login: "insite-" + strings.ToLower(auth.RandomToken(6)),
					Locations: []int64{f.Site.ID.ID}})
				return `"loginId":"` + u.LoginID + `"`
			}},
		{name: "GET users/customfields", request: none("GET", "/V5/users/customfields"), allowed: allRoles, ok: 200,
			marker: func(t *testing.T, f *authzFixture) string {
				name := "Field " + auth.RandomToken(6)
				if _, err := f.E.Store.CreateCustomField(context.Background(), 1, name); err != nil {
					t.Fatal(err)
				}
				return `"name":"` + name + `"`
			}},
		{name: "GET users/current", request: none("GET", "/V5/users/current"), allowed: allRoles, ok: 200},
		{name: "GET users/features", request: none("GET", "/V5/users/features"), allowed: allRoles, ok: 200},
		{name: "PUT users", allowed: opUp, ok: 200, location: true, foreign: 400, foreignCode: wnms.ValidationFailed,
			request: func(t *testing.T, f *authzFixture, tg authzTarget) (string, string, any) {
				return "PUT", "/V5/users", map[string]any{"user": map[string]any{"loginId": "n" + auth.RandomToken(6), "role": "VIEWER",
					"allowedLocations": []any{locID(tg.Folder.ID.ID)}}, "password": "s3cret-pass"}
			}},
		{name: "POST users", allowed: opUp, ok: 200, location: true, foreign: 404, foreignCode: wnms.ResourceNotFound,
			request: func(t *testing.T, f *authzFixture, tg authzTarget) (string, string, any) {
				u := siteUser(t, f, tg)
				return "POST", "/V5/users", map[string]any{"user": map[string]any{"userId": u.UserID, "firstName": "Changed"}}
			}},
		// Matrix callers are API users, which have no password: an admitted
		// role reaches the body check (400); the password flow itself is
		// tested in TestPasswordExpiryRestrictsSession.
		{name: "POST users/ownpassword", allowed: allRoles, ok: 400, request: func(*testing.T, *authzFixture, authzTarget) (string, string, any) {
			return "POST", "/V5/users/ownpassword", map[string]string{"oldPassword": "aaaaaaaa", "newPassword": "bbbbbbbb"}
		}},
		{name: "DELETE users", allowed: opUp, ok: 204, location: true, foreign: 404, foreignCode: wnms.ResourceNotFound,
			request: func(t *testing.T, f *authzFixture, tg authzTarget) (string, string, any) {
				return "DELETE", fmt.Sprintf("/V5/users/%d", siteUser(t, f, tg).UserID), nil
			}},
		{name: "POST logout", request: none("POST", "/logout"), allowed: allRoles, ok: 200},
		{name: "GET keepsessionalive", request: none("GET", "/V5/login/keepsessionalive"), allowed: allRoles, ok: 200},
		{name: "POST keepsessionalive", request: none("POST", "/V5/login/keepsessionalive"), allowed: allRoles, ok: 200},
		{name: "GET system/timestamp", request: none("GET", "/V5/system/timestamp"), allowed: allRoles, ok: 200},
		{name: "GET system/info", request: none("GET", "/V7/system/info"), allowed: adUp, ok: 200},
		{name: "GET locations/tree", request: none("GET", "/V2/locations/tree"), allowed: allRoles, ok: 200, scoped: true,
			marker: func(t *testing.T, f *authzFixture) string {
				l := f.E.NewLocation(t, f.Site.ID.ID, wnms.FloorLocation, "Marked "+auth.RandomToken(6), 1)
				return `"name":"` + l.Name + `"`
			}},
		{name: "PUT locations", allowed: adUp, ok: 200, location: true, foreign: 400, foreignCode: wnms.ValidationFailed,
			request: func(t *testing.T, f *authzFixture, tg authzTarget) (string, string, any) {
				return "PUT", "/V2/locations", map[string]any{"parentLocation": locID(tg.Folder.ID.ID),
					"location": map[string]any{"type": "floorlocation", "name": "F" + auth.RandomToken(6)}}
			}},
		{name: "POST locations", allowed: adUp, ok: 200, location: true, foreign: 404, foreignCode: wnms.ResourceNotFound,
			request: func(t *testing.T, f *authzFixture, tg authzTarget) (string, string, any) {
				l := f.E.NewLocation(t, tg.Folder.ID.ID, wnms.FloorLocation, "R"+auth.RandomToken(6), tg.Customer)
				return "POST", "/V2/locations", map[string]any{"id": locID(l.ID.ID), "name": "Renamed " + auth.RandomToken(6)}
			}},
		{name: "DELETE locations", allowed: adUp, ok: 204, location: true, foreign: 404, foreignCode: wnms.ResourceNotFound,
			request: func(t *testing.T, f *authzFixture, tg authzTarget) (string, string, any) {
				l := f.E.NewLocation(t, tg.Folder.ID.ID, wnms.FloorLocation, "D"+auth.RandomToken(6), tg.Customer)
				return "DELETE", fmt.Sprintf("/V2/locations/%d", l.ID.ID), nil
			}},
		{name: "GET apikeys", request: none("GET", "/V5/apikeys"), allowed: adUp, ok: 200, scoped: true,
			marker: func(t *testing.T, f *authzFixture) string {
				_, k := siteKey(t, f, authzTarget{Folder: f.Site, Customer: 1})
				return `"keyId":"` + k.KeyID + `"`
			}},
		{name: "PUT apikeys", allowed: adUp, ok: 200, location: true, foreign: 404, foreignCode: wnms.ResourceNotFound,
			request: func(t *testing.T, f *authzFixture, tg authzTarget) (string, string, any) {
				u, _ := siteKey(t, f, tg)
				return "PUT", "/V5/apikeys", map[string]any{"userId": u.UserID}
			}},
		{name: "DELETE apikeys", allowed: adUp, ok: 204, location: true, foreign: 404, foreignCode: wnms.ResourceNotFound,
			request: func(t *testing.T, f *authzFixture, tg authzTarget) (string, string, any) {
				_, k := siteKey(t, f, tg)
				return "DELETE", "/V5/apikeys/" + k.KeyID, nil
			}},
		{name: "PUT users/customfields", allowed: adUp, ok: 200,
			request: func(*testing.T, *authzFixture, authzTarget) (string, string, any) {
				return "PUT", "/V5/users/customfields", map[string]string{"name": "F" + auth.RandomToken(6)}
			}},
	}
	runAuthz(t, cases)
}

// API keys over HTTP: created for API users only, listed without values,
// revoked with their sessions.
func TestAPIKeys(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		var robot wnms.User
		e.Admin.Expect(200, "PUT", "/V5/users", map[string]any{"user": map[string]any{"loginId": "robot", "role": "OPERATOR", "userType": "API"}}).Decode(t, &robot)
		var k struct {
			KeyID    string `json:"keyId"`
			KeyValue string `json:"keyValue"`
			UserID   int64  `json:"userId"`
		}
		e.Admin.Expect(200, "PUT", "/V5/apikeys", map[string]any{"userId": robot.UserID}).Decode(t, &k)
		if k.UserID != robot.UserID || len(k.KeyValue) < 40 {
			t.Fatalf("new key: %+v", k)
		}
		c := e.LoginKey(t, k.KeyID, k.KeyValue)
		var ks []map[string]any
		e.Admin.Expect(200, "GET", "/V5/apikeys", nil).Decode(t, &ks)
		if len(ks) != 2 {
			t.Fatalf("keys: %v", ks)
		}
		for _, x := range ks {
			if _, ok := x["keyValue"]; ok {
				t.Error("list shows a key value")
			}
		}
		var local wnms.User
		e.Admin.Expect(200, "PUT", "/V5/users", newUserBody("human", "VIEWER", nil)).Decode(t, &local)
		if r := e.Admin.Expect(400, "PUT", "/V5/apikeys", map[string]any{"userId": local.UserID}); r.ErrorCode() != wnms.ValidationFailed {
			t.Errorf("key for a LOCAL user: %s", r.ErrorCode())
		}
		e.Admin.Expect(400, "PUT", "/V5/apikeys", map[string]any{})
		e.Admin.Expect(404, "PUT", "/V5/apikeys", map[string]any{"userId": 9999})
		e.Admin.Expect(204, "DELETE", "/V5/apikeys/"+k.KeyID, nil)
		c.Expect(401, "GET", "/V5/users/current", nil)
		e.NewClient().Expect(401, "POST", "/login/key/c/600", keyBody(k.KeyID, k.KeyValue))
		e.Admin.Expect(404, "DELETE", "/V5/apikeys/"+k.KeyID, nil)
	})
}
