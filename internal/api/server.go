// Package api is the main listener of wnms: the HTTP interface of
// interface.md under the base path /new/webservice, plus the operational
// endpoints. routes.go lists every call; each resource has its own file.
// Handlers return errors; one function turns them into the JSON error body.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wnms/wnms/internal/auth"
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

// Server is the main listener's handler.
type Server struct {
	Store   wnms.Store
	Auth    *auth.Service
	Log     *slog.Logger
	Info    Info
	Metrics *Metrics

	root  *http.ServeMux // operational endpoints and the base path
	calls *http.ServeMux // the calls, by path below the version segment
	reqID atomic.Uint64
	boot  string
}

// Metrics are the server's Prometheus series.
type Metrics struct {
	Registry      *metrics.Registry
	Requests      *metrics.CounterVec
	Latency       *metrics.HistogramVec
	LoginFailures *metrics.CounterVec
}

// NewMetrics registers the server's series.
func NewMetrics(reg *metrics.Registry) *Metrics {
	return &Metrics{
		Registry: reg,
		Requests: reg.Counter("wnms_http_requests_total", "HTTP requests by route and status.", "route", "status"),
		Latency: reg.Histogram("wnms_http_request_duration_seconds", "HTTP request latency by route.",
			[]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}, "route"),
		LoginFailures: reg.Counter("wnms_login_failures_total", "Failed login attempts."),
	}
}

// New builds the server and its routes.
func New(st wnms.Store, a *auth.Service, log *slog.Logger, info Info, m *Metrics) *Server {
	s := &Server{Store: st, Auth: a, Log: log, Info: info, Metrics: m,
		root: http.NewServeMux(), calls: http.NewServeMux(), boot: auth.RandomToken(4)}
	prev := a.OnLoginFailure
	a.OnLoginFailure = func() {
		m.LoginFailures.Inc()
		if prev != nil {
			prev()
		}
	}
	s.routes()
	s.calls.HandleFunc("/", s.unmatched)
	s.root.HandleFunc("GET /healthz", s.healthz)
	s.root.HandleFunc("GET /readyz", s.readyz)
	s.root.HandleFunc("GET /metrics", s.metrics)
	s.root.HandleFunc(BasePath+"/", s.dispatch)
	s.root.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { s.unmatchedIn(s.root, w, r) })
	return s
}

// ServeHTTP gives every request an id, recovers panics and logs failures.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("X-Request-Id")
	if id == "" || len(id) > 64 {
		id = s.boot + "-" + strconv.FormatUint(s.reqID.Add(1), 10)
	}
	w.Header()["X-Request-Id"] = []string{id}
	// One copy of the request carries the id and room for the caller.
	r = r.WithContext(wnms.WithCallerSlot(withRequestID(r.Context(), id)))
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
			s.Log.Error("panic", "request_id", id, "method", r.Method, "path", r.URL.Path,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			s.writeError(w, r, errors.New("panic"))
		}
	}()
	s.root.ServeHTTP(w, r)
}

type requestIDKey struct{}

func withRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the id of the request in ctx.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// unversioned are the first path segments that may come without a version.
var unversioned = map[string]bool{"login": true, "logout": true, "sfiles": true, "openapi.json": true}

// isVersion reports whether seg is a version segment V1–V7 (any case).
func isVersion(seg string) bool {
	return len(seg) == 2 && (seg[0] == 'v' || seg[0] == 'V') && seg[1] >= '1' && seg[1] <= '7'
}

// dispatch strips the base path and the version segment and serves the
// rest from the call table.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, BasePath)
	seg, after, _ := strings.Cut(strings.TrimPrefix(rest, "/"), "/")
	switch {
	case isVersion(seg):
		rest = "/" + after
	case unversioned[seg]:
	default:
		s.writeError(w, r, wnms.NotFound("no such path: %s (a version segment V1-V7 is required)", r.URL.Path))
		return
	}
	// r is this server's own copy (ServeHTTP made it), but its URL is
	// shared with net/http's: give it its own URL with the path below the
	// version segment rather than copy the whole request again.
	u := *r.URL
	u.Path, u.RawPath = rest, ""
	r.URL = &u
	s.calls.ServeHTTP(w, r)
}

// unmatched answers a path no call matches: 405 with Allow when another
// method would match, else 404.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request) { s.unmatchedIn(s.calls, w, r) }

func (s *Server) unmatchedIn(mux *http.ServeMux, w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, httpkit.Unmatched(mux, w, r))
}

// errorBody is the error body of decisions.md §3.
type errorBody struct {
	Status int         `json:"status"`
	Errors []errorItem `json:"errors"`
}

type errorItem struct {
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
	MoreInfo  string `json:"moreInfo"`
}

// writeError writes the JSON error body for err. Internal errors are logged
// with the request id and never shown.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e, internal, clientFault := httpkit.Classify(err)
	id := RequestID(r.Context())
	switch {
	case internal:
		s.Log.Error("request failed", "request_id", id, "method", r.Method, "path", r.URL.Path, "error", err.Error())
		e = &wnms.Error{Code: e.Code, Message: e.Message + " (request " + id + ")"}
	case clientFault:
		s.Log.Debug("request failed by the client", "request_id", id, "method", r.Method, "path", r.URL.Path, "error", err.Error())
	}
	if e.Code == wnms.RateLimited && w.Header().Get("Retry-After") == "" {
		retry := 60
		if e.RetryAfter > 0 {
			retry = e.RetryAfter
		}
		w.Header().Set("Retry-After", strconv.Itoa(retry))
	}
	httpkit.WriteJSON(w, e.Status(), errorBody{Status: e.Status(),
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

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

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
	httpkit.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	s.Metrics.Registry.Write(w)
}
