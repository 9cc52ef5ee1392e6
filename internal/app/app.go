// Package app is where the server is put together: it builds each
// service once and connects them (an AP that goes down raises an event,
// an anomaly a trap and a webhook, a locked user an event). The HTTP
// listeners, the RADIUS and syslog listeners and the background jobs are
// all handed the same Services; nothing reaches into a listener for a
// service.
package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/wnms/wnms/internal/accounts"
	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/baseline"
	"github.com/wnms/wnms/internal/incident"
	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/notify"
	"github.com/wnms/wnms/internal/servicelevel"
	"github.com/wnms/wnms/internal/snmp"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// Store is what the services read and write: everything the
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

// Services are the server's services, built and connected by New.
type Services struct {
	Store Store
	Auth  *auth.Service
	// Accounts manages user accounts (the users calls).
	Accounts *accounts.Service
	// Telemetry ingests what APs and clients report and serves the device
	// lists.
	Telemetry *telemetry.Service
	// Baselines answers the baseline calls and evaluates anomalies.
	Baselines *baseline.Service
	// Incidents groups anomalies into incidents and answers the incident
	// calls.
	Incidents *incident.Service
	// ServiceLevels answers the service level calls.
	ServiceLevels *servicelevel.Service
	// SNMP sends the traps of every customer's SNMP policy.
	SNMP *snmp.Sender
	// Hub raises the events (AP down and up, anomalies, lockouts) with
	// their SNMP traps, and feeds the event stream and the webhooks.
	Hub *notify.Hub
	// Webhooks delivers the outbox's events to the webhooks.
	Webhooks *notify.Dispatcher
	Log      *slog.Logger
	// Registry holds every series of the process; /metrics shows it.
	Registry *metrics.Registry
}

// New builds the services over st and a, and connects them; their series
// go to reg.
func New(st Store, a *auth.Service, log *slog.Logger, reg *metrics.Registry) *Services {
	s := &Services{Store: st, Auth: a, Accounts: &accounts.Service{Store: st, Hasher: a}, Log: log, Registry: reg}
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
			Slot: an.Slot, Observation: an.Observation, Baseline: an.Baseline, Threshold: an.Threshold, AP: an.AP})
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
	return s
}
