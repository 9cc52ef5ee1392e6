// Package analytics is the second listener of wnms: location analytics
// under /api/v1.N, with its own error envelope. It accepts the JSESSIONID
// session of the main listener.
package analytics

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// Store is what the analytics listener reads and writes: the location
// tree (for scope), zone configurations, and floor layouts.
type Store interface {
	access.Locations
	wnms.ZoneStore
	wnms.AuditStore
	Layout(ctx context.Context, locationID int64) (*wnms.FloorLayout, error)
}

// Server is the analytics listener's handler. Set its fields before it
// serves.
type Server struct {
	Store Store
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
	// Router is the listener's plumbing and route table (httpkit).
	Router *httpkit.Router
}

// New builds the analytics server with ServerID 1, reading floor
// dimensions from the store. m holds the HTTP series both listeners
// share.
func New(st Store, a *auth.Service, log *slog.Logger, m *httpkit.Metrics) *Server {
	s := &Server{Store: st, Auth: a, Log: log, ServerID: 1, Layouts: storeLayouts{st},
		Router: httpkit.NewRouter("analytics", log, m, a, writeErrorBody)}
	s.Router.Audit = httpkit.NewAuditor(st, log)
	s.routes()
	s.Router.Root.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		httpkit.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.Router.Root.HandleFunc("/api/", s.dispatch)
	return s
}

// routes lists the analytics calls, below /api/v1.N (docs/api.md §13).
func (s *Server) routes() {
	// Zone configuration (api.md §13; roles §4).
	s.handle("GET /analytics/graphs/locationtracking/zones/ap/config", anyRole, s.getZoneConfig)
	s.handle("PUT /analytics/graphs/locationtracking/zones/ap/config", suAd, s.putZoneConfig)

	// Extensions.
	s.handle("GET /session", anyRole, s.session)
}

// ServeHTTP serves the analytics listener (httpkit.Router.ServeHTTP), every
// answer Cache-Control: no-store, as the main listener's.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	s.Router.ServeHTTP(w, r)
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
		s.Router.WriteError(w, r, wnms.NotFound("no such path: %s (expected /api/v1.N/...)", r.URL.Path))
		return
	}
	s.Router.ServeCalls(w, r, "/"+after)
}

// The access rules of the analytics calls.
var (
	anyRole = access.AnyRole
	suAd    = access.SuAd
)

// handle registers a call that needs a session of one of the roles in who.
// No or an expired session is 401; another role, or a session opened only
// to change an expired password, is 403 ACCESS_DENIED. In a cluster
// every analytics call is the server_id's: the cluster's interceptor
// forwards a child's to it.
func (s *Server) handle(pattern string, who access.Rule, h httpkit.HandlerFunc) {
	s.Router.Handle(pattern, who, httpkit.Forwarded, h)
}

// session answers who the session belongs to: a cheap check that a main
// listener session works here.
func (s *Server) session(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	httpkit.WriteJSON(w, http.StatusOK, map[string]any{"success": true, "message": "",
		"data": map[string]any{"loginId": c.User.LoginID, "role": c.User.Role}})
	return nil
}

// errorEnvelope is the analytics error body (api.md §3).
type errorEnvelope struct {
	Success bool          `json:"success"`
	Message string        `json:"message"`
	Data    []errorDetail `json:"data"`
}

type errorDetail struct {
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
}

// writeErrorBody writes the analytics error envelope for e.
func writeErrorBody(w http.ResponseWriter, e *wnms.Error) {
	httpkit.WriteJSON(w, httpkit.Status(e.Code), errorEnvelope{Success: false, Message: e.Message,
		Data: []errorDetail{{ErrorCode: e.Code, Message: e.Message}}})
}

// ErrorJSON is the analytics listener's error envelope for a status and
// code: what the connection layer (httpkit.Listener) answers outside any
// handler.
func ErrorJSON(status int, code, message string) []byte {
	b, _ := json.Marshal(errorEnvelope{Success: false, Message: message, Data: []errorDetail{{ErrorCode: code, Message: message}}})
	return b
}
