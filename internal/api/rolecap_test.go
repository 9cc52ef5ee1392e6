package api_test

import (
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// X-Wnms-Role-Cap (sent by a cluster parent with the role of the user it
// forwards for) only ever lowers the session's role for the request.
func TestRoleCapOnlyLowers(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	_, viewer := e.NewUser(t, apitest.UserSpec{Login: "capped-viewer", Role: wnms.Viewer})
	for _, c := range []struct {
		name     string
		client   *apitest.Client
		cap      string
		want     int
		wantCode string
	}{
		{"viewer capped at SUPERUSER stays a viewer", viewer, "SUPERUSER", 403, wnms.AccessDenied},
		{"superuser capped at VIEWER", e.Admin, "VIEWER", 403, wnms.AccessDenied},
		{"superuser capped at operator, any case", e.Admin, "operator", 403, wnms.AccessDenied},
		{"superuser capped at ADMINISTRATOR", e.Admin, "ADMINISTRATOR", 200, ""},
		{"a cap that names no role caps at VIEWER", e.Admin, "ROOT", 403, wnms.AccessDenied},
		{"an empty cap caps at VIEWER", e.Admin, "", 403, wnms.AccessDenied},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := c.client.WithT(t)
			cl.Header = cl.Header.Clone()
			cl.Header[wnms.RoleCapHeader] = []string{c.cap}
			r := cl.Do("GET", "/V5/apikeys", nil)
			if r.Status != c.want || r.ErrorCode() != c.wantCode {
				t.Errorf("%d %s, want %d %s", r.Status, r.Body, c.want, c.wantCode)
			}
		})
	}
	// users/current shows the role the request runs with.
	cl := e.Admin.WithT(t)
	cl.Header = cl.Header.Clone()
	cl.Header.Set(wnms.RoleCapHeader, "VIEWER")
	var u wnms.User
	cl.Expect(200, "GET", "/V5/users/current", nil).Decode(t, &u)
	if u.Role != wnms.Viewer {
		t.Errorf("users/current under a VIEWER cap: role %s", u.Role)
	}
}
