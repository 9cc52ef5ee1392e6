package access_test

import (
	"context"
	"testing"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/wnms"
)

// tree is a location tree held in memory: the access rules need only
// Location and LocationPaths.
//
//	0 root (shared)
//	├── 5 campus A (customer 1)
//	│   └── 7 building A1 (customer 1)
//	├── 6 campus B (customer 1)
//	└── 9 campus Z (customer 2)
type tree map[int64]*wnms.Location

func newTree() tree {
	t := tree{}
	add := func(id, customer int64, path string) {
		t[id] = &wnms.Location{ID: wnms.LocalID(id), CustomerID: customer, Path: path}
	}
	add(0, 0, "/0/")
	add(5, 1, "/0/5/")
	add(7, 1, "/0/5/7/")
	add(6, 1, "/0/6/")
	add(9, 2, "/0/9/")
	return t
}

func (t tree) Location(_ context.Context, id int64) (*wnms.Location, error) {
	if l, ok := t[id]; ok {
		return l, nil
	}
	return nil, wnms.NotFound("no location %d", id)
}

func (t tree) LocationPaths(_ context.Context, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	for _, id := range ids {
		if l, ok := t[id]; ok {
			out[id] = l.Path
		}
	}
	return out, nil
}

func user(id int64, role wnms.Role, customer int64, locs ...int64) *wnms.User {
	u := wnms.NewUser(customer)
	u.UserID, u.Role = id, role
	for _, l := range locs {
		u.AllowedLocations = append(u.AllowedLocations, wnms.LocalID(l))
	}
	return &u
}

func caller(t tree, u *wnms.User) *wnms.Caller {
	return wnms.NewCaller(u, &wnms.Session{}, t.LocationPaths)
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name     string
		role     wnms.Role
		pwChange bool
		rule     access.Rule
		want     string
	}{
		{"viewer reads", wnms.Viewer, false, access.AnyRole, ""},
		{"viewer may not write", wnms.Viewer, false, access.SuAdOp, wnms.AccessDenied},
		{"poweruser counts as operator", wnms.PowerUser, false, access.SuAdOp, ""},
		{"operator may not administer", wnms.Operator, false, access.SuAd, wnms.AccessDenied},
		{"administrator administers", wnms.Administrator, false, access.SuAd, ""},
		{"expired password: only the change", wnms.SuperUser, true, access.SuAd, wnms.AccessDenied},
		{"expired password: the change itself", wnms.Viewer, true, access.SelfOnly, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := wnms.NewCaller(user(1, tc.role, 1, 0), &wnms.Session{PasswordChange: tc.pwChange}, nil)
			if got := code(access.Check(c, tc.rule)); got != tc.want {
				t.Errorf("Check = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLocationFor(t *testing.T) {
	tr := newTree()
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		caller *wnms.User
		loc    int64
		want   string
	}{
		{"root sees its customer's campus", user(1, wnms.Viewer, 1, 0), 5, ""},
		{"root user sees the shared root", user(1, wnms.Viewer, 1, 0), 0, ""},
		{"another customer's campus is unknown", user(1, wnms.SuperUser, 1, 0), 9, wnms.ResourceNotFound},
		{"an unknown location", user(1, wnms.SuperUser, 1, 0), 404, wnms.ResourceNotFound},
		{"campus user sees below", user(1, wnms.Viewer, 1, 5), 7, ""},
		{"campus user may not see its sibling", user(1, wnms.SuperUser, 1, 5), 6, wnms.LocationAccessDenied},
		{"campus user may not see above", user(1, wnms.SuperUser, 1, 5), 0, wnms.LocationAccessDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := access.LocationFor(ctx, tr, caller(tr, tc.caller), tc.loc)
			if got := code(err); got != tc.want {
				t.Errorf("LocationFor(%d) = %q (%v), want %q", tc.loc, got, err, tc.want)
			}
		})
	}
}

func TestManageGrantDeleteLock(t *testing.T) {
	tr := newTree()
	ctx := context.Background()
	admin := user(1, wnms.Administrator, 1, 5)
	for _, tc := range []struct {
		name string
		op   func(c *wnms.Caller) error
		want string
	}{
		{"manage an operator in scope", func(c *wnms.Caller) error {
			return access.Manage(ctx, tr, c, user(2, wnms.Operator, 1, 7))
		}, ""},
		{"manage a superuser", func(c *wnms.Caller) error {
			return access.Manage(ctx, tr, c, user(2, wnms.SuperUser, 1, 7))
		}, wnms.AccessDenied},
		{"manage a user with a location outside", func(c *wnms.Caller) error {
			return access.Manage(ctx, tr, c, user(2, wnms.Viewer, 1, 7, 6))
		}, wnms.LocationAccessDenied},
		{"manage oneself", func(c *wnms.Caller) error { return access.Manage(ctx, tr, c, admin) }, ""},
		{"delete oneself", func(c *wnms.Caller) error { return access.Delete(ctx, tr, c, admin) }, wnms.Conflict},
		{"grant a role above", func(c *wnms.Caller) error {
			return access.Grant(ctx, tr, c, user(0, wnms.SuperUser, 1, 5))
		}, wnms.AccessDenied},
		{"grant a location outside", func(c *wnms.Caller) error {
			return access.Grant(ctx, tr, c, user(0, wnms.Viewer, 1, 6))
		}, wnms.LocationAccessDenied},
		{"grant another customer's location", func(c *wnms.Caller) error {
			return access.Grant(ctx, tr, c, user(0, wnms.Viewer, 1, 9))
		}, wnms.ValidationFailed},
		{"grant an unknown location", func(c *wnms.Caller) error {
			return access.Grant(ctx, tr, c, user(0, wnms.Viewer, 1, 404))
		}, wnms.ValidationFailed},
		{"grant in scope", func(c *wnms.Caller) error {
			return access.Grant(ctx, tr, c, user(0, wnms.Administrator, 1, 7))
		}, ""},
		{"lock oneself", func(c *wnms.Caller) error { return access.SetLock(c, admin, true) }, wnms.Conflict},
		{"unlock oneself", func(c *wnms.Caller) error { return access.SetLock(c, admin, false) }, ""},
		{"an operator locks", func(*wnms.Caller) error {
			return access.SetLock(caller(tr, user(3, wnms.Operator, 1, 0)), user(2, wnms.Viewer, 1, 0), true)
		}, wnms.AccessDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := code(tc.op(caller(tr, admin))); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestScopeAndManageable(t *testing.T) {
	tr := newTree()
	ctx := context.Background()
	c := caller(tr, user(1, wnms.Operator, 1, 5))
	users := []wnms.User{
		*user(1, wnms.Operator, 1, 5),        // the caller
		*user(2, wnms.Viewer, 1, 7),          // in scope
		*user(3, wnms.Viewer, 1, 5, 6),       // one location outside
		*user(4, wnms.Administrator, 1, 7),   // in scope, role above
		*user(5, wnms.Viewer, 1, 404),        // a location that no longer exists
		*user(6, wnms.Viewer, 1, 0),          // above the caller
		*user(7, wnms.PowerUser, 1, 7, 7, 5), // poweruser ranks above operator
	}
	in, err := access.Scope(ctx, tr, c, users)
	if err != nil {
		t.Fatal(err)
	}
	wantIn := []bool{true, true, false, true, false, false, true}
	man, err := access.Manageable(ctx, tr, c, users)
	if err != nil {
		t.Fatal(err)
	}
	wantMan := []bool{true, true, false, false, false, false, false}
	for i := range users {
		if in[i] != wantIn[i] || man[i] != wantMan[i] {
			t.Errorf("user %d: in scope %v manageable %v, want %v %v", users[i].UserID, in[i], man[i], wantIn[i], wantMan[i])
		}
	}
}

// code is the error's code, "" for none.
func code(err error) string {
	if err == nil {
		return ""
	}
	return wnms.ErrorCode(err)
}
