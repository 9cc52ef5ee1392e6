// Package httpkit is the HTTP plumbing both listeners share: who may make
// a call, the session cookie, JSON bodies in and out, and the answer to a
// path no call matches. Each listener keeps its own error envelope.
package httpkit

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/wnms"
)

// SessionCookie is the cookie that carries the session.
const SessionCookie = "JSESSIONID"

// MaxJSONBody is the largest JSON body a call accepts (api.md §14),
// but for the larger bodies below.
const MaxJSONBody = 1 << 20

// MaxLayoutBody is the largest floor layout a POST /layouts may send: a
// layout of many fully spelled-out obstacles passes 1 MiB.
const MaxLayoutBody = 16 << 20

// Authorize resolves the request's session and checks it against the
// rule: no or a dead session is 401; another role, or a session opened
// only to change an expired password, is 403 ACCESS_DENIED. A public call
// has no caller.
func Authorize(a *auth.Service, r *http.Request, rule access.Rule) (*wnms.Caller, error) {
	if rule.Public {
		return nil, nil
	}
	var token string
	if ck, err := r.Cookie(SessionCookie); err == nil {
		token = ck.Value
	}
	c, err := a.Authenticate(r.Context(), token)
	if err != nil {
		return nil, err
	}
	capped, err := applyRoleCap(c, r)
	if err != nil {
		return c, err // the audit record names who sent the headers
	}
	c = capped
	return c, access.Check(c, rule)
}

// applyRoleCap lowers the caller's role to the request's X-Wnms-Role-Cap,
// when it names a lower role, and records X-Wnms-Acting-For. Only the
// session of a key made for a cluster parent may send either header
// (decisions §23): from anyone else they are INVALID_PARAMETER, since
// X-Wnms-Acting-For would otherwise put any name in the audit log in the
// caller's place. A cap that names no role caps at the lowest role,
// VIEWER: a garbled header never leaves a call with more rights than a
// well-formed one could.
func applyRoleCap(c *wnms.Caller, r *http.Request) (*wnms.Caller, error) {
	v, capped := r.Header[wnms.RoleCapHeader]
	_, acts := r.Header[wnms.ActingForHeader]
	acting := r.Header.Get(wnms.ActingForHeader)
	if !capped && !acts {
		return c, nil
	}
	if c.Session == nil || !c.Session.ClusterParent {
		name := wnms.ActingForHeader
		if capped {
			name = wnms.RoleCapHeader
		}
		return nil, wnms.ParamError(name, "%s is sent only by a cluster parent, on the session of a key made with wnms apikey create --cluster-parent", name)
	}
	var role wnms.Role
	if capped {
		var ok bool
		if role, ok = wnms.ParseRole(strings.Join(v, ",")); !ok {
			role = wnms.Viewer
		}
	}
	if len(acting) > 256 {
		acting = acting[:256]
	}
	return c.Forwarded(role, acting), nil
}

// RequireJSON refuses a body declared as something other than JSON
// (UNSUPPORTED_MEDIA_TYPE). A missing Content-Type is accepted, as some
// clients send none.
func RequireJSON(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || !(mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "text/json") {
		return wnms.Errorf(wnms.UnsupportedMediaType, "the body must be application/json, not %q", ct)
	}
	return nil
}

// ReadJSON checks that the body is declared as JSON and reads at most max
// bytes of it; a longer body fails with *http.MaxBytesError, which both
// listeners answer as 413.
func ReadJSON(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if err := RequireJSON(r); err != nil {
		return nil, err
	}
	b, err := ReadBody(w, r, max)
	if err != nil {
		return nil, err
	}
	if err := wnms.CheckJSONText(b); err != nil {
		return nil, err
	}
	if e := wnms.AuditFrom(r.Context()); e != nil {
		// The name the body gives stands until the store names what the
		// call changed, so that a refused call names its target too.
		names, name := wnms.BodyFields(b)
		e.SetChangedFields(names)
		e.SetResourceName(name)
	}
	return b, nil
}

// ReadBody reads the request body, decoded from its Content-Encoding, at
// most max bytes after decoding: a longer body (or a gzip body that
// inflates past max) fails with *http.MaxBytesError, answered as 413, and
// is never inflated further. gzip and identity are understood; any other
// encoding is UNSUPPORTED_MEDIA_TYPE. The buffer is sized from
// Content-Length when that is declared, so a body costs about its own size.
func ReadBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	var body io.Reader = http.MaxBytesReader(w, r.Body, max)
	encoded := false
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, err
			}
			return nil, wnms.Errorf(wnms.InvalidRequestBody, "the body is not valid gzip: %v", err)
		}
		defer zr.Close()
		body, encoded = io.LimitReader(zr, max+1), true
	default:
		return nil, wnms.Errorf(wnms.UnsupportedMediaType, "Content-Encoding %q is not supported: send the body plain or gzip", enc)
	}
	var buf bytes.Buffer
	if n := r.ContentLength; n > 0 && n <= max && !encoded {
		buf.Grow(int(n) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(body); err != nil {
		var mbe *http.MaxBytesError
		if encoded && !errors.As(err, &mbe) {
			return nil, wnms.Errorf(wnms.InvalidRequestBody, "the body is not valid gzip: %v", err)
		}
		return nil, err
	}
	if int64(buf.Len()) > max {
		return nil, &http.MaxBytesError{Limit: max}
	}
	return buf.Bytes(), nil
}

// DecodeJSON reads the body (ReadJSON) and decodes it into v
// (wnms.DecodeJSON).
func DecodeJSON(w http.ResponseWriter, r *http.Request, v any, max int64) error {
	body, err := ReadJSON(w, r, max)
	if err != nil {
		return err
	}
	return wnms.DecodeJSON(body, v)
}

// WriteJSON writes v as the JSON body with the given status. Our values
// always encode; if one does not, it panics before writing anything, and
// the listener's recovery answers with its own 500.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic("encode response: " + err.Error())
	}
	WriteRawJSON(w, status, b)
}

var jsonContentType = []string{"application/json"}

// WriteRawJSON writes encoded JSON as the body with the given status.
func WriteRawJSON(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(status)
	w.Write(b)
}

// Allowed lists the methods for which mux has a call at r's path, other
// than its catch-all "/": the Allow header of a 405.
func Allowed(mux *http.ServeMux, r *http.Request) []string {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
		if _, p := mux.Handler(probe); p != "/" && p != "" {
			allow = append(allow, m)
		}
	}
	return allow
}

// Unmatched is the error for a path no call of mux matches: 405
// METHOD_NOT_ALLOWED with Allow set when another method would match, else
// 404 RESOURCE_NOT_FOUND.
func Unmatched(mux *http.ServeMux, w http.ResponseWriter, r *http.Request) error {
	allow := Allowed(mux, r)
	if len(allow) == 0 {
		return wnms.NotFound("no such path: %s", r.URL.Path)
	}
	list := strings.Join(allow, ", ")
	w.Header().Set("Allow", list)
	return wnms.Errorf(wnms.MethodNotAllowed, "%s is not allowed here; use %s", r.Method, list)
}

// WithPath returns a shallow copy of r whose URL path is p, for serving
// the rest of a path below a prefix.
func WithPath(r *http.Request, p string) *http.Request {
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path, u.RawPath = p, ""
	r2.URL = &u
	return r2
}

// CleanPath reports whether p has no empty, "." or ".." segments (a
// trailing slash aside): the mux would answer any other path with a
// redirect, where an API client wants an answer.
func CleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	return c == p || c+"/" == p
}

// CollapseSlashes makes every run of slashes in r's path one slash, in
// place: real clients build links such as /new//webservice/sfiles?id=…,
// and repeated slashes mean nothing else here (api.md §1). Dot segments
// are left for CleanPath to refuse.
func CollapseSlashes(r *http.Request) {
	p := r.URL.Path
	if !strings.Contains(p, "//") {
		return
	}
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && i > 0 && p[i-1] == '/' {
			continue
		}
		b.WriteByte(p[i])
	}
	u := *r.URL
	u.Path, u.RawPath = b.String(), ""
	r.URL = &u
}

// Classify turns any error a call returned into the error its client may
// see. internal is true for errors the client must not see the detail of
// (INTERNAL_ERROR, to be logged with the request id); clientFault is true
// for failures of the client's own making that are worth no more than a
// debug log line (a body cut short, a canceled request).
func Classify(err error) (e *wnms.Error, internal, clientFault bool) {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &e):
		return e, false, false
	case errors.As(err, &mbe):
		return wnms.Errorf(wnms.PayloadTooLarge, "body larger than %d bytes", mbe.Limit), false, true
	case errors.Is(err, io.ErrUnexpectedEOF):
		// net/http reports a body shorter than its Content-Length this way.
		return wnms.Errorf(wnms.InvalidRequestBody, "the body ended before its declared Content-Length"), false, true
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The body did not arrive within its deadline (LimitBodyTime); a
		// context's deadline (a slow store) is not this, and stays internal.
		return wnms.Errorf(wnms.InvalidRequestBody, "the body did not arrive in time"), false, true
	case errors.Is(err, context.Canceled):
		return wnms.Errorf(wnms.InternalError, "request canceled"), false, true
	}
	return wnms.Errorf(wnms.InternalError, "internal error; see the server log"), true, false
}
