// Package poller asks APs for their radio data: the pollers of the
// customers' data source configurations (GET|PUT /V5/datasources,
// "pollers"), each an OpenWrt AP over ubus or a Prometheus node exporter
// with OpenWrt's Wi-Fi collectors. Every poll becomes records of the
// ingest write path, made as the poller itself (wnms.SourceCaller): a
// heartbeat of the AP with its radios (a new AP is registered at the
// poller's location, a known one stays where it is), a sample of each
// radio (channel, utilisation, noise, clients, power), and a sample of
// each client (signal, SNR, rate, bytes since the last poll). A ubus
// poller also follows the AP's hostapd events: joins become Successes
// and leaves Disassociated events, from which the ingest finds roams.
//
// Each poller runs on its own (a slow or dead AP delays no other), on
// one server at a time (a lease in the store, renewed after each poll
// with the poller's state, so a cluster's replicas share the pollers,
// take over those of a server that stopped, and answer the same status). A poll that fails is retried with back-off (twice the
// wait each time, up to MaxBackoff); two failures in a row raise
// sourceDown, the next success sourceUp.
package poller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// Limits of polling.
const (
	// MaxPollTime bounds one poll, whatever the interval.
	MaxPollTime = 20 * time.Second
	// MaxBackoff is the longest wait after failures.
	MaxBackoff = 5 * time.Minute
	// downAfter is how many failed polls in a row raise sourceDown.
	downAfter = 2
	// maxStations bounds the clients one poll reports (an AP lists far
	// fewer); the rest are counted and dropped.
	maxStations = 4096
)

// Observation is what one poll of an AP saw, whatever the kind.
type Observation struct {
	AP       APInfo
	Radios   []Radio
	Stations []Station
}

// APInfo is what the AP says of itself; MAC "" when it does not say (the
// AP is then known by its lowest BSSID).
type APInfo struct {
	MAC, Name, Model, Software string
}

// Radio is one of the AP's radios (a BSSID: one SSID on one channel).
// A value it did not give is nil.
type Radio struct {
	BSSID, SSID  string
	Channel      int
	FrequencyMHz int
	Utilization  *float64 // % of the time the channel was busy
	NoiseDBm     *int
	TxPowerDBm   *int
	Clients      *int
}

// Station is a client associated with one of the AP's radios; counters
// are the AP's totals since the client associated, as the AP counts them
// (RxBytes: received by the AP, sent by the client).
type Station struct {
	MAC, BSSID       string
	SignalDBm        *int
	TxRateMbps       *float64 // AP to client
	RxRateMbps       *float64 // client to AP
	RxBytes, TxBytes *uint64
	// InactiveMs is how long ago the AP last heard the station, and
	// ConnectedSeconds how long it has been associated; nil when the AP
	// did not say. A poller without events finds roams in them.
	InactiveMs       *uint64
	ConnectedSeconds *uint64
}

// Driver polls one AP of a kind.
type Driver interface {
	Poll(ctx context.Context) (*Observation, error)
}

// Follower is a driver that also follows the AP's client events,
// handing each batch to emit until ctx ends or the AP's stream ends (an
// error, after which the poller reconnects with back-off).
type Follower interface {
	Follow(ctx context.Context, emit func([]wnms.EventRecord)) error
}

// Store is what the pollers read and lease.
type Store interface {
	AllDataSources(ctx context.Context) (map[int64]*wnms.DataSources, error)
	LocationPaths(ctx context.Context, ids []int64) (map[int64]string, error)
	ClaimPoller(ctx context.Context, customerID int64, name, holder string, now, expires int64, st wnms.PollerState) (bool, error)
	ReleasePoller(ctx context.Context, customerID int64, name, holder string) error
}

// Ingester is the ingest write path for sources (telemetry.Service).
type Ingester interface {
	IngestSourceAPs(ctx context.Context, c *wnms.Caller, recs []telemetry.APInput, at int64) (*telemetry.Result, error)
	IngestSourceRadioSamples(ctx context.Context, c *wnms.Caller, recs []wnms.RadioSampleRecord) (*telemetry.Result, error)
	IngestSourceSamples(ctx context.Context, c *wnms.Caller, recs []wnms.SampleRecord, at int64) (*telemetry.Result, error)
	IngestSourceEvents(ctx context.Context, c *wnms.Caller, recs []wnms.EventRecord, at int64) (*telemetry.Result, error)
}

// Notifier is told when a poller goes down or comes back (notify.Hub).
type Notifier interface {
	SourceChange(ctx context.Context, customerID int64, name, kind string, locationID int64, up bool, reason string)
}

// Manager runs the pollers of every customer's configuration.
type Manager struct {
	Store    Store
	Ingest   Ingester
	Notify   Notifier // optional
	Log      *slog.Logger
	Registry *metrics.Registry // optional
	// Holder names this server in the pollers' leases; unique per
	// process.
	Holder string
	// NewDriver makes a poller's driver (nil: Driver, by kind).
	NewDriver func(p wnms.Poller) (Driver, error)
	Now       func() time.Time // nil: time.Now

	// interval, if set, replaces every poller's (the tests' faster clock).
	interval time.Duration

	reloading sync.Mutex
	mu        sync.Mutex
	running   map[string]*run // by "customer/name"
	wg        sync.WaitGroup
	once      sync.Once
	roams     roamTracker // of the pollers without an event stream
	polls     *metrics.CounterVec
	records   *metrics.CounterVec
	seconds   *metrics.HistogramVec
}

// DriverFor makes the driver of p's kind.
func DriverFor(p wnms.Poller) (Driver, error) {
	client := NewHTTPClient(p.Fingerprint())
	switch p.Kind {
	case wnms.PollerPrometheus:
		return &Prometheus{URL: p.URL, Username: p.Username, Password: p.Password, HTTP: client}, nil
	case wnms.PollerUbus:
		return NewUbus(p, client), nil
	}
	return nil, fmt.Errorf("poller %q: unknown kind %q", p.Name, p.Kind)
}

func (m *Manager) init() {
	m.once.Do(func() {
		m.running = map[string]*run{}
		if m.Now == nil {
			m.Now = time.Now
		}
		if m.NewDriver == nil {
			m.NewDriver = DriverFor
		}
		if m.Log == nil {
			m.Log = slog.New(slog.DiscardHandler)
		}
		reg := m.Registry
		if reg == nil {
			reg = metrics.NewRegistry()
		}
		m.polls = reg.Counter("wnms_poller_polls_total", "Polls of APs by the data sources' pollers, by kind and result (ok, failed, elsewhere: another server holds the poller).", "kind", "result")
		m.records = reg.Counter("wnms_poller_records_total", "Records the pollers ingested, by kind of poller and of record.", "kind", "record")
		m.seconds = reg.Histogram("wnms_poller_poll_seconds", "How long a poll of an AP took, by kind.", []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20}, "kind")
		reg.GaugeVecFunc("wnms_pollers", "Pollers this server runs, by state (up, down, starting, elsewhere).", "state", m.states)
	})
}

// Reload puts the stored configurations' pollers in force: a new or
// changed poller starts (a changed one afresh), a removed one stops and
// gives up its lease.
func (m *Manager) Reload(ctx context.Context) error {
	m.init()
	m.reloading.Lock() // one at a time: an older read must not undo a newer
	defer m.reloading.Unlock()
	all, err := m.Store.AllDataSources(ctx)
	if err != nil {
		return err
	}
	want := map[string]wnms.Poller{}
	customers := map[string]int64{}
	for customer, d := range all {
		for _, p := range d.Pollers {
			k := strconv.FormatInt(customer, 10) + "/" + p.Name
			want[k], customers[k] = p, customer
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, r := range m.running {
		if p, ok := want[k]; !ok || p != r.cfg {
			r.stop()
			delete(m.running, k)
		}
	}
	var starting []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if _, ok := m.running[k]; !ok {
			starting = append(starting, k)
		}
	}
	for i, k := range starting {
		p := want[k]
		d, err := m.NewDriver(p)
		if err != nil {
			m.Log.Error("poller not started", "poller", p.Name, "err", err)
			continue
		}
		r := &run{m: m, customer: customers[k], cfg: p, driver: d, counters: map[string]counters{}}
		// The pollers started together (a server's start, a configuration
		// of many APs) spread their first polls over their interval, so
		// that their rounds do not reach ingest as one burst; one poller
		// added alone polls at once.
		r.first = m.pollInterval(p) * time.Duration(i) / time.Duration(len(starting))
		r.caller = wnms.SourceCaller(r.customer, p.Name, p.LocationID.ID, m.Store.LocationPaths)
		var rctx context.Context
		rctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
		r.done = make(chan struct{})
		m.running[k] = r
		m.wg.Add(1)
		go func() { defer m.wg.Done(); r.loop(rctx) }()
	}
	return nil
}

// Run reloads the configuration every period until ctx ends, then stops
// every poller (releasing their leases).
func (m *Manager) Run(ctx context.Context, period time.Duration) {
	m.init()
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if err := m.Reload(ctx); err != nil && ctx.Err() == nil {
			m.Log.Error("pollers: reload failed", "err", err)
		}
		select {
		case <-ctx.Done():
			m.mu.Lock()
			for k, r := range m.running {
				r.stop()
				delete(m.running, k)
			}
			m.mu.Unlock()
			m.wg.Wait()
			return
		case <-t.C:
		}
	}
}

// PollerStatus is what the data source status tells of a poller.
type PollerStatus struct {
	CustomerID int64
	Name       string
	Kind       string
	State      string // up, down, starting, elsewhere (another server polls it)
	LastPoll   int64  // ms, 0: none yet
	LastError  string
	Stations   int // clients the last poll saw
	Radios     int
}

// Status is every running poller's state.
func (m *Manager) Status() []PollerStatus {
	m.init()
	m.mu.Lock()
	runs := slices.Collect(maps.Values(m.running))
	m.mu.Unlock()
	out := make([]PollerStatus, 0, len(runs))
	for _, r := range runs {
		out = append(out, r.status())
	}
	slices.SortFunc(out, func(a, b PollerStatus) int {
		return cmp.Or(cmp.Compare(a.CustomerID, b.CustomerID), cmp.Compare(a.Name, b.Name))
	})
	return out
}

func (m *Manager) states() map[string]float64 {
	out := map[string]float64{"up": 0, "down": 0, "starting": 0, "elsewhere": 0}
	for _, s := range m.Status() {
		out[s.State]++
	}
	return out
}

// run is one running poller.
type run struct {
	m        *Manager
	customer int64
	cfg      wnms.Poller
	driver   Driver
	caller   *wnms.Caller
	cancel   context.CancelFunc
	done     chan struct{}

	mu       sync.Mutex
	state    string
	lastPoll time.Time
	lastErr  string
	radios   int
	stations int
	failures int
	held     bool
	counters map[string]counters // a client's byte counters at the last poll, by MAC and BSSID
	first    time.Duration       // how long after its start the first poll begins
}

// counters are a station's byte counters as last read.
type counters struct{ rx, tx uint64 }

func (r *run) stop() { r.cancel() }

// pollInterval is how often p is polled.
func (m *Manager) pollInterval(p wnms.Poller) time.Duration {
	if m.interval > 0 {
		return m.interval
	}
	return time.Duration(p.Interval()) * time.Second
}

func (r *run) status() PollerStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := PollerStatus{CustomerID: r.customer, Name: r.cfg.Name, Kind: r.cfg.Kind, State: cmp.Or(r.state, "starting"),
		LastError: r.lastErr, Stations: r.stations, Radios: r.radios}
	if !r.lastPoll.IsZero() {
		s.LastPoll = r.lastPoll.UnixMilli()
	}
	return s
}

// loop polls until ctx ends, then gives up the lease.
func (r *run) loop(ctx context.Context) {
	defer close(r.done)
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := r.m.Store.ReleasePoller(rctx, r.customer, r.cfg.Name, r.m.Holder); err != nil {
			r.m.Log.Warn("poller: lease not released", "poller", r.cfg.Name, "err", err)
		}
	}()
	interval := r.m.pollInterval(r.cfg)
	var follow sync.WaitGroup
	defer follow.Wait()
	following := false
	wait, held := r.first, false
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if !held {
			if held = r.claim(ctx, 3*interval); !held {
				r.setState("elsewhere", "")
				r.m.polls.Inc(r.cfg.Kind, "elsewhere")
				wait = interval
				continue
			}
		}
		if f, ok := r.driver.(Follower); ok && !following {
			following = true
			follow.Add(1)
			go func() { defer follow.Done(); r.follow(ctx, f) }()
		}
		began := time.Now()
		err := r.pollOnce(ctx, interval)
		if ctx.Err() != nil {
			return
		}
		wait = r.after(err, interval)
		// Renewed until well after the next poll, with the state the
		// poll left (every server answers the status from it).
		held = r.claim(ctx, wait+2*interval)
		// The next poll is due wait after this one began, not after it
		// ended: otherwise the poll's own time (its exchange with the AP,
		// its turn at ingest, the lease) pushed every later poll back,
		// and a poller of 30 s polled every 30.7 s with 500 APs.
		wait = max(0, wait-time.Since(began))
	}
}

// claim takes or renews the poller's lease for lease (and a poll's
// longest time), recording the poller's state: a server that stops
// polling loses its pollers after that.
func (r *run) claim(ctx context.Context, lease time.Duration) bool {
	now := r.m.Now()
	s := r.status()
	st := wnms.PollerState{State: s.State, LastPoll: s.LastPoll, LastError: s.LastError, Radios: s.Radios, Stations: s.Stations}
	if st.State == "elsewhere" {
		st.State = "starting"
	}
	held, err := r.m.Store.ClaimPoller(ctx, r.customer, r.cfg.Name, r.m.Holder, now.UnixMilli(), now.Add(lease+MaxPollTime).UnixMilli(), st)
	if err != nil {
		if ctx.Err() == nil {
			r.m.Log.Warn("poller: lease not taken", "poller", r.cfg.Name, "err", err)
		}
		held = false
	}
	r.mu.Lock()
	r.held = held
	r.mu.Unlock()
	return held
}

func (r *run) isHeld() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// after records a poll's outcome and returns how long after its start
// the next begins: the interval, or after failures twice the last wait,
// up to MaxBackoff.
// The downAfter-th failure in a row raises sourceDown; a success after
// it, sourceUp.
func (r *run) after(err error, interval time.Duration) time.Duration {
	r.mu.Lock()
	var change *bool
	if err == nil {
		if r.state == "down" {
			up := true
			change = &up
		}
		r.state, r.lastErr, r.failures = "up", "", 0
	} else {
		r.failures++
		r.lastErr = err.Error()
		if r.failures >= downAfter && r.state != "down" {
			down := false
			change = &down
			r.state = "down"
		} else if r.state == "" || r.state == "elsewhere" {
			r.state = "starting"
		}
	}
	failures, reason := r.failures, r.lastErr
	r.mu.Unlock()
	if change != nil {
		r.m.Log.Info("poller state", "customer_id", r.customer, "poller", r.cfg.Name, "up", *change, "err", reason)
		if r.m.Notify != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			r.m.Notify.SourceChange(ctx, r.customer, r.cfg.Name, r.cfg.Kind, r.cfg.LocationID.ID, *change, reason)
			cancel()
		}
	}
	if failures == 0 {
		return interval
	}
	wait := interval
	for i := 1; i < failures && wait < MaxBackoff; i++ {
		wait *= 2
	}
	return min(wait, MaxBackoff)
}

func (r *run) setState(state, lastErr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state, r.lastErr = state, lastErr
}

// pollOnce polls the AP and ingests what it saw.
func (r *run) pollOnce(ctx context.Context, interval time.Duration) error {
	pctx, cancel := context.WithTimeout(ctx, min(interval, MaxPollTime))
	defer cancel()
	start := r.m.Now()
	obs, err := r.driver.Poll(pctx)
	r.m.seconds.Observe(r.m.Now().Sub(start).Seconds(), r.cfg.Kind)
	if err != nil {
		r.m.polls.Inc(r.cfg.Kind, "failed")
		return err
	}
	r.m.polls.Inc(r.cfg.Kind, "ok")
	if err := r.ingest(ctx, obs, r.m.Now()); err != nil {
		return fmt.Errorf("storing the poll: %w", err)
	}
	return nil
}

// follow follows the AP's events while this server holds the poller,
// reconnecting with back-off (1 s, doubling up to MaxBackoff; reset by a
// stream that lasted a minute).
func (r *run) follow(ctx context.Context, f Follower) {
	wait := time.Second
	for ctx.Err() == nil {
		if !r.isHeld() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		began := r.m.Now()
		err := f.Follow(ctx, func(recs []wnms.EventRecord) { r.ingestEvents(ctx, recs) })
		if ctx.Err() != nil {
			return
		}
		if r.m.Now().Sub(began) > time.Minute {
			wait = time.Second
		}
		r.m.Log.Debug("poller: event stream ended", "poller", r.cfg.Name, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, MaxBackoff)
	}
}

func (r *run) ingestEvents(ctx context.Context, recs []wnms.EventRecord) {
	if len(recs) == 0 {
		return
	}
	res, err := r.m.Ingest.IngestSourceEvents(ctx, r.caller, recs, r.cfg.LocationID.ID)
	if err != nil {
		if ctx.Err() == nil {
			r.m.Log.Warn("poller: events not stored", "poller", r.cfg.Name, "err", err)
		}
		return
	}
	r.count("events", res)
}

func (r *run) count(record string, res *telemetry.Result) {
	r.m.records.With(r.cfg.Kind, record).Add(uint64(res.Accepted))
	if len(res.Rejected) > 0 {
		r.m.Log.Warn("poller: records refused", "poller", r.cfg.Name, "record", record, "refused", len(res.Rejected),
			"first", res.Rejected[0].Message)
	}
}

// errNoRadio is a poll that found no radio wnms can place (none, or
// only 6 GHz ones).
var errNoRadio = errors.New("the AP reported no 2.4 or 5 GHz radio")
