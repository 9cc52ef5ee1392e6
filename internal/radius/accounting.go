package radius

import (
	"container/list"
	"context"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/wnms"
	rad "layeh.com/radius"
)

// Acct-Status-Type values (RFC 2866 §5.1).
const (
	acctStart   = 1
	acctStop    = 2
	acctInterim = 3
)

// AccountingOptions tune an Accounting server; the zero value of each
// field takes its default.
type AccountingOptions struct {
	MaxSessions  int          // sessions whose counters are kept for deltas; 65,536
	MaxRecent    int          // packets remembered to recognise retransmissions; 65,536
	MaxInFlight  int          // packets being committed at once; 4,096
	MaxPerSource int          // of them, from one source; 256
	MaxPerGroup  int          // of them, from the sources of one group (a customer); 1,024
	ForwardQueue int          // packets waiting to be passed on to accountingUpstreams; 4,096
	Retries      int          // tries of each accounting upstream for one packet; 3
	Logger       *slog.Logger // for Sink errors; never given a secret
	Health       *Health      // told of every accounting upstream's answers and silences (optional)
	// Sessions, when set, keeps each open session's counters beyond this
	// process: an Interim-Update after a restart, or sent to another
	// replica, takes its deltas from them. Nil: in memory only.
	Sessions SessionStore
}

// SessionStore keeps the octet counters of open accounting sessions, by a
// key that names the customer, source, NAS, client and Acct-Session-Id.
type SessionStore interface {
	AcctCounters(ctx context.Context, key string) (in, out uint64, ok bool, err error)
	SetAcctCounters(ctx context.Context, key string, in, out uint64) error
	EndAcctSession(ctx context.Context, key string) error
}

// Accounting is the RADIUS accounting server (RFC 2866; decisions §21).
// Start becomes an Intermediate event 1/1 Associated, Interim-Update a
// client sample with the byte deltas since the session's previous
// counters, Stop an Intermediate event 1/4 Session ended (subTypeCode =
// Acct-Terminate-Cause, not an 802.11 reason code) and a last sample. The Accounting-Response is
// sent only once the Sink has committed the records; a retransmission
// gets the same records again (duplicates downstream) and its answer.
// With accountingUpstreams each packet is also passed on.
type Accounting struct {
	settings *Settings
	sink     Sink
	opts     AccountingOptions
	counters Counters
	pool     pool
	inflight *inflight
	forwards chan forward

	mu       sync.Mutex
	sessions map[string]*session
	lru      *list.List // of *session, least recently updated first
	recent   map[string]*observation
	recentQ  *list.List // of string keys, oldest first
}

type session struct {
	key     string
	elem    *list.Element
	in, out uint64
}

// observation is what one accounting packet became: the same for its
// retransmissions.
type observation struct {
	events, samples []Observation
	passedOn        bool      // queued for accountingUpstreams (a.mu)
	at              time.Time // when the first copy arrived
}

// RecentWindow is how long a packet is remembered to recognise its
// retransmissions: a NAS gives up on a packet well within it (RFC 2866
// leaves the schedule to the NAS; common ones retry for 10-30 s). Memory
// holds the packets of that window, at most MaxRecent.
const RecentWindow = 2 * time.Minute

type forward struct {
	req      *rad.Packet
	received time.Time
	ups      []*upstream // the source's accounting upstreams
}

// NewAccounting returns an accounting server that reads its sources and
// accounting upstreams from s at each packet and gives its records to
// sink.
func NewAccounting(s *Settings, sink Sink, opts AccountingOptions) *Accounting {
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = 1 << 16
	}
	if opts.MaxRecent <= 0 {
		opts.MaxRecent = 1 << 16
	}
	if opts.ForwardQueue <= 0 {
		opts.ForwardQueue = 4096
	}
	if opts.Retries <= 0 {
		opts.Retries = 3
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	a := &Accounting{settings: s, sink: sink, opts: opts, inflight: newInflight(opts.MaxInFlight, opts.MaxPerSource, opts.MaxPerGroup),
		forwards: make(chan forward, opts.ForwardQueue), sessions: map[string]*session{}, lru: list.New(),
		recent: map[string]*observation{}, recentQ: list.New()}
	a.pool.counters = &a.counters
	return a
}

// Counters returns the server's counters.
func (a *Accounting) Counters() *Counters { return &a.counters }

// Serve answers the Accounting-Requests arriving on pc until ctx ends,
// then waits for the packets being committed and returns nil; or
// returns the error that stopped reading pc. It does not close pc.
// Packets still queued for accountingUpstreams when ctx ends are not
// passed on. Serve is called once.
func (a *Accounting) Serve(ctx context.Context, pc net.PacketConn) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg, bg sync.WaitGroup
	for range forwardWorkers {
		bg.Add(1)
		go func() { defer bg.Done(); a.passOn(ctx) }()
	}
	stop := context.AfterFunc(ctx, func() { pc.SetReadDeadline(time.Now()) })
	defer stop()
	// An Accounting-Request is signed by its Request Authenticator; it
	// needs no Message-Authenticator.
	err := serveRequests(ctx, pc, admission{code: rad.CodeAccountingRequest, received: &a.counters.AccountingRequests,
		counters: &a.counters, settings: a.settings, inflight: a.inflight, requireMA: func(*source) bool { return false }},
		&wg, func(from netip.AddrPort, st *settings, src *source, req *rad.Packet) {
			a.handle(ctx, pc, from, st, src, req)
		})
	wg.Wait()
	cancel()
	bg.Wait()
	a.pool.close()
	return err
}

func (a *Accounting) handle(ctx context.Context, pc net.PacketConn, from netip.AddrPort, st *settings, src *source, req *rad.Packet) {
	if err := a.loadSession(ctx, src, req); err != nil {
		// No answer: the NAS sends the packet again.
		a.counters.SinkErrors.Add(1)
		a.opts.Logger.Warn("radius: accounting session counters not read", "source", src.Name, "err", err)
		return
	}
	obs, first := a.observe(src, req, time.Now())
	if !first {
		// Counted when recognised, before it is answered: whoever has the
		// answer sees the count.
		a.counters.Retransmissions.Add(1)
	}
	for _, k := range []struct {
		kind string
		recs []Observation
	}{{"events", obs.events}, {"samples", obs.samples}} {
		if len(k.recs) == 0 {
			continue
		}
		if err := a.sink.Emit(ctx, src.Source, k.recs); err != nil {
			// No answer: the NAS sends the packet again, and gets the same
			// records again.
			a.counters.SinkErrors.Add(1)
			a.opts.Logger.Warn("radius: accounting records not stored", "source", src.Name, "kind", k.kind, "err", err)
			return
		}
		a.counters.Events.Add(uint64(len(k.recs)))
	}
	// The counters are stored after the records they were taken for: a
	// process killed in between has not answered, and the NAS's
	// retransmission takes the same deltas again from the previous
	// counters (a duplicate downstream).
	if err := a.saveSession(ctx, src, req); err != nil {
		a.counters.SinkErrors.Add(1)
		a.opts.Logger.Warn("radius: accounting session counters not stored", "source", src.Name, "err", err)
		return
	}
	resp := &rad.Packet{Code: rad.CodeAccountingResponse, Identifier: req.Identifier}
	for _, v := range req.Attributes {
		if v.Type == attrProxyState {
			resp.Add(attrProxyState, v.Attribute)
		}
	}
	wire, err := encodeResponse(resp, req.Authenticator, src.secret, false)
	if err != nil {
		return
	}
	if _, err := pc.WriteTo(wire, net.UDPAddrFromAddrPort(from)); err == nil {
		a.counters.AccountingResponses.Add(1)
	}
	// Passed on once, after the first commit: a packet whose first try
	// the Sink refused goes on with its retransmission.
	a.mu.Lock()
	pass := !obs.passedOn
	obs.passedOn = true
	a.mu.Unlock()
	if pass && len(src.accounting) > 0 {
		select {
		case a.forwards <- forward{req, time.Now(), src.accounting}:
		default:
			a.counters.ForwardsDropped.Add(1)
		}
	}
}

// observe returns the records of req, and whether req is the first of
// its retransmissions: these are known by the source, NAS, client,
// session, status and Event-Timestamp (else the packet as a whole), and
// get the records the first one got.
func (a *Accounting) observe(src *source, req *rad.Packet, now time.Time) (*observation, bool) {
	subj := subjectOf(req)
	status, _ := rad.Integer(req.Get(attrAcctStatusType))
	sid := string(req.Get(attrAcctSessionID))
	// When the NAS gives no Event-Timestamp, the packet's own Request
	// Authenticator stands for it: it hashes the whole packet, so a
	// retransmission has the same and the next update (other counters,
	// or another Acct-Delay-Time) another.
	ts := now.UnixMilli()
	when := "a" + hex.EncodeToString(req.Authenticator[:])
	if et, err := rad.Integer(req.Get(attrEventTimestamp)); err == nil {
		when, ts = "e"+strconv.FormatUint(uint64(et), 10), int64(et)*1000
	} else if d, err := rad.Integer(req.Get(attrAcctDelayTime)); err == nil {
		ts -= int64(d) * 1000
	}
	sessKey := sessionKey(src, subj, sid)
	key := eventID(sessKey, strconv.FormatUint(uint64(status), 10), when)

	a.mu.Lock()
	defer a.mu.Unlock()
	if o, ok := a.recent[key]; ok {
		return o, false
	}
	o := &observation{}
	in, inOK := octets(req, attrAcctInputOctets, attrAcctInputGigawords)
	out, outOK := octets(req, attrAcctOutputOctets, attrAcctOutputGigawords)
	// A sample is the bytes since the session's previous counters. An
	// update without them (a session whose Start and updates wnms never
	// saw, or whose counters expired) gives no sample: a delta that cannot
	// be computed is not invented. Its counters become the session's
	// reference, so the next update's sample counts from them.
	sample := func() {
		s := a.sessions[sessKey]
		if s == nil || !inOK || !outOK {
			return
		}
		o.samples = append(o.samples, subj.sample(ts, delta(s.in, in), delta(s.out, out)))
	}
	switch status {
	case acctStart:
		start := subj.intermediate(eventID(key, "start"), ts, wnms.TypeAssociated, 0)
		if ip, err := rad.IPAddr(req.Get(attrFramedIPAddress)); err == nil {
			start.Event.IP = wnms.Ptr(ip.String())
		}
		o.events = append(o.events, start)
		a.touch(sessKey, in, out)
	case acctInterim:
		sample()
		if inOK && outOK {
			a.touch(sessKey, in, out)
		}
	case acctStop:
		// A terminate cause is no 802.11 reason code: the session ended
		// is an event of its own, with the cause as its subtype.
		cause := 0
		if c, err := rad.Integer(req.Get(attrAcctTerminateCause)); err == nil && c < 1<<31 {
			cause = int(c)
		}
		o.events = append(o.events, subj.intermediate(eventID(key, "stop"), ts, wnms.TypeSessionEnded, cause))
		if inOK && outOK {
			sample()
		}
		if s := a.sessions[sessKey]; s != nil {
			a.lru.Remove(s.elem)
			delete(a.sessions, sessKey)
		}
	}
	if subj.mac == "" && (len(o.events) > 0 || len(o.samples) > 0) {
		a.counters.EventsWithoutClient.Add(1)
		o = &observation{}
	}
	for e := a.recentQ.Front(); e != nil; e = a.recentQ.Front() {
		k := e.Value.(string)
		if len(a.recent) < a.opts.MaxRecent && now.Sub(a.recent[k].at) < RecentWindow {
			break
		}
		a.recentQ.Remove(e)
		delete(a.recent, k)
	}
	o.at = now
	a.recent[key] = o
	a.recentQ.PushBack(key)
	return o, true
}

// sessionKey names an accounting session: its source (and so its
// customer), NAS, client and Acct-Session-Id.
func sessionKey(src *source, subj subject, sid string) string {
	return eventID(src.key(), subj.nasID, subj.nasIP, subj.mac, sid)
}

// loadSession puts the stored counters of req's session in memory before
// an Interim-Update or Stop is observed, or forgets the session's
// counters in memory when none are stored (another replica ended it).
func (a *Accounting) loadSession(ctx context.Context, src *source, req *rad.Packet) error {
	status, _ := rad.Integer(req.Get(attrAcctStatusType))
	if a.opts.Sessions == nil || (status != acctInterim && status != acctStop) {
		return nil
	}
	key := sessionKey(src, subjectOf(req), string(req.Get(attrAcctSessionID)))
	in, out, ok, err := a.opts.Sessions.AcctCounters(ctx, key)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if ok {
		a.touch(key, in, out)
	} else if s := a.sessions[key]; s != nil {
		a.lru.Remove(s.elem)
		delete(a.sessions, key)
	}
	return nil
}

// saveSession stores the counters of req's session once its records are
// committed: a Start's or an update's counters, or the end of the
// session with its Stop.
func (a *Accounting) saveSession(ctx context.Context, src *source, req *rad.Packet) error {
	if a.opts.Sessions == nil {
		return nil
	}
	status, _ := rad.Integer(req.Get(attrAcctStatusType))
	key := sessionKey(src, subjectOf(req), string(req.Get(attrAcctSessionID)))
	in, inOK := octets(req, attrAcctInputOctets, attrAcctInputGigawords)
	out, outOK := octets(req, attrAcctOutputOctets, attrAcctOutputGigawords)
	switch {
	case status == acctStart, status == acctInterim && inOK && outOK:
		return a.opts.Sessions.SetAcctCounters(ctx, key, in, out)
	case status == acctStop:
		return a.opts.Sessions.EndAcctSession(ctx, key)
	}
	return nil
}

// touch records a session's counters. a.mu is held.
func (a *Accounting) touch(key string, in, out uint64) {
	s := a.sessions[key]
	if s == nil {
		for len(a.sessions) >= a.opts.MaxSessions {
			old := a.lru.Remove(a.lru.Front()).(*session)
			delete(a.sessions, old.key)
			a.counters.SessionsEvicted.Add(1)
		}
		s = &session{key: key}
		s.elem = a.lru.PushBack(s)
		a.sessions[key] = s
	} else {
		a.lru.MoveToBack(s.elem)
	}
	s.in, s.out = in, out
}

// octets reads a 64-bit counter from its octets and gigawords attributes
// (RFC 2869 §5.1).
func octets(p *rad.Packet, low, high rad.Type) (uint64, bool) {
	l, err := rad.Integer(p.Get(low))
	if err != nil {
		return 0, false
	}
	h, _ := rad.Integer(p.Get(high))
	return uint64(h)<<32 | uint64(l), true
}

// delta is what a counter grew by; a counter that went back was reset,
// and counts from zero.
func delta(prev, cur uint64) int64 {
	d := cur
	if cur >= prev {
		d = cur - prev
	}
	return int64(min(d, 1<<62))
}

// forwardWorkers pass packets on at once, so one slow upstream does not
// hold the queue behind a single packet's retries.
const forwardWorkers = 4

// passOn sends queued packets to the accounting upstreams, each re-signed
// with the upstream's secret: the first that answers ends it; each is
// tried Retries times.
func (a *Accounting) passOn(ctx context.Context) {
	for {
		var f forward
		select {
		case <-ctx.Done():
			return
		case f = <-a.forwards:
		}
		if !a.sendOn(ctx, f) && ctx.Err() == nil {
			a.counters.ForwardsDropped.Add(1)
		}
	}
}

func (a *Accounting) sendOn(ctx context.Context, f forward) bool {
	for _, up := range f.ups {
		if up.addr == nil { // down for good: its name does not resolve
			continue
		}
		for range a.opts.Retries {
			c := &call{up: up, answer: make(chan []byte, 1)}
			ps := randomAuthenticator()
			_, err := a.pool.exchange(ctx, c, func(id byte) ([]byte, error) {
				out := &rad.Packet{Code: rad.CodeAccountingRequest, Identifier: id, Secret: up.secret,
					Attributes: cloneAttributes(f.req.Attributes)}
				// The delay grows by the time the packet waited here (RFC 2866 §5.2).
				if d, err := rad.Integer(out.Get(attrAcctDelayTime)); err == nil {
					out.Set(attrAcctDelayTime, rad.NewInteger(d+uint32(time.Since(f.received)/time.Second)))
				}
				out.Add(attrProxyState, rad.Attribute(ownProxyState(ps)))
				return out.Encode()
			})
			if err == nil {
				a.opts.Health.observe(up, UpstreamAccounting, true, time.Now())
				return true
			}
			if ctx.Err() != nil {
				return false
			}
			if !errors.Is(err, errPoolFull) {
				a.opts.Health.observe(up, UpstreamAccounting, false, time.Now())
			}
		}
	}
	return false
}
