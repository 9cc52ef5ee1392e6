package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/wnms"
)

// authzFixture is the world an authorization case runs in: a site folder
// with a floor (customer 1), another folder with a floor outside a scoped
// caller's locations, and a foreign customer's folder and floor.
type authzFixture struct {
	E            *apitest.Env
	Site, Floor  *wnms.Location
	Other        *wnms.Location
	OtherFloor   *wnms.Location
	Foreign      *wnms.Location
	ForeignFloor *wnms.Location
}

func newAuthzFixture(t *testing.T, b apitest.Backend) *authzFixture {
	e := apitest.New(t, b)
	f := &authzFixture{E: e}
	f.Site = e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
	f.Floor = e.NewLocation(t, f.Site.ID.ID, wnms.FloorLocation, "Floor 1", 1)
	f.Other = e.NewLocation(t, 0, wnms.FolderLocation, "Other", 1)
	f.OtherFloor = e.NewLocation(t, f.Other.ID.ID, wnms.FloorLocation, "Other floor", 1)
	f.Foreign = e.NewLocation(t, 0, wnms.FolderLocation, "Foreign", 2)
	f.ForeignFloor = e.NewLocation(t, f.Foreign.ID.ID, wnms.FloorLocation, "Foreign floor", 2)
	return f
}

// authzTarget says what a request is aimed at: a floor and the customer
// whose resources it touches.
type authzTarget struct {
	Floor    *wnms.Location
	Folder   *wnms.Location
	Customer int64
}

// authzCase is one call of the authorization matrix.
type authzCase struct {
	name string
	// request builds the request aimed at target; it may create what the
	// call needs (as the store, not through the API).
	request func(t *testing.T, f *authzFixture, target authzTarget) (method, path string, body any)
	// allowed are the roles the call admits.
	allowed []wnms.Role
	// ok is the success status.
	ok int
	// location: a caller whose locations exclude the target gets 403
	// LOCATION_ACCESS_DENIED. When false the call takes no location.
	location bool
	// foreign is the status a caller of another customer gets for a
	// target of customer 1 (0: the call is not customer-scoped), and
	// foreignCode its errorCode: what the caller may not see must look
	// exactly like what does not exist, never 403.
	foreign     int
	foreignCode string
	// marker, for list calls, makes something of customer 1 inside the
	// target's folder and returns the text by which the list shows it: an
	// admitted caller whose locations include the folder finds it in the
	// body; a caller of another customer never does, nor (when scoped) a
	// caller whose locations exclude the folder.
	marker func(t *testing.T, f *authzFixture) string
	scoped bool
}

var (
	allRoles = []wnms.Role{wnms.Viewer, wnms.Operator, wnms.PowerUser, wnms.Administrator, wnms.SuperUser}
	opUp     = []wnms.Role{wnms.Operator, wnms.PowerUser, wnms.Administrator, wnms.SuperUser}
	adUp     = []wnms.Role{wnms.Administrator, wnms.SuperUser}
)

func admits(roles []wnms.Role, r wnms.Role) bool {
	for _, x := range roles {
		if x == r {
			return true
		}
	}
	return false
}

// runAuthz runs every case: each role against an in-scope target; the
// highest allowed role with locations that exclude the target; and a
// caller of another customer.
func runAuthz(t *testing.T, cases []authzCase) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				f := newAuthzFixture(t, b)
				home := authzTarget{Floor: f.Floor, Folder: f.Site, Customer: 1}
				mark := ""
				if tc.marker != nil {
					mark = tc.marker(t, f)
				}
				for _, role := range allRoles {
					u, c := f.E.NewUser(t, apitest.UserSpec{Role: role})
					method, path, body := tc.request(t, f, home)
					r := c.Do(method, path, body)
					checkAudited(t, f.E, tc.name, method, r, u)
					if admits(tc.allowed, role) {
						if r.Status != tc.ok {
							t.Errorf("%s as %s: status %d, want %d; %s", tc.name, role, r.Status, tc.ok, r.Body)
						}
						if mark != "" && !strings.Contains(string(r.Body), mark) {
							t.Errorf("%s as %s: the list lacks %s: %s", tc.name, role, mark, r.Body)
						}
					} else if r.Status != http.StatusForbidden || r.ErrorCode() != wnms.AccessDenied {
						t.Errorf("%s as %s: status %d %s, want 403 ACCESS_DENIED", tc.name, role, r.Status, r.ErrorCode())
					}
				}
				top := tc.allowed[len(tc.allowed)-1]
				if tc.location {
					u, c := f.E.NewUser(t, apitest.UserSpec{Role: top, Locations: []int64{f.Other.ID.ID}})
					method, path, body := tc.request(t, f, home)
					r := c.Do(method, path, body)
					checkAudited(t, f.E, tc.name, method, r, u)
					if r.Status != http.StatusForbidden || r.ErrorCode() != wnms.LocationAccessDenied {
						t.Errorf("%s outside the caller's locations: status %d %s, want 403 LOCATION_ACCESS_DENIED; %s",
							tc.name, r.Status, r.ErrorCode(), r.Body)
					}
				}
				if mark != "" {
					callers := map[string]apitest.UserSpec{"another customer": {Role: top, Customer: 2}}
					if tc.scoped {
						callers["outside the folder"] = apitest.UserSpec{Role: top, Locations: []int64{f.Other.ID.ID}}
					}
					for who, spec := range callers {
						_, c := f.E.NewUser(t, spec)
						method, path, body := tc.request(t, f, home)
						r := c.Do(method, path, body)
						if r.Status != tc.ok || strings.Contains(string(r.Body), mark) {
							t.Errorf("%s by a caller %s: status %d, and the list shows %s: %s", tc.name, who, r.Status, mark, r.Body)
						}
					}
				}
				if tc.foreign != 0 {
					u, c := f.E.NewUser(t, apitest.UserSpec{Role: top, Customer: 2})
					method, path, body := tc.request(t, f, home)
					r := c.Do(method, path, body)
					checkAudited(t, f.E, tc.name, method, r, u)
					if r.Status != tc.foreign || r.ErrorCode() != tc.foreignCode {
						t.Errorf("%s by another customer: status %d %s, want %d %s; %s", tc.name, r.Status, r.ErrorCode(), tc.foreign, tc.foreignCode, r.Body)
					}
				}
				// No session at all.
				method, path, body := tc.request(t, f, home)
				r := f.E.NewClient().Do(method, path, body)
				if r.Status != http.StatusUnauthorized || r.ErrorCode() != wnms.SessionRequired {
					t.Errorf("%s without a session: status %d %s, want 401 SESSION_REQUIRED", tc.name, r.Status, r.ErrorCode())
				}
				if recs := auditRecordsOf(t, f.E, 1, r); len(recs) != 0 {
					t.Errorf("%s without a session: audited as %+v", tc.name, recs)
				}
			})
		}
	})
}

// auditRecordsOf are the audit records of customer that the call which
// answered r left.
func auditRecordsOf(t *testing.T, e *apitest.Env, customer int64, r *apitest.Response) []wnms.AuditRecord {
	t.Helper()
	recs, _, err := e.Store.AuditRecords(context.Background(), wnms.AuditQuery{CustomerID: customer, From: -1, To: -1, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	id := r.Header.Get("X-Request-Id")
	var out []wnms.AuditRecord
	for _, rec := range recs {
		if rec.RequestID == id {
			out = append(out, rec)
		}
	}
	return out
}

// checkAudited checks that a state-changing call by u left exactly one
// audit record, in u's customer, naming u, its method and the status it
// answered; a reading call leaves none.
func checkAudited(t *testing.T, e *apitest.Env, name, method string, r *apitest.Response, u *wnms.User) {
	t.Helper()
	recs := auditRecordsOf(t, e, u.CustomerID, r)
	if !httpkit.Audited(method) {
		if len(recs) != 0 {
			t.Errorf("%s: a %s call was audited: %+v", name, method, recs)
		}
		return
	}
	if len(recs) != 1 {
		t.Errorf("%s as %s: %d audit records, want 1: %+v", name, u.LoginID, len(recs), recs)
		return
	}
	rec := recs[0]
	// A change that committed was recorded in its own transaction, with
	// its configChanged event (raised only from there).
	if r.Status < 300 && store.ConfigChange(rec.ResourceType) && !strings.HasSuffix(rec.Path, "/test") &&
		!strings.HasSuffix(rec.Path, "/testtrap") && !strings.Contains(rec.Path, "/testtrap?") && !strings.Contains(rec.Path, "/test?") {
		if !configChangedFor(t, e, rec.ID) {
			t.Errorf("%s as %s: a change (%s %s, %d) without its configChanged event: not recorded in its transaction",
				name, u.LoginID, rec.Method, rec.Path, r.Status)
		}
	}
	if rec.Status != r.Status || rec.Method != method || rec.Actor.LoginID != u.LoginID || rec.Actor.UserID != u.UserID ||
		rec.Actor.Role != u.Role || rec.Actor.Via != "http" || rec.ResourceType == "" {
		t.Errorf("%s as %s: audit record %+v does not match the call (status %d)", name, u.LoginID, rec, r.Status)
	}
}

// configChangedFor reports whether the outbox holds the configChanged event
// of audit record id.
func configChangedFor(t *testing.T, e *apitest.Env, id int64) bool {
	t.Helper()
	for { // the events changes stored meanwhile get their ids (the hub's job when it runs)
		n, err := e.Store.SequenceEvents(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	evs, err := e.Store.EventsAfter(context.Background(), 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		var d struct {
			AuditID int64 `json:"auditId"`
		}
		if ev.Kind == wnms.EventConfigChanged && json.Unmarshal(ev.Data, &d) == nil && d.AuditID == id {
			return true
		}
	}
	return false
}
