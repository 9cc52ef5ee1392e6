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
	"sync/atomic"
	"time"

	"github.com/wnms/wnms/internal/udpbuf"
	"github.com/wnms/wnms/internal/wnms"
	rad "layeh.com/radius"
)

// ProxyOptions tune a Proxy; the zero value of each field takes its
// default.
type ProxyOptions struct {
	EAPTimeout       time.Duration // an EAP conversation left this long after a Challenge fails 2/204; 30 s
	DeadTime         time.Duration // an upstream that timed out is skipped this long; 30 s
	MaxConversations int           // conversations waiting for the NAS after a Challenge; 65,536
	MaxInFlight      int           // requests being forwarded at once; 4,096
	MaxPerSource     int           // of them, from one source; 256
	MaxPerGroup      int           // of them, from the sources of one group (a customer); 1,024
	// StoreWait bounds how long an Access-Accept waits for its Success to
	// be in the store before it goes to the NAS; 1 s. An accept whose
	// Success is committed first is never lost to a crash of the server;
	// one that waited out the bound is answered anyway (counted), as the
	// NAS must not time out because the store is slow.
	StoreWait time.Duration
	Logger    *slog.Logger // for upstream state changes and Sink errors; never given a secret
	Health    *Health      // told of every upstream's answers and silences (optional)
}

// Proxy is the RADIUS authentication proxy (RFC 2865, 3579; decisions
// §21): it takes Access-Requests from the configured sources, passes
// them on to the first live upstream and relays the answers back, and
// turns what it sees into client events for the Sink. It never decides
// an authentication itself.
type Proxy struct {
	settings *Settings
	sink     Sink
	opts     ProxyOptions
	counters Counters
	pool     pool
	inflight *inflight
	events   chan event

	mu       sync.Mutex
	recent   map[reqKey]*exchange // requests being answered, and answered in the last dupWindow
	answered *list.List           // of reqKey, oldest answer first
	convs    map[string]*conversation
	waiting  *list.List           // of *conversation, oldest Challenge first
	dead     map[string]time.Time // upstream key (its group and address) -> skipped until
}

// dupWindow is how long an answer is kept to answer a NAS's
// retransmission of its request again (RFC 5080 §2.2.2).
const dupWindow = 10 * time.Second

// maxAnswered is how many answers are kept for retransmissions at most.
const maxAnswered = 1 << 16

type reqKey struct {
	from netip.AddrPort
	id   byte
	auth [16]byte
}

type exchange struct {
	answer []byte // nil until answered; stays nil when no upstream answered
	at     time.Time
}

// conversation is one authentication, from the NAS's first request to
// the final answer, across Access-Challenge round trips.
type conversation struct {
	key         string
	elem        *list.Element
	src         Source
	id          string // from the first request, the base of the conversation's event ids
	start       time.Time
	subject     subject
	challengeAt time.Time
	sawTLS      bool
}

type event struct {
	src    Source
	rec    Observation
	stored chan<- bool // nil, or told once whether rec was committed
}

// NewProxy returns a proxy that reads its sources and upstreams from s
// at each request and gives its observations to sink.
func NewProxy(s *Settings, sink Sink, opts ProxyOptions) *Proxy {
	if opts.EAPTimeout <= 0 {
		opts.EAPTimeout = 30 * time.Second
	}
	if opts.DeadTime <= 0 {
		opts.DeadTime = 30 * time.Second
	}
	if opts.MaxConversations <= 0 {
		opts.MaxConversations = 1 << 16
	}
	if opts.StoreWait <= 0 {
		opts.StoreWait = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Proxy{settings: s, sink: sink, opts: opts, inflight: newInflight(opts.MaxInFlight, opts.MaxPerSource, opts.MaxPerGroup),
		events: make(chan event, 8192), recent: map[reqKey]*exchange{}, answered: list.New(),
		convs: map[string]*conversation{}, waiting: list.New(), dead: map[string]time.Time{}}
	p.pool.counters = &p.counters
	return p
}

// Counters returns the proxy's counters.
func (p *Proxy) Counters() *Counters { return &p.counters }

// Serve answers the Access-Requests arriving on pc until ctx ends, then
// waits for the requests in flight and the events queued, and returns
// nil; or returns the error that stopped reading pc. It does not close
// pc. Serve is called once.
func (p *Proxy) Serve(ctx context.Context, pc net.PacketConn) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg, bg sync.WaitGroup
	bg.Add(2)
	go func() { defer bg.Done(); p.sweep(ctx) }()
	// The events of requests still being answered when ctx ends are
	// stored too: the emit loop stops only once they are all queued.
	ectx, ecancel := context.WithCancel(context.WithoutCancel(ctx))
	defer ecancel()
	go func() { defer bg.Done(); emitLoop(ectx, p.sink, p.events, &p.counters, p.opts.Logger) }()
	stop := context.AfterFunc(ctx, func() { pc.SetReadDeadline(time.Now()) })
	defer stop()
	err := serveRequests(ctx, pc, admission{code: rad.CodeAccessRequest, received: &p.counters.AccessRequests,
		counters: &p.counters, settings: p.settings, inflight: p.inflight, requireMA: func(src *source) bool { return !src.optionalMA }},
		&wg, func(from netip.AddrPort, st *settings, src *source, req *rad.Packet) {
			p.handle(ctx, pc, from, st, src, req)
		})
	wg.Wait()
	cancel()
	ecancel()
	bg.Wait()
	p.pool.close()
	return err
}

// admission is what a RADIUS server checks of each packet before it is
// handled: from a known source, of the code it serves, signed with the
// source's secret (with a Message-Authenticator when requireMA says so),
// not one of this process's own coming back, within the source's and the
// customer's bounds of requests in flight. received counts the packets
// read, counters the drops.
type admission struct {
	code      rad.Code
	received  *atomic.Uint64
	counters  *Counters
	settings  *Settings
	inflight  *inflight
	requireMA func(*source) bool
}

// serveRequests reads pc until ctx ends (see readLoop) and hands each
// packet that passes a's checks to handle, in a goroutine of its own
// counted in wg, holding its place in flight until handle returns.
func serveRequests(ctx context.Context, pc net.PacketConn, a admission, wg *sync.WaitGroup,
	handle func(from netip.AddrPort, st *settings, src *source, req *rad.Packet)) error {
	return readLoop(ctx, pc, func(b []byte, from netip.AddrPort) {
		a.received.Add(1)
		st := a.settings.load()
		src, ok := st.lookup(from.Addr())
		if !ok {
			a.counters.drop(DropUnknownSource)
			return
		}
		req, _, reason, ok := decodeRequest(b, src.secret, a.code, a.requireMA(src))
		if !ok {
			a.counters.drop(reason)
			return
		}
		if carriesOwnProxyState(req) {
			a.counters.drop(DropLoop)
			return
		}
		if reason, ok := a.inflight.acquire(src.Source); !ok {
			a.counters.drop(reason)
			return
		}
		wg.Add(1)
		go func() {
			defer func() { a.inflight.release(src.Source); wg.Done() }()
			handle(from, st, src, req)
		}()
	})
}

// readLoop calls handle with each datagram read from pc (a copy, up to
// one octet over the largest RADIUS packet so oversize shows) until ctx
// ends or reading fails.
func readLoop(ctx context.Context, pc net.PacketConn, handle func(b []byte, from netip.AddrPort)) error {
	// NASes answered by one commit send their next packets together.
	udpbuf.Enlarge(pc)
	buf := make([]byte, 1<<16)
	for {
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		ua, ok := addr.(*net.UDPAddr)
		if !ok {
			continue
		}
		from := ua.AddrPort()
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		if n > rad.MaxPacketLength+1 {
			n = rad.MaxPacketLength + 1
		}
		handle(append([]byte(nil), buf[:n]...), from)
	}
}

// handle forwards one verified Access-Request and relays the answer.
func (p *Proxy) handle(ctx context.Context, pc net.PacketConn, from netip.AddrPort, st *settings, src *source, req *rad.Packet) {
	now := time.Now()
	key := reqKey{from, req.Identifier, req.Authenticator}
	p.mu.Lock()
	if ex, ok := p.recent[key]; ok {
		answer := ex.answer
		p.mu.Unlock()
		if answer == nil {
			p.counters.drop(DropDuplicate)
			return
		}
		p.counters.Retransmissions.Add(1)
		pc.WriteTo(answer, net.UDPAddrFromAddrPort(from))
		return
	}
	ex := &exchange{}
	p.recent[key] = ex
	conv := p.takeConversation(src.key(), req)
	p.mu.Unlock()
	if conv == nil {
		conv = &conversation{src: src.Source, start: now,
			id: eventID(src.key(), from.String(), strconv.Itoa(int(req.Identifier)), hex.EncodeToString(req.Authenticator[:]))}
	}
	conv.subject.merge(subjectOf(req))
	conv.sawTLS = conv.sawTLS || eapType(req) == eapTLS

	answer, sentAuth, up, err := p.forward(ctx, src.upstreams, req)
	if err != nil {
		p.counters.drop(DropMalformed)
		p.finish(key, ex, nil)
		return
	}
	if answer == nil {
		p.finish(key, ex, nil)
		if ctx.Err() == nil {
			p.counters.UpstreamsFailed.Add(1)
			p.failure(conv, wnms.FailRadiusDown, "unreachable", time.Now())
		}
		return
	}
	resp, err := rad.Parse(answer, up.secret)
	if err == nil && resp.Code != rad.CodeAccessAccept && resp.Code != rad.CodeAccessReject &&
		resp.Code != rad.CodeAccessChallenge {
		p.counters.drop(DropUpstreamUnexpected)
		p.finish(key, ex, nil)
		return
	}
	if err == nil {
		resp.Identifier = req.Identifier
		stripProxyState(resp)
		err = reencryptResponse(resp, up.secret, sentAuth, src.secret, req.Authenticator)
	}
	var wire []byte
	if err == nil {
		wire, err = encodeResponse(resp, req.Authenticator, src.secret, true)
	}
	if err != nil {
		p.counters.drop(DropUpstreamBadAuthenticator)
		p.finish(key, ex, nil)
		return
	}
	at := time.Now()
	if resp.Code == rad.CodeAccessChallenge {
		// The conversation waits before the NAS has the Challenge, so its
		// next request finds it however fast it comes.
		p.counters.AccessChallenges.Add(1)
		conv.sawTLS = conv.sawTLS || eapType(resp) == eapTLS
		conv.challengeAt = at
		p.wait(conv, resp)
	}
	if resp.Code == rad.CodeAccessAccept {
		// Before the NAS has the accept: a SuccessHolder holds the Success
		// before the NAS can complete the connection and log it.
		p.counters.AccessAccepts.Add(1)
		o := conv.subject.event(wnms.Success, eventID(conv.id, "accept"), at.UnixMilli())
		r := o.Event
		r.AuthenticationTimestamp = wnms.Ptr(at.UnixMilli())
		r.AAALatency = wnms.Ptr(at.Sub(conv.start).Milliseconds())
		r.RadiusPrimaryIP = wnms.Ptr(up.addr.IP.String())
		if ip, err := rad.IPAddr(resp.Get(attrFramedIPAddress)); err == nil {
			r.IP = wnms.Ptr(ip.String()) // the address the server gave the client
		}
		// The NAS has the accept only once its Success is in the store
		// (or the wait is over): a server killed meanwhile has not
		// answered, and the NAS asks again. A retransmission meanwhile
		// finds no answer yet and is dropped as a duplicate.
		stored := make(chan bool, 1)
		p.emitStored(conv.src, o, stored)
		p.awaitStored(ctx, stored)
	}
	p.finish(key, ex, wire)
	if _, err := pc.WriteTo(wire, net.UDPAddrFromAddrPort(from)); err != nil {
		p.opts.Logger.Warn("radius: cannot answer a source", "source", src.Name, "err", err)
	}
	switch resp.Code {
	case rad.CodeAccessReject:
		p.counters.AccessRejects.Add(1)
		code := wnms.FailRadiusRejected
		if conv.sawTLS {
			code = wnms.FailCertificate
		}
		p.failure(conv, code, "reject", at)
	}
}

func (p *Proxy) failure(conv *conversation, code int, what string, at time.Time) {
	o := conv.subject.event(wnms.Failure, eventID(conv.id, what), at.UnixMilli())
	o.Event.FailureCode, o.Event.SubFailureCode = wnms.Ptr(wnms.CategoryAuthentication), &code
	o.Event.AuthenticationTimestamp = wnms.Ptr(at.UnixMilli())
	p.emit(conv.src, o)
}

// merge takes what t knows that s does not: a NAS may leave attributes
// out of the later requests of a conversation.
func (s *subject) merge(t subject) {
	if t.mac != "" {
		s.mac = t.mac
	}
	if t.bssid != "" {
		s.bssid, s.ssid = t.bssid, t.ssid
	}
	if t.username != "" {
		s.username = t.username
	}
	if t.nasID != "" {
		s.nasID = t.nasID
	}
	if t.nasIP != "" {
		s.nasIP = t.nasIP
	}
}

// forward sends req to the first live upstream, and on to the next when
// one does not answer in its time; with none live it tries them all
// (but those down for good: a name that does not resolve). It
// returns the answer, the Request Authenticator it was sent with, and
// the upstream that answered; a nil answer when none did, and
// errUnrelayable when req cannot be sent on at all (too large with the
// proxy's attributes added).
func (p *Proxy) forward(ctx context.Context, ups []*upstream, req *rad.Packet) ([]byte, [16]byte, *upstream, error) {
	requireMA := hasAttr(req, attrEAPMessage)
	for _, up := range p.order(ups) {
		auth := randomAuthenticator()
		out := &rad.Packet{Code: rad.CodeAccessRequest, Authenticator: req.Authenticator, Secret: req.Secret,
			Attributes: cloneAttributes(req.Attributes)}
		if err := reencryptRequest(out, up.secret, auth); err != nil {
			return nil, auth, nil, errUnrelayable
		}
		out.Add(attrProxyState, rad.Attribute(ownProxyState(randomAuthenticator())))
		if _, err := encodeAccessRequest(out, up.secret); err != nil {
			return nil, auth, nil, errUnrelayable
		}
		c := &call{up: up, reqAuth: auth, requireMA: requireMA, answer: make(chan []byte, 1)}
		answer, err := p.pool.exchange(ctx, c, func(id byte) ([]byte, error) {
			out.Identifier = id
			return encodeAccessRequest(out, up.secret)
		})
		if err == nil {
			p.setAlive(up)
			return answer, auth, up, nil
		}
		if ctx.Err() != nil {
			break
		}
		switch {
		case errors.Is(err, errTimeout):
			p.counters.UpstreamTimeouts.Add(1)
			p.setDead(up)
		case errors.Is(err, errPoolFull):
		default: // the upstream cannot be reached from here at all
			p.setDead(up)
		}
	}
	return nil, [16]byte{}, nil, nil
}

var errUnrelayable = errors.New("radius: request cannot be relayed")

// ownProxyState is the Proxy-State wnms adds: a prefix that says it is
// this process's (proxyStatePrefix and instance) and a random part.
func ownProxyState(r [16]byte) []byte {
	return append(append([]byte(proxyStatePrefix), instance[:]...), r[:4]...)
}

const proxyStatePrefix = "wnms"

// instance tells this process's Proxy-States from another wnms's (a
// replica, or another wnms a request passes through on its way).
var instance = func() (b [4]byte) {
	r := randomAuthenticator()
	copy(b[:], r[:])
	return b
}()

// isOwnProxyState reports whether v is a Proxy-State this process added.
func isOwnProxyState(v []byte) bool {
	const n = len(proxyStatePrefix)
	return len(v) == n+8 && string(v[:n]) == proxyStatePrefix && [4]byte(v[n:n+4]) == instance
}

// carriesOwnProxyState reports whether a request received carries a
// Proxy-State this process added to a request it passed on: it came
// back, round a loop (an upstream that leads to wnms itself), and is
// dropped, or each pass would send it round again.
func carriesOwnProxyState(p *rad.Packet) bool {
	for _, a := range p.Attributes {
		if a.Type == attrProxyState && isOwnProxyState(a.Attribute) {
			return true
		}
	}
	return false
}

// stripProxyState removes the last Proxy-State, the one wnms added
// (upstreams echo them in order, RFC 2865 §5.33), when it is ours.
func stripProxyState(p *rad.Packet) {
	for i := len(p.Attributes) - 1; i >= 0; i-- {
		a := p.Attributes[i]
		if a.Type != attrProxyState {
			continue
		}
		if isOwnProxyState(a.Attribute) {
			p.Attributes = append(p.Attributes[:i:i], p.Attributes[i+1:]...)
		}
		return
	}
}

func cloneAttributes(a rad.Attributes) rad.Attributes {
	out := make(rad.Attributes, 0, len(a)+2)
	for _, v := range a {
		if v.Type == attrMessageAuthenticator {
			continue
		}
		out = append(out, &rad.AVP{Type: v.Type, Attribute: append(rad.Attribute(nil), v.Attribute...)})
	}
	return out
}

// order lists the live upstreams in their configured order, or all of
// them when none is live; never one that is down for good (see
// upstream.down).
func (p *Proxy) order(ups []*upstream) []*upstream {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	var live, usable []*upstream
	for _, u := range ups {
		if u.addr == nil {
			continue
		}
		usable = append(usable, u)
		if until, ok := p.dead[u.key]; !ok || now.After(until) {
			live = append(live, u)
		}
	}
	if len(live) == 0 {
		return usable
	}
	return live
}

func (p *Proxy) setDead(u *upstream) {
	p.opts.Health.observe(u, UpstreamAuth, false, time.Now())
	p.mu.Lock()
	_, was := p.dead[u.key]
	p.dead[u.key] = time.Now().Add(p.opts.DeadTime)
	p.mu.Unlock()
	if !was {
		p.opts.Logger.Warn("radius: upstream marked dead", "upstream", u.text, "retryAfter", p.opts.DeadTime)
	}
}

func (p *Proxy) setAlive(u *upstream) {
	p.opts.Health.observe(u, UpstreamAuth, true, time.Now())
	p.mu.Lock()
	_, was := p.dead[u.key]
	delete(p.dead, u.key)
	p.mu.Unlock()
	if was {
		p.opts.Logger.Info("radius: upstream alive again", "upstream", u.text)
	}
}

// finish stores the answer to a request (nil: none) for its
// retransmissions.
func (p *Proxy) finish(key reqKey, ex *exchange, answer []byte) {
	p.mu.Lock()
	ex.answer, ex.at = answer, time.Now()
	p.answered.PushBack(key)
	// Bounded whatever the rate: past the cap the oldest answers go
	// before their dupWindow ends.
	for p.answered.Len() > maxAnswered {
		delete(p.recent, p.answered.Remove(p.answered.Front()).(reqKey))
	}
	p.mu.Unlock()
}

// conversationKey is where a conversation waits for the NAS's next
// request: under the State of the Challenge, else the client's MAC.
func conversationKey(src string, p *rad.Packet) string {
	if s := p.Get(attrState); len(s) > 0 {
		return src + "\x00s" + string(s)
	}
	if m := parseMAC(string(p.Get(attrCallingStationID))); m != "" {
		return src + "\x00m" + m
	}
	return ""
}

// takeConversation returns the conversation req continues, taken out of
// the waiting ones, or nil. p.mu is held.
func (p *Proxy) takeConversation(src string, req *rad.Packet) *conversation {
	k := conversationKey(src, req)
	c, ok := p.convs[k]
	if !ok || k == "" {
		return nil
	}
	delete(p.convs, k)
	p.waiting.Remove(c.elem)
	return c
}

// wait keeps conv until the NAS answers the Challenge resp, or
// EAPTimeout passes.
func (p *Proxy) wait(conv *conversation, resp *rad.Packet) {
	// The NAS's next request carries the Challenge's State; the
	// conversation is found by the request.
	k := conversationKey(conv.src.key(), resp)
	if k == "" {
		k = conversationKey(conv.src.key(), &rad.Packet{Attributes: rad.Attributes{{Type: attrCallingStationID, Attribute: rad.Attribute(conv.subject.mac)}}})
	}
	if k == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.convs[k]; ok {
		p.waiting.Remove(old.elem)
	}
	for len(p.convs) >= p.opts.MaxConversations {
		oldest := p.waiting.Remove(p.waiting.Front()).(*conversation)
		delete(p.convs, oldest.key)
		p.counters.ConversationsEvicted.Add(1)
	}
	conv.key = k
	conv.elem = p.waiting.PushBack(conv)
	p.convs[k] = conv
}

// sweep ends the conversations left after a Challenge for EAPTimeout
// (2/204) and forgets old answers, until ctx ends.
func (p *Proxy) sweep(ctx context.Context) {
	every := min(max(p.opts.EAPTimeout/10, 50*time.Millisecond), time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			var expired []*conversation
			p.mu.Lock()
			for e := p.waiting.Front(); e != nil; e = p.waiting.Front() {
				c := e.Value.(*conversation)
				if now.Sub(c.challengeAt) < p.opts.EAPTimeout {
					break
				}
				p.waiting.Remove(e)
				delete(p.convs, c.key)
				expired = append(expired, c)
			}
			for e := p.answered.Front(); e != nil; e = p.answered.Front() {
				k := e.Value.(reqKey)
				if ex := p.recent[k]; ex != nil && now.Sub(ex.at) < dupWindow {
					break
				}
				p.answered.Remove(e)
				delete(p.recent, k)
			}
			p.mu.Unlock()
			for _, c := range expired {
				p.failure(c, wnms.FailEAPTimeout, "eap-timeout", c.challengeAt.Add(p.opts.EAPTimeout))
			}
		}
	}
}

// emit queues r for the Sink; when the Sink falls behind it is dropped
// and counted, as the proxy must not hold up authentications.
func (p *Proxy) emit(src Source, o Observation) { p.emitStored(src, o, nil) }

// emitStored is emit, telling stored (when not nil; room for one) once
// whether r is in the store: true once committed, false when it is not
// recorded, dropped or the Sink failed.
func (p *Proxy) emitStored(src Source, o Observation, stored chan<- bool) {
	tell := func(ok bool) {
		if stored != nil {
			stored <- ok
		}
	}
	if wnms.Str(o.Event.MacAddress) == "" {
		p.counters.EventsWithoutClient.Add(1)
		tell(false)
		return
	}
	if h, ok := p.sink.(SuccessHolder); ok && *o.Event.EventType == wnms.Success {
		held := stored
		if held == nil {
			held = make(chan bool, 1) // nobody waits
		}
		if h.HoldSuccess(src, o, held) {
			p.counters.Events.Add(1)
			return
		}
	}
	select {
	case p.events <- event{src, o, stored}:
	default:
		p.counters.EventsDropped.Add(1)
		tell(false)
	}
}

// awaitStored waits until stored says the Success is in the store, at
// most StoreWait, and counts an accept answered without that.
func (p *Proxy) awaitStored(ctx context.Context, stored <-chan bool) {
	t := time.NewTimer(p.opts.StoreWait)
	defer t.Stop()
	select {
	case ok := <-stored:
		if ok {
			return
		}
	case <-t.C:
	case <-ctx.Done():
	}
	p.counters.AcceptsUnstored.Add(1)
}

// emitLoop gives queued events to the sink in batches, one call a
// source, until ctx ends and the queue is empty.
func emitLoop(ctx context.Context, sink Sink, q chan event, c *Counters, log *slog.Logger) {
	for {
		var first event
		select {
		case first = <-q:
		case <-ctx.Done():
			select {
			case first = <-q:
			default:
				return
			}
		}
		batch := map[Source][]Observation{first.src: {first.rec}}
		waiting := map[Source][]chan<- bool{}
		wait := func(e event) {
			if e.stored != nil {
				waiting[e.src] = append(waiting[e.src], e.stored)
			}
		}
		wait(first)
	more:
		for n := 1; n < 1000; n++ {
			select {
			case e := <-q:
				batch[e.src] = append(batch[e.src], e.rec)
				wait(e)
			default:
				break more
			}
		}
		for src, recs := range batch {
			emitBatch(ctx, sink, src, recs, waiting[src], c, log)
		}
	}
}

// emitBatch gives one source's records to the sink. When the store
// refuses them (a database restarting), the accepts waiting on the batch
// are told at once, so that no NAS waits longer than StoreWait, and the
// batch is offered again, backing off from 100 ms to 5 s, until it is
// stored: an authentication the NAS was told about is recorded once the
// store answers again. Offering a batch again is safe: every record
// carries its own eventId, and a record stored already is not stored
// twice. Meanwhile the queue fills and what does not fit is dropped and
// counted (emitStored), so memory stays bounded. Only when the proxy
// stops with the store still refusing are the batch's records dropped,
// counted and logged.
func emitBatch(ctx context.Context, sink Sink, src Source, recs []Observation, waiting []chan<- bool, c *Counters, log *slog.Logger) {
	backoff := 100 * time.Millisecond
	for try := 1; ; try++ {
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		err := sink.Emit(ectx, src, recs)
		cancel()
		if try == 1 {
			for _, w := range waiting {
				w <- err == nil
			}
		}
		if err == nil {
			c.Events.Add(uint64(len(recs)))
			if try > 1 {
				log.Info("radius: events stored after the store refused them", "source", src.Name, "records", len(recs), "tries", try)
			}
			return
		}
		c.SinkErrors.Add(1)
		if try == 1 {
			log.Warn("radius: events not stored yet, offering them again", "source", src.Name, "records", len(recs), "err", err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			c.EventsDropped.Add(uint64(len(recs)))
			log.Error("radius: events not stored before the proxy stopped", "source", src.Name, "records", len(recs), "tries", try, "err", err)
			return
		case <-t.C:
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// EAP types (RFC 3748 and the IANA registry).
const eapTLS = 13

// eapType returns the EAP method of p's EAP-Message (the EAP packet is
// split over consecutive attributes), or 0 when there is none or it is a
// Success, Failure or Identity.
func eapType(p *rad.Packet) int {
	var eap []byte
	for _, a := range p.Attributes {
		if a.Type == attrEAPMessage {
			eap = append(eap, a.Attribute...)
			if len(eap) >= 5 {
				break
			}
		}
	}
	if len(eap) < 5 || (eap[0] != 1 && eap[0] != 2) {
		return 0
	}
	return int(eap[4])
}
