package radius

import (
	"bytes"
	"context"
	"errors"
	"github.com/wnms/wnms/internal/wnms"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rad "layeh.com/radius"
	"layeh.com/radius/rfc2865"
)

// fakeUpstream is an in-process RADIUS server built on the library's
// codec, for unit-level cases only (the real thing is FreeRADIUS, in
// freeradius_test.go). answer returns the response to a request, or nil
// for none.
type fakeUpstream struct {
	pc     *net.UDPConn
	secret []byte
	answer func(req *rad.Packet) *rad.Packet
	delay  time.Duration
	mu     sync.Mutex
	reqs   []*rad.Packet
	badMA  int
}

func newUpstream(t *testing.T, answer func(req *rad.Packet) *rad.Packet) *fakeUpstream {
	u := &fakeUpstream{pc: listen(t), secret: []byte(upstreamSecret), answer: answer}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, from, err := u.pc.ReadFromUDP(buf)
			if err != nil {
				return
			}
			wire := append([]byte(nil), buf[:n]...)
			req, err := rad.Parse(wire, u.secret)
			if err != nil {
				continue
			}
			u.mu.Lock()
			u.reqs = append(u.reqs, req)
			if present, ok := checkMessageAuthenticator(wire, req.Authenticator, u.secret); !present || !ok {
				u.badMA++
			}
			u.mu.Unlock()
			resp := u.answer(req)
			if resp == nil {
				continue
			}
			u.mu.Lock()
			delay := u.delay
			u.mu.Unlock()
			go func() {
				time.Sleep(delay)
				resp.Identifier = req.Identifier
				for _, a := range req.Attributes {
					if a.Type == attrProxyState {
						resp.Add(attrProxyState, a.Attribute)
					}
				}
				out, err := encodeResponse(resp, req.Authenticator, u.secret, true)
				if err != nil {
					panic(err)
				}
				u.pc.WriteToUDP(out, from)
			}()
		}
	}()
	return u
}

func (u *fakeUpstream) config(timeoutMs int) Upstream {
	return Upstream{Address: u.pc.LocalAddr().String(), Secret: upstreamSecret, TimeoutMs: timeoutMs}
}

func (u *fakeUpstream) requests() []*rad.Packet {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*rad.Packet(nil), u.reqs...)
}

// acceptPAP accepts "pw" and rejects anything else.
func acceptPAP(req *rad.Packet) *rad.Packet {
	if rfc2865.UserPassword_GetString(req) == "pw" {
		return &rad.Packet{Code: rad.CodeAccessAccept}
	}
	return &rad.Packet{Code: rad.CodeAccessReject}
}

// nas is a test NAS: it sends encoded requests from one socket.
type nas struct {
	t  *testing.T
	pc *net.UDPConn
	to *net.UDPAddr
}

func newNAS(t *testing.T, addr string) *nas {
	to, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return &nas{t: t, pc: listen(t), to: to}
}

// send sends wire and returns the answer, or nil after wait.
func (n *nas) send(wire []byte, wait time.Duration) []byte {
	n.t.Helper()
	if _, err := n.pc.WriteToUDP(wire, n.to); err != nil {
		n.t.Fatal(err)
	}
	return n.read(wait)
}

func (n *nas) read(wait time.Duration) []byte {
	buf := make([]byte, 4096)
	n.pc.SetReadDeadline(time.Now().Add(wait))
	l, _, err := n.pc.ReadFromUDP(buf)
	if err != nil {
		return nil
	}
	return buf[:l]
}

// accessRequest is an Access-Request of a client, with a
// Message-Authenticator, under secret.
func accessRequest(t *testing.T, secret string, attrs ...*rad.AVP) (*rad.Packet, []byte) {
	t.Helper()
	p := rad.New(rad.CodeAccessRequest, []byte(secret))
	rfc2865.UserName_SetString(p, "bob")
	rfc2865.CallingStationID_SetString(p, "02-00-00-00-00-02")
	rfc2865.CalledStationID_SetString(p, "aa-bb-cc-dd-ee-01:corp")
	for _, a := range attrs {
		if a.Type == attrCallingStationID {
			p.Del(attrCallingStationID)
		}
	}
	p.Attributes = append(p.Attributes, attrs...)
	wire, err := encodeAccessRequest(p, []byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return p, wire
}

// checkAnswer verifies an answer as a NAS would: Response Authenticator
// and Message-Authenticator, under the source's secret.
func checkAnswer(t *testing.T, answer []byte, req *rad.Packet) *rad.Packet {
	t.Helper()
	if answer == nil {
		t.Fatal("no answer")
	}
	if !isAuthenticResponse(answer, req.Authenticator, []byte(sourceSecret), true) {
		t.Fatal("answer does not verify under the source secret")
	}
	p, err := rad.Parse(answer, []byte(sourceSecret))
	if err != nil {
		t.Fatal(err)
	}
	if p.Identifier != req.Identifier {
		t.Fatalf("identifier %d, want %d", p.Identifier, req.Identifier)
	}
	return p
}

// signedPAP is a PAP Access-Request of client mac with password pw,
// signed with a Message-Authenticator under the source's secret.
func signedPAP(t *testing.T, pw, mac string) (*rad.Packet, []byte) {
	t.Helper()
	p := rad.New(rad.CodeAccessRequest, []byte(sourceSecret))
	rfc2865.UserName_SetString(p, "bob")
	rfc2865.UserPassword_SetString(p, pw)
	if mac != "" {
		rfc2865.CallingStationID_SetString(p, mac)
	}
	wire, err := encodeAccessRequest(p, []byte(sourceSecret))
	if err != nil {
		t.Fatal(err)
	}
	return p, wire
}

func TestProxyPAP(t *testing.T) {
	up := newUpstream(t, acceptPAP)
	_, addr, sink := startProxy(t, Config{Sources: []SourceConfig{localSource()}, Upstreams: []Upstream{up.config(1000)}},
		ProxyOptions{})
	n := newNAS(t, addr)
	for _, tc := range []struct {
		pw   string
		want rad.Code
	}{{"pw", rad.CodeAccessAccept}, {"nope", rad.CodeAccessReject}} {
		req, wire := signedPAP(t, tc.pw, "02:00:00:00:00:02")
		if resp := checkAnswer(t, n.send(wire, 3*time.Second), req); resp.Code != tc.want {
			t.Errorf("password %q: %v, want %v", tc.pw, resp.Code, tc.want)
		}
	}
	// The upstream got the password re-encrypted under its own secret.
	if got := rfc2865.UserPassword_GetString(up.requests()[0]); got != "pw" {
		t.Errorf("upstream saw password %q", got)
	}
	up.mu.Lock()
	if up.badMA != 0 {
		t.Errorf("%d requests reached the upstream without a valid Message-Authenticator", up.badMA)
	}
	up.mu.Unlock()
	sink.waitRecord(t, KindClientEvents, isType("Success"))
	sink.waitRecord(t, KindClientEvents, failure(wnms.FailRadiusRejected))
}

// A NAS that cannot sign its requests (here the library's own client,
// which adds no Message-Authenticator) is served only from a source
// that says so; its answers are signed all the same.
func TestProxyMessageAuthenticatorOptional(t *testing.T) {
	up := newUpstream(t, acceptPAP)
	src := localSource()
	src.MessageAuthenticatorOptional = true
	_, addr, _ := startProxy(t, Config{Sources: []SourceConfig{src}, Upstreams: []Upstream{up.config(1000)}}, ProxyOptions{})
	p := rad.New(rad.CodeAccessRequest, []byte(sourceSecret))
	rfc2865.UserName_SetString(p, "bob")
	rfc2865.UserPassword_SetString(p, "pw")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	resp, err := rad.Exchange(ctx, p, addr)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Code != rad.CodeAccessAccept || !hasAttr(resp, attrMessageAuthenticator) {
		t.Errorf("answer %v, Message-Authenticator %v; want a signed Access-Accept", resp.Code, hasAttr(resp, attrMessageAuthenticator))
	}
}

// holdingSink takes Successes through HoldSuccess and keeps every Emit
// waiting until release is closed, as a store that fell behind.
type holdingSink struct {
	mu      sync.Mutex
	held    []map[string]any
	emits   int
	emitted []string // the event types of the records emitted
	release chan struct{}
}

func (s *holdingSink) Emit(ctx context.Context, _ Source, obs []Observation) error {
	s.mu.Lock()
	s.emits++
	for _, o := range obs {
		s.emitted = append(s.emitted, *o.Event.EventType)
	}
	s.mu.Unlock()
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *holdingSink) HoldSuccess(_ Source, o Observation, stored chan<- bool) bool {
	_, m := asMap(o)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = append(s.held, m)
	stored <- true // kept where it survives, as far as this test goes
	return true
}

// gateSink commits nothing until it is let through, and notes, as each
// Emit starts, whether the NAS had its answer by then.
type gateSink struct {
	nasHasAnswer  *atomic.Bool
	open          chan struct{}
	fail          bool
	mu            sync.Mutex
	emits         int
	answeredFirst bool // an Emit started with the NAS answered already
}

func (s *gateSink) Emit(ctx context.Context, _ Source, _ []Observation) error {
	s.mu.Lock()
	s.emits++
	if s.emits == 1 { // a refused batch is offered again later, the NAS answered by then
		s.answeredFirst = s.nasHasAnswer.Load()
	}
	s.mu.Unlock()
	select {
	case <-s.open:
	case <-ctx.Done():
		return ctx.Err()
	}
	if s.fail {
		return errors.New("the store failed")
	}
	return nil
}

// The NAS has an Access-Accept only once its Success is committed, so a
// server killed before the commit has not answered and the NAS asks
// again; a Success that cannot be stored does not hold the answer up.
func TestProxyAnswersAcceptOnceStored(t *testing.T) {
	for _, c := range []struct {
		name     string
		fail     bool
		unstored uint64
	}{{"committed", false, 0}, {"the store fails", true, 1}} {
		t.Run(c.name, func(t *testing.T) {
			up := newUpstream(t, acceptPAP)
			var got atomic.Bool
			sink := &gateSink{nasHasAnswer: &got, open: make(chan struct{}), fail: c.fail}
			p, addr := startProxyWith(t, Config{Sources: []SourceConfig{localSource()}, Upstreams: []Upstream{up.config(1000)}},
				ProxyOptions{StoreWait: time.Minute}, sink)
			n := newNAS(t, addr)
			req, wire := signedPAP(t, "pw", "02:00:00:00:00:07")
			answer := make(chan []byte, 1)
			go func() {
				a := n.send(wire, time.Minute)
				got.Store(a != nil)
				answer <- a
			}()
			waitFor(t, "the Success's Emit", func() bool { sink.mu.Lock(); defer sink.mu.Unlock(); return sink.emits == 1 })
			if len(answer) != 0 {
				t.Fatal("the NAS has the accept before its Success is committed")
			}
			close(sink.open)
			resp := checkAnswer(t, <-answer, req)
			if resp.Code != rad.CodeAccessAccept {
				t.Fatalf("answer %v, want an Access-Accept", resp.Code)
			}
			sink.mu.Lock()
			defer sink.mu.Unlock()
			if sink.answeredFirst {
				t.Error("the NAS had the accept when its Success's Emit started")
			}
			if u := p.Counters().AcceptsUnstored.Load(); u != c.unstored {
				t.Errorf("%d accepts counted as answered unstored, want %d", u, c.unstored)
			}
		})
	}
}

// An accept answered while the store refused its Success (a database
// restarting) is stored once the store takes records again, and once.
func TestProxyStoresAcceptsOnceTheStoreIsBack(t *testing.T) {
	up := newUpstream(t, acceptPAP)
	sink := newMemSink()
	sink.setFail(true)
	p, addr := startProxyWith(t, Config{Sources: []SourceConfig{localSource()}, Upstreams: []Upstream{up.config(1000)}},
		ProxyOptions{StoreWait: 50 * time.Millisecond}, sink)
	n := newNAS(t, addr)
	req, wire := signedPAP(t, "pw", "02:00:00:00:00:08")
	if resp := checkAnswer(t, n.send(wire, 10*time.Second), req); resp.Code != rad.CodeAccessAccept {
		t.Fatalf("answer %v, want an Access-Accept", resp.Code)
	}
	waitFor(t, "a second refusal", func() bool { return p.Counters().SinkErrors.Load() >= 2 })
	if u := p.Counters().AcceptsUnstored.Load(); u != 1 {
		t.Errorf("%d accepts counted as answered unstored, want 1", u)
	}
	sink.setFail(false)
	isSuccess := func(r map[string]any) bool {
		return r["eventType"] == "Success" && r["macAddress"] == "02:00:00:00:00:08"
	}
	sink.waitRecord(t, KindClientEvents, isSuccess)
	waitFor(t, "the stored count", func() bool { return p.Counters().Events.Load() >= 1 })
	var successes int
	for _, r := range sink.get(KindClientEvents) {
		if isSuccess(r) {
			successes++
		}
	}
	if successes != 1 || p.Counters().EventsDropped.Load() != 0 {
		t.Errorf("%d Successes stored, %d records dropped; want 1 and 0", successes, p.Counters().EventsDropped.Load())
	}
}

// A SuccessHolder gets the Success before the NAS has the accept, even
// while the Sink's Emit is stuck on an earlier record; what it holds is
// never emitted.
func TestProxyHoldsSuccess(t *testing.T) {
	up := newUpstream(t, acceptPAP)
	sink := &holdingSink{release: make(chan struct{})}
	released := false
	defer func() {
		if !released {
			close(sink.release)
		}
	}()
	_, addr := startProxyWith(t, Config{Sources: []SourceConfig{localSource()}, Upstreams: []Upstream{up.config(1000)}},
		ProxyOptions{}, sink)
	emits := func() int { sink.mu.Lock(); defer sink.mu.Unlock(); return sink.emits }
	n := newNAS(t, addr)
	ask := func(pw string) {
		t.Helper()
		req, wire := signedPAP(t, pw, "02:00:00:00:00:02")
		checkAnswer(t, n.send(wire, 3*time.Second), req)
	}
	ask("nope") // a Reject: its Failure emitted, and stuck
	waitFor(t, "the Failure's Emit", func() bool { return emits() == 1 })
	ask("pw")
	sink.mu.Lock()
	if len(sink.held) != 1 { // held before the NAS had its answer
		t.Errorf("%d Successes held when the accept came back, want 1", len(sink.held))
	} else if h := sink.held[0]; h["eventType"] != "Success" || h["macAddress"] != "02:00:00:00:00:02" || h["aaaLatency"] == nil {
		t.Errorf("held %v", h)
	}
	sink.mu.Unlock()
	// Once the Sink takes records again, another Reject's Failure is
	// emitted, and no Success ever was. The proxy emits an accept's
	// Success (or has it held) before the NAS has the accept, and records
	// reach the Sink in the order they were queued, by one loop: once the
	// second Failure is emitted, a Success queued by mistake would have
	// been too.
	close(sink.release)
	released = true
	ask("nope again")
	waitFor(t, "the second Failure's Emit", func() bool {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		n := 0
		for _, typ := range sink.emitted {
			if typ == "Failure" {
				n++
			}
		}
		return n >= 2
	})
	sink.mu.Lock()
	defer sink.mu.Unlock()
	for _, typ := range sink.emitted {
		if typ != "Failure" {
			t.Errorf("emitted a %s; want the two Failures only (%v)", typ, sink.emitted)
		}
	}
}

func TestProxyDrops(t *testing.T) {
	up := newUpstream(t, acceptPAP)
	p, addr, sink := startProxy(t, Config{Sources: []SourceConfig{localSource()}, Upstreams: []Upstream{up.config(1000)}},
		ProxyOptions{})
	n := newNAS(t, addr)
	pw := func(pk *rad.Packet) { rfc2865.UserPassword_SetString(pk, "pw") }
	_, good := accessRequest(t, sourceSecret)

	badMA := bytes.Clone(good)
	badMA[len(badMA)-1] ^= 1 // the last octet is in an attribute covered by the Message-Authenticator
	_, wrongSecret := accessRequest(t, "other-secret")
	eapNoMA := rad.New(rad.CodeAccessRequest, []byte(sourceSecret))
	eapNoMA.Add(attrEAPMessage, rad.Attribute{2, 1, 0, 5, 1})
	eapWire, _ := eapNoMA.Encode()
	pap := rad.New(rad.CodeAccessRequest, []byte(sourceSecret))
	pw(pap)
	papWire, _ := pap.Encode()
	_, looped := accessRequest(t, sourceSecret, &rad.AVP{Type: attrProxyState, Attribute: ownProxyState(randomAuthenticator())})
	// Another wnms's Proxy-State (a replica, or a wnms further along) is
	// not a loop.
	otherWnms := append([]byte(proxyStatePrefix), 0, 0, 0, 0, 1, 2, 3, 4)
	if [4]byte(otherWnms[4:8]) == instance {
		otherWnms[4]++
	}
	_, throughOther := accessRequest(t, sourceSecret, &rad.AVP{Type: attrProxyState, Attribute: otherWnms})
	oversize := make([]byte, 4097)
	copy(oversize, good)
	malformed := bytes.Clone(good)
	malformed[21] = 1 // an attribute length below 2
	shortLen := bytes.Clone(good)
	shortLen[3] = 10
	acct := bytes.Clone(good)
	acct[0] = byte(rad.CodeAccountingRequest)

	shortPW := rad.New(rad.CodeAccessRequest, []byte(sourceSecret))
	shortPW.Add(attrUserPassword, make(rad.Attribute, 10))
	shortPWWire, _ := shortPW.Encode()
	// A request that fits 4096 octets but not with the proxy's
	// Proxy-State added.
	big, _ := accessRequest(t, sourceSecret)
	for range 15 {
		big.Add(77, make(rad.Attribute, 253))
	}
	if base, _ := encodeAccessRequest(big, []byte(sourceSecret)); len(base) < 4096-14 {
		big.Add(77, make(rad.Attribute, 4096-10-len(base)-2))
	}
	bigWire, err := encodeAccessRequest(big, []byte(sourceSecret))
	if err != nil || len(bigWire) != 4086 {
		t.Fatalf("big request: %d octets, %v", len(bigWire), err)
	}

	for _, tc := range []struct {
		name   string
		wire   []byte
		reason DropReason
	}{
		{"User-Password not in blocks of 16", shortPWWire, DropMalformed},
		{"too large to relay", bigWire, DropMalformed},
		{"bad Message-Authenticator", badMA, DropBadMessageAuthenticator},
		{"wrong secret", wrongSecret, DropBadMessageAuthenticator},
		{"EAP without Message-Authenticator", eapWire, DropNoMessageAuthenticator},
		{"PAP without Message-Authenticator", papWire, DropNoMessageAuthenticator},
		{"carries this wnms's own Proxy-State", looped, DropLoop},
		{"oversize", oversize, DropOversize},
		{"malformed attribute", malformed, DropMalformed},
		{"length below 20", shortLen, DropMalformed},
		{"not an Access-Request", acct, DropUnexpectedCode},
		{"too short", good[:10], DropMalformed},
	} {
		before := p.Counters().Dropped(tc.reason)
		if a := n.send(tc.wire, 200*time.Millisecond); a != nil {
			t.Errorf("%s: answered", tc.name)
		}
		if p.Counters().Dropped(tc.reason) != before+1 {
			t.Errorf("%s: %s drops %d, want %d", tc.name, tc.reason, p.Counters().Dropped(tc.reason), before+1)
		}
	}
	if len(up.requests()) != 0 {
		t.Errorf("%d dropped packets reached the upstream", len(up.requests()))
	}
	if ev := sink.get(KindClientEvents); len(ev) != 0 {
		t.Errorf("dropped packets made events: %v", ev)
	}

	if a := n.send(throughOther, 2*time.Second); a == nil {
		t.Error("a request through another wnms: no answer")
	}
}

func TestProxyUnknownSourceAndSwap(t *testing.T) {
	up := newUpstream(t, acceptPAP)
	cfg := Config{Sources: []SourceConfig{{Name: "elsewhere", CIDR: netip.MustParsePrefix("10.0.0.0/8"), RadiusSecret: "x"}},
		Upstreams: []Upstream{up.config(1000)}}
	s, err := NewSettings(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := NewProxy(s, newMemSink(), ProxyOptions{})
	pc := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Serve(ctx, pc)
	n := newNAS(t, pc.LocalAddr().String())
	req, wire := accessRequest(t, sourceSecret, &rad.AVP{Type: attrUserPassword, Attribute: mustPassword(t, "pw")})
	_ = req
	if n.send(wire, 200*time.Millisecond) != nil || p.Counters().Dropped(DropUnknownSource) != 1 {
		t.Fatalf("unknown source: want dropped and counted, drops %d", p.Counters().Dropped(DropUnknownSource))
	}
	// The configuration changes at run time: the source is now known.
	cfg.Sources = append(cfg.Sources, localSource())
	if err := s.Set(cfg); err != nil {
		t.Fatal(err)
	}
	if a := n.send(wire, 2*time.Second); a == nil {
		t.Fatal("after the swap: no answer")
	}
}

// mustPassword is never used to encrypt: it only fills the attribute so
// the upstream has something; the proxy re-encrypts what it decrypts.
func mustPassword(t *testing.T, pw string) rad.Attribute {
	t.Helper()
	a, err := rad.NewUserPassword([]byte(pw), []byte(sourceSecret), make([]byte, 16))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestProxyRetransmission(t *testing.T) {
	up := newUpstream(t, acceptPAP)
	up.mu.Lock()
	up.delay = 300 * time.Millisecond
	up.mu.Unlock()
	p, addr, sink := startProxy(t, Config{Sources: []SourceConfig{localSource()}, Upstreams: []Upstream{up.config(2000)}},
		ProxyOptions{})
	n := newNAS(t, addr)
	pk, wire := signedPAP(t, "pw", "02-00-00-00-00-03")
	// Sent three times while the upstream thinks: one conversation.
	n.pc.WriteToUDP(wire, n.to)
	n.pc.WriteToUDP(wire, n.to)
	first := checkAnswer(t, n.send(wire, 2*time.Second), pk)
	if first.Code != rad.CodeAccessAccept {
		t.Fatalf("got %v", first.Code)
	}
	if n.read(500*time.Millisecond) != nil {
		t.Error("more than one answer to the retransmissions in flight")
	}
	// Sent again after the answer: the same answer, from memory.
	again := n.send(wire, time.Second)
	checkAnswer(t, again, pk)
	if got := len(up.requests()); got != 1 {
		t.Errorf("upstream saw %d requests, want 1", got)
	}
	if p.Counters().Dropped(DropDuplicate) != 2 || p.Counters().Retransmissions.Load() != 1 {
		t.Errorf("duplicates %d, retransmissions %d; want 2 and 1", p.Counters().Dropped(DropDuplicate),
			p.Counters().Retransmissions.Load())
	}
	// One event for the conversation: the records reach the Sink in the
	// order they were queued, so once another client's request, sent
	// after every copy was answered, has its event there, a second one
	// of this conversation would be there too.
	_, other := signedPAP(t, "nope", "02-00-00-00-00-13")
	if n.send(other, 2*time.Second) == nil {
		t.Fatal("no answer to the other client's request")
	}
	sink.waitRecord(t, KindClientEvents, func(r map[string]any) bool { return r["macAddress"] == "02:00:00:00:00:13" })
	if got := len(sink.get(KindClientEvents)); got != 2 {
		t.Errorf("%d events, want the conversation's Success and the other client's Failure", got)
	}
}

func TestProxyFailover(t *testing.T) {
	silent := newUpstream(t, func(*rad.Packet) *rad.Packet { return nil })
	up := newUpstream(t, acceptPAP)
	p, addr, sink := startProxy(t, Config{Sources: []SourceConfig{localSource()},
		Upstreams: []Upstream{silent.config(200), up.config(1000)}}, ProxyOptions{DeadTime: time.Hour})
	n := newNAS(t, addr)
	for i := range 2 {
		pk, wire := signedPAP(t, "pw", "02-00-00-00-00-04")
		start := time.Now()
		a := checkAnswer(t, n.send(wire, 3*time.Second), pk)
		took := time.Since(start)
		if a.Code != rad.CodeAccessAccept {
			t.Fatalf("request %d: %v", i, a.Code)
		}
		// The first waits for the silent upstream's timeout; the second
		// skips it, now marked dead.
		if i == 0 && took < 200*time.Millisecond || i == 1 && took > 150*time.Millisecond {
			t.Errorf("request %d took %v", i, took)
		}
	}
	if len(silent.requests()) != 1 || p.Counters().UpstreamTimeouts.Load() != 1 {
		t.Errorf("silent upstream asked %d times, timeouts %d; want 1 and 1", len(silent.requests()),
			p.Counters().UpstreamTimeouts.Load())
	}
	// The first Success counts the failover's wait (the two may come in
	// either order).
	waitFor(t, "two Successes", func() bool { return len(sink.get(KindClientEvents)) == 2 })
	ev := sink.get(KindClientEvents)
	if l := max(ev[0]["aaaLatency"].(float64), ev[1]["aaaLatency"].(float64)); l < 200 {
		t.Errorf("aaaLatency %v ms, want the failover's wait counted", l)
	}
}

// eapChallenge answers the first request of a conversation with a
// Challenge carrying State and an EAP-Request of method typ, and the
// next with final.
func eapChallenge(typ byte, final rad.Code) func(req *rad.Packet) *rad.Packet {
	return func(req *rad.Packet) *rad.Packet {
		if len(req.Get(attrState)) == 0 {
			c := &rad.Packet{Code: rad.CodeAccessChallenge}
			c.Add(attrState, append(rad.Attribute("state-"), req.Get(attrCallingStationID)...))
			c.Add(attrEAPMessage, rad.Attribute{1, 2, 0, 6, typ, 0x20})
			return c
		}
		return &rad.Packet{Code: final}
	}
}

func eapRequest(t *testing.T, state []byte, typ byte) (*rad.Packet, []byte) {
	attrs := []*rad.AVP{{Type: attrEAPMessage, Attribute: rad.Attribute{2, 1, 0, 6, typ, 0}},
		{Type: attrProxyState, Attribute: rad.Attribute("nas-ps")}}
	if state != nil {
		attrs = append(attrs, &rad.AVP{Type: attrState, Attribute: state})
	}
	return accessRequest(t, sourceSecret, attrs...)
}

func TestProxyEAPChallengeAndProxyState(t *testing.T) {
	up := newUpstream(t, eapChallenge(eapTLS, rad.CodeAccessReject))
	_, addr, sink := startProxy(t, Config{Sources: []SourceConfig{localSource()}, Upstreams: []Upstream{up.config(1000)}},
		ProxyOptions{})
	n := newNAS(t, addr)
	req, wire := eapRequest(t, nil, 1)
	ch := checkAnswer(t, n.send(wire, 2*time.Second), req)
	if ch.Code != rad.CodeAccessChallenge {
		t.Fatalf("got %v, want Access-Challenge", ch.Code)
	}
	// The NAS's Proxy-State comes back, and only it.
	var ps [][]byte
	for _, a := range ch.Attributes {
		if a.Type == attrProxyState {
			ps = append(ps, a.Attribute)
		}
	}
	if len(ps) != 1 || string(ps[0]) != "nas-ps" {
		t.Errorf("Proxy-States in the answer: %q, want only the NAS's", ps)
	}
	// Upstream got the NAS's Proxy-State, then the proxy's.
	got := up.requests()[0]
	var ups []string
	for _, a := range got.Attributes {
		if a.Type == attrProxyState {
			ups = append(ups, string(a.Attribute))
		}
	}
	if len(ups) != 2 || ups[0] != "nas-ps" || ups[1][:4] != proxyStatePrefix {
		t.Errorf("Proxy-States upstream: %q", ups)
	}
	req2, wire2 := eapRequest(t, ch.Get(attrState), eapTLS)
	if rej := checkAnswer(t, n.send(wire2, 2*time.Second), req2); rej.Code != rad.CodeAccessReject {
		t.Fatalf("got %v, want Access-Reject", rej.Code)
	}
	r := sink.waitRecord(t, KindClientEvents, failure(wnms.FailCertificate))
	if r["username"] != "bob" || r["bssid"] != "AA:BB:CC:DD:EE:01" || r["macAddress"] != "02:00:00:00:00:02" {
		t.Errorf("2/205 = %v", r)
	}
}

func TestProxyEAPTimeout(t *testing.T) {
	up := newUpstream(t, eapChallenge(25, rad.CodeAccessAccept))
	_, addr, sink := startProxy(t, Config{Sources: []SourceConfig{localSource()}, Upstreams: []Upstream{up.config(1000)}},
		ProxyOptions{EAPTimeout: 200 * time.Millisecond})
	n := newNAS(t, addr)
	req, wire := eapRequest(t, nil, 1)
	if ch := checkAnswer(t, n.send(wire, 2*time.Second), req); ch.Code != rad.CodeAccessChallenge {
		t.Fatalf("got %v", ch.Code)
	}
	// The client goes away after the Challenge.
	r := sink.waitRecord(t, KindClientEvents, failure(wnms.FailEAPTimeout))
	if r["username"] != "bob" {
		t.Errorf("2/204 = %v", r)
	}
}

func TestProxyConversationCap(t *testing.T) {
	up := newUpstream(t, eapChallenge(25, rad.CodeAccessAccept))
	p, addr, _ := startProxy(t, Config{Sources: []SourceConfig{localSource()}, Upstreams: []Upstream{up.config(1000)}},
		ProxyOptions{MaxConversations: 2})
	n := newNAS(t, addr)
	for i := range 3 {
		req, wire := accessRequest(t, sourceSecret, &rad.AVP{Type: attrEAPMessage, Attribute: rad.Attribute{2, 1, 0, 6, 1, 0}},
			&rad.AVP{Type: attrCallingStationID, Attribute: rad.Attribute{'0', '2', '-', '0', '0', '-', '0', '0', '-', '0', '0', '-', '0', '0', '-', '1', byte('0' + i)}})
		checkAnswer(t, n.send(wire, 2*time.Second), req)
	}
	// Three conversations wait after their Challenge; the cap keeps two.
	waitFor(t, "an eviction", func() bool { return p.Counters().ConversationsEvicted.Load() == 1 })
}

func TestProxyUnexpectedUpstreamCode(t *testing.T) {
	up := newUpstream(t, func(*rad.Packet) *rad.Packet { return &rad.Packet{Code: rad.CodeAccountingResponse} })
	p, addr, _ := startProxy(t, Config{Sources: []SourceConfig{localSource()}, Upstreams: []Upstream{up.config(1000)}},
		ProxyOptions{})
	_, wire := accessRequest(t, sourceSecret)
	if a := newNAS(t, addr).send(wire, 500*time.Millisecond); a != nil {
		t.Fatal("relayed an Accounting-Response to an Access-Request")
	}
	if p.Counters().Dropped(DropUpstreamUnexpected) != 1 {
		t.Errorf("upstream_unexpected drops %d", p.Counters().Dropped(DropUpstreamUnexpected))
	}
}

func TestProxyDeadUpstreamRetriedLater(t *testing.T) {
	var aliveA atomic.Bool
	a := newUpstream(t, func(req *rad.Packet) *rad.Packet {
		if !aliveA.Load() {
			return nil
		}
		return acceptPAP(req)
	})
	b := newUpstream(t, acceptPAP)
	const deadTime = 300 * time.Millisecond
	p, addr, _ := startProxy(t, Config{Sources: []SourceConfig{localSource()},
		Upstreams: []Upstream{a.config(150), b.config(1000)}}, ProxyOptions{DeadTime: deadTime})
	n := newNAS(t, addr)
	auth := func() {
		t.Helper()
		pk, wire := signedPAP(t, "pw", "")
		if checkAnswer(t, n.send(wire, 2*time.Second), pk).Code != rad.CodeAccessAccept {
			t.Fatal("not accepted")
		}
	}
	auth()                   // A times out, B answers; A is dead
	markedDead := time.Now() // A was marked dead before that answer
	auth()                   // straight to B
	if len(a.requests()) != 1 || len(b.requests()) != 2 {
		t.Fatalf("A asked %d times, B %d; want 1 and 2", len(a.requests()), len(b.requests()))
	}
	aliveA.Store(true)
	// Requests go straight to B until DeadTime has passed since A was
	// marked dead; the first after that tries A again, which answers.
	toB := 0
	for deadline := time.Now().Add(10 * time.Second); len(a.requests()) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("A was never tried again")
		}
		sent := time.Now()
		auth()
		if len(a.requests()) < 2 {
			toB++
			if late := sent.Sub(markedDead); late > deadTime {
				t.Fatalf("a request %v after A was marked dead skipped it (DeadTime %v)", late, deadTime)
			}
		}
	}
	if len(a.requests()) != 2 || len(b.requests()) != 2+toB {
		t.Fatalf("after DeadTime: A asked %d times, B %d; want 2 and %d", len(a.requests()), len(b.requests()), 2+toB)
	}
	if p.Counters().UpstreamTimeouts.Load() != 1 {
		t.Errorf("timeouts %d", p.Counters().UpstreamTimeouts.Load())
	}
}
