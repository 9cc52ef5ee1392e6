// Package access is the one home of who may do what in wnms: the role
// rules of the route table, the location scope of a caller (which
// locations it sees), and the escalation rules of user management (no role
// above your own, no location outside your own, no deleting yourself).
// It knows nothing of HTTP; the listeners ask it.
//
// Scope (api.md §4): a caller sees a location if it belongs to the
// caller's customer (or is shared: the root and the unknown location) and
// lies at or below one of the caller's allowed locations. Across
// customers, what a caller may not see is answered exactly as what does
// not exist; inside its customer, a location outside its scope is
// LOCATION_ACCESS_DENIED.
package access

import (
	"context"

	"github.com/wnms/wnms/internal/wnms"
)

// Roles is a set of role classes; POWERUSER counts as OPERATOR.
type Roles uint8

// The role classes as set members.
const (
	Viewer Roles = 1 << iota
	Operator
	Administrator
	SuperUser
)

func roleBit(r wnms.Role) Roles {
	switch r.Access() {
	case wnms.Viewer:
		return Viewer
	case wnms.Operator:
		return Operator
	case wnms.Administrator:
		return Administrator
	case wnms.SuperUser:
		return SuperUser
	}
	return 0
}

// Rule says who may make a call.
type Rule struct {
	Public   bool  // no session needed
	Roles    Roles // roles admitted when a session is needed
	PwChange bool  // admitted in a session opened only to change an expired password
}

// The rules the interface uses.
var (
	Public   = Rule{Public: true}
	AnyRole  = Rule{Roles: Viewer | Operator | Administrator | SuperUser}
	SuAdOp   = Rule{Roles: Operator | Administrator | SuperUser}
	SuAd     = Rule{Roles: Administrator | SuperUser}
	SelfOnly = Rule{Roles: Viewer | Operator | Administrator | SuperUser, PwChange: true}
)

// Check reports whether the caller may make a call of the rule: a session
// opened only to change an expired password may make only PwChange calls,
// and the caller's role must be among the rule's (ACCESS_DENIED).
func Check(c *wnms.Caller, rule Rule) error {
	if c.Session.PasswordChange && !rule.PwChange {
		return wnms.Errorf(wnms.AccessDenied, "the password has expired; change it with users/ownpassword first")
	}
	if rule.Roles&roleBit(c.Role()) == 0 {
		return wnms.Errorf(wnms.AccessDenied, "role %s may not make this call", c.Role())
	}
	return nil
}

// Locations is what scope checks read: the location tree.
type Locations interface {
	Location(ctx context.Context, id int64) (*wnms.Location, error)
	LocationPaths(ctx context.Context, ids []int64) (map[int64]string, error)
}

// Sees reports whether the caller may see location l: l belongs to the
// caller's customer (or is shared) and lies in one of its allowed subtrees.
func Sees(ctx context.Context, c *wnms.Caller, l *wnms.Location) (bool, error) {
	if !sameCustomer(c, l) {
		return false, nil
	}
	paths, err := c.ScopePaths(ctx)
	if err != nil {
		return false, err
	}
	return wnms.UnderAny(l.Path, paths), nil
}

func sameCustomer(c *wnms.Caller, l *wnms.Location) bool {
	return l.CustomerID == 0 || l.CustomerID == c.CustomerID()
}

// LocationFor reads location id for the caller: RESOURCE_NOT_FOUND when it
// does not exist or belongs to another customer (the two answered alike,
// message included), LOCATION_ACCESS_DENIED when it is the caller's
// customer's but outside the caller's allowed locations. Every call that
// takes a location goes through here.
func LocationFor(ctx context.Context, st Locations, c *wnms.Caller, id int64) (*wnms.Location, error) {
	l, err := st.Location(ctx, id)
	if err != nil {
		return nil, err
	}
	if !sameCustomer(c, l) {
		return nil, wnms.NotFound("no location %d", id)
	}
	ok, err := Sees(ctx, c, l)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, wnms.Errorf(wnms.LocationAccessDenied, "location %d is outside your locations", id)
	}
	return l, nil
}

// Scope answers, for many users at once, whether each lies in the
// caller's scope: every one of its allowed locations is one the caller
// sees. It reads the paths of all their locations in one query.
func Scope(ctx context.Context, st Locations, c *wnms.Caller, users []wnms.User) ([]bool, error) {
	var ids []int64
	for i := range users {
		for _, l := range users[i].AllowedLocations {
			ids = append(ids, l.ID)
		}
	}
	paths, err := st.LocationPaths(ctx, ids)
	if err != nil {
		return nil, err
	}
	scope, err := c.ScopePaths(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(users))
	for i := range users {
		out[i] = true
		for _, l := range users[i].AllowedLocations {
			p, ok := paths[l.ID]
			if !ok || !wnms.UnderAny(p, scope) {
				out[i] = false
				break
			}
		}
	}
	return out, nil
}

// Manageable answers, for many users at once, whether the caller may
// manage each: its role is not above the caller's, and it lies in the
// caller's scope or is the caller itself.
func Manageable(ctx context.Context, st Locations, c *wnms.Caller, users []wnms.User) ([]bool, error) {
	in, err := Scope(ctx, st, c, users)
	if err != nil {
		return nil, err
	}
	for i := range users {
		in[i] = users[i].Role.Rank() <= c.Role().Rank() && (in[i] || users[i].UserID == c.User.UserID)
	}
	return in, nil
}

// Manage checks that the caller may modify or delete target: its role is
// not above the caller's (ACCESS_DENIED), and its locations lie in the
// caller's scope (LOCATION_ACCESS_DENIED) unless it is the caller itself.
func Manage(ctx context.Context, st Locations, c *wnms.Caller, target *wnms.User) error {
	if target.Role.Rank() > c.Role().Rank() {
		return wnms.Errorf(wnms.AccessDenied, "user %d has a role above yours", target.UserID)
	}
	ok, err := Manageable(ctx, st, c, []wnms.User{*target})
	if err != nil {
		return err
	}
	if !ok[0] {
		return wnms.Errorf(wnms.LocationAccessDenied, "user %d has locations outside yours", target.UserID)
	}
	return nil
}

// Delete checks that the caller may delete target: Manage, and never
// itself (CONFLICT).
func Delete(ctx context.Context, st Locations, c *wnms.Caller, target *wnms.User) error {
	if target.UserID == c.User.UserID {
		return wnms.Errorf(wnms.Conflict, "you cannot delete yourself")
	}
	return Manage(ctx, st, c, target)
}

// Grant checks what the caller gives a user it creates or modifies: a role
// not above its own (ACCESS_DENIED), and only locations it sees: an
// unknown location, or another customer's, is VALIDATION_FAILED on
// allowedLocations; one of its customer outside its scope is
// LOCATION_ACCESS_DENIED.
func Grant(ctx context.Context, st Locations, c *wnms.Caller, u *wnms.User) error {
	if u.Role.Rank() > c.Role().Rank() {
		return wnms.Errorf(wnms.AccessDenied, "you may not grant role %s, which is above yours", u.Role)
	}
	for _, l := range u.AllowedLocations {
		_, err := LocationFor(ctx, st, c, l.ID)
		if wnms.ErrorCode(err) == wnms.ResourceNotFound {
			return wnms.Invalid("allowedLocations", "no location %d", l.ID)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// SetLock checks that the caller may lock or unlock target: only a
// SUPERUSER or ADMINISTRATOR may (ACCESS_DENIED), and never lock itself
// (CONFLICT).
func SetLock(c *wnms.Caller, target *wnms.User, lock bool) error {
	if c.Role() != wnms.SuperUser && c.Role() != wnms.Administrator {
		return wnms.Errorf(wnms.AccessDenied, "only a SUPERUSER or ADMINISTRATOR may lock or unlock users")
	}
	if lock && target.UserID == c.User.UserID {
		return wnms.Errorf(wnms.Conflict, "you cannot lock yourself")
	}
	return nil
}

// AtRoot reports whether the caller is allowed the root location: it
// sees every location of its customer.
func AtRoot(c *wnms.Caller) bool {
	for _, l := range c.User.AllowedLocations {
		if l.ID == wnms.RootLocation {
			return true
		}
	}
	return false
}

// SeenLocations answers, for many locations of the caller's customer at
// once, whether the caller sees each: it lies at or below one of the
// caller's allowed locations. A caller allowed the root sees them all,
// even one deleted since it was named; others see no deleted location.
// It reads the paths of all of them in one query.
func SeenLocations(ctx context.Context, st Locations, c *wnms.Caller, ids []int64) (map[int64]bool, error) {
	out := make(map[int64]bool, len(ids))
	if AtRoot(c) {
		for _, id := range ids {
			out[id] = true
		}
		return out, nil
	}
	paths, err := st.LocationPaths(ctx, ids)
	if err != nil {
		return nil, err
	}
	scope, err := c.ScopePaths(ctx)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		p, ok := paths[id]
		out[id] = ok && wnms.UnderAny(p, scope)
	}
	return out, nil
}

// ChangeUpstreams checks that the caller may change its customer's RADIUS
// upstreams (the radius block of the data sources), which serve every
// location and receive users' passwords: a SUPERUSER, or a caller allowed
// the root location (LOCATION_ACCESS_DENIED otherwise).
func ChangeUpstreams(c *wnms.Caller) error {
	if c.Role() == wnms.SuperUser || AtRoot(c) {
		return nil
	}
	return wnms.Errorf(wnms.LocationAccessDenied, "only a SUPERUSER or a user allowed the root location may change the RADIUS upstreams")
}

// ReachChildren reports whether the caller may address the cluster's
// child servers. A child sees only the parent's key, so it cannot narrow
// a call to the caller's locations: only callers of the server's own
// customer allowed at the root reach children (LOCATION_ACCESS_DENIED
// otherwise). The role has been checked against the call like a local one.
func ReachChildren(c *wnms.Caller) error {
	if c.CustomerID() != wnms.OnPremCustomer {
		return wnms.Errorf(wnms.LocationAccessDenied, "the cluster's child servers belong to this server's own customer")
	}
	for _, l := range c.User.AllowedLocations {
		if l.ID == wnms.RootLocation {
			return nil
		}
	}
	return wnms.Errorf(wnms.LocationAccessDenied, "calls to child servers need access to the root location")
}
