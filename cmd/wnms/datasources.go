package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/datasource"
	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/poller"
	"github.com/wnms/wnms/internal/radius"
	"github.com/wnms/wnms/internal/syslog"
)

// dataSourcesReload is how often a server re-reads the data source
// configuration, so that one stored through a replica reaches its
// listeners too (its own PUTs take effect at once).
const dataSourcesReload = 10 * time.Second

// dataSources are the RADIUS and syslog listeners with the bridge that
// places what they observe and ingests it.
type dataSources struct {
	bridge    *datasource.Bridge
	proxy     *radius.Proxy
	acct      *radius.Accounting
	receiver  *syslog.Receiver
	assembler *syslog.Assembler
	// pollers ask the configured APs for their radio data.
	pollers *poller.Manager

	// Set by start, for stop.
	stopListeners, stopBridge context.CancelFunc
	listeners, bridgeDone     sync.WaitGroup
}

// listenAddr reports whether v is "off" or a host:port to listen on.
func listenAddr(v string) bool {
	if v == "off" {
		return true
	}
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 0 && n <= 65535
}

// listenDataSources takes the data source listeners' sockets (before
// the store is touched, like the other listeners).
func (s *server) listenDataSources() error {
	c := s.c
	var err error
	for _, l := range []struct {
		flag, addr string
		conn       *net.PacketConn
	}{{"radius-auth-listen", c.radiusAuth, &s.radiusAuthConn}, {"radius-acct-listen", c.radiusAcct, &s.radiusAcctConn},
		{"syslog-listen", c.syslogListen, &s.syslogConn}} {
		if l.addr == "off" {
			continue
		}
		if *l.conn, err = net.ListenPacket("udp", l.addr); err != nil {
			return fmt.Errorf("--%s %s: %w", l.flag, l.addr, unwrapListenError(err))
		}
		pc := *l.conn
		s.closers = append(s.closers, func() { pc.Close() })
	}
	if s.syslogConn != nil {
		if s.syslogLn, err = s.listenSyslogTCP(); err != nil {
			return fmt.Errorf("--syslog-listen %s (TCP): %w", c.syslogListen, unwrapListenError(err))
		}
		s.closers = append(s.closers, func() { s.syslogLn.Close() })
	}
	return nil
}

// listenSyslogTCP listens on TCP at the port the syslog UDP socket got.
// When the flag asked for port 0 and that port is taken on TCP, the UDP
// socket moves to another free port, a few times, so that both are on
// one port.
func (s *server) listenSyslogTCP() (net.Listener, error) {
	_, port, _ := net.SplitHostPort(s.c.syslogListen)
	for try := 0; ; try++ {
		addr := s.syslogConn.LocalAddr().(*net.UDPAddr)
		ln, err := net.Listen("tcp", net.JoinHostPort(addr.IP.String(), strconv.Itoa(addr.Port)))
		if err == nil || port != "0" || try == 16 || !errors.Is(err, syscall.EADDRINUSE) {
			return ln, err
		}
		pc, perr := net.ListenPacket("udp", s.c.syslogListen)
		if perr != nil {
			return nil, err
		}
		s.syslogConn.Close()
		s.syslogConn = pc
		s.closers = append(s.closers, func() { pc.Close() })
	}
}

// wireDataSources builds the bridge (always: PUT /V5/datasources checks
// through it) and the listeners that are on, loads the stored
// configuration and registers the listeners' counters.
func (s *server) wireDataSources(ctx context.Context, reg *metrics.Registry) {
	log := s.log
	// Traffic is an AP's heartbeat: written at most every 5 s, and a few
	// times within the AP timeout however short.
	// An upstream that stops answering or answers again raises
	// upstreamDown or upstreamUp (event stream, webhooks, SNMP trap), off
	// the RADIUS path.
	hub := s.svc.Hub
	health := &radius.Health{OnChange: func(u radius.UpstreamStatus) {
		log.Info("RADIUS upstream state", "customer_id", u.Group, "upstream", u.Address, "kind", u.Kind, "up", u.Up)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			hub.UpstreamChange(ctx, u.Group, u.Address, u.Kind, u.Up)
		}()
	}}
	d := &dataSources{bridge: &datasource.Bridge{Store: s.st, Ingest: s.svc.Telemetry, Radius: &radius.Settings{},
		Log: log, Registry: reg, Heartbeat: s.svc.Telemetry,
		HeartbeatEvery: min(datasource.DefaultHeartbeatEvery, s.c.apTimeout/5),
		Health:         health, RadiusOn: s.radiusAuthConn != nil || s.radiusAcctConn != nil, SyslogOn: s.syslogConn != nil,
		Held: s.st, ServerID: int64(s.c.serverID), Hold: s.c.radiusAcceptHold}}
	// No upstream may be one of these listeners: a request sent there
	// would come back to be sent there again.
	var own []netip.AddrPort
	for _, pc := range []net.PacketConn{s.radiusAuthConn, s.radiusAcctConn} {
		if pc != nil {
			own = append(own, pc.LocalAddr().(*net.UDPAddr).AddrPort())
		}
	}
	d.bridge.Radius.SetListeners(own...)
	// Each customer's configuration is put in force on its own: one that
	// cannot be (an upstream's name that does not resolve now is only
	// kept down) stops neither the server nor another customer's intake.
	if err := d.bridge.Reload(ctx); err != nil {
		log.Error("data sources: the stored configuration is not in force yet", "err", err)
	}
	s.api.CheckDataSources = d.bridge.Check
	s.api.DataSourceStatus = d.bridge.Status
	// The pollers: one server at a time polls each (a lease in the
	// store), named in its leases by this process's own token.
	d.pollers = &poller.Manager{Store: s.st, Ingest: s.svc.Telemetry, Notify: hub, Log: log, Registry: reg,
		Holder: fmt.Sprintf("server %d, %s", s.c.serverID, auth.RandomToken(8))}
	s.api.OnDataSourcesChange = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := d.bridge.Reload(ctx); err != nil {
			log.Error("data sources: reload failed", "err", err)
		}
		if err := d.pollers.Reload(ctx); err != nil {
			log.Error("pollers: reload failed", "err", err)
		}
	}
	if s.radiusAuthConn != nil {
		d.proxy = radius.NewProxy(d.bridge.Radius, d.bridge, radius.ProxyOptions{Logger: log, Health: health, StoreWait: s.c.radiusStoreWait})
	}
	if s.radiusAcctConn != nil {
		d.acct = radius.NewAccounting(d.bridge.Radius, d.bridge, radius.AccountingOptions{Logger: log, Health: health, Sessions: s.st})
	}
	if s.syslogConn != nil {
		d.assembler = &syslog.Assembler{Sink: syslog.SinkFunc(d.bridge.EmitSyslog), Owner: d.bridge.SyslogOwner}
		d.receiver = &syslog.Receiver{Handle: d.assembler.Observe, Accept: d.bridge.AcceptSyslog}
	}
	d.instrument(reg)
	s.sources = d
}

// start runs the listeners that are on, and the bridge's background
// work, until ctx ends or stop is called.
func (d *dataSources) start(ctx context.Context, s *server) {
	log := s.log
	bctx, stopBridge := context.WithCancel(ctx)
	ctx, stopListeners := context.WithCancel(ctx)
	d.stopBridge, d.stopListeners = stopBridge, stopListeners
	d.bridgeDone.Add(1)
	go func() { defer d.bridgeDone.Done(); d.bridge.Run(bctx, dataSourcesReload) }()
	d.bridgeDone.Add(1)
	go func() { defer d.bridgeDone.Done(); d.pollers.Run(bctx, dataSourcesReload) }()
	serve := func(name string, f func() error) {
		d.listeners.Add(1)
		go func() {
			defer d.listeners.Done()
			if err := f(); err != nil && ctx.Err() == nil {
				log.Error(name+" stopped", "err", err)
			}
		}()
	}
	if d.proxy != nil {
		serve("RADIUS authentication proxy", func() error { return d.proxy.Serve(ctx, s.radiusAuthConn) })
	}
	if d.acct != nil {
		serve("RADIUS accounting server", func() error { return d.acct.Serve(ctx, s.radiusAcctConn) })
	}
	if d.receiver != nil {
		serve("syslog assembler", func() error { return d.assembler.Run(ctx) })
		serve("syslog receiver", func() error { return d.receiver.Serve(ctx, s.syslogConn, s.syslogLn) })
	}
}

// stop ends the listeners (each answers what it has in flight and
// stores what it queued), then the bridge's background work, and writes
// the RADIUS accepts still held to the store: a graceful stop loses no
// observation. It waits until ctx ends at most.
func (d *dataSources) stop(ctx context.Context) {
	if d.stopListeners == nil {
		return // never started
	}
	done := make(chan struct{})
	go func() {
		d.stopListeners()
		d.listeners.Wait()
		d.stopBridge()
		d.bridgeDone.Wait()
		d.bridge.Flush(ctx)
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// instrument shows the listeners' counters in /metrics: packets and
// lines by outcome, drops by reason (zeros too), events made.
func (d *dataSources) instrument(reg *metrics.Registry) {
	counters := func() []*radius.Counters {
		var cs []*radius.Counters
		if d.proxy != nil {
			cs = append(cs, d.proxy.Counters())
		}
		if d.acct != nil {
			cs = append(cs, d.acct.Counters())
		}
		return cs
	}
	reg.CounterVecFunc("wnms_radius_packets_total", "RADIUS packets by what became of them.", "packet", func() map[string]float64 {
		m := map[string]float64{}
		for _, c := range counters() {
			for k, v := range map[string]uint64{"access_request": c.AccessRequests.Load(), "access_accept": c.AccessAccepts.Load(),
				"access_reject": c.AccessRejects.Load(), "access_challenge": c.AccessChallenges.Load(),
				"accounting_request": c.AccountingRequests.Load(), "accounting_response": c.AccountingResponses.Load(),
				"retransmission": c.Retransmissions.Load(), "upstream_timeout": c.UpstreamTimeouts.Load(),
				"upstreams_failed": c.UpstreamsFailed.Load(), "forward_dropped": c.ForwardsDropped.Load()} {
				m[k] += float64(v)
			}
		}
		return m
	})
	reg.CounterVecFunc("wnms_radius_dropped_total", "RADIUS packets dropped unanswered, by reason.", "reason", func() map[string]float64 {
		m := map[string]float64{}
		for _, r := range radius.DropReasons() {
			m[r.String()] = 0
			for _, c := range counters() {
				m[r.String()] += float64(c.Dropped(r))
			}
		}
		return m
	})
	reg.CounterVecFunc("wnms_radius_records_total", "Client events and samples the RADIUS listeners made, by outcome.", "outcome", func() map[string]float64 {
		m := map[string]float64{}
		for _, c := range counters() {
			m["committed"] += float64(c.Events.Load())
			m["sink_error"] += float64(c.SinkErrors.Load())
			m["dropped"] += float64(c.EventsDropped.Load())
			m["without_client"] += float64(c.EventsWithoutClient.Load())
		}
		return m
	})
	reg.CounterFunc("wnms_radius_accepts_unstored_total", "Access-Accepts passed on before their Success was known to be committed (the wait ran out, or storing failed).", func() float64 {
		n := 0.0
		for _, c := range counters() {
			n += float64(c.AcceptsUnstored.Load())
		}
		return n
	})
	reg.CounterVecFunc("wnms_syslog_messages_total", "Syslog messages received, by outcome (parsed, or the reason dropped).", "outcome", func() map[string]float64 {
		m := map[string]float64{"received": 0, "parsed": 0}
		for _, r := range []string{syslog.DropOversize, syslog.DropNotSyslog, syslog.DropSource, syslog.DropConnLimit, syslog.DropConnPer, syslog.DropFraming} {
			m["dropped_"+r] = 0
		}
		if d.receiver == nil {
			return m
		}
		st := d.receiver.Stats()
		m["received"], m["parsed"] = float64(st.Lines), float64(st.Parsed)
		for r, n := range st.Dropped {
			m["dropped_"+r] = float64(n)
		}
		return m
	})
	reg.CounterVecFunc("wnms_syslog_connections_total", "Syslog TCP connections: accepted, refused (from an address that is no source, over the "+
		"limit of all, over the limit of one address: 16) and closed after 5 minutes of silence.", "outcome", func() map[string]float64 {
		m := map[string]float64{"accepted": 0, "refused_source": 0, "refused_limit": 0, "refused_per_address": 0, "closed_idle": 0}
		if d.receiver == nil {
			return m
		}
		st := d.receiver.Stats()
		refused := st.ConnsRefused[syslog.DropSource] + st.ConnsRefused[syslog.DropConnLimit] + st.ConnsRefused[syslog.DropConnPer]
		m["accepted"] = float64(st.Connections - refused)
		m["refused_source"] = float64(st.ConnsRefused[syslog.DropSource])
		m["refused_limit"] = float64(st.ConnsRefused[syslog.DropConnLimit])
		m["refused_per_address"] = float64(st.ConnsRefused[syslog.DropConnPer])
		m["closed_idle"] = float64(st.IdleClosed)
		return m
	})
	reg.CounterVecFunc("wnms_syslog_lines_total", "Syslog lines by program and whether a parser read them.", "program", func() map[string]float64 {
		m := map[string]float64{}
		if d.assembler == nil {
			return m
		}
		st := d.assembler.Stats()
		for prog, l := range st.Lines {
			m[prog+"_parsed"] = float64(l.Parsed)
			m[prog+"_unparsed"] = float64(l.Unparsed)
		}
		m["other"] = float64(st.OtherPrograms)
		return m
	})
	reg.CounterVecFunc("wnms_syslog_events_total", "Client events the syslog assembler made, by event type.", "eventType", func() map[string]float64 {
		m := map[string]float64{}
		if d.assembler == nil {
			return m
		}
		for k, v := range d.assembler.Stats().Events {
			m[k] = float64(v)
		}
		return m
	})
}
