package radius

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	rad "layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc2869"
)

func acctRequest(status rfc2866.AcctStatusType, secret string, extra func(p *rad.Packet)) *rad.Packet {
	p := rad.New(rad.CodeAccountingRequest, []byte(secret))
	rfc2866.AcctStatusType_Set(p, status)
	rfc2866.AcctSessionID_SetString(p, "sess-9")
	rfc2865.CallingStationID_SetString(p, "02-00-00-00-00-09")
	rfc2865.CalledStationID_SetString(p, "AA-BB-CC-DD-EE-09:guest")
	rfc2865.NASIdentifier_SetString(p, "ap-9")
	if extra != nil {
		extra(p)
	}
	return p
}

func acctExchange(t *testing.T, addr string, p *rad.Packet, wait time.Duration) *rad.Packet {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c := &rad.Client{Retry: 0}
	resp, err := c.Exchange(ctx, p, addr)
	if err != nil {
		return nil
	}
	return resp
}

func TestAccountingCommitBeforeResponse(t *testing.T) {
	a, addr, sink := startAccounting(t, Config{Sources: []SourceConfig{localSource()}})
	start := acctRequest(rfc2866.AcctStatusType_Value_Start, sourceSecret, func(p *rad.Packet) {
		rfc2865.FramedIPAddress_Set(p, netip.MustParseAddr("10.9.9.9").AsSlice())
		rfc2866.AcctDelayTime_Set(p, 0)
	})
	sink.setFail(true)
	if resp := acctExchange(t, addr, start, 300*time.Millisecond); resp != nil {
		t.Fatal("answered although the Sink failed")
	}
	if a.Counters().SinkErrors.Load() != 1 {
		t.Errorf("SinkErrors = %d", a.Counters().SinkErrors.Load())
	}
	sink.setFail(false)
	// The NAS retries the same packet: committed now, answered.
	resp := acctExchange(t, addr, start, 2*time.Second)
	if resp == nil || resp.Code != rad.CodeAccountingResponse {
		t.Fatalf("retry: %v", resp)
	}
	ev := sink.get(KindClientEvents)
	if len(ev) != 1 || ev[0]["ip"] != "10.9.9.9" || ev[0]["typeCode"] != 1.0 || ev[0]["ssid"] != "guest" {
		t.Fatalf("events %v", ev)
	}
	// Sent once more (a lost response): the same record, so a duplicate
	// downstream, and answered.
	if resp := acctExchange(t, addr, start, 2*time.Second); resp == nil {
		t.Fatal("no answer to a retransmission")
	}
	ev = sink.get(KindClientEvents)
	if len(ev) != 2 || ev[0]["eventId"] != ev[1]["eventId"] || ev[0]["timestamp"] != ev[1]["timestamp"] {
		t.Errorf("retransmission records %v, want the first again", ev)
	}
}

func TestAccountingDeltas(t *testing.T) {
	_, addr, sink := startAccounting(t, Config{Sources: []SourceConfig{localSource()}})
	send := func(status rfc2866.AcctStatusType, ts int64, in, inGiga, out uint32) {
		t.Helper()
		p := acctRequest(status, sourceSecret, func(p *rad.Packet) {
			rfc2869.EventTimestamp_Set(p, time.Unix(ts, 0))
			rfc2866.AcctInputOctets_Set(p, rfc2866.AcctInputOctets(in))
			rfc2869.AcctInputGigawords_Set(p, rfc2869.AcctInputGigawords(inGiga))
			rfc2866.AcctOutputOctets_Set(p, rfc2866.AcctOutputOctets(out))
		})
		if acctExchange(t, addr, p, 2*time.Second) == nil {
			t.Fatal("no answer")
		}
	}
	// An Interim-Update of a session not seen yet has no delta to give: it
	// makes no sample, and its counters are the reference of the next.
	send(rfc2866.AcctStatusType_Value_InterimUpdate, 1764000000, 4000, 0, 100)
	send(rfc2866.AcctStatusType_Value_InterimUpdate, 1764000060, 100, 1, 300)
	send(rfc2866.AcctStatusType_Value_InterimUpdate, 1764000120, 50, 0, 200) // counters reset
	st := sink.get(KindClientStats)
	if len(st) != 2 {
		t.Fatalf("samples %v, want two", st)
	}
	if st[0]["txBytes"] != float64(1<<32+100-4000) || st[0]["rxBytes"] != 200.0 {
		t.Errorf("first sample %v", st[0])
	}
	if st[1]["txBytes"] != 50.0 || st[1]["rxBytes"] != 200.0 {
		t.Errorf("after a reset %v, want the counters from zero", st[1])
	}
}

func TestAccountingDrops(t *testing.T) {
	a, addr, _ := startAccounting(t, Config{Sources: []SourceConfig{{Name: "x", CIDR: netip.MustParsePrefix("127.0.0.1/32"),
		RadiusSecret: sourceSecret}}})
	if acctExchange(t, addr, acctRequest(rfc2866.AcctStatusType_Value_Start, "wrong", nil), 300*time.Millisecond) != nil {
		t.Fatal("answered a packet signed with another secret")
	}
	if a.Counters().Dropped(DropBadAuthenticator) != 1 {
		t.Errorf("bad authenticator drops %d", a.Counters().Dropped(DropBadAuthenticator))
	}
	on := acctRequest(rfc2866.AcctStatusType_Value_AccountingOn, sourceSecret, nil)
	if acctExchange(t, addr, on, 2*time.Second) == nil {
		t.Fatal("Accounting-On not answered")
	}
}

func TestConfigValidate(t *testing.T) {
	p := netip.MustParsePrefix("10.0.0.0/8")
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Sources: []SourceConfig{{CIDR: p, RadiusSecret: "s"}}}, "name is required"},
		{Config{Sources: []SourceConfig{{Name: "a", RadiusSecret: "s"}}}, "cidr"},
		{Config{Sources: []SourceConfig{{Name: "a", CIDR: p}}}, "radiusSecret is required"},
		{Config{Upstreams: []Upstream{{Address: "127.0.0.1:1812"}}}, "secret is required"},
		{Config{Upstreams: []Upstream{{Address: "127.0.0.1", Secret: "top-secret"}}}, "upstreams[0]"},
		{Config{AccountingUpstreams: []Upstream{{Address: "127.0.0.1:1813", Secret: "top-secret", TimeoutMs: -1}}}, "timeoutMs"},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "top-secret") {
			t.Errorf("error names a secret: %v", err)
		}
	}
	cfg := Config{Upstreams: []Upstream{{Address: "a:1", Secret: "top-secret"}},
		Sources: []SourceConfig{{Name: "n", CIDR: p, RadiusSecret: "top-secret"}}}
	if got := fmt.Sprintf("%v %+v", cfg, cfg); strings.Contains(got, "top-secret") {
		t.Errorf("a configuration printed shows its secrets: %s", got)
	}
	s, err := NewSettings(Config{Sources: []SourceConfig{
		{Name: "wide", CIDR: netip.MustParsePrefix("10.0.0.0/8"), RadiusSecret: "a"},
		{Name: "narrow", CIDR: netip.MustParsePrefix("10.1.0.0/16"), RadiusSecret: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]string{"10.1.2.3": "narrow", "10.2.0.1": "wide", "::ffff:10.1.0.1": "narrow", "11.0.0.1": ""} {
		src, _ := s.Lookup(netip.MustParseAddr(addr))
		if src.Name != want {
			t.Errorf("Lookup(%s) = %q, want %q", addr, src.Name, want)
		}
	}
}

func TestParseCalled(t *testing.T) {
	for in, want := range map[string][2]string{
		"AA-BB-CC-DD-EE-FF:corp": {"AA:BB:CC:DD:EE:FF", "corp"},
		"aabbccddeeff:x:y":       {"AA:BB:CC:DD:EE:FF", "x:y"},
		"aa:bb:cc:dd:ee:ff":      {"AA:BB:CC:DD:EE:FF", ""},
		"AA-BB-CC-DD-EE-FF":      {"AA:BB:CC:DD:EE:FF", ""},
		"not a mac":              {"", ""},
		"AA-BB-CC-DD-EE-FF:" + strings.Repeat("s", 33): {"AA:BB:CC:DD:EE:FF", ""},
	} {
		b, s := parseCalled(in)
		if b != want[0] || s != want[1] {
			t.Errorf("parseCalled(%q) = %q, %q; want %q, %q", in, b, s, want[0], want[1])
		}
	}
}

func TestAccountingWithoutEventTimestamp(t *testing.T) {
	_, addr, sink := startAccounting(t, Config{Sources: []SourceConfig{localSource()}})
	interim := func(in uint32) *rad.Packet {
		return acctRequest(rfc2866.AcctStatusType_Value_InterimUpdate, sourceSecret, func(p *rad.Packet) {
			rfc2866.AcctInputOctets_Set(p, rfc2866.AcctInputOctets(in))
			rfc2866.AcctOutputOctets_Set(p, 0)
		})
	}
	first, next := interim(100), interim(300)
	for _, p := range []*rad.Packet{first, first, next} {
		if acctExchange(t, addr, p, 2*time.Second) == nil {
			t.Fatal("no answer")
		}
	}
	st := sink.get(KindClientStats)
	if len(st) != 1 || st[0]["txBytes"] != 200.0 {
		t.Errorf("samples %v: want none for the first (no reference) nor its retransmission, then a delta of 200", st)
	}
}

func TestAccountingPassOnAfterCommit(t *testing.T) {
	up := newUpstream(t, func(*rad.Packet) *rad.Packet { return &rad.Packet{Code: rad.CodeAccountingResponse} })
	a, addr, sink := startAccounting(t, Config{Sources: []SourceConfig{localSource()},
		AccountingUpstreams: []Upstream{up.config(500)}})
	start := acctRequest(rfc2866.AcctStatusType_Value_Start, sourceSecret, func(p *rad.Packet) {
		rfc2869.EventTimestamp_Set(p, time.Unix(1764000000, 0))
		rfc2865.ProxyState_Add(p, []byte("nas-ps"))
	})
	sink.setFail(true)
	if acctExchange(t, addr, start, 300*time.Millisecond) != nil {
		t.Fatal("answered although the Sink failed")
	}
	// The refusal is in before the Sink takes records again (a loaded
	// machine may not have handled the packet within the 300 ms).
	waitFor(t, "the Sink's refusal", func() bool { return a.Counters().SinkErrors.Load() == 1 })
	sink.setFail(false)
	for range 2 {
		resp := acctExchange(t, addr, start, 2*time.Second)
		if resp == nil {
			t.Fatal("no answer")
		}
		if ps := rfc2865.ProxyState_Get(resp); string(ps) != "nas-ps" {
			t.Errorf("Proxy-State %q not echoed", ps)
		}
	}
	// Passed on once, after the commit, with the NAS's attributes. A
	// second pass-on of the retransmission would have been queued before
	// the next packet's: that packet (another session) reaching the
	// upstream shows the queue has been passed on beyond it.
	next := acctRequest(rfc2866.AcctStatusType_Value_Start, sourceSecret, func(p *rad.Packet) {
		rfc2866.AcctSessionID_SetString(p, "sess-next")
		rfc2869.EventTimestamp_Set(p, time.Unix(1764000000, 0))
	})
	if acctExchange(t, addr, next, 2*time.Second) == nil {
		t.Fatal("no answer to the next packet")
	}
	sessions := func() (ids []string) {
		for _, p := range up.requests() {
			ids = append(ids, rfc2866.AcctSessionID_GetString(p))
		}
		return ids
	}
	waitFor(t, "the next packet's pass-on", func() bool { return slices.Contains(sessions(), "sess-next") })
	if got := sessions(); len(got) != 2 || !slices.Contains(got, "sess-9") {
		t.Fatalf("upstream got %q, want sess-9 once and the next packet", got)
	}
	if a.Counters().Retransmissions.Load() != 2 || a.Counters().ForwardsDropped.Load() != 0 {
		t.Errorf("retransmissions %d, forwards dropped %d", a.Counters().Retransmissions.Load(),
			a.Counters().ForwardsDropped.Load())
	}
}

// A retransmission is recognised within RecentWindow, and a packet older
// than that is forgotten: what the server remembers is the window's
// packets, not every packet since it started.
func TestAccountingRecentWindow(t *testing.T) {
	a := NewAccounting(&Settings{}, nil, AccountingOptions{})
	src := &source{Source: Source{Name: "s"}, secret: []byte("x")}
	packet := func(sid string) *rad.Packet {
		p := rad.New(rad.CodeAccountingRequest, []byte("x"))
		p.Add(attrCallingStationID, rad.Attribute("02-00-00-00-00-09"))
		p.Add(attrAcctSessionID, rad.Attribute(sid))
		p.Add(attrAcctStatusType, rad.Attribute([]byte{0, 0, 0, acctStart}))
		p.Add(attrEventTimestamp, rad.Attribute([]byte{0x69, 0x00, 0x00, 0x00}))
		return p
	}
	t0 := time.Unix(1764000000, 0)
	first := packet("s1")
	for _, c := range []struct {
		name  string
		p     *rad.Packet
		at    time.Time
		isNew bool
	}{
		{"first copy", first, t0, true},
		{"a retransmission within the window", first, t0.Add(RecentWindow - time.Second), false},
		{"another session later on", packet("s2"), t0.Add(RecentWindow + time.Second), true},
		{"the first packet again after the window", first, t0.Add(RecentWindow + 2*time.Second), true},
	} {
		if _, isNew := a.observe(src, c.p, c.at); isNew != c.isNew {
			t.Errorf("%s: new %v, want %v", c.name, isNew, c.isNew)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.recent) != 2 || a.recentQ.Len() != 2 {
		t.Errorf("%d packets remembered (%d queued), want the 2 of the last window", len(a.recent), a.recentQ.Len())
	}
}
