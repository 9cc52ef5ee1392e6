// Package analytics is the second listener of wnms: location analytics
// under /api/v1.N, with its own error envelope. It accepts the JSESSIONID
// session of the main listener.
package analytics

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// Server is the analytics listener's handler. Set its fields before it
// serves.
type Server struct {
	Store wnms.Store
	// Auth resolves sessions; its Now is the clock of every call here
	// ("today" of the zone configuration's date labels).
	Auth *auth.Service
	Log  *slog.Logger
	// ServerID is this server's serverID (system info), the only server_id
	// the zone configuration calls accept. New sets 1, a standalone server.
	ServerID int64
	// Layouts supplies floor layout dimensions to the zone configuration;
	// New reads them from the store's floor layouts.
	Layouts LayoutDims
	// Footfall supplies the daily client counts of the zone
	// configuration's footfall range; nil until telemetry is stored.
	Footfall FootfallSource

	root  *http.ServeMux
	calls *http.ServeMux
	reqID atomic.Uint64
	boot  string
}

// New builds the analytics server with ServerID 1, reading floor
// dimensions from the store.
func New(st wnms.Store, a *auth.Service, log *slog.Logger) *Server {
	s := &Server{Store: st, Auth: a, Log: log, ServerID: 1, Layouts: storeLayouts{st}, root: http.NewServeMux(),
		calls: http.NewServeMux(), boot: auth.RandomToken(4)}
	s.routes()
	s.calls.HandleFunc("/", s.unmatched)
	s.root.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		httpkit.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.root.HandleFunc("/api/", s.dispatch)
	s.root.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, wnms.NotFound("no such path: %s", r.URL.Path))
	})
	return s
}

// routes lists the analytics calls, below /api/v1.N, in the order of
// interface.md.
func (s *Server) routes() {
	// Zone configuration (decisions.md §16; roles §4).
	s.handle("GET /analytics/graphs/locationtracking/zones/ap/config", anyRole, s.getZoneConfig)
	s.handle("PUT /analytics/graphs/locationtracking/zones/ap/config", suAd, s.putZoneConfig)

	// Extensions.
	s.handle("GET /session", anyRole, s.session)
}

// ServeHTTP gives every request an id (X-Request-Id), recovers panics and
// serves the call.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("X-Request-Id")
	if id == "" || len(id) > 64 {
		id = s.boot + "-" + strconv.FormatUint(s.reqID.Add(1), 10)
	}
	w.Header().Set("X-Request-Id", id)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
	httpkit.CollapseSlashes(r)
	httpkit.LimitBodyTime(w, r)
	if !httpkit.CleanPath(r.URL.Path) {
		// The mux would redirect; a client of this API wants an answer.
		s.writeError(w, r, wnms.NotFound("no such path: %q", r.URL.Path))
		return
	}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.Log.Error("panic in analytics handler", "request_id", id, "path", r.URL.Path, "panic", p)
			s.writeError(w, r, errors.New("panic"))
		}
	}()
	s.root.ServeHTTP(w, r)
}

type requestIDKey struct{}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// isVersion reports whether seg is v1.N.
func isVersion(seg string) bool {
	rest, ok := strings.CutPrefix(strings.ToLower(seg), "v1.")
	if !ok || rest == "" {
		return false
	}
	_, err := strconv.Atoi(rest)
	return err == nil
}

func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/api/")
	seg, after, _ := strings.Cut(rest, "/")
	if !isVersion(seg) {
		s.writeError(w, r, wnms.NotFound("no such path: %s (expected /api/v1.N/...)", r.URL.Path))
		return
	}
	s.calls.ServeHTTP(w, httpkit.WithPath(r, "/"+after))
}

// handlerFunc is a call's handler: it writes a success response or returns
// an error for writeError.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// The access rules of the analytics calls.
var (
	anyRole = httpkit.AnyRole
	suAd    = httpkit.SuAd
)

// handle registers a call that needs a session of one of the roles in who.
// No or an expired session is 401; another role, or a session opened only
// to change an expired password, is 403 ACCESS_DENIED.
func (s *Server) handle(pattern string, who httpkit.Access, h handlerFunc) {
	s.calls.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		c, err := httpkit.Authorize(s.Auth, r, who)
		if err == nil {
			err = h(w, r.WithContext(wnms.WithCaller(r.Context(), c)))
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
}

// unmatched answers a path no call matches: 405 with Allow when another
// method would match, else 404.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, httpkit.Unmatched(s.calls, w, r))
}

// session answers who the session belongs to: a cheap check that a main
// listener session works here.
func (s *Server) session(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	httpkit.WriteJSON(w, http.StatusOK, map[string]any{"success": true, "message": "",
		"data": map[string]any{"loginId": c.User.LoginID, "role": c.User.Role}})
	return nil
}

// errorEnvelope is the analytics error body of decisions.md §3.
type errorEnvelope struct {
	Success bool          `json:"success"`
	Message string        `json:"message"`
	Data    []errorDetail `json:"data"`
}

type errorDetail struct {
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
}

// writeError writes the analytics error envelope for err with its status.
// Internal errors are logged with the request id and never shown.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e, internal, clientFault := httpkit.Classify(err)
	id := requestID(r.Context())
	switch {
	case internal:
		s.Log.Error("analytics request failed", "request_id", id, "method", r.Method, "path", r.URL.Path, "error", err.Error())
		e = wnms.Errorf(wnms.InternalError, "internal error; see the server log (request %s)", id)
	case clientFault:
		s.Log.Debug("analytics request failed by the client", "request_id", id, "method", r.Method, "path", r.URL.Path, "error", err.Error())
	}
	httpkit.WriteJSON(w, e.Status(), errorEnvelope{Success: false, Message: e.Message,
		Data: []errorDetail{{ErrorCode: e.Code, Message: e.Message}}})
}

// ErrorJSON is the analytics listener's error envelope for a status and
// code: what the connection layer (httpkit.Listener) answers outside any
// handler.
func ErrorJSON(status int, code, message string) []byte {
	b, _ := json.Marshal(errorEnvelope{Success: false, Message: message, Data: []errorDetail{{ErrorCode: code, Message: message}}})
	return b
}
