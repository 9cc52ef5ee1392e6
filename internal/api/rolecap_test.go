package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// parentSession logs in with a new cluster parent's key of u (as
// wnms apikey create --cluster-parent makes it).
func parentSession(t *testing.T, e *apitest.Env, u *wnms.User) *apitest.Client {
	t.Helper()
	k, v, err := e.Auth.NewClusterParentKey(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	return e.LoginKey(t, k.KeyID, v)
}

// withHeader is c sending header name: value with every request.
func withHeader(t *testing.T, c *apitest.Client, name, value string) *apitest.Client {
	cl := c.WithT(t)
	cl.Header = cl.Header.Clone()
	cl.Header[name] = []string{value}
	return cl
}

// X-Wnms-Role-Cap (sent by a cluster parent with the role of the user it
// forwards for) only ever lowers the session's role for the request.
func TestRoleCapOnlyLowers(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		viewerUser, _ := e.NewUser(t, apitest.UserSpec{Login: "capped-viewer", Role: wnms.Viewer})
		admin, err := e.Store.User(context.Background(), 0, e.Admin.User.UserID)
		if err != nil {
			t.Fatal(err)
		}
		parent, viewer := parentSession(t, e, admin), parentSession(t, e, viewerUser)
		for _, c := range []struct {
			name     string
			client   *apitest.Client
			cap      string
			want     int
			wantCode string
		}{
			{"viewer capped at SUPERUSER stays a viewer", viewer, "SUPERUSER", 403, wnms.AccessDenied},
			{"superuser capped at VIEWER", parent, "VIEWER", 403, wnms.AccessDenied},
			{"superuser capped at operator, any case", parent, "operator", 403, wnms.AccessDenied},
			{"superuser capped at ADMINISTRATOR", parent, "ADMINISTRATOR", 200, ""},
			{"a cap that names no role caps at VIEWER", parent, "ROOT", 403, wnms.AccessDenied},
			{"an empty cap caps at VIEWER", parent, "", 403, wnms.AccessDenied},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := withHeader(t, c.client, wnms.RoleCapHeader, c.cap).Do("GET", "/V5/apikeys", nil)
				if r.Status != c.want || r.ErrorCode() != c.wantCode {
					t.Errorf("%d %s, want %d %s", r.Status, r.Body, c.want, c.wantCode)
				}
			})
		}
		// users/current shows the role the request runs with.
		var u wnms.User
		withHeader(t, parent, wnms.RoleCapHeader, "VIEWER").Expect(200, "GET", "/V5/users/current", nil).Decode(t, &u)
		if u.Role != wnms.Viewer {
			t.Errorf("users/current under a VIEWER cap: role %s", u.Role)
		}
	})
}

// X-Wnms-Acting-For and X-Wnms-Role-Cap are honoured only on the session
// of a cluster parent's key: from anyone else they are 400, and the audit
// log names the caller who sent them. Before, any caller could send
// X-Wnms-Acting-For and put another name in the audit log in its place.
func TestActingForOnlyFromClusterParent(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		admin, err := e.Store.User(context.Background(), 0, e.Admin.User.UserID)
		if err != nil {
			t.Fatal(err)
		}
		parent := parentSession(t, e, admin)
		for _, h := range []struct{ name, value string }{
			{wnms.ActingForHeader, "mallory@9"},
			{wnms.ActingForHeader, ""},
			{wnms.RoleCapHeader, "VIEWER"},
			{wnms.RoleCapHeader, "SUPERUSER"},
		} {
			for _, call := range []struct{ method, path string }{
				{"GET", "/V5/users/current"},
				{"PUT", "/V5/templates?locationid=0"},
			} {
				var body any
				if call.method == "PUT" {
					body = profilesBody("acting-" + h.value)
				}
				r := withHeader(t, e.Admin, h.name, h.value).Do(call.method, call.path, body)
				if r.Status != http.StatusBadRequest || r.ErrorCode() != wnms.InvalidParameter || r.MoreInfo() != h.name {
					t.Errorf("%s: %q from an ordinary session on %s %s: %d %s", h.name, h.value, call.method, call.path, r.Status, r.Body)
				}
				if call.method == "PUT" {
					recs := findAudit(readAudit(t, e.Admin, "?resourcetype=templates"), r)
					if len(recs) != 1 || recs[0].Actor.LoginID != "admin" || recs[0].Actor.Via != "http" || recs[0].Status != 400 {
						t.Errorf("%s from an ordinary session: audit %+v", h.name, recs)
					}
				}
			}
		}
		// The parent's session forwards for its users: the audit log names
		// the user it acted for.
		r := withHeader(t, parent, wnms.ActingForHeader, "carol@9").Expect(http.StatusOK, "PUT", "/V5/templates?locationid=0",
			profilesBody("acting-for-carol"))
		recs := findAudit(readAudit(t, e.Admin, "?resourcetype=templates"), r)
		if len(recs) != 1 || recs[0].Actor.LoginID != "carol@9" || recs[0].Actor.Via != "cluster:9" {
			t.Errorf("a cluster parent acting for carol: audit %+v", recs)
		}
		// The key list says which key is a cluster parent's.
		var keys []wnms.APIKey
		e.Admin.Expect(http.StatusOK, "GET", "/V5/apikeys", nil).Decode(t, &keys)
		parents := 0
		for _, k := range keys {
			if k.ClusterParent {
				parents++
			}
		}
		if len(keys) != 2 || parents != 1 {
			t.Errorf("keys %+v: want 2, one a cluster parent's", keys)
		}
	})
}
