package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wnms/wnms/internal/procs"

	"github.com/wnms/wnms/internal/analytics"
	"github.com/wnms/wnms/internal/api"
	"github.com/wnms/wnms/internal/app"
	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/baseline"
	"github.com/wnms/wnms/internal/cluster"
	"github.com/wnms/wnms/internal/datasource"
	"github.com/wnms/wnms/internal/every"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/snmp"
	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// serveConfig is everything `wnms serve` is told.
type serveConfig struct {
	storeFlags
	procs           int // GOMAXPROCS in force (procs.Ensure)
	listen          string
	analyticsListen string
	tlsMode         string
	tlsCert         string
	tlsKey          string
	logLevel        string
	serverID        int
	serverURL       string
	shutdownTimeout time.Duration
	bootstrapKeyID  string
	bootstrapValue  string
	bootstrapParent bool // --bootstrap-key-cluster-parent
	maxConnsPerAddr int
	maxConns        int
	apTimeout       time.Duration
	retention       time.Duration
	auditRetention  time.Duration
	snmpAgentListen string
	metricsListen   string // --metrics-listen: host:port, "api" or "off"
	debugListen     string // --debug-listen: "off" or a loopback host:port
	radiusAuth      string // --radius-auth-listen, "off" or a UDP address
	radiusAcct      string // --radius-acct-listen
	syslogListen    string // --syslog-listen (UDP and TCP)
	// radiusAcceptHold is how long a RADIUS accept waits for the syslog
	// Success of its connection (--radius-accept-hold).
	radiusAcceptHold time.Duration
	// radiusStoreWait bounds how long an Access-Accept waits for its
	// Success to be committed before it goes to the NAS
	// (--radius-store-wait).
	radiusStoreWait time.Duration
	clusterConfig   string
	baselineK       float64
	webhookPrivate  bool // --webhook-allow-private
	allowedHosts    string
	baselineMin     int
	anomalyClients  int     // --anomaly-min-clients
	anomalySigma    float64 // --anomaly-min-sigma
	anomalyAlpha    float64 // --anomaly-alpha
	apPaired        int     // --ap-anomaly-min-paired
	apDropDB        float64 // --ap-anomaly-min-rssi-drop
	apRisePct       float64 // --ap-anomaly-min-retry-rise
	demo            bool

	cluster *cluster.Config // read from clusterConfig by parseServe
}

// defaultMetricsListen is where /metrics is served unless told: loopback
// (the series need no login), on the port commonly given to a
// Prometheus exporter of an application.
const defaultMetricsListen = "127.0.0.1:9464"

// listening tells a test where the listeners ended up.
type listening struct {
	API       string
	Analytics string
	SNMPAgent string // empty when the agent is off
	Metrics   string // the metrics listener, empty when off or on the API listener
	Debug     string // the debug listener (--debug-listen), empty when off
	// The data source listeners, empty when off.
	RadiusAuth, RadiusAcct, Syslog string
	TLS                            bool
}

// runServe is `wnms serve` in three plain steps: read and check every
// flag (nothing is created before all are good), wire the listeners, the
// store and the services, and run until ctx ends. ready, when set, is told
// where the listeners are once they accept.
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready func(listening)) error {
	c, err := parseServe(args, getenv, stdout, stderr)
	if err != nil {
		return err
	}
	if c.databaseURL == "" {
		procs.Ensure() // SQLite's writer runs in this process
	}
	c.procs = runtime.GOMAXPROCS(0)
	srv, err := wireServe(ctx, c, stdout, stderr)
	if err != nil {
		return err
	}
	defer srv.close()
	return srv.run(ctx, ready)
}

// parseServe reads serve's flags (and their environment variables) and
// checks all of them, the cluster file included: a bad value exits 2 and
// leaves no trace.
func parseServe(args []string, getenv func(string) string, stdout, stderr io.Writer) (*serveConfig, error) {
	cmd := newCommand("serve", "", `Runs the server: the API on --listen, location analytics on --analytics-listen, over the
embedded SQLite store in --data or the PostgreSQL of --database-url. On an empty store it
creates the SUPERUSER "admin" and prints its first API key once.`, stdout, stderr)
	fs := cmd.fs
	c := &serveConfig{}
	c.storeFlags.register(fs)
	fs.StringVar(&c.listen, "listen", "127.0.0.1:8080", "address of the API listener")
	fs.StringVar(&c.analyticsListen, "analytics-listen", "127.0.0.1:8081", "address of the analytics listener")
	fs.StringVar(&c.tlsMode, "tls", "off", "off, or auto: make and keep a self-signed certificate in --data")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "TLS certificate file (PEM); with --tls-key turns TLS on")
	fs.StringVar(&c.tlsKey, "tls-key", "", "TLS private key file (PEM)")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug (logs every request), info, warn or error")
	fs.IntVar(&c.serverID, "server-id", 1, "serverID of this server (system info, analytics server_id)")
	fs.StringVar(&c.serverURL, "server-url", "", "public URL of this server, shown in system info (its host name is one the listeners answer to)")
	fs.StringVar(&c.allowedHosts, "allowed-hosts", "", "host names the listeners answer to besides IP addresses and localhost, comma-separated (.example.com: every name below; *: any). Empty: any name, except on a loopback listener, which answers only to IP addresses and localhost (against DNS rebinding)")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long SIGTERM waits for requests to drain")
	fs.StringVar(&c.bootstrapKeyID, "bootstrap-key-id", "", "key id of the first admin key (with --bootstrap-key-value)")
	fs.StringVar(&c.bootstrapValue, "bootstrap-key-value", "", "key value of the first admin key")
	fs.BoolVar(&c.bootstrapParent, "bootstrap-key-cluster-parent", false, "make the first admin key from --bootstrap-key-id and --bootstrap-key-value a cluster parent's key, for a child server whose parent logs in with it")
	fs.IntVar(&c.maxConnsPerAddr, "max-conns-per-addr", 256, "open connections one source address may hold on each listener (0: no limit)")
	fs.IntVar(&c.maxConns, "max-conns", 0, "open connections each listener holds in all (0: each listener takes half of three quarters of the raised open-file limit)")
	fs.DurationVar(&c.apTimeout, "ap-timeout", telemetry.DefaultAPTimeout, "how long an AP may be silent before it counts as down")
	fs.Float64Var(&c.baselineK, "baseline-k", baseline.DefaultK, "standard deviations above (or below, for data rate) the baseline that make a slot anomalous")
	fs.IntVar(&c.baselineMin, "baseline-min-samples", baseline.DefaultMinSamples, "samples a slot needs before it can be anomalous")
	fs.IntVar(&c.anomalyClients, "anomaly-min-clients", baseline.DefaultMinClients, "failing (or troubled) clients an anomalous connectivity or performance slot has at least")
	fs.Float64Var(&c.anomalySigma, "anomaly-min-sigma", baseline.DefaultMinSigma, "the least standard deviation a baseline is taken to have, in percentage points (for data rate, percent of the baseline)")
	fs.Float64Var(&c.anomalyAlpha, "anomaly-alpha", baseline.DefaultAlpha, "how improbable at the baseline's rate a slot's count of failing (or troubled) clients must be to be anomalous (one-sided binomial test; above 0, at most 1)")
	fs.IntVar(&c.apPaired, "ap-anomaly-min-paired", baseline.DefaultAPRule.MinPaired, "clients an AP radio must have had 30 minutes before too for its clients' change to be judged (the AP test of performance)")
	fs.Float64Var(&c.apDropDB, "ap-anomaly-min-rssi-drop", baseline.DefaultAPRule.MinDropDB, "dB by which the mean signal of an AP radio's clients must fall, beyond the radio's usual change, for the AP test to pass")
	fs.Float64Var(&c.apRisePct, "ap-anomaly-min-retry-rise", baseline.DefaultAPRule.MinRisePct, "percentage points by which the mean retry rate of an AP radio's clients must rise, beyond the radio's usual change, for the AP test to pass")
	fs.StringVar(&c.clusterConfig, "cluster-config", "", "cluster file naming this server's child servers (JSON; re-read on SIGHUP)")
	fs.StringVar(&c.snmpAgentListen, "snmp-agent-listen", "127.0.0.1:1161", "UDP address of the SNMP agent, or off")
	fs.StringVar(&c.metricsListen, "metrics-listen", defaultMetricsListen, "address of the listener of /metrics (plain HTTP, no login), off, or api to serve /metrics on the API listener")
	fs.StringVar(&c.debugListen, "debug-listen", "off", "loopback address (127.0.0.1:6060) of a listener serving Go's profiler at /debug/pprof/ and runtime variables at /debug/vars, without login; off")
	fs.StringVar(&c.radiusAuth, "radius-auth-listen", "off", "UDP address of the RADIUS authentication proxy (e.g. :1812), or off")
	fs.StringVar(&c.radiusAcct, "radius-acct-listen", "off", "UDP address of the RADIUS accounting server (e.g. :1813), or off")
	fs.StringVar(&c.syslogListen, "syslog-listen", "off", "address of the syslog receiver, UDP and TCP (e.g. :514), or off")
	fs.DurationVar(&c.radiusAcceptHold, "radius-accept-hold", datasource.AcceptHold, "how long a RADIUS accept of a source that also sends syslog waits for the syslog Success of its connection (1s to 10m)")
	fs.DurationVar(&c.radiusStoreWait, "radius-store-wait", time.Second, "how long an Access-Accept waits for its Success to be committed before it goes to the NAS anyway (10ms to 30s)")
	fs.DurationVar(&c.retention, "retention", telemetry.DefaultRetention, "how long client events and samples are kept (purged hourly)")
	fs.DurationVar(&c.auditRetention, "audit-retention", 400*24*time.Hour, "how long audit log records are kept (purged hourly)")
	fs.BoolVar(&c.webhookPrivate, "webhook-allow-private", false, "let webhooks reach loopback, private (RFC 1918, fc00::/7) and this server's own addresses; only a SUPERUSER may set such a target")
	fs.BoolVar(&c.demo, "demo", false, "fill an empty store with a simulated network (7 days of history, then live) and print a key to explore it; refused on a store with other data")
	if err := cmd.parse(args, getenv, 0); err != nil {
		return nil, err
	}
	if err := c.validate(cmd); err != nil {
		return nil, err
	}
	if c.clusterConfig != "" {
		cfg, err := c.loadCluster()
		if err != nil {
			return nil, err
		}
		c.cluster = cfg
	}
	return c, nil
}

// loadCluster reads the cluster file and checks it against this server.
func (c *serveConfig) loadCluster() (*cluster.Config, error) {
	cfg, err := cluster.LoadConfig(c.clusterConfig)
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckServerID(int64(c.serverID)); err != nil {
		return nil, fmt.Errorf("cluster config %s: %w", c.clusterConfig, err)
	}
	return cfg, nil
}

// server is a wired `wnms serve`: its listeners, store and services, ready
// to run.
type server struct {
	c      *serveConfig
	log    *slog.Logger
	stdout io.Writer

	apiLn, anLn net.Listener
	metricsLn   net.Listener   // nil when --metrics-listen is off or api
	debugLn     net.Listener   // nil when --debug-listen is off
	agentConn   net.PacketConn // nil when the agent is off
	// The data source listeners' sockets, nil when off.
	radiusAuthConn, radiusAcctConn, syslogConn net.PacketConn
	syslogLn                                   net.Listener
	limits                                     httpkit.ConnLimits
	tls                                        *tls.Config

	st      *store.Store
	auth    *auth.Service
	svc     *app.Services // the services, handed to the listeners and the jobs
	api     *api.Server
	an      *analytics.Server
	traps   *snmp.Sender
	agent   *snmp.Agent      // nil when off
	cluster *cluster.Cluster // nil without a cluster file
	sources *dataSources     // the RADIUS and syslog listeners' side

	closers []func() // run in reverse order by close
}

// close releases what wireServe took, last taken first.
func (s *server) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// wireServe takes the listeners (before the store is touched, so a busy
// port fails the start before anything is created or printed), locks and
// opens the store, bootstraps it, and builds the services around it.
func wireServe(ctx context.Context, c *serveConfig, stdout, stderr io.Writer) (_ *server, err error) {
	var level slog.Level
	level.UnmarshalText([]byte(c.logLevel)) // checked by validate
	s := &server{c: c, stdout: stdout, log: slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.apiLn, err = net.Listen("tcp", c.listen); err != nil {
		return nil, fmt.Errorf("--listen %s: %w", c.listen, unwrapListenError(err))
	}
	s.closers = append(s.closers, func() { s.apiLn.Close() })
	if s.anLn, err = net.Listen("tcp", c.analyticsListen); err != nil {
		return nil, fmt.Errorf("--analytics-listen %s: %w", c.analyticsListen, unwrapListenError(err))
	}
	s.closers = append(s.closers, func() { s.anLn.Close() })
	if c.metricsListen != "off" && c.metricsListen != "api" {
		if s.metricsLn, err = net.Listen("tcp", c.metricsListen); err != nil {
			return nil, fmt.Errorf("--metrics-listen %s: %w", c.metricsListen, unwrapListenError(err))
		}
		s.closers = append(s.closers, func() { s.metricsLn.Close() })
	}
	if c.debugListen != "off" {
		if s.debugLn, err = net.Listen("tcp", c.debugListen); err != nil {
			return nil, fmt.Errorf("--debug-listen %s: %w", c.debugListen, unwrapListenError(err))
		}
		s.closers = append(s.closers, func() { s.debugLn.Close() })
		if !debugLoopback(s.debugLn.Addr().String()) { // localhost resolved elsewhere
			return nil, fmt.Errorf("--debug-listen %s: listens on %s, which is not loopback", c.debugListen, s.debugLn.Addr())
		}
	}
	if c.snmpAgentListen != "off" {
		if s.agentConn, err = net.ListenPacket("udp", c.snmpAgentListen); err != nil {
			return nil, fmt.Errorf("--snmp-agent-listen %s: %w", c.snmpAgentListen, unwrapListenError(err))
		}
		s.closers = append(s.closers, func() { s.agentConn.Close() })
	}
	if err := s.listenDataSources(); err != nil {
		return nil, err
	}
	s.limits = httpkit.ConnLimits{PerAddr: c.maxConnsPerAddr, Total: c.maxConns}
	if s.limits.Total == 0 {
		s.limits.Total = connBudget()
	}

	if c.databaseURL == "" {
		release, err := lockDataDir(c.data)
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, release)
	}
	if s.st, s.auth, err = c.openAuth(ctx, false); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { s.st.Close() })
	if err := bootstrap(ctx, s.st, s.auth, *c, stdout, s.log); err != nil {
		return nil, fmt.Errorf("bootstrap: %w", err)
	}
	if c.demo {
		if err := checkDemoStore(ctx, s.st); err != nil {
			return nil, err
		}
	}
	if s.tls, err = c.tlsConfig(); err != nil {
		return nil, err
	}
	if err := s.st.WarmPool(ctx); err != nil {
		return nil, fmt.Errorf("connect to the store: %w", err)
	}
	if err := s.wireServices(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// wireServices builds the two listeners' handlers, the SNMP engine, trap
// sender and agent, and the cluster, and connects the announcements
// (an AP down or up, an anomaly, a locked user) to the traps.
func (s *server) wireServices(ctx context.Context) error {
	c, st, log := s.c, s.st, s.log
	reg := metrics.NewRegistry()
	reg.Process()
	m := httpkit.NewMetrics(reg)
	reg.GaugeFunc("wnms_active_sessions", "Sessions not yet expired.", func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := st.ActiveSessions(ctx)
		if err != nil {
			return -1
		}
		return float64(n)
	})
	if st.Dialect() == store.SQLite {
		reg.GaugeFunc("wnms_sqlite_page_pool_bytes", "Size of the pool SQLite's page caches draw from (--sqlite-cache-mib; 0: no pool).",
			func() float64 { return float64(store.PageCache().PoolBytes) })
		reg.GaugeFunc("wnms_sqlite_page_pool_used_bytes", "Bytes of the SQLite page pool's slots holding a page now.",
			func() float64 { return float64(store.PageCache().UsedBytes) })
		reg.GaugeFunc("wnms_sqlite_page_overflow_bytes", "Bytes of SQLite pages that did not fit the pool and were allocated one by one.",
			func() float64 { return float64(store.PageCache().OverflowBytes) })
	}
	hostname, _ := os.Hostname()
	info := api.Info{Version: Version, Build: Commit, ServerID: c.serverID, DataDir: c.data,
		ServerURL: c.serverURL, Hostname: hostname, TLS: s.tls != nil, StartedAt: time.Now()}
	s.svc = app.New(st, s.auth, log, reg)
	s.api = api.New(s.svc, info, m)
	if c.metricsListen == "api" {
		s.api.ServeMetrics()
	}
	s.svc.Telemetry.APTimeout = c.apTimeout
	s.svc.Telemetry.Retention = c.retention
	c.applyBaselines(s.svc.Baselines)
	s.svc.Webhooks.Targets.AllowPrivate = c.webhookPrivate
	// SNMP: this start's engine boots, the trap sender and the agent.
	boots, err := st.CountUp(ctx, "snmp_engine_boots")
	if err != nil {
		return fmt.Errorf("snmp engine boots: %w", err)
	}
	engine := snmp.NewEngine(uint32(boots), s.auth.Secret)
	s.traps = s.svc.SNMP
	s.traps.Engine = engine
	if s.agentConn != nil {
		s.agent = &snmp.Agent{
			Policy: func(ctx context.Context) (*wnms.SNMPPolicy, error) { return st.SNMPPolicy(ctx, wnms.OnPremCustomer) },
			Counts: func(ctx context.Context) (wnms.SNMPCounts, error) {
				return st.SNMPCounts(ctx, time.Now().Add(-c.apTimeout).UnixMilli())
			},
			OpenAnomalies: func(ctx context.Context) (int64, error) {
				return st.CountAnomalies(ctx, time.Now().Add(-24*time.Hour).UnixMilli())
			},
			Engine: engine, DataDir: c.data, Log: log,
			Description: "wnms " + Version + " wireless network management server",
		}
		s.agent.Instrument(reg)
		if err := s.agent.Reload(ctx); err != nil {
			return fmt.Errorf("snmp agent: %w", err)
		}
		s.api.OnSNMPPolicyChange = func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := s.agent.Reload(ctx); err != nil {
				log.Error("SNMP agent: reading the policy failed", "err", err)
			}
		}
	}
	s.wireDataSources(ctx, reg)
	s.an = analytics.New(st, s.auth, log, m)
	s.an.ServerID = int64(c.serverID)
	s.an.Footfall = s.svc.Telemetry
	if c.cluster != nil {
		s.cluster = cluster.New(c.cluster, log)
		s.cluster.ServerID = int64(c.serverID)
		s.cluster.Instrument(reg)
		s.api.Cluster = s.cluster
		s.api.Router.Intercept = s.cluster.Intercept
		s.an.Router.Intercept = s.cluster.InterceptAnalytics
	}
	s.api.Router.Hosts = c.hosts(s.apiLn.Addr())
	s.an.Router.Hosts = c.hosts(s.anLn.Addr())
	return nil
}

// hosts is the Host header check of the listener at addr: the names of
// --allowed-hosts and the host of --server-url.
func (c *serveConfig) hosts(addr net.Addr) *httpkit.Hosts {
	h := &httpkit.Hosts{Names: hostNames(c.allowedHosts)}
	if u, err := url.Parse(c.serverURL); err == nil && u.Hostname() != "" {
		h.Names = append(h.Names, u.Hostname())
	}
	if ta, ok := addr.(*net.TCPAddr); ok {
		h.Loopback = ta.IP.IsLoopback()
	}
	return h
}

// hostNames splits --allowed-hosts.
func hostNames(list string) []string {
	var out []string
	for n := range strings.SplitSeq(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// run serves both listeners, tells ready where they are, starts the
// background work, and on ctx's end drains the requests in flight for at
// most --shutdown-timeout.
func (s *server) run(ctx context.Context, ready func(listening)) error {
	c, log := s.c, s.log
	servers := []*http.Server{newHTTPServer(s.api, s.tls, log), newHTTPServer(s.an, s.tls, log)}
	lns := []net.Listener{httpkit.NewListener(s.apiLn, s.limits, api.ErrorJSON), httpkit.NewListener(s.anLn, s.limits, analytics.ErrorJSON)}
	if s.metricsLn != nil {
		// Plain HTTP and no login, like every Prometheus exporter: the
		// listener is on loopback unless the operator names another
		// address.
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", s.api.MetricsHandler())
		servers = append(servers, newHTTPServer(mux, nil, log))
		lns = append(lns, httpkit.NewListener(s.metricsLn, s.limits, api.ErrorJSON))
	}
	if s.debugLn != nil {
		servers = append(servers, newHTTPServer(debugHandler(), nil, log))
		lns = append(lns, httpkit.NewListener(s.debugLn, s.limits, api.ErrorJSON))
	}
	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go func(srv *http.Server, ln net.Listener) {
			var err error
			if srv.TLSConfig != nil {
				err = srv.ServeTLS(ln, "", "")
			} else {
				err = srv.Serve(ln)
			}
			if !errors.Is(err, http.ErrServerClosed) {
				errc <- err
				return
			}
			errc <- nil
		}(srv, lns[i])
	}
	l := listening{API: s.apiLn.Addr().String(), Analytics: s.anLn.Addr().String(), TLS: s.tls != nil}
	if s.agentConn != nil {
		l.SNMPAgent = s.agentConn.LocalAddr().String()
	}
	if s.metricsLn != nil {
		l.Metrics = s.metricsLn.Addr().String()
	}
	if s.debugLn != nil {
		l.Debug = s.debugLn.Addr().String()
	}
	if s.radiusAuthConn != nil {
		l.RadiusAuth = s.radiusAuthConn.LocalAddr().String()
	}
	if s.radiusAcctConn != nil {
		l.RadiusAcct = s.radiusAcctConn.LocalAddr().String()
	}
	if s.syslogConn != nil {
		l.Syslog = s.syslogConn.LocalAddr().String()
	}
	log.Info("wnms serving", "version", Version, "api", l.API, "analytics", l.Analytics, "snmp_agent", l.SNMPAgent, "metrics", l.Metrics, "debug", l.Debug,
		"radius_auth", l.RadiusAuth, "radius_acct", l.RadiusAcct, "syslog", l.Syslog,
		"store", string(s.st.Dialect()), "tls", s.tls != nil, "gomaxprocs", c.procs)
	if ready != nil {
		ready(l)
	}

	bg, stopBG := context.WithCancel(context.Background())
	defer stopBG()
	s.background(ctx, bg)

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	log.Info("shutting down", "drain_timeout", c.shutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), c.shutdownTimeout)
	defer cancel()
	// The data sources stop beside the HTTP drain, before the store
	// closes: what they took is stored, the held RADIUS accepts written.
	sourcesDone := make(chan struct{})
	go func() { s.sources.stop(sctx); close(sourcesDone) }()
	for _, srv := range servers {
		if err := srv.Shutdown(sctx); err != nil && serveErr == nil {
			serveErr = err
		}
	}
	<-sourcesDone
	return serveErr
}

// background starts the work that runs beside the requests until bg ends:
// housekeeping, the AP watch, retention, the count of service levels an
// upgraded store's attempts lack, the trap queue, baseline
// evaluation, the cluster (and its reload on SIGHUP), the demo and the
// SNMP agent; and sends each SNMP policy's coldStart trap.
func (s *server) background(ctx, bg context.Context) {
	st, log := s.st, s.log
	go housekeeping(bg, st, log)
	go s.svc.Telemetry.WatchAPs(bg)
	go s.svc.Telemetry.PurgeEvery(bg, st, time.Hour)
	go s.svc.ServiceLevels.Backfill(bg, s.svc.Telemetry.Retention, log)
	go every.Period(bg, time.Hour, func(ctx context.Context) {
		n, err := st.PurgeAudit(ctx, time.Now().Add(-s.c.auditRetention).UnixMilli())
		if err != nil && ctx.Err() == nil {
			log.Error("audit log retention failed", "err", err)
		} else if n > 0 {
			log.Info("audit log records purged", "rows", n)
		}
	})
	go s.traps.Run(bg)
	go s.svc.Hub.Run(bg)
	go s.svc.Webhooks.Run(bg)
	go s.svc.Baselines.EvaluateEvery(bg, func(ctx context.Context) ([]int64, error) {
		// Customers with new telemetry, and those with recent observations.
		ids, err := st.DirtyCustomers(ctx)
		if err != nil {
			return nil, err
		}
		recent, err := st.BaselineCustomers(ctx, time.Now().Add(-48*time.Hour).UnixMilli())
		if err != nil {
			return nil, err
		}
		for _, id := range recent {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		return ids, nil
	}, time.Minute)
	go s.svc.Incidents.RunEvery(bg, time.Minute) // groups what the evaluation recorded
	if s.cluster != nil {
		go s.cluster.Run(bg)
		// Caught from now on: SIGHUP's default would end the process.
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		go s.reloadClusterOnHUP(bg, hup)
	}
	if customers, err := st.SNMPPolicyCustomers(ctx); err != nil {
		log.Error("coldStart trap: listing the SNMP policies failed", "err", err)
	} else {
		for _, id := range customers {
			s.traps.ColdStart(id)
		}
	}
	if s.c.demo {
		go func() {
			if err := runDemo(bg, st, s.auth, s.svc.Baselines, localURL(s.apiLn.Addr(), s.tls != nil), s.c.data, s.stdout, log); err != nil {
				log.Error("demo stopped", "err", err)
			}
		}()
	}
	s.sources.start(bg, s)
	if s.agent != nil {
		go func() {
			if err := s.agent.Serve(bg, s.agentConn, 10*time.Second); err != nil {
				log.Error("SNMP agent stopped", "err", err)
			}
		}()
	}
}

// reloadClusterOnHUP re-reads the cluster file on each SIGHUP (on hup)
// until ctx ends; a file that does not load or check keeps the previous
// one.
func (s *server) reloadClusterOnHUP(ctx context.Context, hup chan os.Signal) {
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			cfg, err := s.c.loadCluster()
			if err != nil {
				s.log.Error("cluster config not reloaded; the previous one stays", "err", err)
				continue
			}
			s.cluster.Reload(ctx, cfg)
			s.log.Info("cluster config reloaded", "children", len(cfg.Children))
		}
	}
}

func newHTTPServer(h http.Handler, tlsConf *tls.Config, log *slog.Logger) *http.Server {
	if tlsConf != nil {
		tlsConf = tlsConf.Clone() // each server sets up HTTP/2 in its own config
	}
	return &http.Server{
		Handler:           h,
		TLSConfig:         tlsConf,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       5 * time.Minute,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// localURL is the URL this process reaches a listener at: its address,
// with loopback for an unspecified one.
func localURL(addr net.Addr, tls bool) string {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// housekeeping purges expired sessions and old login failures.
func housekeeping(ctx context.Context, st *store.Store, log *slog.Logger) {
	every.Period(ctx, time.Minute, func(ctx context.Context) {
		if err := st.PurgeExpired(ctx, time.Now().Add(-10*time.Minute).UnixMilli()); err != nil && ctx.Err() == nil {
			log.Warn("purge failed", "error", err.Error())
		}
	})
}

// bootstrapKeyBase names the bootstrap key file after the store that made
// it, so that a walk-through can read it whatever ran before in the same
// data directory: bootstrap-key for the embedded store,
// bootstrap-key-postgres-<database> for a PostgreSQL database.
func bootstrapKeyBase(databaseURL string) string {
	if databaseURL == "" {
		return "bootstrap-key"
	}
	db := "postgres"
	if u, err := url.Parse(databaseURL); err == nil {
		if name := strings.Trim(u.Path, "/"); name != "" {
			db = name
		}
	}
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, db)
	return "bootstrap-key-postgres-" + safe
}

// bootstrap creates the SUPERUSER admin and its first key on an empty
// store: the pair from the environment, or a new one printed once to
// stdout and written to <data>/bootstrap-key.json (mode 0600; on
// PostgreSQL, bootstrap-key-postgres-<database>.json). An existing key
// file is never overwritten (the new one then gets a -2, -3, ... name).
// The key value never goes to the log.
func bootstrap(ctx context.Context, st *store.Store, a *auth.Service, c serveConfig, stdout io.Writer, log *slog.Logger) error {
	n, err := st.CountUsers(ctx)
	if err != nil || n > 0 {
		return err
	}
	u, err := auth.EnsureAPIUser(ctx, st, "admin", string(wnms.SuperUser), wnms.OnPremCustomer)
	if wnms.ErrorCode(err) == wnms.DuplicateEntity {
		return nil // another replica bootstrapped first
	}
	if err != nil {
		return err
	}
	if (c.bootstrapKeyID == "") != (c.bootstrapValue == "") {
		return errors.New("set both WNMS_BOOTSTRAP_KEY_ID and WNMS_BOOTSTRAP_KEY_VALUE, or neither")
	}
	if c.bootstrapKeyID != "" {
		if err := a.CreateKeyWithValue(ctx, u, c.bootstrapKeyID, c.bootstrapValue, c.bootstrapParent); err != nil {
			return err
		}
		log.Info("bootstrap admin key installed from the environment", "key_id", c.bootstrapKeyID)
		return nil
	}
	k, value, err := a.NewKey(ctx, u)
	if err != nil {
		return err
	}
	b, _ := json.MarshalIndent(map[string]string{"keyId": k.KeyID, "keyValue": value}, "", "  ")
	path, err := writeNewFile(c.data, bootstrapKeyBase(c.databaseURL), ".json", append(b, '\n'))
	if err != nil {
		return fmt.Errorf("write the bootstrap key (it is printed below): %w; %s", err, b)
	}
	fmt.Fprintf(stdout, "wnms: created SUPERUSER \"admin\" with this API key (shown once; also in %s):\n%s\n", path, b)
	log.Info("bootstrap admin key created", "key_id", k.KeyID, "file", path)
	return nil
}

// validate checks every flag of serve, each mistake a usage error (exit 2)
// naming the flag (or its environment twin), before serve does anything.
func (c *serveConfig) validate(cmd *command) error {
	var level slog.Level
	bad := func(name string, v any, want string) error {
		return usagef("%s %v: %s", cmd.origin(name), v, want)
	}
	if err := c.storeFlags.validate(cmd); err != nil {
		return err
	}
	switch {
	case level.UnmarshalText([]byte(c.logLevel)) != nil:
		return bad("log-level", strconv.Quote(c.logLevel), "must be debug, info, warn or error")
	case !strings.EqualFold(c.tlsMode, "off") && !strings.EqualFold(c.tlsMode, "auto") && c.tlsMode != "":
		return bad("tls", strconv.Quote(c.tlsMode), "must be off or auto")
	case (c.tlsCert == "") != (c.tlsKey == ""):
		return usagef("--tls-cert and --tls-key go together")
	case !strings.EqualFold(c.synchronous, "normal") && !strings.EqualFold(c.synchronous, "full"):
		return bad("sqlite-synchronous", strconv.Quote(c.synchronous), "must be normal or full")
	case c.cacheMiB < 0:
		return bad("sqlite-cache-mib", c.cacheMiB, "must be 0 or more")
	case c.maxConns < 0:
		return bad("max-conns", c.maxConns, "must be 0 (the default budget) or more")
	case c.maxConnsPerAddr < 0:
		return bad("max-conns-per-addr", c.maxConnsPerAddr, "must be 0 (no limit) or more")
	case c.serverID < 1:
		return bad("server-id", c.serverID, "must be a whole number of 1 or more")
	case c.shutdownTimeout < 0:
		return bad("shutdown-timeout", c.shutdownTimeout, "must not be negative")
	case c.apTimeout < time.Second:
		return bad("ap-timeout", c.apTimeout, "must be at least 1s")
	case c.retention < time.Hour:
		return bad("retention", c.retention, "must be at least 1h")
	case c.auditRetention < time.Hour:
		return bad("audit-retention", c.auditRetention, "must be at least 1h")
	case c.metricsListen != "api" && !listenAddr(c.metricsListen):
		return bad("metrics-listen", strconv.Quote(c.metricsListen), "must be host:port, off, or api (on the API listener)")
	case c.metricsListen == c.listen && !strings.HasSuffix(c.listen, ":0"): // port 0: each its own
		return bad("metrics-listen", strconv.Quote(c.metricsListen), "is the API listener's address: say api to serve /metrics there")
	case debugListenProblem(c.debugListen) != "":
		return bad("debug-listen", strconv.Quote(c.debugListen), debugListenProblem(c.debugListen))
	case !listenAddr(c.radiusAuth):
		return bad("radius-auth-listen", strconv.Quote(c.radiusAuth), "must be off or host:port")
	case !listenAddr(c.radiusAcct):
		return bad("radius-acct-listen", strconv.Quote(c.radiusAcct), "must be off or host:port")
	case !listenAddr(c.syslogListen):
		return bad("syslog-listen", strconv.Quote(c.syslogListen), "must be off or host:port")
	case c.radiusAcceptHold < time.Second || c.radiusAcceptHold > 10*time.Minute:
		return bad("radius-accept-hold", c.radiusAcceptHold, "must be 1s to 10m")
	case c.radiusStoreWait < 10*time.Millisecond || c.radiusStoreWait > 30*time.Second:
		return bad("radius-store-wait", c.radiusStoreWait, "must be 10ms to 30s")
	case !(c.baselineK > 0 && c.baselineK <= 10): // NaN too (finite refused it already)
		return bad("baseline-k", c.baselineK, "must be above 0 and at most 10")
	case strings.ContainsAny(c.allowedHosts, "/:@"):
		return bad("allowed-hosts", strconv.Quote(c.allowedHosts), "must be host names separated by commas, without scheme or port")
	case c.baselineMin < 1:
		return bad("baseline-min-samples", c.baselineMin, "must be at least 1")
	case c.anomalyClients < 1:
		return bad("anomaly-min-clients", c.anomalyClients, "must be at least 1")
	case !(c.anomalySigma >= 0 && c.anomalySigma <= 100): // NaN too
		return bad("anomaly-min-sigma", c.anomalySigma, "must be 0 to 100 (percentage points)")
	case !(c.anomalyAlpha > 0 && c.anomalyAlpha <= 1):
		return bad("anomaly-alpha", c.anomalyAlpha, "must be above 0 and at most 1")
	case c.apPaired < 2:
		return bad("ap-anomaly-min-paired", c.apPaired, "must be at least 2 (a mean of one client's change is that client's)")
	case !(c.apDropDB >= 0 && c.apDropDB <= 100):
		return bad("ap-anomaly-min-rssi-drop", c.apDropDB, "must be 0 to 100 (dB)")
	case !(c.apRisePct >= 0 && c.apRisePct <= 100):
		return bad("ap-anomaly-min-retry-rise", c.apRisePct, "must be 0 to 100 (percentage points)")
	case (c.bootstrapKeyID == "") != (c.bootstrapValue == ""):
		return usagef("--bootstrap-key-id and --bootstrap-key-value go together")
	case c.bootstrapParent && c.bootstrapKeyID == "":
		return usagef("%s needs --bootstrap-key-id and --bootstrap-key-value", cmd.origin("bootstrap-key-cluster-parent"))
	case c.databaseURL != "" && !strings.HasPrefix(c.databaseURL, "postgres://") && !strings.HasPrefix(c.databaseURL, "postgresql://"):
		return usagef("%s must start with postgres://", cmd.origin("database-url"))
	}
	return nil
}

// tlsConfig loads the certificate, or makes one under --tls=auto.
func (c *serveConfig) tlsConfig() (*tls.Config, error) {
	switch {
	case c.tlsCert != "" || c.tlsKey != "":
		if c.tlsCert == "" || c.tlsKey == "" {
			return nil, errors.New("--tls-cert and --tls-key go together")
		}
	case strings.EqualFold(c.tlsMode, "auto"):
		dir := filepath.Join(c.data, "tls")
		c.tlsCert, c.tlsKey = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
		if err := ensureSelfSigned(dir, c.tlsCert, c.tlsKey); err != nil {
			return nil, err
		}
	case c.tlsMode == "" || strings.EqualFold(c.tlsMode, "off"):
		return nil, nil
	default:
		return nil, fmt.Errorf("--tls must be off or auto, not %q", c.tlsMode)
	}
	cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
	if err != nil {
		return nil, fmt.Errorf("load TLS certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// unwrapListenError keeps the system's reason ("address already in use")
// without repeating the address the message already names.
func unwrapListenError(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// writeNewFile writes data, mode 0600, to dir/base+ext, or to
// dir/base-2+ext, -3, ... when that exists: a key file is never
// overwritten (two stores, say SQLite and PostgreSQL, may share one --data).
func writeNewFile(dir, base, ext string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	for n := 1; n <= 100; n++ {
		name := base + ext
		if n > 1 {
			name = fmt.Sprintf("%s-%d%s", base, n, ext)
		}
		path := filepath.Join(dir, name)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return "", err
		}
		return path, f.Close()
	}
	return "", fmt.Errorf("%s has 100 %s*%s files already", dir, base, ext)
}

// applyBaselines sets the anomaly rules of b from the flags: the rule of a
// slot's share, and the AP test of performance, whose α is --anomaly-alpha
// too.
func (c *serveConfig) applyBaselines(b *baseline.Service) {
	b.K, b.MinSamples = c.baselineK, c.baselineMin
	b.MinClients, b.MinSigma, b.Alpha = c.anomalyClients, c.anomalySigma, c.anomalyAlpha
	b.AP.MinPaired, b.AP.MinDropDB, b.AP.MinRisePct, b.AP.Alpha = c.apPaired, c.apDropDB, c.apRisePct, c.anomalyAlpha
}
