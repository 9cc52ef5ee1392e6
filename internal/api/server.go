// Package api is the main listener of wnms: the vendor's HTTP interface
// under the base path /new/webservice (docs/api.md), plus the operational
// endpoints. routes.go lists every call; each resource has its own file.
// Handlers return errors; one function turns them into the JSON error body.
package api

import (
	"context"
	"encoding/json"

	"net/http"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/app"
	"github.com/wnms/wnms/internal/cluster"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/wnms"
)

// BasePath is where the interface lives on the main listener.
const BasePath = "/new/webservice"

// Info describes this server for the system calls.
type Info struct {
	Version   string
	Build     string
	ServerID  int
	DataDir   string // backups are listed from DataDir/backups
	ServerURL string
	Hostname  string
	TLS       bool
	StartedAt time.Time
}

// Server is the main listener's handler: the HTTP face of the services
// app.New built (Services), and the hooks the binary gives it.
type Server struct {
	*app.Services
	Info Info
	// Router is the listener's plumbing and route table; its Intercept
	// hook sees every authorized call before its handler.
	Router *httpkit.Router
	// OnSNMPPolicyChange is called after an SNMP policy is stored (the
	// agent re-reads it at once).
	OnSNMPPolicyChange func()
	// CheckDataSources (optional) checks a customer's new data source
	// configuration against the other customers' and the listeners'
	// (a prefix another customer claims, an upstream that does not
	// resolve) before it is stored.
	CheckDataSources func(ctx context.Context, customerID int64, d *wnms.DataSources) error
	// OnDataSourcesChange is called after a data source configuration
	// is stored (the listeners re-read it at once).
	OnDataSourcesChange func()
	// DataSourceStatus (optional) tells what this server's listeners saw
	// of a customer's sources srcs and, with upstreams, of its RADIUS
	// upstreams (GET /datasources/status); nil answers every source idle
	// and no upstream.
	DataSourceStatus func(customerID int64, srcs []wnms.DataSource, upstreams bool, now time.Time) *wnms.DataSourceStatus
	// Cluster is set on a parent server: its children and their state
	// (system info, /readyz). Calls reach them through Router.Intercept.
	Cluster *cluster.Cluster
	// StreamRecheck is how often an open event stream checks its
	// session (DefaultStreamRecheck when 0).
	StreamRecheck time.Duration
}

// New builds the main listener over the services svc. m holds the HTTP
// series both listeners share.
func New(svc *app.Services, info Info, m *httpkit.Metrics) *Server {
	s := &Server{Services: svc, Info: info, Router: httpkit.NewRouter("api", svc.Log, m, svc.Auth, writeErrorBody)}
	s.Router.Audit = httpkit.NewAuditor(svc.Store, svc.Log)
	s.routes()
	return s
}

// noStore is the Cache-Control value of every answer but the console's,
// shared rather than made per request. A header value is only ever
// replaced (Set) or appended to (Add, which copies a full slice), never
// written in place.
var noStore = []string{"no-store"}

// ServeHTTP serves the main listener (httpkit.Router.ServeHTTP). Every
// answer but the console's page and files is Cache-Control: no-store: it
// holds a user's data, which no browser cache or proxy may keep.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.Path; p != "/" && !strings.HasPrefix(p, "/console/") {
		w.Header()["Cache-Control"] = noStore
	}
	s.Router.ServeHTTP(w, r)
}

// RequestID returns the id of the request in ctx.
func RequestID(ctx context.Context) string { return httpkit.RequestID(ctx) }

// unversioned are the first path segments that may come without a version.
var unversioned = map[string]bool{"login": true, "logout": true, "sfiles": true, "openapi.json": true}

// isVersion reports whether seg is a version segment V1–V7 (any case).
func isVersion(seg string) bool {
	return len(seg) == 2 && (seg[0] == 'v' || seg[0] == 'V') && seg[1] >= '1' && seg[1] <= '7'
}

// dispatch strips the base path and the version segment and serves the
// rest from the route table.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, BasePath)
	seg, after, _ := strings.Cut(strings.TrimPrefix(rest, "/"), "/")
	switch {
	case isVersion(seg):
		rest = "/" + after
	case unversioned[seg]:
	default:
		s.Router.WriteError(w, r, wnms.NotFound("no such path: %s (a version segment V1-V7 is required)", r.URL.Path))
		return
	}
	s.Router.ServeCalls(w, r, rest)
}

// errorBody is the main listener's error body (api.md §3).
type errorBody struct {
	Status int         `json:"status"`
	Errors []errorItem `json:"errors"`
}

type errorItem struct {
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
	MoreInfo  string `json:"moreInfo"`
}

// writeErrorBody writes the main listener's error body for e.
func writeErrorBody(w http.ResponseWriter, e *wnms.Error) {
	status := httpkit.Status(e.Code)
	httpkit.WriteJSON(w, status, errorBody{Status: status,
		Errors: []errorItem{{ErrorCode: e.Code, Message: e.Message, MoreInfo: e.MoreInfo}}})
}

// ErrorJSON is the main listener's error body for a status and code: what
// the connection layer (httpkit.Listener) answers outside any handler.
func ErrorJSON(status int, code, message string) []byte {
	b, _ := json.Marshal(errorBody{Status: status, Errors: []errorItem{{ErrorCode: code, Message: message}}})
	return b
}

// noContent answers 204 with an empty body.
func noContent(w http.ResponseWriter) error {
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// ok answers 200 with an empty body.
func okEmpty(w http.ResponseWriter) error {
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	httpkit.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.Store.Ping(ctx); err != nil {
		s.Log.Warn("not ready", "error", err.Error())
		httpkit.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable",
			"reason": "store not reachable, schema not current, or store cannot write"})
		return
	}
	if s.Cluster != nil && s.hasSession(r) {
		// A child that is down does not make the parent unready: its own
		// calls still work, and calls to that child say which is down.
		// Children's names, URLs and errors are shown to signed-in callers
		// only; anyone else learns ready or not (and /metrics has the
		// per-child state for monitoring).
		httpkit.WriteJSON(w, http.StatusOK, map[string]any{"status": "ready", "children": s.Cluster.Status()})
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// hasSession reports whether r carries a valid session of any role.
func (s *Server) hasSession(r *http.Request) bool {
	_, err := httpkit.Authorize(s.Auth, r, access.AnyRole)
	return err == nil
}

// ServeMetrics serves GET /metrics (Registry, no login) on this listener
// too; without it only the metrics listener serves it
// (`serve --metrics-listen api`).
func (s *Server) ServeMetrics() {
	s.Router.Root.Handle("GET /metrics", s.MetricsHandler()) // no login: see routes
}

// MetricsHandler serves the Registry in the text exposition format (GET
// and HEAD). It lives here, not in package metrics, so that the packages
// that count (telemetry, snmp, …) do not depend on net/http.
func (s *Server) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", metrics.ContentType)
		s.Registry.Write(w)
	})
}
