package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/datasource"
	"github.com/wnms/wnms/internal/metrics"
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
		// TCP on the port UDP got (the flag may have asked for port 0).
		addr := s.syslogConn.LocalAddr().(*net.UDPAddr)
		if s.syslogLn, err = net.Listen("tcp", net.JoinHostPort(addr.IP.String(), strconv.Itoa(addr.Port))); err != nil {
			return fmt.Errorf("--syslog-listen %s (TCP): %w", c.syslogListen, unwrapListenError(err))
		}
		s.closers = append(s.closers, func() { s.syslogLn.Close() })
	}
	return nil
}

// wireDataSources builds the bridge (always: PUT /V5/datasources checks
// through it) and the listeners that are on, loads the stored
// configuration and registers the listeners' counters.
func (s *server) wireDataSources(ctx context.Context, reg *metrics.Registry) {
	log := s.log
	d := &dataSources{bridge: &datasource.Bridge{Store: s.st, Ingest: s.api.Telemetry, Radius: &radius.Settings{},
		Log: log, Registry: reg, Held: s.st, ServerID: int64(s.c.serverID), Hold: s.c.radiusAcceptHold}}
	// A configuration that cannot be put in force now (an upstream's
	// name that does not resolve yet) does not stop the server: the
	// listeners drop what they get until a reload succeeds.
	if err := d.bridge.Reload(ctx); err != nil {
		log.Error("data sources: the stored configuration is not in force yet", "err", err)
	}
	s.api.CheckDataSources = d.bridge.Check
	s.api.OnDataSourcesChange = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := d.bridge.Reload(ctx); err != nil {
			log.Error("data sources: reload failed", "err", err)
		}
	}
	if s.radiusAuthConn != nil {
		d.proxy = radius.NewProxy(d.bridge.Radius, d.bridge, radius.ProxyOptions{Logger: log})
	}
	if s.radiusAcctConn != nil {
		d.acct = radius.NewAccounting(d.bridge.Radius, d.bridge, radius.AccountingOptions{Logger: log})
	}
	if s.syslogConn != nil {
		d.assembler = &syslog.Assembler{Sink: syslog.SinkFunc(d.bridge.EmitSyslog)}
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
	reg.CounterVecFunc("wnms_syslog_messages_total", "Syslog messages received, by outcome (parsed, or the reason dropped).", "outcome", func() map[string]float64 {
		m := map[string]float64{"received": 0, "parsed": 0}
		for _, r := range []string{syslog.DropOversize, syslog.DropNotSyslog, syslog.DropSource, syslog.DropConnLimit, syslog.DropFraming} {
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
