package radius

import (
	"context"
	"fmt"
	"github.com/wnms/wnms/internal/wnms"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	rad "layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
)

// radclientFlood sends n PAP requests (each its own client) to addr
// with radclient, from 4 processes at once, each with all its requests
// in flight together (one socket: up to 255 each), and returns how many
// were answered.
func radclientFlood(t *testing.T, addr, secret string, n int, attrs ...string) int {
	t.Helper()
	needTool(t, "radclient")
	const procs = 4
	per := (n + procs - 1) / procs
	if per > 255 {
		t.Fatalf("%d requests: at most %d", n, 255*procs)
	}
	answered := make(chan int, procs)
	for p := range procs {
		go func() {
			// radclient waits for each unanswered request in turn: a short
			// timeout.
			answered <- radclientBatch(addr, secret, "0.02", p*per, min(per, n-p*per), attrs)
		}()
	}
	total := 0
	for range procs {
		total += <-answered
	}
	return total
}

// radclientBatch sends n PAP requests, clients first to first+n-1, with
// radclient, all in flight together, waiting timeout seconds for each
// answer, and returns how many were answered.
func radclientBatch(addr, secret, timeout string, first, n int, attrs []string) int {
	if n <= 0 {
		return 0
	}
	var in strings.Builder
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&in, "User-Name = \"alice\"\nUser-Password = \"alice-pw\"\nCalling-Station-Id = \"02-00-00-00-%02X-%02X\"\n", i>>8, i&0xff)
		for _, a := range attrs {
			in.WriteString(a + "\n")
		}
		in.WriteString("\n")
	}
	cmd := exec.Command("radclient", "-p", fmt.Sprint(n), "-r", "1", "-t", timeout, addr, "auth", secret)
	cmd.Stdin = strings.NewReader(in.String())
	out, _ := cmd.CombinedOutput()
	return strings.Count(string(out), "Received ")
}

// requestsSeen counts the Access-Requests FreeRADIUS received.
func requestsSeen(fr *freeRADIUS) int { return strings.Count(fr.Output(), "Received Access-Request") }

// BlastRADIUS hygiene (decisions §21, CVE-2024-3596) with radclient in
// front of the proxy and FreeRADIUS behind it: every Access-Request must
// carry a valid Message-Authenticator unless its source says otherwise,
// one that does not verify (the wrong secret) is never passed on, and a
// flood of unsigned requests with the upstream down makes no 2/203.
func TestFreeRADIUSMessageAuthenticatorRequired(t *testing.T) {
	fr := startFreeRADIUS(t)
	cfg := Config{Sources: []SourceConfig{localSource()},
		Upstreams: []Upstream{{Address: fr.Auth, Secret: upstreamSecret, TimeoutMs: 500}}}
	s, err := NewSettings(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sink := newMemSink()
	p := NewProxy(s, sink, ProxyOptions{})
	pc := listen(t)
	serve(t, func(ctx context.Context) error { return p.Serve(ctx, pc) })
	addr := pc.LocalAddr().String()
	pap := []string{`User-Name = "alice"`, `User-Password = "alice-pw"`, `Calling-Station-Id = "` + clientMAC + `"`}
	const signed = `Message-Authenticator = 0x00`

	out, ok := radclient(t, addr, "auth", sourceSecret, append(pap, signed)...)
	if !ok || !strings.Contains(out, "Received Access-Accept") || !strings.Contains(out, "Message-Authenticator = 0x") {
		t.Fatalf("signed request: want an Access-Accept with a Message-Authenticator, got:\n%s", out)
	}
	seen := requestsSeen(fr)
	for _, tc := range []struct {
		name   string
		secret string
		attrs  []string
		reason DropReason
	}{
		{"wrong secret", "not-the-secret", append(pap, signed), DropBadMessageAuthenticator},
		{"no Message-Authenticator", sourceSecret, pap, DropNoMessageAuthenticator},
		{"no Message-Authenticator, wrong secret", "not-the-secret", pap, DropNoMessageAuthenticator},
	} {
		before := p.Counters().Dropped(tc.reason)
		if out, ok := radclient(t, addr, "auth", tc.secret, tc.attrs...); ok {
			t.Errorf("%s: answered:\n%s", tc.name, out)
		}
		if got := p.Counters().Dropped(tc.reason); got != before+1 {
			t.Errorf("%s: %s drops %d, want %d", tc.name, tc.reason, got, before+1)
		}
	}
	if got := requestsSeen(fr); got != seen {
		t.Errorf("FreeRADIUS got %d requests wnms should have dropped", got-seen)
	}

	// A source that says its NAS cannot sign is served unsigned; the
	// answer is signed all the same.
	src := localSource()
	src.MessageAuthenticatorOptional = true
	cfg.Sources = []SourceConfig{src}
	if err := s.Set(cfg); err != nil {
		t.Fatal(err)
	}
	if out, ok := radclient(t, addr, "auth", sourceSecret, pap...); !ok || !strings.Contains(out, "Received Access-Accept") ||
		!strings.Contains(out, "Message-Authenticator = 0x") {
		t.Fatalf("unsigned request from a source that allows it: want a signed Access-Accept, got:\n%s", out)
	}
	cfg.Sources = []SourceConfig{localSource()}
	if err := s.Set(cfg); err != nil {
		t.Fatal(err)
	}

	// The upstream down, a flood of unsigned requests: all dropped, no
	// 2/203 stored.
	fr.Stop()
	const flood = 1000
	before := p.Counters().Dropped(DropNoMessageAuthenticator)
	if n := radclientFlood(t, addr, sourceSecret, flood); n != 0 {
		t.Errorf("%d unsigned requests answered", n)
	}
	if got := p.Counters().Dropped(DropNoMessageAuthenticator) - before; got < flood {
		t.Errorf("%d unsigned requests dropped, want %d", got, flood)
	}
	// One signed request does reach the (dead) upstream and fails 2/203:
	// the flood's would have, had they been passed on.
	radclient(t, addr, "auth", sourceSecret, append(pap, signed)...)
	sink.waitRecord(t, KindClientEvents, failure(wnms.FailRadiusDown))
	if n := len(sink.get(KindClientEvents)); n != 3 { // two Successes, and the signed one's 2/203
		t.Errorf("%d events stored, want 3 (two Successes, one 2/203): %v", n, sink.get(KindClientEvents))
	}
	if n := p.Counters().UpstreamsFailed.Load(); n != 1 {
		t.Errorf("UpstreamsFailed = %d, want 1", n)
	}
}

// An upstream that leads back to wnms's own port (a mistake, or a name
// that came to resolve there) no longer loops: the request comes back
// with wnms's own Proxy-State and is dropped, once.
func TestProxyLoopGuard(t *testing.T) {
	s := &Settings{}
	sink := newMemSink()
	p := NewProxy(s, sink, ProxyOptions{})
	pc := listen(t)
	// The same secret both ways, so the request that comes back verifies
	// as the source's.
	if err := s.Set(Config{Sources: []SourceConfig{localSource()},
		Upstreams: []Upstream{{Address: pc.LocalAddr().String(), Secret: sourceSecret, TimeoutMs: 300}}}); err != nil {
		t.Fatal(err)
	}
	serve(t, func(ctx context.Context) error { return p.Serve(ctx, pc) })
	n := newNAS(t, pc.LocalAddr().String())
	_, wire := signedPAP(t, "pw", "02-00-00-00-00-09")
	if a := n.send(wire, 2*time.Second); a != nil {
		t.Fatal("answered")
	}
	sink.waitRecord(t, KindClientEvents, failure(wnms.FailRadiusDown))
	if got := p.Counters().Dropped(DropLoop); got != 1 {
		t.Errorf("loop drops %d, want 1", got)
	}
	if got := p.Counters().AccessRequests.Load(); got != 2 {
		t.Errorf("%d Access-Requests received, want 2 (the NAS's, and it once more through the loop)", got)
	}

	// Accounting passed on to its own port: taken once, answered, the
	// copy that comes back dropped.
	as := &Settings{}
	a := NewAccounting(as, newMemSink(), AccountingOptions{Retries: 1})
	apc := listen(t)
	if err := as.Set(Config{Sources: []SourceConfig{localSource()},
		AccountingUpstreams: []Upstream{{Address: apc.LocalAddr().String(), Secret: sourceSecret, TimeoutMs: 300}}}); err != nil {
		t.Fatal(err)
	}
	serve(t, func(ctx context.Context) error { return a.Serve(ctx, apc) })
	start := acctRequest(rfc2866.AcctStatusType_Value_Start, sourceSecret, nil)
	if acctExchange(t, apc.LocalAddr().String(), start, 2*time.Second) == nil {
		t.Fatal("accounting: not answered")
	}
	waitFor(t, "the looped accounting packet to be dropped", func() bool { return a.Counters().Dropped(DropLoop) == 1 })
	waitFor(t, "the pass-on to give up", func() bool { return a.Counters().ForwardsDropped.Load() == 1 })
	if got := a.Counters().AccountingRequests.Load(); got != 2 {
		t.Errorf("%d Accounting-Requests received, want 2", got)
	}
}

// Each group (customer) is put in force on its own: an upstream whose
// name does not resolve is down (its requests fail over to the next
// upstream, then fail 2/203), a group that claims another's prefix is
// left out, and neither touches the other groups.
func TestSetGroupsEachOnItsOwn(t *testing.T) {
	fr := startFreeRADIUS(t)
	const gone = "no-such-host.invalid:1812" // .invalid never resolves (RFC 6761)
	live := Upstream{Address: fr.Auth, Secret: upstreamSecret, TimeoutMs: 1000}
	dead := Upstream{Address: gone, Secret: upstreamSecret, TimeoutMs: 1000}
	other := SourceConfig{Name: "other", CIDR: netip.MustParsePrefix("10.9.9.0/24"), RadiusSecret: "x"}
	s := &Settings{}
	err := s.SetGroups(map[int64]Config{
		1: {Sources: []SourceConfig{localSource()}, Upstreams: []Upstream{dead, live}},
		2: {Sources: []SourceConfig{other}, Upstreams: []Upstream{dead}},
		3: {Sources: []SourceConfig{{Name: "thief", CIDR: netip.MustParsePrefix("10.9.9.0/24"), RadiusSecret: "y"}}, Upstreams: []Upstream{live}},
	})
	if err == nil || !strings.Contains(err.Error(), gone) || !strings.Contains(err.Error(), "configuration 3 not in force") {
		t.Errorf("SetGroups: %v; want the name that does not resolve and group 3 named", err)
	}
	if src, ok := s.Lookup(netip.MustParseAddr("10.9.9.1")); !ok || src.Group != 2 {
		t.Errorf("10.9.9.1 is %+v, %v; want group 2's", src, ok)
	}
	sink := newMemSink()
	p := NewProxy(s, sink, ProxyOptions{})
	pc := listen(t)
	serve(t, func(ctx context.Context) error { return p.Serve(ctx, pc) })
	addr := pc.LocalAddr().String()
	pap := []string{`User-Name = "alice"`, `User-Password = "alice-pw"`, `Calling-Station-Id = "` + clientMAC + `"`,
		`Message-Authenticator = 0x00`}
	if out, ok := radclient(t, addr, "auth", sourceSecret, pap...); !ok || !strings.Contains(out, "Received Access-Accept") {
		t.Fatalf("past an upstream that does not resolve: want the next one's Access-Accept, got:\n%s", out)
	}
	// Only the upstream that does not resolve: 2/203.
	if err := s.SetGroups(map[int64]Config{1: {Sources: []SourceConfig{localSource()}, Upstreams: []Upstream{dead}}}); err == nil {
		t.Error("SetGroups: no problem reported")
	}
	if out, ok := radclient(t, addr, "auth", sourceSecret, pap...); ok {
		t.Fatalf("no upstream that resolves: answered:\n%s", out)
	}
	sink.waitRecord(t, KindClientEvents, failure(wnms.FailRadiusDown))
}

// One customer's flood at its dead upstream (5,000 valid requests from
// five sources, the upstream silent with timeoutMs 60000) takes at most
// its own bounds of requests in flight (256 a source, 1,024 the
// customer): another customer's requests through a live FreeRADIUS are
// all answered during the flood and while the flood's requests wait.
// (With one bound for all, 4,096, the flood took every place.)
func TestProxyCustomerFloodIsolation(t *testing.T) {
	needTool(t, "radclient")
	fr := startFreeRADIUSWith(t, "-l", "stdout")
	silent := newUpstream(t, func(*rad.Packet) *rad.Packet { return nil })
	const floodSecret = "customer-a-secret"
	var aSources []SourceConfig
	for i := range 5 {
		aSources = append(aSources, SourceConfig{Name: fmt.Sprintf("a%d", i), CIDR: netip.PrefixFrom(netip.AddrFrom4([4]byte{127, 0, 0, byte(2 + i)}), 32),
			RadiusSecret: floodSecret, MessageAuthenticatorOptional: true})
	}
	s := &Settings{}
	if err := s.SetGroups(map[int64]Config{
		1: {Sources: aSources, Upstreams: []Upstream{silent.config(60_000)}},
		2: {Sources: []SourceConfig{{Name: "b", CIDR: netip.MustParsePrefix("127.0.0.1/32"), RadiusSecret: sourceSecret}},
			Upstreams: []Upstream{{Address: fr.Auth, Secret: upstreamSecret, TimeoutMs: 3000}}},
	}); err != nil {
		t.Fatal(err)
	}
	p := NewProxy(s, newMemSink(), ProxyOptions{})
	pc := listen(t)
	serve(t, func(ctx context.Context) error { return p.Serve(ctx, pc) })
	addr := pc.LocalAddr().(*net.UDPAddr)

	// Customer B asks, 20 requests at a time, until told to stop.
	type tally struct{ sent, answered int }
	stopB := make(chan struct{})
	bDone := make(chan tally, 1)
	var batches atomic.Int64
	bStart := time.Now()
	go func() {
		var n tally
		for i := 0; ; i++ {
			select {
			case <-stopB:
				bDone <- n
				return
			default:
			}
			n.answered += radclientBatch(addr.String(), sourceSecret, "3", i*20%60000, 20, []string{"Message-Authenticator = 0x00"})
			n.sent += 20
			batches.Add(1)
		}
	}()

	// Customer A floods: 1,000 from its first source, then 4,000 from the
	// four others in turn, about 2,500 a second.
	var socks []*net.UDPConn
	for _, src := range aSources {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: src.CIDR.Addr().AsSlice()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		socks = append(socks, c)
	}
	floodStart := time.Now()
	tick := time.NewTicker(2 * time.Millisecond)
	for i := range 5000 {
		if i%5 == 0 {
			<-tick.C
		}
		req := rad.New(rad.CodeAccessRequest, []byte(floodSecret))
		rfc2865.UserName_SetString(req, "flood")
		rfc2865.UserPassword_SetString(req, "x")
		rfc2865.CallingStationID_SetString(req, fmt.Sprintf("02-aa-00-00-%02x-%02x", i>>8, i&0xff))
		wire, err := req.Encode()
		if err != nil {
			t.Fatal(err)
		}
		sock := socks[0]
		if i >= 1000 {
			sock = socks[1+i%4]
		}
		sock.WriteToUDP(wire, addr)
	}
	tick.Stop()
	floodTook := time.Since(floodStart)
	waitFor(t, "customer A's requests to reach its upstream", func() bool { return len(silent.requests()) >= 1024 })
	// B goes on, five batches more, with A's requests still waiting for
	// their upstream.
	after := batches.Load() + 5
	waitFor(t, "customer B's batches after the flood", func() bool { return batches.Load() >= after })
	close(stopB)
	b := <-bDone
	bTook := time.Since(bStart)
	t.Logf("customer B: %d of %d requests answered (%.0f answers/s) during customer A's flood of 5000 requests in %v and the %v after; "+
		"A: %d passed on, %d dropped busy_source, %d busy_customer",
		b.answered, b.sent, float64(b.answered)/bTook.Seconds(), floodTook.Round(time.Millisecond), (bTook - floodTook).Round(time.Millisecond),
		len(silent.requests()), p.Counters().Dropped(DropBusySource), p.Counters().Dropped(DropBusyCustomer))
	if b.sent == 0 || b.answered != b.sent {
		t.Errorf("customer B: %d of %d requests answered during customer A's flood", b.answered, b.sent)
	}
	if n := len(silent.requests()); n != DefaultMaxInFlightPerGroup {
		t.Errorf("customer A had %d requests in flight, want its bound %d", n, DefaultMaxInFlightPerGroup)
	}
	if p.Counters().Dropped(DropBusySource) == 0 || p.Counters().Dropped(DropBusyCustomer) == 0 || p.Counters().Dropped(DropBusy) != 0 {
		t.Errorf("drops: busy_source %d, busy_customer %d, busy %d; want the first two only", p.Counters().Dropped(DropBusySource),
			p.Counters().Dropped(DropBusyCustomer), p.Counters().Dropped(DropBusy))
	}
}

// blockingSink holds the Emit calls of group 1 until release is closed,
// as a customer's store that stopped; other groups' go through.
type blockingSink struct {
	release chan struct{}
	held    atomic.Int64
}

func (s *blockingSink) Emit(ctx context.Context, src Source, _ []Observation) error {
	if src.Group != 1 {
		return nil
	}
	s.held.Add(1)
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Accounting has the same bounds: one customer's packets that cannot be
// committed hold at most its source's places, and another customer's
// packets are still answered.
func TestAccountingCustomerBound(t *testing.T) {
	s := &Settings{}
	if err := s.SetGroups(map[int64]Config{
		1: {Sources: []SourceConfig{{Name: "a", CIDR: netip.MustParsePrefix("127.0.0.2/32"), RadiusSecret: "a-secret"}}},
		2: {Sources: []SourceConfig{localSource()}},
	}); err != nil {
		t.Fatal(err)
	}
	sink := &blockingSink{release: make(chan struct{})}
	defer close(sink.release)
	a := NewAccounting(s, sink, AccountingOptions{})
	pc := listen(t)
	serve(t, func(ctx context.Context) error { return a.Serve(ctx, pc) })
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const flood = 300
	for i := range flood {
		p := acctRequest(rfc2866.AcctStatusType_Value_Start, "a-secret", func(p *rad.Packet) {
			rfc2866.AcctSessionID_SetString(p, fmt.Sprint("flood-", i))
		})
		p.Identifier = byte(i)
		wire, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		c.WriteToUDP(wire, pc.LocalAddr().(*net.UDPAddr))
		// Sent in bursts the listener has taken in before the next, so
		// that the kernel's receive buffer drops none of them (a busy CI
		// machine did, and the counts below never added up). A packet
		// takes its place before it reaches the sink: wait for both.
		if sent := i + 1; sent%25 == 0 || sent == flood {
			waitFor(t, fmt.Sprintf("customer A's first %d packets", sent), func() bool {
				return a.Counters().Dropped(DropBusySource)+uint64(sink.held.Load()) == uint64(sent)
			})
		}
	}
	if d, h := a.Counters().Dropped(DropBusySource), sink.held.Load(); d != flood-DefaultMaxInFlightPerSource || h != DefaultMaxInFlightPerSource {
		t.Fatalf("customer A's source holds %d places and dropped %d packets as busy, want %d and %d", h, d, DefaultMaxInFlightPerSource, flood-DefaultMaxInFlightPerSource)
	}
	if acctExchange(t, pc.LocalAddr().String(), acctRequest(rfc2866.AcctStatusType_Value_Start, sourceSecret, nil), 2*time.Second) == nil {
		t.Error("customer B's accounting packet not answered")
	}
}

// serve runs f (a listener's Serve) until the test ends.
func serve(t *testing.T, f func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
}
