package httpkit

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/wnms"
	"github.com/wnms/wnms/openapi"
)

// Auditor records every state-changing call (any method but GET, HEAD and
// OPTIONS) in the audit log. The call's record travels in its context:
// the store writes it inside the transaction of the call's change, with
// the status the call answers when that change commits (Success); a call
// that commits no change (refused, invalid, failed) has its record written
// when it ends, with the status it answered. A call refused before a
// caller is known (401) is recorded only when it named one (a failed
// login).
type Auditor struct {
	Store wnms.AuditStore
	Log   *slog.Logger
	// Success is the status each route's call answers when its change
	// commits, by route pattern ("PUT /users"); 200 when not listed.
	Success map[string]int
	// Resource names the resource type of a route pattern; when nil, or
	// when it answers "", ResourceType derives it from the path.
	Resource func(pattern string) string
}

// Audited reports whether a call of this method changes state.
func Audited(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// NewAuditor returns the recorder of a listener's state-changing calls,
// with each call's success status read from the OpenAPI document.
func NewAuditor(st wnms.AuditStore, log *slog.Logger) *Auditor {
	success, err := openapi.SuccessStatuses()
	if err != nil {
		panic("openapi document: " + err.Error()) // embedded, and read by the tests too
	}
	return &Auditor{Store: st, Log: log, Success: success}
}

// begin starts the record of a call and returns the request carrying it.
func (a *Auditor) begin(r *http.Request, pattern string) (*http.Request, *wnms.AuditEntry) {
	path, query, _ := strings.Cut(r.RequestURI, "?")
	if path == "" {
		path = r.URL.Path
	}
	if q := wnms.MaskedQuery(query); q != "" {
		path += "?" + q
	}
	if len(path) > 2048 {
		path = path[:2048]
	}
	typ := ""
	if a.Resource != nil {
		typ = a.Resource(pattern)
	}
	if typ == "" {
		typ = ResourceType(pattern)
	}
	rec := wnms.AuditRecord{
		Actor:         wnms.AuditActor{Via: "http"},
		SourceAddress: addrHost(r.RemoteAddr),
		RequestID:     RequestID(r.Context()),
		Method:        r.Method,
		Path:          path,
		ResourceType:  typ,
		ResourceID:    resourceID(r, pattern),
		Status:        a.success(pattern),
	}
	e := wnms.NewAuditEntry(rec)
	return r.WithContext(wnms.WithAudit(r.Context(), e)), e
}

func (a *Auditor) success(pattern string) int {
	if s, ok := a.Success[pattern]; ok {
		return s
	}
	return http.StatusOK
}

// SetCaller names the authorized caller of a call as its actor.
func SetCaller(e *wnms.AuditEntry, c *wnms.Caller) {
	if e == nil || c == nil {
		return
	}
	e.SetActor(c.CustomerID(), ActorOf(c))
}

// ActorOf is the audit actor of a caller: a call a cluster parent forwarded
// is via "cluster:<parent>" and names the user the parent acted for.
func ActorOf(c *wnms.Caller) wnms.AuditActor {
	a := wnms.AuditActor{UserID: c.User.UserID, LoginID: c.User.LoginID, Role: c.User.Role, Via: "http"}
	if c.Session != nil {
		a.KeyID = c.Session.KeyID
	}
	if c.ActingFor != "" {
		who, parent, _ := strings.Cut(c.ActingFor, "@")
		a.Via = "cluster:" + parent
		a.LoginID = who + "@" + parent
	}
	return a
}

// finish writes the call's record when no transaction did, or corrects its
// status when the call answered otherwise than its change promised.
func (a *Auditor) finish(r *http.Request, e *wnms.AuditEntry, status int) {
	rec, id, stored := e.Finish(status)
	// The record outlives a client that went away: what was changed is
	// recorded whatever became of the answer.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	var err error
	switch {
	case id != 0 && rec.Status != stored:
		err = a.Store.SetAuditStatus(ctx, id, rec.Status)
	case id != 0:
	case rec.CustomerID == 0:
		return // no caller was ever known: nothing to attribute
	default:
		err = a.Store.AppendAudit(ctx, &rec)
	}
	if err != nil {
		a.Log.Error("audit record not written", "request_id", rec.RequestID, "method", rec.Method,
			"resource_type", rec.ResourceType, "status", rec.Status, "err", err)
	}
}

// ResourceType derives a resource type from a route pattern: its first
// path segment ("users", "templates", "layouts"), or its first two for the
// grouped areas ("configuration/snmp", "ingest/clientevents"); login and
// logout are the "session".
func ResourceType(pattern string) string {
	_, path, _ := strings.Cut(pattern, " ")
	var segs []string
	for s := range strings.SplitSeq(strings.Trim(path, "/"), "/") {
		if s != "" && !strings.HasPrefix(s, "{") && s != "global" {
			segs = append(segs, s)
		}
	}
	if len(segs) == 0 {
		return ""
	}
	switch segs[0] {
	case "login", "logout":
		return "session"
	case "configuration", "ingest", "devices", "api":
		if len(segs) > 1 {
			return segs[0] + "/" + segs[1]
		}
	}
	return segs[0]
}

// resourceID is the first path parameter of the call ({userid},
// {templateId}, ...), else its locationid query parameter.
func resourceID(r *http.Request, pattern string) string {
	if i := strings.Index(pattern, "{"); i >= 0 {
		name, _, _ := strings.Cut(pattern[i+1:], "}")
		name = strings.TrimSuffix(name, "...")
		if name != "clientidentifier" {
			if v := r.PathValue(name); v != "" {
				return v
			}
		}
	}
	if v, ok := QueryValue(r, "locationid"); ok {
		return v
	}
	return ""
}

// addrHost is the address part of a RemoteAddr.
func addrHost(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}
