// Package api is the main listener of wnms: the vendor's HTTP interface
// under the base path /new/webservice (docs/api.md), plus the operational
// endpoints. routes.go lists every call; each resource has its own file.
// Handlers return errors; one function turns them into the JSON error body.
package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/baseline"

	"github.com/wnms/wnms/internal/cluster"

	"github.com/wnms/wnms/internal/accounts"
	"github.com/wnms/wnms/internal/telemetry"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/incident"
	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/notify"
	"github.com/wnms/wnms/internal/servicelevel"
	"github.com/wnms/wnms/internal/snmp"
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

// Store is what the main listener reads and writes: everything the
// server keeps.
type Store interface {
	wnms.UserStore
	wnms.SessionStore
	wnms.LocationStore
	wnms.ZoneStore
	wnms.PolicyStore
	wnms.TemplateStore
	wnms.LayoutStore
	wnms.FileStore
	telemetry.Store
	baseline.Store
	incident.Store
	servicelevel.Store
	wnms.AuditStore
	wnms.EventStore
	wnms.WebhookStore
	notify.DeliveryStore
	notify.Sequencer
	LocationNamePath(ctx context.Context, id int64) (string, error)
	Ping(ctx context.Context) error
	SettingOrInit(ctx context.Context, name string, init func() string) (string, error)
}

// Server is the main listener's handler.
type Server struct {
	Store Store
	Auth  *auth.Service
	// Accounts manages user accounts (the users calls).
	Accounts *accounts.Service
	// Telemetry ingests what APs and clients report and serves the device
	// lists.
	Telemetry *telemetry.Service
	Log       *slog.Logger
	Info      Info
	// Registry holds every series of the process; /metrics shows it.
	Registry *metrics.Registry
	// Router is the listener's plumbing and route table; its Intercept
	// hook sees every authorized call before its handler.
	Router *httpkit.Router
	// Baselines answers the baseline calls and evaluates anomalies.
	Baselines *baseline.Service
	// Incidents groups anomalies into incidents and answers the incident
	// calls.
	Incidents *incident.Service
	// ServiceLevels answers the service level calls.
	ServiceLevels *servicelevel.Service
	// SNMP sends the traps of every customer's SNMP policy.
	SNMP *snmp.Sender
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
	// Hub raises the events (AP down and up, anomalies, lockouts) with
	// their SNMP traps, and feeds the event stream and the webhooks.
	Hub *notify.Hub
	// Webhooks delivers the outbox's events to the webhooks.
	Webhooks *notify.Dispatcher
	// StreamRecheck is how often an open event stream checks its
	// session (DefaultStreamRecheck when 0).
	StreamRecheck time.Duration
}

// New builds the server and its routes. m holds the HTTP series both
// listeners share; reg is where they and the server's own series live.
func New(st Store, a *auth.Service, log *slog.Logger, info Info, reg *metrics.Registry, m *httpkit.Metrics) *Server {
	s := &Server{Store: st, Auth: a, Accounts: &accounts.Service{Store: st, Hasher: a}, Log: log, Info: info, Registry: reg,
		Router: httpkit.NewRouter("api", log, m, a, writeErrorBody)}
	s.Router.Audit = httpkit.NewAuditor(st, log)
	loginFailures := reg.Counter("wnms_login_failures_total", "Failed login attempts.")
	prev := a.OnLoginFailure
	a.OnLoginFailure = func() {
		loginFailures.Inc()
		if prev != nil {
			prev()
		}
	}
	s.Telemetry = telemetry.NewService(st, log)
	s.Telemetry.Secret = a.Secret
	s.Telemetry.Instrument(reg)
	s.Baselines = baseline.NewService(st, log)
	s.ServiceLevels = &servicelevel.Service{Store: st}
	s.SNMP = snmp.NewSender(st.SNMPPolicy, snmp.NewEngine(1, a.Secret), log)
	s.SNMP.Instrument(reg)
	s.Hub = &notify.Hub{Store: st, Traps: s.SNMP, Log: log}
	s.Webhooks = &notify.Dispatcher{Store: st, Log: log}
	s.Webhooks.Instrument(reg)
	s.Hub.OnEvents = func([]*wnms.Event) { s.Webhooks.Wake() }
	s.Telemetry.OnAPChange = func(ap wnms.AP, up bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Hub.APChange(ctx, notify.AP{CustomerID: ap.CustomerID, BoxID: ap.BoxID, Name: ap.Name, MacAddress: ap.MacAddress,
			LocationID: ap.LocationID.ID}, up)
	}
	s.Baselines.OnAnomaly = func(an wnms.Anomaly, _ string) {
		log.Info("baseline anomaly", "customer_id", an.CustomerID, "location_id", an.LocationID, "kind", an.Kind,
			"slot", an.Slot, "observation", an.Observation, "threshold", an.Threshold)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Hub.RaiseAnomaly(ctx, notify.Anomaly{CustomerID: an.CustomerID, LocationID: an.LocationID, Kind: an.Kind,
			Slot: an.Slot, Observation: an.Observation, Baseline: an.Baseline, Threshold: an.Threshold})
	}
	s.Incidents = incident.NewService(st, log)
	s.Incidents.EvaluatedThrough = s.Baselines.EvaluatedThrough
	announce := func(closed bool) func(in *wnms.Incident) {
		return func(in *wnms.Incident) {
			log.Info("incident", "customer_id", in.CustomerID, "id", in.ID, "site_id", in.SiteLocationID, "closed", closed)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s.Hub.RaiseIncident(ctx, in, closed)
		}
	}
	s.Incidents.OnOpened, s.Incidents.OnClosed = announce(false), announce(true)
	locked := a.OnUserLocked
	a.OnUserLocked = func(u *wnms.User) {
		log.Warn("user locked after failed logins", "user_id", u.UserID, "login_id", u.LoginID)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Hub.UserLocked(ctx, u)
		if locked != nil {
			locked(u)
		}
	}
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
