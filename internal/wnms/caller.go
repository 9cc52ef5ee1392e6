package wnms

import (
	"context"
	"sync"
)

// Caller is the authenticated user of a request with its session.
type Caller struct {
	// User and Session may be shared with other requests: read only.
	User    *User
	Session *Session
	// UserJSON is User as JSON, when the session cache has it ready.
	UserJSON []byte

	// ActingFor is who a parent server made this call for
	// ("loginId@serverID"), when a cluster parent forwarded it; "" otherwise.
	ActingFor string
	// Source names the data source (RADIUS, syslog) this caller is, for
	// a SourceCaller; "" for a user's.
	Source string

	paths     func(ctx context.Context, ids []int64) (map[int64]string, error)
	scopeOnce sync.Once
	scope     []string
	scopeErr  error
}

// NewCaller makes a caller whose location scope is resolved lazily through
// paths, so calls that never check a location never pay for it.
func NewCaller(u *User, s *Session, paths func(ctx context.Context, ids []int64) (map[int64]string, error)) *Caller {
	return &Caller{User: u, Session: s, paths: paths}
}

// SourceCaller is who a data source of a customer, named name, stores
// what it observes as: the source itself, confined to its location at,
// with the rights of an OPERATOR (the least role that ingests). It is no
// user of the store: its User exists only to carry that customer, scope
// and role, and its login ID is "datasource:" and the name, as logs and
// counters name it.
func SourceCaller(customerID int64, name string, at int64, paths func(ctx context.Context, ids []int64) (map[int64]string, error)) *Caller {
	u := &User{CustomerID: customerID, Role: Operator, LoginID: "datasource:" + name, AllowedLocations: []LocationID{LocalID(at)}}
	return &Caller{User: u, Source: name, paths: paths}
}

// The headers of a call a cluster parent forwards to a child.
const (
	// RoleCapHeader caps the role of the session for one request: the
	// request runs with the lower of the session's role and this one. A
	// parent sends the role of the user it forwards for, so a call keeps
	// that user's rights rather than the parent key's. It and
	// ActingForHeader are honoured only on the sessions of a key made for
	// a cluster parent; anyone else sending them is refused.
	RoleCapHeader = "X-Wnms-Role-Cap"
	// ActingForHeader names the user a parent forwards for, as
	// loginId@serverID of the parent.
	ActingForHeader = "X-Wnms-Acting-For"
)

// Forwarded returns a copy of the caller for a call a cluster parent
// forwarded: its role lowered to cap when cap is a lower role ("" caps
// nothing), and ActingFor set. The user is copied, never changed: it may
// be shared with other requests.
func (c *Caller) Forwarded(cap Role, actingFor string) *Caller {
	u := c.User
	if cap != "" && cap.Rank() < u.Role.Rank() {
		cu := *u
		cu.Role = cap
		u = &cu
	}
	return &Caller{User: u, Session: c.Session, ActingFor: actingFor, paths: c.paths}
}

// Role is the caller's role.
func (c *Caller) Role() Role { return c.User.Role }

// CustomerID is the caller's customer.
func (c *Caller) CustomerID() int64 { return c.User.CustomerID }

// ScopePaths returns the materialized paths of the caller's allowed
// locations: the subtrees it may see. The root's path never changes and
// covers every other, so a caller allowed at the root needs no lookup.
func (c *Caller) ScopePaths(ctx context.Context) ([]string, error) {
	c.scopeOnce.Do(func() {
		ids := make([]int64, 0, len(c.User.AllowedLocations))
		for _, l := range c.User.AllowedLocations {
			if l.ID == RootLocation {
				c.scope = []string{RootPath}
				return
			}
			ids = append(ids, l.ID)
		}
		m, err := c.paths(ctx, ids)
		if err != nil {
			c.scopeErr = err
			return
		}
		for _, id := range ids {
			if p, ok := m[id]; ok {
				c.scope = append(c.scope, p)
			}
		}
	})
	return c.scope, c.scopeErr
}

// UnderAny reports whether path lies at or below one of the ancestors.
func UnderAny(path string, ancestors []string) bool {
	for _, a := range ancestors {
		if Under(path, a) {
			return true
		}
	}
	return false
}

type callerKey struct{}

// WithCaller returns a context carrying the caller.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// callerSlot holds the caller of a request whose context was made before
// the caller was known.
type callerSlot struct{ c *Caller }

// WithCallerSlot returns a context with room for the caller, filled later
// by SetCaller, so that authenticating a request does not copy it again.
func WithCallerSlot(ctx context.Context) context.Context {
	return context.WithValue(ctx, callerKey{}, &callerSlot{})
}

// SetCaller fills the slot of ctx and reports whether ctx has one.
func SetCaller(ctx context.Context, c *Caller) bool {
	s, ok := ctx.Value(callerKey{}).(*callerSlot)
	if ok {
		s.c = c
	}
	return ok
}

// CallerFrom returns the caller in ctx, or nil.
func CallerFrom(ctx context.Context) *Caller {
	switch v := ctx.Value(callerKey{}).(type) {
	case *Caller:
		return v
	case *callerSlot:
		return v.c
	}
	return nil
}
