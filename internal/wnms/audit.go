package wnms

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"unicode/utf8"
)

// AuditActor is who made a recorded change.
type AuditActor struct {
	UserID  int64  `json:"userId"`
	LoginID string `json:"loginId"`
	KeyID   string `json:"keyId"`
	Role    Role   `json:"role"`
	// Via is how the change arrived: "http", "cli", or "cluster:<parent>"
	// for a call a cluster parent forwarded (parent = the parent's server
	// id, and LoginID the user it forwarded for as loginId@serverID).
	Via string `json:"via"`
}

// AuditRecord is one entry of the audit log: a state-changing call on
// either listener, a login, failed login, lockout or logout, or a change
// made with the command line. It never holds a secret or a secret's value:
// Path's query string has the values of secret parameters masked,
// ChangedFields names the fields a call sent, and Changes shows every
// secret field as "***" (AuditSecretFields).
type AuditRecord struct {
	ID            int64      `json:"id"`
	Timestamp     int64      `json:"timestamp"`
	CustomerID    int64      `json:"customerId"`
	Actor         AuditActor `json:"actor"`
	SourceAddress string     `json:"sourceAddress"`
	RequestID     string     `json:"requestId"`
	Method        string     `json:"method"`
	Path          string     `json:"path"`
	ResourceType  string     `json:"resourceType"`
	ResourceID    string     `json:"resourceId"`
	Status        int        `json:"status"`
	ChangedFields []string   `json:"changedFields"`
	// ResourceName names the resource as people know it: a user's loginId,
	// a location's or profile's name, a webhook's URL host, a key's user
	// and id. "" when the call named none that exists (a refused create).
	ResourceName string `json:"resourceName"`
	// Changes are the fields a committed configuration change changed,
	// each with its value before and after (Diff): a creation has every
	// before null, a deletion every after null; [] when the call
	// committed no change. ChangesOmitted counts the changes left out
	// beyond MaxAuditChanges.
	Changes        []AuditChange `json:"changes"`
	ChangesOmitted int           `json:"changesOmitted,omitempty"`
	// LocationPath is where the call was: the materialized path of the
	// location it was checked against (every call that takes a location
	// is), or of the deepest location holding all of them when it was
	// checked against several; "" for a call that named no location,
	// which concerns the whole customer. A location-scoped caller reads
	// only the records inside its scope (AuditQuery.Scope).
	LocationPath string `json:"-"`
}

// AuditQuery selects audit records of one customer, newest first.
type AuditQuery struct {
	CustomerID int64
	// Scope, when not nil, keeps only the records at or below one of
	// these location paths (a location-scoped caller's subtrees), and
	// those of user Self's own calls.
	Scope        []string
	Self         int64
	From, To     int64  // ms, inclusive; -1: unbounded
	LoginID      string // "" any
	ResourceType string // "" any
	Offset       int
	Limit        int
}

// AuditStore keeps the audit log.
type AuditStore interface {
	// AppendAudit stores a record on its own, for a call that changed
	// nothing (refused or failed) and for changes recorded outside a
	// transaction of the store.
	AppendAudit(ctx context.Context, r *AuditRecord) error
	// AuditRecords lists a customer's records, newest first, and how
	// many match.
	AuditRecords(ctx context.Context, q AuditQuery) ([]AuditRecord, int, error)
	// SetAuditStatus corrects the status of a record written with its
	// change, when the call answered otherwise than its change promised.
	SetAuditStatus(ctx context.Context, id int64, status int) error
	// PurgeAudit deletes the records older than before (ms).
	PurgeAudit(ctx context.Context, before int64) (int64, error)
}

// AuditEntry is the audit record of a call in progress. The record travels
// in the call's context: the store writes it inside the transaction of the
// call's change (Claim), so a change never commits without its record;
// a call that commits no change has its record written when it ends.
type AuditEntry struct {
	mu      sync.Mutex
	rec     AuditRecord
	written int64 // the stored record's id, once a transaction wrote it
	claimed bool
	located bool // rec.LocationPath was set by AddLocation
}

// SetChange records what the call's change does to its resource: its name
// and the field-level change from before to after (nil for a creation's
// before and a deletion's after; see Diff). A transaction sets it before
// it writes the record (Claim), and sets it again when it runs again; the
// changes of a transaction that did not commit are never recorded
// (Finish drops them).
func (e *AuditEntry) SetChange(name string, before, after any) {
	changes, omitted := Diff(before, after)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rec.ResourceName = name
	e.rec.Changes, e.rec.ChangesOmitted = changes, omitted
}

// SetResourceName names the call's resource where no change does (a
// login's user, a refused call's target).
func (e *AuditEntry) SetResourceName(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rec.ResourceName = name
}

// NewAuditEntry starts the record of a call.
func NewAuditEntry(r AuditRecord) *AuditEntry { return &AuditEntry{rec: r} }

// SetActor names who makes the call: a login names its user here once the
// credentials are known, so that its record (and a failed attempt's) says
// who it was.
func (e *AuditEntry) SetActor(customerID int64, a AuditActor) {
	e.mu.Lock()
	defer e.mu.Unlock()
	via := e.rec.Actor.Via
	e.rec.Actor, e.rec.CustomerID = a, customerID
	if a.Via == "" {
		e.rec.Actor.Via = via
	}
}

// SetResource names what the call changed, when the route alone does not
// (a created resource's id).
func (e *AuditEntry) SetResource(typ, id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if typ != "" {
		e.rec.ResourceType = typ
	}
	if id != "" {
		e.rec.ResourceID = id
	}
}

// AddLocation says the call was checked against the location at path:
// the record's location is the deepest one holding every location the
// call was checked against.
func (e *AuditEntry) AddLocation(path string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.located {
		e.rec.LocationPath, e.located = path, true
		return
	}
	e.rec.LocationPath = CommonPath(e.rec.LocationPath, path)
}

// CommonPath is the materialized path of the deepest location holding
// both a and b (both materialized paths, "/0/5/7/").
func CommonPath(a, b string) string {
	n := 0
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		if a[i] == '/' {
			n = i + 1
		}
	}
	return a[:n]
}

// SetChangedFields records the names of the fields the call sent.
func (e *AuditEntry) SetChangedFields(names []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rec.ChangedFields = names
}

// Record is the record as it stands.
func (e *AuditEntry) Record() AuditRecord {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rec
}

// Claim hands the record to a transaction about to commit a change: ok is
// false when an earlier transaction of the call holds it already. The
// transaction stores rec and reports its id with Written, or Release if it
// does not commit.
func (e *AuditEntry) Claim() (rec AuditRecord, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.claimed || e.rec.CustomerID == 0 {
		return AuditRecord{}, false
	}
	e.claimed = true
	e.nameSession()
	return e.rec, true
}

// nameSession names a login's, logout's or keep-alive's resource: the
// session's user.
func (e *AuditEntry) nameSession() {
	if e.rec.ResourceType == "session" && e.rec.ResourceName == "" {
		e.rec.ResourceName = e.rec.Actor.LoginID
	}
}

// Written says the claimed record committed with id.
func (e *AuditEntry) Written(id int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.written = id
}

// Release gives back a claim whose transaction did not commit.
func (e *AuditEntry) Release() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.written == 0 {
		e.claimed = false
	}
}

// Finish returns the record as the call ended with status, the id of the
// record a transaction already stored (0: none; the caller stores it) and
// the status that stored record holds.
func (e *AuditEntry) Finish(status int) (rec AuditRecord, id int64, stored int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	stored = e.rec.Status
	e.rec.Status = status
	e.claimed = true // nothing may claim it after the call ended
	e.nameSession()
	if e.written == 0 {
		// No change committed: what a rolled-back transaction would have
		// changed is not a change.
		e.rec.Changes, e.rec.ChangesOmitted = nil, 0
	}
	return e.rec, e.written, stored
}

type auditKey struct{}

// WithAudit returns a context carrying the call's audit entry.
func WithAudit(ctx context.Context, e *AuditEntry) context.Context {
	return context.WithValue(ctx, auditKey{}, e)
}

// AuditFrom returns the audit entry in ctx, or nil.
func AuditFrom(ctx context.Context) *AuditEntry {
	e, _ := ctx.Value(auditKey{}).(*AuditEntry)
	return e
}

// secretWords mark a query parameter whose value is a secret, matched
// anywhere in its name whatever the case (keyValue, X-Auth-Token,
// credentials, cookie: decisions §23).
var secretWords = []string{"pass", "secret", "token", "community", "apikey", "authkey", "privkey", "jsessionid",
	"keyvalue", "auth", "credential", "cookie"}

// IsSecretName reports whether a parameter or field of this name holds a
// secret (a password, key, token, credential, cookie, community or
// passphrase).
func IsSecretName(name string) bool {
	n := strings.ToLower(name)
	if n == "key" {
		return true
	}
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// MaskedQuery is a raw query string as sent, with the value of every
// secret parameter replaced by "***". A query that does not parse is kept
// only as its parameter names.
func MaskedQuery(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		n, err := url.QueryUnescape(name)
		if err != nil {
			n = name
		}
		if hasValue && IsSecretName(n) {
			parts[i] = name + "=***"
		}
	}
	return strings.Join(parts, "&")
}

// Limits of the field names an audit record keeps.
const (
	maxAuditFields    = 64
	maxAuditFieldName = 64
)

// FieldNames returns the names of the top-level fields of a JSON object
// body, in the order sent, at most 64 of at most 64 bytes each; nil when
// the body is not an object. Values are never looked at beyond skipping
// them.
func FieldNames(body []byte) []string {
	names, _ := BodyFields(body)
	return names
}

// nameFields are the body fields that name a resource, by preference.
var nameFields = map[string]int{"loginId": 1, "templateName": 2, "name": 3, "url": 4}

// BodyFields is FieldNames and, in the same pass, the name the body gives
// its resource, as the audit log shows it until the store names it: its
// loginId, templateName or name, else its url's host; "" for none.
func BodyFields(body []byte) (names []string, name string) {
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] != '{' {
		return nil, ""
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return nil, ""
	}
	names = []string{}
	seen := map[string]bool{}
	rank := len(nameFields) + 1
	for dec.More() && len(names) < maxAuditFields {
		t, err := dec.Token()
		if err != nil {
			break
		}
		field, _ := t.(string)
		key := field
		if len(field) > maxAuditFieldName {
			field = field[:maxAuditFieldName]
		}
		if !seen[field] {
			seen[field] = true
			names = append(names, field)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		if r, ok := nameFields[key]; ok && r < rank {
			var str string
			if json.Unmarshal(v, &str) == nil && str != "" {
				if key == "url" {
					u, err := url.Parse(str)
					if err != nil {
						continue
					}
					str = u.Host
				}
				name, rank = str, r
			}
		}
	}
	return names, truncate(name, maxAuditFieldName*4)
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
