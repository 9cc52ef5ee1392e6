package syslog

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
	"unique"

	"github.com/wnms/wnms/internal/wnms"
)

// ClientEvent is a client event the assembler made, in the terms of the
// ingest format (Record gives it as wnms.EventRecord; docs/api.md §16):
// a zero field is one not observed. The assembler cannot know the
// radio's BSSID (unless the line named it) nor its channel: the caller
// fills them from the source (Interface helps to tell the radios of one
// AP apart) before it hands the batch on.
type ClientEvent struct {
	EventID                 string
	MacAddress              string
	EventType               string
	BSSID                   string
	Channel                 int
	SSID                    string
	Timestamp               int64
	AssociationTimestamp    int64
	AuthenticationTimestamp int64
	NetworkTimestamp        int64
	DHCPLatency             *int64 // nil without a DHCP ACK; 0 is measured
	FailureCode             int
	SubFailureCode          int
	CategoryCode            int
	TypeCode                int
	SubTypeCode             int
	IP                      *string
	// HostName and ClientName are, on a Success with a DHCP ACK, the host
	// name the ACK gave the client: the client takes it as its name.
	HostName   string
	ClientName string

	// Interface is the hostapd interface (or, for an event only a DHCP
	// server saw, the server's interface) the connection was seen on.
	// It is not part of the record.
	Interface string
	// AssocSeen and AuthSeen are, on a Success, when wnms received the
	// line of the connection's association and of its authentication
	// (keys done, the port authorized or 802.1X success; on an open
	// network, the association again): on wnms's clock, where the
	// timestamps above are the sender's. They tell which of a client's
	// RADIUS accepts was this connection's. Not part of the record.
	AssocSeen, AuthSeen time.Time
}

// Record returns the event as ingest takes it, without what was not
// observed.
func (e *ClientEvent) Record() wnms.EventRecord {
	some := func(v int64) *int64 {
		if v == 0 {
			return nil
		}
		return &v
	}
	r := wnms.EventRecord{MacAddress: wnms.Ptr(e.MacAddress), EventType: wnms.Ptr(e.EventType), Channel: e.Channel,
		SSID: e.SSID, Timestamp: wnms.Ptr(e.Timestamp), HostName: e.HostName, ClientName: e.ClientName,
		ConnectionSteps: wnms.ConnectionSteps{AssociationTimestamp: some(e.AssociationTimestamp),
			AuthenticationTimestamp: some(e.AuthenticationTimestamp), NetworkTimestamp: some(e.NetworkTimestamp)},
		DHCPLatency: e.DHCPLatency, SubTypeCode: e.SubTypeCode}
	r.IP = e.IP
	if e.EventID != "" {
		r.EventID = wnms.Ptr(e.EventID)
	}
	if e.BSSID != "" {
		r.BSSID = wnms.Ptr(e.BSSID)
	}
	if e.FailureCode != 0 {
		r.FailureCode, r.SubFailureCode = wnms.Ptr(e.FailureCode), wnms.Ptr(e.SubFailureCode)
	}
	if e.CategoryCode != 0 {
		r.CategoryCode, r.TypeCode = wnms.Ptr(e.CategoryCode), wnms.Ptr(e.TypeCode)
	}
	return r
}

// Sink receives the assembler's events in batches, each batch from one
// source: the address of the AP whose lines made the connection (or of
// the DHCP server, for a client no AP line was seen of). It is called by
// Run, Tick and Flush, never on the receive path, without the
// assembler's lock; it may be called from several goroutines at once
// when Tick or Flush are called besides Run. The slice is the callee's.
// An error drops the batch (counted); the events are not retried, as a
// UDP sender does not retry either.
type Sink interface {
	Emit(ctx context.Context, source netip.Addr, events []ClientEvent) error
}

// SinkFunc makes a function a Sink.
type SinkFunc func(ctx context.Context, source netip.Addr, events []ClientEvent) error

// Emit calls f.
func (f SinkFunc) Emit(ctx context.Context, source netip.Addr, events []ClientEvent) error {
	return f(ctx, source, events)
}

// Defaults of an Assembler.
const (
	DefaultPendingTimeout = 60 * time.Second
	DefaultStateTimeout   = time.Hour
	DefaultMaxClients     = 100_000
	DefaultBatchSize      = 500
	DefaultFlushInterval  = time.Second
	DefaultQueueLen       = 16
	DefaultEmitters       = 2
	DefaultMaxSkew        = 24 * time.Hour
)

// Assembler turns the lines of hostapd, dnsmasq and ISC dhcpd into client
// events (see the package documentation for the mapping) and hands them to
// Sink in batches. Observe is its Handler. Set its fields before first
// use; it must not be copied after.
type Assembler struct {
	// Sink is given the events (required).
	Sink Sink
	// Now is the clock of timeouts and batches (time.Now if nil).
	Now func() time.Time
	// PendingTimeout ends a connection attempt that has no outcome after
	// that long without a line (DefaultPendingTimeout if 0).
	PendingTimeout time.Duration
	// StateTimeout forgets a client with no line for that long after its
	// attempt ended (DefaultStateTimeout if 0).
	StateTimeout time.Duration
	// MaxClients bounds the clients tracked (DefaultMaxClients if 0): the
	// least recently seen is forgotten first, ended attempts before
	// pending ones.
	MaxClients int
	// BatchSize and FlushInterval: a source's batch is emitted when it
	// holds BatchSize events or its first event is FlushInterval old
	// (DefaultBatchSize, DefaultFlushInterval if 0).
	BatchSize     int
	FlushInterval time.Duration
	// QueueLen bounds the full batches waiting for Run (DefaultQueueLen if
	// 0).
	QueueLen int
	// Emitters is how many full batches Run hands to Sink at once
	// (DefaultEmitters if 0). A batch's ingest waits on the store's round
	// trips and commit; with one at a time, lines queued behind them while
	// the cores idled.
	Emitters int
	// MaxSkew: a line whose timestamp is missing or further than that from
	// the receive time takes the receive time (DefaultMaxSkew if 0).
	MaxSkew time.Duration
	// Owner, if set, says whose a source is (a customer): a DHCP line
	// joins only a client's association seen at a source of the same
	// owner, so one owner's DHCP server never touches another's clients
	// that share a MAC. Nil: every source is one owner's. It is called
	// with the assembler's lock held: it must be quick.
	Owner func(source netip.Addr) int64

	once     sync.Once
	queue    chan flush // full batches, for Run
	mu       sync.Mutex
	clients  map[clientKey]*client
	pending  clientList             // the clients whose attempt has no outcome, least recently seen first
	ended    clientList             // the other clients, least recently touched first
	slab     clientSlab             // where clients are made, and forgotten ones kept for reuse
	latest   map[ownedMAC]sourceRef // the source of each client's latest association
	batches  map[netip.Addr]*batch
	epoch    time.Time // the clock's now at first use: clients' touched count from it
	buffered int
	stats    AssemblerStats
}

// LineStats count one program's lines.
type LineStats struct {
	Parsed   uint64 // lines that said something of a client
	Unparsed uint64 // lines the parser did not read (never an error)
}

// AssemblerStats are an Assembler's counters since it was made.
type AssemblerStats struct {
	// Lines by program (ProgramHostapd, ProgramDnsmasq, ProgramDHCPD).
	Lines map[string]LineStats
	// OtherPrograms counts messages of programs no parser reads.
	OtherPrograms uint64
	// Events made, by eventType (Success, Failure, Intermediate).
	Events map[string]uint64
	// Clients is the number tracked now.
	Clients int
	// Evicted counts clients forgotten to stay under MaxClients; Expired
	// the attempts ended by PendingTimeout.
	Evicted, Expired uint64
	// Batches emitted; EmitErrors the batches Sink refused. EventsLost
	// counts the events in those, and in full batches Observe could not
	// queue before its context ended.
	Batches, EmitErrors, EventsLost uint64
}

type clientKey struct {
	src sourceRef
	mac uint64 // wnms.MACBits
}

// sourceRef is a syslog source's address as clients keep it: a handle of
// one shared copy (8 bytes where the address is 24), which keeps the
// client, its map key and its latest association 16 bytes smaller each.
type sourceRef = unique.Handle[netip.Addr]

// ownedMAC is a client MAC as one owner's sources see it.
type ownedMAC struct {
	owner int64
	mac   uint64
}

// obsRef is what names an observation in an eventId, with when wnms
// received it.
type obsRef struct {
	src     netip.Addr
	program string
	at      int64 // ms, the line's own time
	rx      int64 // ms, when wnms received the line (not part of the eventId)
	whole   bool  // at has whole seconds only (see Message.WholeSeconds)
}

// client is what is known of one client at one source: its current
// connection attempt, and after its outcome, enough to tell a repeated or
// late line from a new attempt. Most clients tracked are past their
// outcome (an attempt takes seconds, a client is kept an hour): what only
// an attempt under way needs is in att, dropped at the outcome, which
// keeps an ended client at about half the size. The rest is kept small
// too (about 190 bytes a client, map entries included; the bound is
// MaxClients): the MAC as its 48 bits, the source, interface and BSSID
// as handles of one shared copy, the lists threaded through the clients
// themselves.
type client struct {
	key        clientKey
	owner      int64   // of key.src, when its association was seen
	prev, next *client // in a.pending, or a.ended when ended
	iface      name
	bssid      name
	assocAt    int64
	keyAt      int64    // keys done, or the port authorized
	eapAt      int64    // 802.1X success
	att        *attempt // while there is no outcome (never nil then)
	touched    int64    // when last seen (Assembler.since)
	associated bool     // an association started this attempt
	outcome    bool     // Success or Failure made: the attempt is over
	gone       bool     // disconnected
	ended      bool     // in a.ended, not a.pending
	failures   uint8    // the failure causes made this attempt (bit 1<<cause), each made once
}

// clientList is a list of clients, threaded through their prev and next.
type clientList struct{ front, back *client }

func (l *clientList) pushBack(c *client) {
	c.prev, c.next = l.back, nil
	if l.back != nil {
		l.back.next = c
	} else {
		l.front = c
	}
	l.back = c
}

// remove takes c out of l, which it must be in.
func (l *clientList) remove(c *client) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		l.front = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		l.back = c.prev
	}
	c.prev, c.next = nil, nil
}

// clientSlab makes clients in chunks, and keeps the forgotten ones for
// the next clients. A client lives for an hour while most of what the
// server allocates lives for a request: made one by one, clients would
// be spread over the heap's spans among the requests' objects, and keep
// every span they are in from going back to the system long after the
// requests' objects are gone. In chunks they are packed together. The
// chunks made stay, as many as the most clients tracked at once needed
// (MaxClients at most).
type clientSlab struct {
	free  *client  // forgotten clients, linked by next
	chunk []client // what is left of the last chunk made
}

const clientChunk = 128 // clients a chunk (about 13 KB)

func (s *clientSlab) get() *client {
	if c := s.free; c != nil {
		s.free, c.next = c.next, nil
		return c
	}
	if len(s.chunk) == 0 {
		s.chunk = make([]client, clientChunk)
	}
	c := &s.chunk[0]
	s.chunk = s.chunk[1:]
	return c
}

// put takes back a forgotten client, which nothing may use after.
func (s *clientSlab) put(c *client) {
	*c = client{next: s.free}
	s.free = c
}

// list is the list c is in.
func (a *Assembler) list(c *client) *clientList {
	if c.ended {
		return &a.ended
	}
	return &a.pending
}

// name is an interface name or a BSSID as a client keeps it: a handle of
// the one copy every client of an AP shares (an AP has a few of each),
// not a part of the line it came in, which would keep the whole line
// alive for as long as the client.
type name = unique.Handle[string]

var noName name

func intern(s string) name {
	if s == "" {
		return noName
	}
	return unique.Make(s)
}

func text(n name) string {
	if n == noName {
		return ""
	}
	return n.Value()
}

// cause is a failure an attempt can make: its index in failCauses, and
// its bit in client.failures.
type cause uint8

const (
	causeWrongPSK cause = iota
	causeRadiusRejected
	causeAssocRejected
	causeAPFull
	causeDHCPNak
	causeNoDHCPOffer
)

// failCauses are each cause's failure code and sub-code.
var failCauses = [...][2]int{
	causeWrongPSK:       {wnms.CategoryAuthentication, wnms.FailWrongPSK},
	causeRadiusRejected: {wnms.CategoryAuthentication, wnms.FailRadiusRejected},
	causeAssocRejected:  {wnms.CategoryAssociation, wnms.FailAssocRejected},
	causeAPFull:         {wnms.CategoryAssociation, wnms.FailAPFull},
	causeDHCPNak:        {wnms.CategoryNetwork, wnms.FailDHCPNak},
	causeNoDHCPOffer:    {wnms.CategoryNetwork, wnms.FailNoDHCPOffer},
}

// client.failures has a bit for each cause.
var _ [8 - len(failCauses)]struct{}

// attempt is what a connection attempt keeps until its outcome.
type attempt struct {
	assocWhole bool // the client's assocAt has whole seconds only
	auth       obsRef
	assocSeen  time.Time // when the association's line was received
	authSeen   time.Time // when auth's line was received
	keyTimeout obsRef    // the first EAPOL-Key timeout of the attempt
	dhcp       obsRef    // the first DHCP exchange of the attempt
	ackIP      string    // the address and host name of the attempt's DHCP ACK
	ackName    string
}

func (c *client) authAt() int64 {
	if c.keyAt != 0 {
		return c.keyAt
	}
	return c.eapAt
}

type batch struct {
	events []ClientEvent
	first  time.Time
}

type flush struct {
	src    netip.Addr
	events []ClientEvent
}

func (a *Assembler) init() {
	a.once.Do(func() {
		a.queue = make(chan flush, orDefault(a.QueueLen, DefaultQueueLen))
		a.clients = map[clientKey]*client{}
		a.latest = map[ownedMAC]sourceRef{}
		a.batches = map[netip.Addr]*batch{}
		a.stats.Lines = map[string]LineStats{}
		a.stats.Events = map[string]uint64{}
		a.epoch = a.now()
	})
}

// since is now as a client's touched: time since a.epoch, by the
// monotonic clock when now has one (time.Now's do), so that a step of the
// wall clock neither ends attempts nor forgets clients early.
func (a *Assembler) since(now time.Time) int64 {
	return int64(now.Sub(a.epoch))
}

func (a *Assembler) owner(src netip.Addr) int64 {
	if a.Owner != nil {
		return a.Owner(src)
	}
	return 0
}

func (a *Assembler) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func orDefault[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// Stats returns the assembler's counters, safe to call at any time.
func (a *Assembler) Stats() AssemblerStats {
	a.init()
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.stats
	s.Lines = make(map[string]LineStats, len(a.stats.Lines))
	for k, v := range a.stats.Lines {
		s.Lines[k] = v
	}
	s.Events = make(map[string]uint64, len(a.stats.Events))
	for k, v := range a.stats.Events {
		s.Events[k] = v
	}
	s.Clients = len(a.clients)
	return s
}

// Observe reads one message from source: a Handler for Receiver. Lines of
// hostapd, dnsmasq and dhcpd become observations of clients; other
// programs' messages are only counted. A batch it fills is queued for Run
// to emit, so the receive path never waits on the store unless QueueLen
// batches already wait: then it waits (TCP senders slow down, UDP
// datagrams queue in the kernel) until there is room or ctx ends (the
// batch is then lost, and counted).
func (a *Assembler) Observe(ctx context.Context, source netip.Addr, m Message) {
	a.init()
	program := ProgramOf(m.Program)
	var (
		o  Observation
		ok bool
	)
	if program != "" {
		o, ok = ParseLine(program, m.Text)
	}
	now := a.now()
	at := m.Time
	if skew := orDefault(a.MaxSkew, DefaultMaxSkew); at.IsZero() || at.Sub(now) > skew || now.Sub(at) > skew {
		at = now
	}
	a.mu.Lock()
	switch {
	case program == "":
		a.stats.OtherPrograms++
	case !ok:
		ls := a.stats.Lines[program]
		ls.Unparsed++
		a.stats.Lines[program] = ls
	default:
		ls := a.stats.Lines[program]
		ls.Parsed++
		a.stats.Lines[program] = ls
		// A line's own time in whole seconds (RFC 3164) cannot measure a
		// latency: the receive time does (see succeed).
		whole := m.WholeSeconds && at.Equal(m.Time)
		a.observe(obsRef{src: source, program: program, at: at.UnixMilli(), rx: now.UnixMilli(), whole: whole}, o, now)
	}
	ready := a.takeFull()
	a.mu.Unlock()
	for _, f := range ready {
		select {
		case a.queue <- f:
		case <-ctx.Done():
			a.lost(len(f.events))
		}
	}
}

// Tick ends the attempts pending longer than PendingTimeout, forgets the
// clients idle longer than StateTimeout, and emits the batches due, as of
// the clock's now. Run calls it; tests call it with their own clock.
func (a *Assembler) Tick(ctx context.Context) {
	a.init()
	now := a.now()
	a.mu.Lock()
	pendingTimeout := orDefault(a.PendingTimeout, DefaultPendingTimeout)
	for c := a.pending.front; c != nil; c = a.pending.front {
		if a.since(now)-c.touched < int64(pendingTimeout) {
			break
		}
		a.stats.Expired++
		a.endAttempt(c)
		a.touch(c, now)
	}
	stateTimeout := orDefault(a.StateTimeout, DefaultStateTimeout)
	for c := a.ended.front; c != nil; c = a.ended.front {
		if a.since(now)-c.touched < int64(stateTimeout) {
			break
		}
		a.forget(c)
	}
	interval := orDefault(a.FlushInterval, DefaultFlushInterval)
	var ready []flush
	for src, b := range a.batches {
		if now.Sub(b.first) >= interval {
			ready = append(ready, flush{src, b.events})
			a.buffered -= len(b.events)
			delete(a.batches, src)
		}
	}
	a.mu.Unlock()
	a.emit(ctx, ready)
}

// Flush emits every batch now, queued or not, whatever its size or age.
func (a *Assembler) Flush(ctx context.Context) {
	a.init()
	for drained := false; !drained; {
		select {
		case f := <-a.queue:
			a.emit(ctx, []flush{f})
		default:
			drained = true
		}
	}
	a.mu.Lock()
	ready := a.takeAll()
	a.mu.Unlock()
	a.emit(ctx, ready)
}

// Run emits the batches Observe queues (Emitters at once), and calls Tick
// every quarter of FlushInterval, until ctx ends; then it flushes what is left (with ctx's
// values but not its end) and returns. It must be running while messages
// are observed.
func (a *Assembler) Run(ctx context.Context) error {
	if a.Sink == nil {
		return errors.New("syslog: Assembler.Sink is nil")
	}
	a.init()
	// Full batches go to the emitters; this loop is one of them, and also
	// calls Tick. A batch taken is emitted whole even if ctx ends
	// meanwhile (as Flush emits what is left then).
	emitCtx := context.WithoutCancel(ctx)
	var wg sync.WaitGroup
	for range orDefault(a.Emitters, DefaultEmitters) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				select {
				case f := <-a.queue:
					a.emit(emitCtx, []flush{f})
				case <-ctx.Done():
				}
			}
		}()
	}
	t := time.NewTicker(max(orDefault(a.FlushInterval, DefaultFlushInterval)/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case f := <-a.queue:
			a.emit(emitCtx, []flush{f})
		case <-t.C:
			a.Tick(ctx)
		case <-ctx.Done():
			wg.Wait()
			a.Flush(context.WithoutCancel(ctx))
			return nil
		}
	}
}

func (a *Assembler) lost(n int) {
	a.mu.Lock()
	a.stats.EventsLost += uint64(n)
	a.mu.Unlock()
}

func (a *Assembler) emit(ctx context.Context, ready []flush) {
	for _, f := range ready {
		err := a.Sink.Emit(ctx, f.src, f.events)
		a.mu.Lock()
		a.stats.Batches++
		if err != nil {
			a.stats.EmitErrors++
			a.stats.EventsLost += uint64(len(f.events))
		}
		a.mu.Unlock()
	}
}

// takeFull takes the batches that are full, or all of them when more
// events wait than sixteen batches hold (many sources, each with a few).
func (a *Assembler) takeFull() []flush {
	size := orDefault(a.BatchSize, DefaultBatchSize)
	if a.buffered >= 16*size {
		return a.takeAll()
	}
	var ready []flush
	for src, b := range a.batches {
		if len(b.events) >= size {
			ready = append(ready, flush{src, b.events})
			a.buffered -= len(b.events)
			delete(a.batches, src)
		}
	}
	return ready
}

func (a *Assembler) takeAll() []flush {
	ready := make([]flush, 0, len(a.batches))
	for src, b := range a.batches {
		ready = append(ready, flush{src, b.events})
	}
	clear(a.batches)
	a.buffered = 0
	return ready
}

// add queues an event of client c (at its source).
func (a *Assembler) add(c *client, e ClientEvent) {
	if e.BSSID == "" {
		e.BSSID = text(c.bssid)
	}
	if e.Interface == "" {
		e.Interface = text(c.iface)
	}
	src := c.key.src.Value()
	b := a.batches[src]
	if b == nil {
		b = &batch{first: a.now()}
		a.batches[src] = b
	}
	b.events = append(b.events, e)
	a.buffered++
	a.stats.Events[e.EventType]++
}

// eventID names the event that kind made of the observation ref of mac:
// the same line, received twice, makes the same eventId, which ingest
// counts as a duplicate.
func eventID(ref obsRef, mac, kind string) string {
	h := sha256.New()
	h.Write([]byte(ref.src.String() + "|" + ref.program + "|" + strconv.FormatInt(ref.at, 10) + "|" + mac + "|" + kind))
	return "syslog-" + hex.EncodeToString(h.Sum(nil)[:16])
}

func newEvent(ref obsRef, mac, eventType, kind string) ClientEvent {
	return ClientEvent{EventID: eventID(ref, mac, kind), MacAddress: mac, EventType: eventType, Timestamp: ref.at}
}

func intermediate(ref obsRef, mac string, category, typ, sub int, kind string) ClientEvent {
	e := newEvent(ref, mac, wnms.Intermediate, kind)
	e.CategoryCode, e.TypeCode, e.SubTypeCode = category, typ, sub
	return e
}

// fail makes the Failure of cause of c's attempt from ref, once an
// attempt.
func (a *Assembler) fail(c *client, ref obsRef, why cause) {
	if c.failures&(1<<why) != 0 {
		return
	}
	c.failures |= 1 << why
	code, sub := failCauses[why][0], failCauses[why][1]
	e := newEvent(ref, wnms.MACText(c.key.mac), wnms.Failure, "failure_"+strconv.Itoa(code)+"_"+strconv.Itoa(sub))
	e.FailureCode, e.SubFailureCode = code, sub
	if c.associated {
		e.AssociationTimestamp = c.assocAt
	}
	e.AuthenticationTimestamp = c.authAt()
	a.add(c, e)
}

// succeed makes the Success of c's attempt, with DHCP done at ack (or
// none when ack is the zero obsRef).
func (a *Assembler) succeed(c *client, ack obsRef) {
	auth := c.authAt()
	if auth == 0 {
		// An open network whose hostapd logs no port authorization:
		// authenticated when associated.
		auth = c.assocAt
	}
	var e ClientEvent
	at := c.att
	if ack.program != "" {
		e = newEvent(ack, wnms.MACText(c.key.mac), wnms.Success, "success")
		e.NetworkTimestamp = ack.at
		latency := max(0, ack.at-auth)
		// With whole seconds at either end (RFC 3164), the lines' own
		// times would give whole seconds: wnms's receive times measure it
		// to the millisecond instead.
		authRx, authWhole := at.auth.rx, at.auth.whole
		if c.authAt() == 0 {
			authRx, authWhole = at.assocSeen.UnixMilli(), at.assocWhole
		}
		if ack.whole || authWhole {
			latency = max(0, ack.rx-authRx)
		}
		e.DHCPLatency = &latency
		if at.ackIP != "" {
			ip := at.ackIP
			e.IP = &ip
		}
		e.HostName, e.ClientName = at.ackName, at.ackName
	} else {
		e = newEvent(at.auth, wnms.MACText(c.key.mac), wnms.Success, "success_without_dhcp")
	}
	e.AssociationTimestamp, e.AuthenticationTimestamp = c.assocAt, auth
	e.AssocSeen, e.AuthSeen = at.assocSeen, at.authSeen
	if e.AuthSeen.IsZero() {
		e.AuthSeen = at.assocSeen
	}
	a.add(c, e)
	c.outcome = true
}

// endAttempt makes the outcome of an attempt that ends (by a
// disconnection, a new association or PendingTimeout) without one: keys
// timed out and never done is a wrong PSK; authenticated with DHCP
// exchanges but no ACK is no offer; authenticated with no DHCP line seen is
// a Success without DHCP (a client with a static address or a lease it
// keeps, or a DHCP server that does not log to us).
func (a *Assembler) endAttempt(c *client) {
	if c.outcome || !c.associated {
		c.outcome = true
		return
	}
	switch {
	case c.authAt() == 0 && c.att.keyTimeout.program != "":
		a.fail(c, c.att.keyTimeout, causeWrongPSK)
	case c.authAt() != 0 && c.att.dhcp.program != "":
		a.fail(c, c.att.dhcp, causeNoDHCPOffer)
	case c.authAt() != 0:
		a.succeed(c, obsRef{})
	}
	c.outcome = true
}

// get returns the client (src, mac), or with create a new one.
func (a *Assembler) get(src sourceRef, mac uint64, create bool, now time.Time) *client {
	k := clientKey{src, mac}
	if c := a.clients[k]; c != nil {
		return c
	}
	if !create {
		return nil
	}
	if len(a.clients) >= orDefault(a.MaxClients, DefaultMaxClients) {
		oldest := a.ended.front
		if oldest == nil {
			oldest = a.pending.front
		}
		a.forget(oldest)
		a.stats.Evicted++
	}
	c := a.slab.get()
	*c = client{key: k, owner: a.owner(src.Value()), touched: a.since(now)}
	a.pending.pushBack(c)
	a.clients[k] = c
	return c
}

func (a *Assembler) forget(c *client) {
	a.list(c).remove(c)
	delete(a.clients, c.key)
	if k := (ownedMAC{c.owner, c.key.mac}); a.latest[k] == c.key.src {
		delete(a.latest, k)
	}
	a.slab.put(c)
}

// touch marks c seen at now: it goes to the back of the pending list, or
// of the ended one once its attempt has an outcome (and drops the
// attempt's state), so that each list is in order of touch.
func (a *Assembler) touch(c *client, now time.Time) {
	c.touched = a.since(now)
	a.list(c).remove(c)
	if c.ended = c.outcome; c.ended {
		c.att = nil
	}
	a.list(c).pushBack(c)
}

// observe applies one observation. The caller holds a.mu.
func (a *Assembler) observe(ref obsRef, o Observation, now time.Time) {
	mac, ok := wnms.MACBits(o.MAC)
	if !ok {
		return // not a parser's (they give the stored form)
	}
	src := unique.Make(ref.src)
	var c *client
	switch o.Kind {
	case DHCPExchange, DHCPAck, DHCPNak, DHCPNoLease:
		// The DHCP server is often another box than the AP: a client's
		// DHCP lines belong to its latest association at any source of
		// the same owner.
		c = a.get(src, mac, false, now)
		if c == nil || !c.associated {
			if at, ok := a.latest[ownedMAC{a.owner(ref.src), mac}]; ok && at != src {
				c = cmp.Or(a.get(at, mac, false, now), c)
			}
		}
		if c == nil {
			c = a.get(src, mac, true, now)
			c.outcome, c.iface = true, intern(o.Interface)
		}
	case PortStart:
		// A wired port's start is its association; on Wi-Fi the line
		// follows the association (or renews keys) and changes nothing.
		if c = a.get(src, mac, false, now); c != nil && c.associated {
			return
		}
		fallthrough
	case Associated:
		c = a.get(src, mac, true, now)
		if c.associated && !c.outcome {
			a.endAttempt(c)
		}
		if k := (ownedMAC{c.owner, mac}); a.latest[k] == src {
			delete(a.latest, k) // the owner may have changed since
		}
		*c = client{key: c.key, owner: a.owner(ref.src), prev: c.prev, next: c.next, ended: c.ended, associated: true, assocAt: ref.at,
			att: &attempt{assocWhole: ref.whole, assocSeen: now}, iface: intern(o.Interface), bssid: intern(o.BSSID)}
		a.latest[ownedMAC{c.owner, c.key.mac}] = src
		a.add(c, intermediate(ref, o.MAC, wnms.CategoryAssociation, wnms.TypeAssociated, 0, "associated"))
		a.touch(c, now)
		return
	default:
		c = a.get(src, mac, false, now)
		if c == nil {
			if o.Kind == Authorized || o.Kind == KeyHandshake || o.Kind == EAPSuccess || o.Kind == KeyTimeout {
				// Keys renewed, or an attempt whose association was not
				// seen: nothing to make of it.
				return
			}
			c = a.get(src, mac, true, now)
			c.outcome, c.iface = true, intern(o.Interface)
		}
	}
	if c.bssid == noName {
		c.bssid = intern(o.BSSID)
	}
	switch o.Kind {
	case Authorized, KeyHandshake:
		if !c.outcome && c.keyAt == 0 {
			c.keyAt, c.att.auth, c.att.authSeen = ref.at, ref, now
		}
	case EAPSuccess:
		if !c.outcome && c.eapAt == 0 {
			c.eapAt = ref.at
			if c.keyAt == 0 {
				c.att.auth, c.att.authSeen = ref, now
			}
		}
	case KeyTimeout:
		if !c.outcome && c.att.keyTimeout.program == "" {
			c.att.keyTimeout = ref
		}
	case PSKMismatch:
		a.fail(c, ref, causeWrongPSK)
		c.outcome = true
	case EAPFailure:
		a.fail(c, ref, causeRadiusRejected)
		c.outcome = true
	case AssocRejected:
		a.fail(c, ref, causeAssocRejected)
		c.outcome = true
	case APFull:
		a.fail(c, ref, causeAPFull)
		c.outcome = true
	case Disconnected:
		if c.gone {
			break // hostapd's second line of the same disconnection
		}
		a.endAttempt(c)
		c.gone = true
		a.add(c, intermediate(ref, o.MAC, wnms.CategoryAssociation, wnms.TypeDisassociated, o.Reason, "disconnected"))
	case DHCPExchange:
		if !c.outcome && c.att.dhcp.program == "" {
			c.att.dhcp = ref
		}
	case DHCPAck:
		ip := o.IP.String()
		e := intermediate(ref, o.MAC, wnms.CategoryNetwork, wnms.TypeDHCPLease, 0, "dhcp_ack")
		e.IP = &ip
		if c.iface == noName {
			e.Interface = o.Interface
		}
		a.add(c, e)
		if !c.outcome && c.associated {
			c.att.ackIP, c.att.ackName = strings.Clone(ip), strings.Clone(o.HostName)
			a.succeed(c, ref)
		}
	case DHCPNak:
		a.fail(c, ref, causeDHCPNak)
	case DHCPNoLease:
		a.fail(c, ref, causeNoDHCPOffer)
		c.outcome = true
	}
	a.touch(c, now)
}
