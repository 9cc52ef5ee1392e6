package httpkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/wnms"
)

// HandlerFunc is a call's handler: it writes a success response or returns
// an error, which the router turns into the listener's error body.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Call is a registered call as an Interceptor sees it.
type Call struct {
	// Pattern is the method and path of the call in the route table, as
	// registered ("GET /users/current").
	Pattern string
	// Access is who may make the call; the caller in the request's
	// context has passed it.
	Access access.Rule
	// Serve is the call's own handler, for an interceptor that answers
	// with the local answer and more (the cluster's fan-out).
	Serve HandlerFunc
	// Cluster is what the call does in a cluster, as its route declares.
	Cluster Cluster
}

// Cluster is what a call does in a server cluster (a parent and its
// child servers), as its route declares it.
type Cluster int

const (
	// Forwarded: a call that names a child (nodeid N ≠ 0) is the child's,
	// forwarded to it by the interceptor; on a server with no children,
	// naming one is INVALID_PARAMETER.
	Forwarded Cluster = iota
	// FannedOut: forwarded like Forwarded, and, on a session opened with
	// getClusterChildrenData=true, answered by this server and every
	// child at once, the answers merged (a list).
	FannedOut
	// Local: a call on the caller's session with this server (login,
	// logout, keep-alive): never forwarded, and a nodeid is
	// INVALID_PARAMETER.
	Local
)

// Interceptor sees every call after it was authorized and before its
// handler runs, and may answer it instead (handled true, or an error for
// the listener's error body). It is the one place where a call can be
// diverted as a whole, without touching its handler: the cluster's
// nodeid forwarding and fan-out to child servers belong here.
type Interceptor func(w http.ResponseWriter, r *http.Request, c Call) (handled bool, err error)

// Metrics are the HTTP series both listeners share, labelled by listener.
type Metrics struct {
	Requests *metrics.CounterVec
	Latency  *metrics.HistogramVec
}

// NewMetrics registers the HTTP series.
func NewMetrics(reg *metrics.Registry) *Metrics {
	return &Metrics{
		Requests: reg.Counter("wnms_http_requests_total", "HTTP requests by listener, route and status.", "listener", "route", "status"),
		Latency: reg.Histogram("wnms_http_request_duration_seconds", "HTTP request latency by listener and route.",
			[]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}, "listener", "route"),
	}
}

// Router is the plumbing of one listener: request ids, panic recovery,
// path normalization, body deadlines, dispatch to the route table, access
// checks, the interceptor, error classification, the request log and the
// metrics. A listener supplies only its name, its error envelope, how its
// paths reach the route table (Dispatch) and its routes.
type Router struct {
	Name    string // the listener, as the metrics and the log name it
	Log     *slog.Logger
	Metrics *Metrics
	Auth    *auth.Service
	// Envelope writes the listener's error body for e.
	Envelope func(w http.ResponseWriter, e *wnms.Error)
	// Intercept, if set, sees every authorized call first.
	Intercept Interceptor
	// Audit, if set, records every state-changing call in the audit log.
	Audit *Auditor
	// Hosts, if set, refuses requests whose Host header names the server
	// by a name it was not told it has (DNS rebinding).
	Hosts *Hosts

	// Root serves the listener's own paths (operational endpoints, and the
	// prefix under which Calls dispatches); Calls is the route table.
	Root  *http.ServeMux
	Calls *http.ServeMux

	reqID       atomic.Uint64
	boot        string
	patterns    []string
	crossOrigin *http.CrossOriginProtection
}

// Patterns are the registered calls' patterns, in registration order.
func (k *Router) Patterns() []string { return append([]string(nil), k.patterns...) }

// NewRouter returns a router for the named listener. Its Root answers
// unknown paths with the listener's 404 or 405.
func NewRouter(name string, log *slog.Logger, m *Metrics, a *auth.Service, envelope func(http.ResponseWriter, *wnms.Error)) *Router {
	k := &Router{Name: name, Log: log, Metrics: m, Auth: a, Envelope: envelope,
		Root: http.NewServeMux(), Calls: http.NewServeMux(), boot: auth.RandomToken(4),
		crossOrigin: http.NewCrossOriginProtection()}
	k.Calls.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { k.WriteError(w, r, Unmatched(k.Calls, w, r)) })
	k.Root.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { k.WriteError(w, r, Unmatched(k.Root, w, r)) })
	return k
}

type requestIDKey struct{}

// RequestID returns the id of the request in ctx.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// ServeHTTP gives every request an id (X-Request-Id, kept from the client
// when it sends a short one), refuses a Host the server does not answer
// to (Hosts), recovers panics, reads repeated slashes as
// one, refuses dot segments with the listener's 404 rather than a
// redirect, bounds the time the body may take, refuses a browser's
// state-changing request sent from another origin, and serves Root.
func (k *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("X-Request-Id")
	if id == "" || len(id) > 64 {
		id = k.boot + "-" + strconv.FormatUint(k.reqID.Add(1), 10)
	}
	w.Header()["X-Request-Id"] = []string{id}
	if k.Hosts != nil && !k.Hosts.Allow(r.Host) {
		k.WriteError(w, r, wnms.ParamError("Host", "this server does not answer to the host name in the Host header; "+
			"use its address, or start it with that name in --allowed-hosts"))
		return
	}
	// One copy of the request carries the id and room for the caller.
	r = r.WithContext(wnms.WithCallerSlot(context.WithValue(r.Context(), requestIDKey{}, id)))
	CollapseSlashes(r)
	LimitBodyTime(w, r)
	if !CleanPath(r.URL.Path) {
		k.WriteError(w, r, wnms.NotFound("no such path: %q", r.URL.Path))
		return
	}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			k.Log.Error("panic", "listener", k.Name, "request_id", id, "method", r.Method, "path", r.URL.Path,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			k.WriteError(w, r, errors.New("panic"))
		}
	}()
	// A browser says where a request comes from (Sec-Fetch-Site, Origin):
	// a POST, PUT or DELETE that another site's page makes with the
	// signed-in user's cookie is refused before anything reads it. Clients
	// that are not browsers send neither header and are not affected.
	if err := k.crossOrigin.Check(r); err != nil {
		k.WriteError(w, r, wnms.Errorf(wnms.AccessDenied, "cross-origin request refused: a browser may change state only from this server's own pages"))
		return
	}
	k.Root.ServeHTTP(w, r)
}

// ServeCalls serves r from the route table with its path replaced by rest
// (the part below the listener's prefix and version segment). r must be
// the router's own copy (ServeHTTP made it); its URL is copied, not shared.
func (k *Router) ServeCalls(w http.ResponseWriter, r *http.Request, rest string) {
	u := *r.URL
	u.Path, u.RawPath = rest, ""
	r.URL = &u
	k.Calls.ServeHTTP(w, r)
}

// Handle registers a call: pattern is the method and the path below the
// listener's prefix and version segment; rule says who may make it.
func (k *Router) Handle(pattern string, rule access.Rule, cluster Cluster, h HandlerFunc) {
	call := Call{Pattern: pattern, Access: rule, Serve: h, Cluster: cluster}
	k.patterns = append(k.patterns, pattern)
	latency := k.Metrics.Latency.With(k.Name, pattern)
	var byStatus sync.Map // status -> *metrics.Counter
	k.Calls.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		var entry *wnms.AuditEntry
		if k.Audit != nil && Audited(r.Method) {
			r, entry = k.Audit.begin(r, pattern)
		}
		err := k.serveCall(sw, r, call, h)
		if err != nil {
			k.WriteError(sw, r, err)
		}
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		n, ok := byStatus.Load(status)
		if !ok {
			n, _ = byStatus.LoadOrStore(status, k.Metrics.Requests.With(k.Name, pattern, strconv.Itoa(status)))
		}
		n.(*metrics.Counter).Inc()
		if entry != nil {
			k.Audit.finish(r, entry, status)
		}
		latency.Observe(time.Since(start).Seconds())
		if k.Log.Enabled(r.Context(), slog.LevelDebug) {
			k.Log.Debug("request", "listener", k.Name, "request_id", RequestID(r.Context()), "method", r.Method,
				"route", pattern, "status", status, "duration_ms", float64(time.Since(start).Microseconds())/1000)
		}
	}))
}

// serveCall authorizes the call, offers it to the interceptor, and runs
// the handler.
func (k *Router) serveCall(w http.ResponseWriter, r *http.Request, call Call, h HandlerFunc) error {
	c, err := Authorize(k.Auth, r, call.Access)
	SetCaller(wnms.AuditFrom(r.Context()), c)
	if err != nil {
		return err
	}
	if c != nil && !wnms.SetCaller(r.Context(), c) {
		r = r.WithContext(wnms.WithCaller(r.Context(), c))
	}
	switch {
	case call.Cluster == Local:
		if err := sessionNode(r, call.Pattern); err != nil {
			return err
		}
	case k.Intercept != nil:
		if handled, err := k.Intercept(w, r, call); handled || err != nil {
			return err
		}
	default:
		// No children to forward to: only this server may be named.
		if err := localNode(r); err != nil {
			return err
		}
	}
	return h(w, r)
}

// WriteError writes the listener's error body for err. Internal errors are
// logged with the request id and never shown; failures of the client's own
// making are logged at debug level only.
func (k *Router) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	e, internal, clientFault := Classify(err)
	id := RequestID(r.Context())
	switch {
	case internal:
		k.Log.Error("request failed", "listener", k.Name, "request_id", id, "method", r.Method, "path", r.URL.Path, "error", err.Error())
		e = &wnms.Error{Code: e.Code, Message: e.Message + " (request " + id + ")"}
	case clientFault:
		k.Log.Debug("request failed by the client", "listener", k.Name, "request_id", id, "method", r.Method, "path", r.URL.Path,
			"error", err.Error())
	}
	if e.Code == wnms.RateLimited && w.Header().Get("Retry-After") == "" {
		retry := 60
		if e.RetryAfter > 0 {
			retry = e.RetryAfter
		}
		w.Header().Set("Retry-After", strconv.Itoa(retry))
	}
	k.Envelope(w, e)
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
