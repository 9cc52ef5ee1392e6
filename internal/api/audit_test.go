package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// auditPage is the answer of GET /V5/auditlog.
type auditPage struct {
	AuditRecords []wnms.AuditRecord `json:"auditRecords"`
	TotalCount   int                `json:"totalCount"`
	PreviousLink *string            `json:"previousLink"`
	NextLink     *string            `json:"nextLink"`
}

func readAudit(t *testing.T, c *apitest.Client, query string) auditPage {
	t.Helper()
	var p auditPage
	c.Expect(http.StatusOK, "GET", "/V5/auditlog"+query, nil).Decode(t, &p)
	return p
}

// findAudit returns the records of p whose request id is r's.
func findAudit(p auditPage, r *apitest.Response) []wnms.AuditRecord {
	var out []wnms.AuditRecord
	for _, rec := range p.AuditRecords {
		if rec.RequestID == r.Header.Get("X-Request-Id") {
			out = append(out, rec)
		}
	}
	return out
}

// Logins, failed logins, a lockout and a logout are recorded with who they
// were; calls carrying secrets (passwords, keys, communities, passphrases)
// leave none of them in any record.
func TestAuditLogSessionsAndSecrets(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		e.Auth.MaxFailures = 3
		const pw = "Carol-Secret-Pw-1"
		carol, _ := e.NewUser(t, apitest.UserSpec{Login: "carol", Role: wnms.Administrator, Type: wnms.UserTypeLocal, Password: pw})

		ok := e.NewClient().Expect(http.StatusOK, "POST", "/login/c/600?password="+pw, passwordBody("carol", pw))
		bad := e.NewClient().Expect(http.StatusUnauthorized, "POST", "/login/c/600", passwordBody("carol", "Wrong-Guess-77"))
		unknown := e.NewClient().Expect(http.StatusUnauthorized, "POST", "/login/c/600", passwordBody("nobody-here", "Wrong-Guess-78"))
		keyFail := e.NewClient().Expect(http.StatusUnauthorized, "POST", "/login/key/c/600", keyBody(e.AdminKeyID, "not-the-key-value-99"))
		e.NewClient().Expect(http.StatusUnauthorized, "POST", "/login/c/600", passwordBody("carol", "Wrong-Guess-79"))
		locking := e.NewClient().Expect(http.StatusUnauthorized, "POST", "/login/c/600", passwordBody("carol", "Wrong-Guess-80"))

		// Changes that carry secrets.
		snmp := policiesFullSNMP()
		e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath, snmp)
		newUser := map[string]any{"loginId": "dave", "password": "Dave-Secret-Pw-2", "role": "VIEWER", "userType": "LOCAL",
			"firstName": "D", "lastName": "E", "allowedLocations": []any{map[string]any{"type": "locallocationid", "id": 0}}}
		created := e.Admin.Do("PUT", "/V5/users", newUser)
		apiUser, _ := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer})
		var key struct{ KeyValue string }
		e.Admin.Expect(http.StatusOK, "PUT", "/V5/apikeys", map[string]int64{"userId": apiUser.UserID}).Decode(t, &key)
		logout := e.Admin.Expect(http.StatusOK, "POST", "/logout", nil)

		admin := e.LoginKey(t, e.AdminKeyID, e.AdminKeyValue)
		all := readAudit(t, admin, "?limit=1000")
		raw, _ := json.Marshal(all)
		for _, secret := range []string{pw, "Wrong-Guess-77", "not-the-key-value-99", "Dave-Secret-Pw-2", key.KeyValue,
			e.AdminKeyValue, "s3cret-comm", "agent-auth-pw", "agent-priv-pw", "trap-auth-1", "trap-priv-1", "trap-auth-2"} {
			if strings.Contains(string(raw), secret) {
				t.Errorf("the audit log holds the secret %q", secret)
			}
		}

		want := []struct {
			name   string
			r      *apitest.Response
			login  string
			userID int64
			status int
			typ    string
		}{
			{"login", ok, "carol", carol.UserID, 200, "session"},
			{"failed login", bad, "carol", carol.UserID, 401, "session"},
			{"failed login of an unknown user", unknown, "nobody-here", 0, 401, "session"},
			{"failed key login", keyFail, "admin", 0, 401, "session"},
			{"logout", logout, "admin", 0, 200, "session"},
			{"create user", created, "admin", 0, created.Status, "users"},
		}
		for _, w := range want {
			recs := findAudit(all, w.r)
			if len(recs) != 1 {
				t.Errorf("%s: %d records, want 1", w.name, len(recs))
				continue
			}
			rec := recs[0]
			if rec.Actor.LoginID != w.login || (w.userID != 0 && rec.Actor.UserID != w.userID) || rec.Status != w.status ||
				rec.ResourceType != w.typ || rec.Method != "POST" && rec.Method != "PUT" {
				t.Errorf("%s: record %+v", w.name, rec)
			}
			// A session's record is named by its user, a user's by its loginId.
			if name := map[string]string{"session": w.login, "users": "dave"}[w.typ]; rec.ResourceName != name {
				t.Errorf("%s: resourceName %q, want %q", w.name, rec.ResourceName, name)
			}
		}
		if recs := findAudit(all, ok); len(recs) == 1 && !strings.Contains(recs[0].Path, "password=***") {
			t.Errorf("login: the query's password is not masked: %q", recs[0].Path)
		}
		if recs := findAudit(all, created); len(recs) == 1 {
			if got := strings.Join(recs[0].ChangedFields, ","); !strings.Contains(got, "loginId") || !strings.Contains(got, "password") {
				t.Errorf("create user: changedFields %v, want the body's field names", recs[0].ChangedFields)
			}
			if created.Status == http.StatusOK && recs[0].ResourceID == "" {
				t.Errorf("create user: no resource id in %+v", recs[0])
			}
		}
		// The failed login that locked carol has its record, and the lock
		// one of its own.
		lock := findAudit(all, locking)
		if len(lock) != 2 {
			t.Fatalf("the locking login left %d records, want the failed login and the lockout: %+v", len(lock), lock)
		}
		var sawLock bool
		for _, rec := range lock {
			if rec.ResourceType == "users" && rec.ResourceID == fmt.Sprint(carol.UserID) && strings.Join(rec.ChangedFields, ",") == "lockedUntil" {
				sawLock = true
				if rec.ResourceName != "carol" || len(rec.Changes) != 1 || rec.Changes[0].Field != "lockedUntil" ||
					string(rec.Changes[0].Before) != "0" || string(rec.Changes[0].After) == "0" {
					t.Errorf("lockout record: name %q, changes %s; want carol's lockedUntil from 0 to the lock's end", rec.ResourceName, changesText(rec.Changes))
				}
			}
		}
		if !sawLock {
			t.Errorf("no lockout record among %+v", lock)
		}
	})
}

// The audit log is the SUPERUSER's and ADMINISTRATOR's, of their own
// customer only; it filters by time, actor and resource type, and pages
// newest first without repeating or skipping a record.
func TestAuditLogQuery(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		ad, adc := e.NewUser(t, apitest.UserSpec{Role: wnms.Administrator})
		for i := 0; i < 7; i++ {
			adc.Expect(http.StatusOK, "PUT", "/V5/templates?locationid=0", profilesBody(fmt.Sprintf("audit-%d", i)))
		}
		adc.Expect(http.StatusOK, "PUT", policiesSNMPPath, policiesFullSNMP())
		_, foreign := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
		foreign.Expect(http.StatusOK, "PUT", "/V5/templates?locationid=0", profilesBody("foreign"))

		for _, role := range []wnms.Role{wnms.Viewer, wnms.Operator, wnms.PowerUser} {
			_, c := e.NewUser(t, apitest.UserSpec{Role: role})
			if r := c.Do("GET", "/V5/auditlog", nil); r.Status != http.StatusForbidden || r.ErrorCode() != wnms.AccessDenied {
				t.Errorf("%s: status %d %s, want 403 ACCESS_DENIED", role, r.Status, r.ErrorCode())
			}
		}
		if r := e.NewClient().Do("GET", "/V5/auditlog", nil); r.Status != http.StatusUnauthorized {
			t.Errorf("no session: status %d", r.Status)
		}

		mine := readAudit(t, adc, "?loginid="+ad.LoginID+"&limit=1000")
		// Its login, seven profiles and the SNMP policy.
		if mine.TotalCount != 9 || len(mine.AuditRecords) != 9 {
			t.Fatalf("the administrator's records: %d of %d, want 9", len(mine.AuditRecords), mine.TotalCount)
		}
		for i := 1; i < len(mine.AuditRecords); i++ {
			a, b := mine.AuditRecords[i-1], mine.AuditRecords[i]
			if a.Timestamp < b.Timestamp || a.Timestamp == b.Timestamp && a.ID < b.ID {
				t.Errorf("not newest first: %d then %d", a.ID, b.ID)
			}
		}
		if got := readAudit(t, adc, "?loginid="+ad.LoginID+"&resourcetype=configuration/snmp"); got.TotalCount != 1 {
			t.Errorf("resourcetype filter: %d records, want 1", got.TotalCount)
		}
		if got := readAudit(t, adc, "?loginid="+ad.LoginID+"&resourcetype=templates"); got.TotalCount != 7 {
			t.Errorf("resourcetype=templates: %d records, want 7", got.TotalCount)
		}
		// Paging: three pages of three give the same records in order.
		var paged []int64
		for off := 0; off < 9; off += 3 {
			p := readAudit(t, adc, fmt.Sprintf("?loginid=%s&offset=%d&limit=3", ad.LoginID, off))
			for _, r := range p.AuditRecords {
				paged = append(paged, r.ID)
			}
			if (off > 0) != (p.PreviousLink != nil) || (off+3 < 9) != (p.NextLink != nil) {
				t.Errorf("offset %d: links %v %v", off, p.PreviousLink, p.NextLink)
			}
		}
		for i, r := range mine.AuditRecords {
			if i >= len(paged) || paged[i] != r.ID {
				t.Fatalf("paged ids %v differ from %v", paged, mine.AuditRecords)
			}
		}
		// A window past every record finds none.
		last := mine.AuditRecords[0].Timestamp
		if got := readAudit(t, adc, fmt.Sprintf("?fromtime=%d&loginid=%s", last+1, ad.LoginID)); got.TotalCount != 0 {
			t.Errorf("fromtime after the last record: %d records", got.TotalCount)
		}
		// Another customer's administrator never sees customer 1's records.
		other := readAudit(t, foreign, "?limit=1000")
		for _, r := range other.AuditRecords {
			if r.CustomerID != 2 {
				t.Errorf("customer 2 sees a record of customer %d", r.CustomerID)
			}
		}
		if other.TotalCount == 0 {
			t.Error("customer 2 sees none of its own records")
		}
		// Bad parameters are refused.
		for _, q := range []string{"?limit=0", "?limit=1001", "?offset=-1", "?fromtime=5&totime=4", "?fromtime=x"} {
			if r := adc.Do("GET", "/V5/auditlog"+q, nil); r.Status != http.StatusBadRequest {
				t.Errorf("%s: status %d, want 400", q, r.Status)
			}
		}
	})
}

// Every state-changing call in the route table of either listener leaves
// exactly one audit record with the status it answered, whatever that
// status: the test walks the table and makes each call with placeholder
// path values and an empty object body, so most are refused, and refusals
// are recorded as well as changes. A public call (a login) is made with a
// wrong key, so that its caller is known.
func TestAuditCoversEveryWriteRoute(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		admin := e.Admin
		values := map[string]string{"clientidentifier": "c", "timeout": "600"}
		n := 0
		for _, p := range e.API.Router.Patterns() {
			method, path, _ := strings.Cut(p, " ")
			if !httpkit.Audited(method) {
				continue
			}
			var segs []string
			for _, seg := range strings.Split(path, "/") {
				if strings.HasPrefix(seg, "{") {
					v, ok := values[strings.Trim(seg, "{}")]
					if !ok {
						v = "987654"
					}
					seg = v
				}
				segs = append(segs, seg)
			}
			url := "/V5" + strings.Join(segs, "/")
			var r *apitest.Response
			switch {
			case strings.HasPrefix(path, "/login/key/"):
				r = e.NewClient().Do(method, url, keyBody(e.AdminKeyID, "wrong"))
			case path == "/logout" || path == "/login/keepsessionalive":
				r = admin.Do(method, url, nil)
			case strings.HasPrefix(path, "/login/"):
				r = e.NewClient().Do(method, url, passwordBody("admin", "wrong"))
			case strings.HasPrefix(path, "/ingest/") && path != "/ingest/files":
				r = admin.Do(method, url, "[]")
			default:
				r = admin.Do(method, url, map[string]any{})
			}
			if strings.HasPrefix(path, "/logout") {
				admin = e.LoginKey(t, e.AdminKeyID, e.AdminKeyValue)
			}
			recs := auditRecordsOf(t, e, 1, r)
			if len(recs) != 1 || recs[0].Status != r.Status || recs[0].Method != method || recs[0].Actor.LoginID != "admin" {
				t.Errorf("%s (%d %s): audit records %+v, want one with status %d", p, r.Status, r.Body, recs, r.Status)
			}
			n++
		}
		an := admin.AnalyticsClient()
		r := an.Do("PUT", "/api/v1.14/analytics/graphs/locationtracking/zones/ap/config", map[string]any{})
		if recs := auditRecordsOf(t, e, 1, r); len(recs) != 1 || recs[0].Status != r.Status {
			t.Errorf("analytics PUT zone config (%d): audit records %+v", r.Status, recs)
		}
		if n < 25 {
			t.Errorf("only %d state-changing routes walked", n)
		}
	})
}

// The value of every credential-like query parameter is *** in the audit
// log and in the configChanged event the event stream sends, whatever its
// case: before, keyValue and auth were stored as sent, and streamed to
// every caller allowed at the root.
func TestAuditMasksCredentialParameters(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := newAuthzFixture(t, b)
		e := f.E
		startHub(t, e)
		_, viewer := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer})
		stream := openStream(t, e, viewer, -1, "?kinds=configChanged")
		secrets := map[string]string{
			"keyValue": "sekrit-kv-1", "KEYVALUE": "sekrit-kv-2", "auth": "sekrit-auth-3", "X-Auth-Token": "sekrit-4",
			"credential": "sekrit-cred-5", "Credentials": "sekrit-cred-6", "cookie": "sekrit-cookie-7", "SetCookie": "sekrit-8",
			"password": "sekrit-pw-9", "key": "sekrit-key-10",
		}
		q := "?locationid=0"
		for name, v := range secrets {
			q += "&" + name + "=" + v
		}
		r := e.Admin.Expect(http.StatusOK, "PUT", "/V5/templates"+q, profilesBody("masked-query"))
		recs := findAudit(readAudit(t, e.Admin, "?resourcetype=templates"), r)
		if len(recs) != 1 {
			t.Fatalf("%d records of the call, want 1", len(recs))
		}
		ev := stream.next(t, 1)[0]
		for name, v := range secrets {
			if strings.Contains(recs[0].Path, v) || !strings.Contains(recs[0].Path, name+"=***") {
				t.Errorf("audit path %q: %s not masked", recs[0].Path, name)
			}
			if strings.Contains(string(ev.Event.Data), v) {
				t.Errorf("the event stream shows %s's value: %s", name, ev.Event.Data)
			}
		}
		if !strings.Contains(recs[0].Path, "locationid=0") {
			t.Errorf("audit path %q lost an ordinary parameter", recs[0].Path)
		}
	})
}

// A location-scoped ADMINISTRATOR reads only the audit records of calls
// at or below its locations, and of its own calls: not the calls at other
// sites, nor those that concern the whole customer. Before, a site's
// ADMINISTRATOR read the whole customer's audit log.
func TestAuditLogScopedToLocations(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := newAuthzFixture(t, b)
		e := f.E
		_, site := e.NewUser(t, apitest.UserSpec{Role: wnms.Administrator, Locations: []int64{f.Site.ID.ID}})
		at := func(c *apitest.Client, want int, loc int64, name string) *apitest.Response {
			return c.Expect(want, "PUT", fmt.Sprintf("/V5/templates?locationid=%d", loc), profilesBody(name))
		}
		inside := at(e.Admin, http.StatusOK, f.Floor.ID.ID, "on the site's floor")
		elsewhere := at(e.Admin, http.StatusOK, f.OtherFloor.ID.ID, "on another site's floor")
		root := at(e.Admin, http.StatusOK, wnms.RootLocation, "at the root")
		// A user granted the other site only: its record is at that site.
		otherUser := e.Admin.Expect(http.StatusOK, "PUT", "/V5/users", map[string]any{"user": map[string]any{
			"loginId": "other-site-viewer", "role": "VIEWER", "userType": "API",
			"allowedLocations": []any{map[string]any{"type": "locallocationid", "id": f.Other.ID.ID}}}})
		// A user granted both sites: its record is at the root.
		bothUser := e.Admin.Expect(http.StatusOK, "PUT", "/V5/users", map[string]any{"user": map[string]any{
			"loginId": "both-sites-viewer", "role": "VIEWER", "userType": "API",
			"allowedLocations": []any{map[string]any{"type": "locallocationid", "id": f.Floor.ID.ID},
				map[string]any{"type": "locallocationid", "id": f.OtherFloor.ID.ID}}}})
		own := at(site, http.StatusOK, f.Site.ID.ID, "the site admin's own")
		refused := at(site, http.StatusForbidden, f.OtherFloor.ID.ID, "the site admin tries elsewhere")

		all := readAudit(t, e.Admin, "?limit=1000")
		mine := readAudit(t, site, "?limit=1000")
		for _, c := range []struct {
			name       string
			r          *apitest.Response
			rootSees   bool
			scopedSees bool
		}{
			{"a call on the site's floor", inside, true, true},
			{"a call on another site", elsewhere, true, false},
			{"a call at the root", root, true, false},
			{"a user of another site", otherUser, true, false},
			{"a user of both sites", bothUser, true, false},
			{"the site admin's own call", own, true, true},
			{"the site admin's own refused call", refused, true, true},
		} {
			if got := len(findAudit(all, c.r)) == 1; got != c.rootSees {
				t.Errorf("%s: the root's ADMINISTRATOR sees it %v, want %v", c.name, got, c.rootSees)
			}
			if got := len(findAudit(mine, c.r)) == 1; got != c.scopedSees {
				t.Errorf("%s: the site's ADMINISTRATOR sees it %v, want %v", c.name, got, c.scopedSees)
			}
		}
		if mine.TotalCount != len(mine.AuditRecords) || mine.TotalCount >= all.TotalCount {
			t.Errorf("the site's ADMINISTRATOR: totalCount %d of %d records; the root's %d", mine.TotalCount,
				len(mine.AuditRecords), all.TotalCount)
		}
		for _, rec := range mine.AuditRecords {
			if rec.Actor.UserID != site.User.UserID && rec.ResourceType != "templates" {
				t.Errorf("the site's ADMINISTRATOR reads %+v", rec)
			}
		}
	})
}
