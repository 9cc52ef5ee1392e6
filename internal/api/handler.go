package api

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/metrics"

	"github.com/wnms/wnms/internal/wnms"
)

// handlerFunc is a call's handler: it writes a success response or returns
// an error for writeError.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// roles is a set of access roles (POWERUSER counts as OPERATOR).
type roles uint8

const (
	roleVW roles = 1 << iota
	roleOP
	roleAD
	roleSU
)

func roleBit(r wnms.Role) roles {
	switch r.Access() {
	case wnms.Viewer:
		return roleVW
	case wnms.Operator:
		return roleOP
	case wnms.Administrator:
		return roleAD
	case wnms.SuperUser:
		return roleSU
	}
	return 0
}

// access is who may make a call.
type access struct {
	public   bool  // no session needed
	roles    roles // roles allowed when a session is needed
	pwChange bool  // allowed in a session opened only to change an expired password
}

var (
	public   = access{public: true}
	anyRole  = access{roles: roleVW | roleOP | roleAD | roleSU}
	suAdOp   = access{roles: roleOP | roleAD | roleSU}
	suAd     = access{roles: roleAD | roleSU}
	selfOnly = access{roles: roleVW | roleOP | roleAD | roleSU, pwChange: true}
)

// handle registers a call. The pattern is the method and the path below
// the version segment, as the interface names it.
func (s *Server) handle(pattern string, who access, h handlerFunc) {
	s.calls.Handle(pattern, s.wrap(pattern, who, h))
}

// wrap authenticates and authorizes a call, runs it, maps its error and
// records metrics.
func (s *Server) wrap(route string, who access, h handlerFunc) http.Handler {
	latency := s.Metrics.Latency.With(route)
	var byStatus sync.Map // status -> *metrics.Counter
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		err := s.authorize(r, who, func(r *http.Request) error { return h(sw, r) })
		if err != nil {
			s.writeError(sw, r, err)
		}
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		n, ok := byStatus.Load(status)
		if !ok {
			n, _ = byStatus.LoadOrStore(status, s.Metrics.Requests.With(route, strconv.Itoa(status)))
		}
		n.(*metrics.Counter).Inc()
		latency.Observe(time.Since(start).Seconds())
		if s.Log.Enabled(r.Context(), -4) {
			s.Log.Debug("request", "request_id", RequestID(r.Context()), "method", r.Method,
				"route", route, "status", status, "duration_ms", float64(time.Since(start).Microseconds())/1000)
		}
	})
}

// authorize resolves the session (unless the call is public), checks the
// role, and calls next with the caller in the request context.
func (s *Server) authorize(r *http.Request, who access, next func(*http.Request) error) error {
	if who.public {
		return next(r)
	}
	c, err := s.caller(r)
	if err != nil {
		return err
	}
	if c.Session.PasswordChange && !who.pwChange {
		return wnms.Errorf(wnms.AccessDenied, "the password has expired; change it with users/ownpassword first")
	}
	if who.roles&roleBit(c.Role()) == 0 {
		return wnms.Errorf(wnms.AccessDenied, "role %s may not make this call", c.Role())
	}
	return next(r.WithContext(wnms.WithCaller(r.Context(), c)))
}

// caller authenticates the request's JSESSIONID cookie.
func (s *Server) caller(r *http.Request) (*wnms.Caller, error) {
	var token string
	if ck, err := r.Cookie(SessionCookie); err == nil {
		token = ck.Value
	}
	return s.Auth.Authenticate(r.Context(), token)
}

// SessionCookie is the cookie that carries the session.
const SessionCookie = "JSESSIONID"

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
