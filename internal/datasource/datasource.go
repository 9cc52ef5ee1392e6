// Package datasource connects wnms's RADIUS and syslog listeners to the
// rest of the server: it keeps every customer's data source
// configuration (GET|PUT /V5/datasources) in force on the listeners,
// tells them which addresses may send, and places what they observe at
// the customer's APs before it goes through the ingest write path, with
// the same validation, bulk writes, client state, baselines and
// anomalies as POST /V5/ingest/*.
//
// A record is placed at an AP of the source's customer: the AP with a
// radio of the record's BSSID; else the AP named as the RADIUS
// NAS-Identifier; else the AP whose address is the NAS-IP-Address or the
// syslog line's source. The radio gives the channel (neither RADIUS nor
// syslog tells it) and, when the record names none, the BSSID: the radio
// of the record's SSID, else the AP's first. The AP must lie at or below
// the source's location. A record no AP of the customer matches (or whose
// AP has no radio) is placed at the source's location, with the BSSID it
// names (or none) and no radio: its channel and band are not known (the
// ingest takes channel 0 for that, and the reads answer null), so band
// filters leave it out and it counts in the baselines of any band (the
// location's totals) only. Such records are counted apart
// (wnms_datasource_unmatched_total): register the APs (POST
// /V5/ingest/aps with their radios and ipAddress) to place them.
package datasource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wnms/wnms/internal/every"
	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/radius"
	"github.com/wnms/wnms/internal/rounds"
	"github.com/wnms/wnms/internal/syslog"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// Store is what the bridge reads.
type Store interface {
	AllDataSources(ctx context.Context) (map[int64]*wnms.DataSources, error)
	APsForSources(ctx context.Context, customerID int64, bssids, names, ips []string) ([]wnms.SourceAP, error)
	LocationPaths(ctx context.Context, ids []int64) (map[int64]string, error)
}

// Ingester is the ingest write path for data sources
// (telemetry.Service.IngestSourceEvents and IngestSourceSamples): a
// record at no known AP is placed at location at.
type Ingester interface {
	IngestSourceEvents(ctx context.Context, c *wnms.Caller, recs []wnms.EventRecord, at int64) (*telemetry.Result, error)
	IngestSourceSamples(ctx context.Context, c *wnms.Caller, recs []wnms.SampleRecord, at int64) (*telemetry.Result, error)
}

// Heartbeater records that APs were heard from
// (telemetry.Service.HeartbeatAPs).
type Heartbeater interface {
	HeartbeatAPs(ctx context.Context, customerID int64, boxIDs []int64) error
}

// DefaultHeartbeatEvery is how often at most one AP's heartbeat is
// written for the records attributed to it.
const DefaultHeartbeatEvery = 5 * time.Second

// Bridge holds the configuration in force and is the Sink of both
// listeners.
type Bridge struct {
	Store    Store
	Ingest   Ingester
	Radius   *radius.Settings // the listeners' settings, swapped on Reload
	Log      *slog.Logger
	Registry *metrics.Registry // optional: records by source and outcome
	// Held keeps the held RADIUS accepts across restarts (nil: in memory
	// only); ServerID is this server's --server-id, whose rows it takes
	// back when it starts. Hold is how long an accept waits for its
	// syslog Success (0: AcceptHold).
	Held     HeldStore
	ServerID int64
	Hold     time.Duration

	// Heartbeat, if set, is told of the APs each stored record was placed
	// at: traffic attributed to an AP is its heartbeat (decisions §21), at
	// most one write per AP per HeartbeatEvery (DefaultHeartbeatEvery if
	// 0; keep it well under the AP timeout).
	Heartbeat      Heartbeater
	HeartbeatEvery time.Duration
	// Health follows the RADIUS upstreams' answers (given to the proxy
	// and the accounting server too), for Status; RadiusOn and SyslogOn
	// say which listeners this server runs.
	Health             *radius.Health
	RadiusOn, SyslogOn bool

	table     atomic.Pointer[table]
	records   *metrics.CounterVec
	unmatched *metrics.CounterVec
	once      sync.Once
	mu        sync.Mutex // serializes Reload
	problems  string     // what the last Reload could not put in force, as logged (mu)

	// accepts holds the RADIUS Successes of sources that also send
	// syslog, until the syslog Success of the same connection takes
	// their AAA fields (see Emit); held.go keeps them in the store.
	accepts accepts
	// persisting serializes persistHeld; wake tells it of new accepts.
	persisting sync.Mutex
	wake       chan struct{}
	// events are the RADIUS accept events persistHeld queued;
	// eventsWake tells eventsOnWake of them.
	events     acceptEvents
	eventsWake chan struct{}

	groupsMu sync.Mutex
	groups   map[string]*rounds.Queue[[]radius.Observation] // by source and kind: see emitGrouped

	beatsMu sync.Mutex
	beats   map[int64]time.Time // AP boxId → when its last heartbeat was written

	heardMu sync.Mutex
	heard   map[heardAt]struct{} // where held accepts were seen since the last release

	statsMu     sync.Mutex
	sourceStats map[string]*sourceStats // by "customer/name": see Status
	upstreams   map[int64][][2]string   // each customer's upstreams in force, kind and address (mu)
}

// maxRound bounds the records one ingest of a group takes.
const maxRound = 10_000

// entry is one configured source.
type entry struct {
	customer int64
	src      wnms.DataSource
	prefix   netip.Prefix
}

// table is the configuration in force, longest prefix first.
type table struct {
	entries []entry
	byName  map[string]*entry // "customer/name"
}

func (t *table) lookup(a netip.Addr) (*entry, bool) {
	a = a.Unmap()
	for i := range t.entries {
		if t.entries[i].prefix.Contains(a) {
			return &t.entries[i], true
		}
	}
	return nil, false
}

// Outcomes of a record, as /metrics counts them.
const (
	OutcomeAccepted  = "accepted"
	OutcomeDuplicate = "duplicate"
	OutcomeRejected  = "rejected" // refused by ingest (a bad field, an AP outside the source's location)
	OutcomeUnplaced  = "unplaced" // no source to place it at (removed meanwhile, or not a syslog source)
	OutcomeDropped   = "dropped"  // a held RADIUS Success let go past every cap between two releases
	// OutcomeUnmatched counts, in a source's status only, its records no
	// AP matched (each also counted by one of the outcomes above).
	OutcomeUnmatched = "unmatched"
)

func (b *Bridge) init() {
	b.once.Do(func() {
		if b.Log == nil {
			b.Log = slog.New(slog.DiscardHandler)
		}
		if b.Registry == nil {
			b.Registry = metrics.NewRegistry()
		}
		b.records = b.Registry.Counter("wnms_datasource_records_total",
			"Client events and samples from the RADIUS and syslog listeners, by source and outcome.", "source", "kind", "outcome")
		b.unmatched = b.Registry.Counter("wnms_datasource_unmatched_total",
			"Records from the RADIUS and syslog listeners that no known AP matched, placed at their source's location.", "source", "kind")
		b.Registry.GaugeFunc("wnms_datasource_held_accepts",
			"RADIUS Successes waiting for the syslog Success of their connection.", func() float64 { return float64(b.accepts.held()) })
		if b.table.Load() == nil {
			b.table.Store(&table{byName: map[string]*entry{}})
		}
		b.wake = make(chan struct{}, 1)
		b.eventsWake = make(chan struct{}, 1)
	})
}

// Reload reads every customer's configuration and puts it in force, each
// customer's on its own: one that cannot be put in force (see compile),
// or an upstream whose name does not resolve now (kept down, its
// requests failing over), is logged and leaves the others in force.
func (b *Bridge) Reload(ctx context.Context) error {
	b.init()
	b.mu.Lock()
	defer b.mu.Unlock()
	all, err := b.Store.AllDataSources(ctx)
	if err != nil {
		return err
	}
	t, groups, problems := compile(all)
	if b.Radius != nil {
		if err := b.Radius.SetGroups(groups); err != nil {
			problems = append(problems, err)
		}
	}
	b.table.Store(t)
	b.forgetStats(t)
	b.upstreams = map[int64][][2]string{}
	for customer, d := range all {
		for _, u := range d.Radius.Upstreams {
			b.upstreams[customer] = append(b.upstreams[customer], [2]string{radius.UpstreamAuth, u.Address})
		}
		for _, u := range d.Radius.AccountingUpstreams {
			b.upstreams[customer] = append(b.upstreams[customer], [2]string{radius.UpstreamAccounting, u.Address})
		}
	}
	// Said when they change, not at every reload.
	if text := errors.Join(problems...); text == nil && b.problems != "" {
		b.problems = ""
		b.Log.Info("data sources: every customer's configuration is in force")
	} else if text != nil && text.Error() != b.problems {
		b.problems = text.Error()
		b.Log.Error("data sources: in force, each customer's on its own, with problems", "err", text)
	}
	return nil
}

// Run reloads every interval until ctx ends, so a replica takes the
// configuration another stored; takes back the held RADIUS accepts a
// stopped server left in the store; writes each new held accept to the
// store, with its Intermediate "RADIUS accept" event, as soon as it
// can; and stores the held Successes whose syslog Success did
// not come. It returns once all of that has stopped; Flush then writes
// what is left.
func (b *Bridge) Run(ctx context.Context, period time.Duration) {
	b.init()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); b.persistOnWake(ctx) }()
	go func() { defer wg.Done(); b.eventsOnWake(ctx) }()
	for _, w := range []struct {
		period time.Duration
		f      func(context.Context)
	}{
		{time.Second, b.persistHeld}, // what a failed write left
		{time.Second, b.releaseHeld},
		{sweepEvery, func(ctx context.Context) { b.recoverHeld(ctx, false) }},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each round finishes once begun: a stop must not cut a write
			// of accepts already taken out of memory.
			every.Period(ctx, w.period, func(ctx context.Context) {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
				defer cancel()
				w.f(rctx)
			})
		}()
	}
	b.recoverHeld(ctx, true)
	every.Period(ctx, period, func(ctx context.Context) {
		if err := b.Reload(ctx); err != nil && ctx.Err() == nil {
			b.Log.Error("data sources: reload failed", "err", err)
		}
	})
	wg.Wait()
}

// Check reports whether customer's configuration d can be put in force:
// d on its own (its upstreams resolve now to addresses an upstream may
// have, see radius.Settings.Check), and no source of d whose prefix
// overlaps, either way, a source of another customer (CONFLICT, naming
// neither). Other customers' configurations are not compiled: one of them
// that cannot be put in force is no concern of this customer's. Error
// texts hold no secret.
func (b *Bridge) Check(ctx context.Context, customer int64, d *wnms.DataSources) error {
	_, cfg, err := compileOne(customer, d)
	if err != nil {
		return wnms.Invalid("sources", "%s", err)
	}
	rs := b.Radius
	if rs == nil {
		rs = &radius.Settings{}
	}
	if err := rs.Check(cfg); err != nil {
		field := "sources"
		msg := err.Error()
		if i := strings.IndexByte(msg, ' '); i > 0 && (strings.HasPrefix(msg, "upstreams[") || strings.HasPrefix(msg, "accountingUpstreams[")) {
			field = "radius." + msg[:i] + ".address"
		}
		return wnms.Invalid(field, "%s", err)
	}
	all, err := b.Store.AllDataSources(ctx)
	if err != nil {
		return err
	}
	all[customer] = d
	mine := map[string]bool{}
	for _, o := range crossCustomerOverlaps(all) {
		for _, side := range o {
			if side.customer == customer {
				mine[side.name] = true
			}
		}
	}
	for i, src := range d.Sources {
		if mine[src.Name] {
			// Naming neither the other customer nor its source.
			field := fmt.Sprintf("sources[%d].cidr", i)
			return &wnms.Error{Code: wnms.Conflict, Message: fmt.Sprintf("%s: %s overlaps a source of another customer", field, src.Prefix()),
				MoreInfo: field}
		}
	}
	return nil
}

// compile compiles every customer's configuration, each on its own, in
// the order of their ids: a customer whose configuration cannot be put
// in force (a bad field, or a source whose prefix overlaps, either way, a
// source of a customer of a lower id put in force: stored before such
// overlaps were refused) is left out, and its problem returned; the
// others are not touched by it.
func compile(all map[int64]*wnms.DataSources) (*table, map[int64]radius.Config, []error) {
	t := &table{byName: map[string]*entry{}}
	groups := map[int64]radius.Config{}
	customers := make([]int64, 0, len(all))
	for c := range all {
		customers = append(customers, c)
	}
	slices.Sort(customers)
	// Each customer's sources that overlap another's, with that other.
	against := map[int64][]overlapSide{}
	for _, o := range crossCustomerOverlaps(all) {
		against[o[0].customer] = append(against[o[0].customer], overlapSide{customer: o[1].customer, name: o[0].name, prefix: o[0].prefix})
		against[o[1].customer] = append(against[o[1].customer], overlapSide{customer: o[0].customer, name: o[1].name, prefix: o[1].prefix})
	}
	in := map[int64]bool{}
	var problems []error
next:
	for _, customer := range customers {
		es, cfg, err := compileOne(customer, all[customer])
		if err != nil {
			problems = append(problems, fmt.Errorf("customer %d: %w", customer, err))
			continue
		}
		for _, x := range against[customer] {
			if in[x.customer] {
				problems = append(problems, fmt.Errorf("customer %d: source %q: cidr %s overlaps another customer's source", customer, x.name, x.prefix))
				continue next
			}
		}
		in[customer] = true
		t.entries = append(t.entries, es...)
		groups[customer] = cfg
	}
	// Longest prefix first: inside a customer, whose prefixes may nest,
	// the most specific source holds an address.
	sort.SliceStable(t.entries, func(i, j int) bool {
		if a, b := t.entries[i].prefix.Bits(), t.entries[j].prefix.Bits(); a != b {
			return a > b
		}
		return t.entries[i].customer < t.entries[j].customer
	})
	for i := range t.entries {
		e := &t.entries[i]
		t.byName[key(e.customer, e.src.Name)] = e
	}
	return t, groups, problems
}

// compileOne compiles one customer's configuration: its sources, and its
// RADIUS configuration (not checked here: see radius.Settings).
func compileOne(customer int64, d *wnms.DataSources) ([]entry, radius.Config, error) {
	cfg := radius.Config{Upstreams: upstreams(d.Radius.Upstreams), AccountingUpstreams: upstreams(d.Radius.AccountingUpstreams)}
	var es []entry
	for _, src := range d.Sources {
		p := src.Prefix()
		if !p.IsValid() {
			return nil, radius.Config{}, fmt.Errorf("source %q: cidr %q is not a prefix", src.Name, src.CIDR)
		}
		es = append(es, entry{customer: customer, src: src, prefix: p})
		if src.RadiusSecret != "" {
			cfg.Sources = append(cfg.Sources, radius.SourceConfig{Name: src.Name, CIDR: p, RadiusSecret: src.RadiusSecret,
				MessageAuthenticatorOptional: !src.RequiresMessageAuthenticator()})
		}
	}
	return es, cfg, nil
}

// overlapSide is one source of a pair that overlaps across customers:
// its customer, name and prefix.
type overlapSide struct {
	customer int64
	name     string
	prefix   netip.Prefix
}

// crossCustomerOverlaps returns the pairs of sources of two customers
// whose prefixes overlap: one holds the other (or they are the same;
// IPv4-mapped IPv6 prefixes count as IPv4, as Prefix reads them). Two
// prefixes overlap only by nesting, so a sweep in address order with the
// stack of prefixes that hold the current one finds every pair: O(n log n)
// for n sources, plus the stack's depth (at most 129 for distinct
// prefixes) for each.
func crossCustomerOverlaps(all map[int64]*wnms.DataSources) [][2]overlapSide {
	n := 0
	for _, d := range all {
		n += len(d.Sources)
	}
	items := make([]overlapSide, 0, n)
	for customer, d := range all {
		for _, src := range d.Sources {
			if p := src.Prefix(); p.IsValid() {
				items = append(items, overlapSide{customer, src.Name, p})
			}
		}
	}
	// By first address (IPv4 before IPv6), the shorter of two prefixes
	// starting there first: so each comes after every prefix holding it.
	slices.SortFunc(items, func(x, y overlapSide) int {
		if c := x.prefix.Addr().Compare(y.prefix.Addr()); c != 0 {
			return c
		}
		return x.prefix.Bits() - y.prefix.Bits()
	})
	var out [][2]overlapSide
	var stack []overlapSide
	for _, x := range items {
		for len(stack) > 0 && !stack[len(stack)-1].prefix.Overlaps(x.prefix) {
			stack = stack[:len(stack)-1]
		}
		for _, y := range stack {
			if y.customer != x.customer {
				out = append(out, [2]overlapSide{y, x})
			}
		}
		stack = append(stack, x)
	}
	return out
}

func upstreams(us []wnms.RadiusUpstream) []radius.Upstream {
	out := make([]radius.Upstream, len(us))
	for i, u := range us {
		out[i] = radius.Upstream{Address: u.Address, Secret: u.Secret, TimeoutMs: u.TimeoutMs}
	}
	return out
}

func key(customer int64, name string) string { return strconv.FormatInt(customer, 10) + "/" + name }

// AcceptSyslog reports whether syslog lines from a are taken: a source
// with syslog true holds it.
func (b *Bridge) AcceptSyslog(a netip.Addr) bool {
	b.init()
	e, ok := b.table.Load().lookup(a)
	return ok && e.src.Syslog
}

// SyslogOwner is the customer whose source holds a (-1 for none): the
// syslog assembler's Owner, so that a DHCP line joins only clients of its
// source's customer.
func (b *Bridge) SyslogOwner(a netip.Addr) int64 {
	b.init()
	if e, ok := b.table.Load().lookup(a); ok {
		return e.customer
	}
	return -1
}

// Emit is the RADIUS listeners' Sink.
//
// One connection seen by both listeners (an AP that authenticates
// through wnms and logs to it) makes one Success: the RADIUS Success of a
// source that also sends syslog waits up to AcceptHold for the syslog
// Success of the same client, which then carries its aaaLatency and
// radiusPrimaryIP beside its own dhcpLatency; when none comes in time it
// is stored as it is. The merged Success keeps the accept's username
// (the accepted request's User-Name) and, when no DHCP ACK gave one, its
// Framed-IP-Address.
func (b *Bridge) Emit(ctx context.Context, src radius.Source, obs []radius.Observation) error {
	b.init()
	kind := telemetry.KindEvents
	if len(obs) > 0 && obs[0].Sample != nil {
		kind = telemetry.KindStats
	}
	e, ok := b.table.Load().byName[key(src.Group, src.Name)]
	if !ok {
		// Removed since the packet arrived: nothing to place it at.
		b.records.With("radius", kind, OutcomeUnplaced).Add(uint64(len(obs)))
		return nil
	}
	b.heardFrom(e, time.Now())
	recs := make([]radius.Observation, 0, len(obs))
	for _, o := range obs {
		if o.Event != nil && b.holdAccept(e, o, nil) {
			continue
		}
		recs = append(recs, o)
	}
	if len(recs) == 0 {
		return nil
	}
	return b.emitGrouped(ctx, kind, e, recs)
}

// HoldSuccess takes a RADIUS Success of a source that also sends syslog,
// to wait for the syslog Success of its connection (see Emit), and says
// whether it did. The proxy calls it before it passes the Access-Accept
// to the NAS, instead of queueing the Success: so the accept is held
// before the NAS completes the connection, whatever the store is doing.
// It never waits on the store; stored is told once the accept's row is
// written (see persistHeld), or that it will not be.
func (b *Bridge) HoldSuccess(src radius.Source, o radius.Observation, stored chan<- bool) bool {
	b.init()
	e, ok := b.table.Load().byName[key(src.Group, src.Name)]
	if ok {
		b.heardFrom(e, time.Now())
	}
	return ok && e.src.Syslog && o.Event != nil && b.holdAccept(e, o, stored)
}

// holdAccept holds o, a client event of source e, when it is a RADIUS
// Success that should wait for its syslog Success, and says whether it
// did; stored (nil, or room for one) is told whether its row is written.
func (b *Bridge) holdAccept(e *entry, o radius.Observation, stored chan<- bool) bool {
	if !e.src.Syslog || wnms.Str(o.Event.EventType) != wnms.Success {
		return false
	}
	b.accepts.holdOrLetGo(e, o, time.Now(), b.ServerID, stored)
	b.heardAccept(e, o)
	select {
	case b.wake <- struct{}{}:
	default: // persistHeld is told already
	}
	return true
}

// emitGrouped stores recs with the records of the other Emit calls of
// the same source and kind that wait meanwhile, in one ingest (one
// transaction), and returns once they are committed. The accounting
// server answers each packet only after its record is committed, so
// packets from many NASes share commits instead of each waiting for its
// own: the calls that arrive while an ingest runs wait, and the next
// takes them all (in ingests of at most maxRound records).
func (b *Bridge) emitGrouped(ctx context.Context, kind string, e *entry, recs []radius.Observation) error {
	k := key(e.customer, e.src.Name) + "/" + kind
	b.groupsMu.Lock()
	if b.groups == nil {
		b.groups = map[string]*rounds.Queue[[]radius.Observation]{}
	}
	q, ok := b.groups[k]
	if !ok {
		q = &rounds.Queue[[]radius.Observation]{}
		b.groups[k] = q
	}
	b.groupsMu.Unlock()
	// The round runs to its end even if this caller's context ends: the
	// others wait on it.
	rctx := context.WithoutCancel(ctx)
	return q.Do(ctx, recs, func(round []*rounds.Item[[]radius.Observation]) {
		for len(round) > 0 {
			n, end := 0, 0
			for end < len(round) && (end == 0 || n+len(round[end].V) <= maxRound) {
				n += len(round[end].V)
				end++
			}
			all := make([]radius.Observation, 0, n)
			ids := map[string]bool{}
			for _, it := range round[:end] {
				for _, r := range it.V {
					// A NAS's retransmission may share the round with its
					// first try: the same record once.
					if id := eventID(r); id != "" {
						if ids[id] {
							continue
						}
						ids[id] = true
					}
					all = append(all, r)
				}
			}
			err := b.place(rctx, "radius", kind, e, netip.Addr{}, all)
			for _, it := range round[:end] {
				it.Answer(err)
			}
			round = round[end:]
		}
	})
}

// AcceptHold is how long a RADIUS Success waits for the syslog Success
// of its connection by default: longer than the syslog assembler takes
// to give up on a DHCP line (a minute).
const AcceptHold = 90 * time.Second

// hold is how long an accept waits for its syslog Success.
func (b *Bridge) hold() time.Duration {
	if b.Hold > 0 {
		return b.Hold
	}
	return AcceptHold
}

// maxHeld bounds the RADIUS Successes held at once; past it the oldest
// is stored as it is.
const maxHeld = 1 << 16

// maxHeldPerClient bounds the held accepts of one client: one that
// authenticates again and again with no syslog Success lets its oldest go.
const maxHeldPerClient = 4

// acceptSlack is how long after wnms received a connection's
// authentication line its RADIUS accept may have been had by the proxy
// and still be that connection's: the NAS completes and logs the key
// handshake once it has the accept, so the accept comes first; slack
// covers clocks read on different goroutines. A client's next connection
// needs a new EAP exchange (tens to hundreds of milliseconds) before its
// accept.
const acceptSlack = 250 * time.Millisecond

// acceptLookback is how long before wnms received a connection's
// association line its accept may have been had and still be that
// connection's. The accept comes after the association (802.1X starts
// then; a RADIUS MAC check just before it), but the line may be received
// late: when the store falls behind, the syslog receiver stops reading
// and lines wait in the kernel. Older accepts belong to earlier attempts
// (one whose handshake failed, a reauthentication) and are not taken by a
// connection that skipped RADIUS (a cached key, a fast roam).
const acceptLookback = 5 * time.Second

// heldAccept is a RADIUS Success waiting for its syslog Success.
type heldAccept struct {
	e      *entry
	rec    radius.Observation // the Success
	at     time.Time          // when it was held
	sent   time.Time          // when the proxy had the accept (its authenticationTimestamp)
	key    string
	id     string // the Success's eventId, the key of its row in the store
	server int64  // the server whose row it is
	gone   bool   // taken or let go since; order may still name it
}

// accepts are the held RADIUS Successes by customer and client, oldest
// first, at most maxHeldPerClient a client and maxHeld in all.
type accepts struct {
	mu      sync.Mutex
	byKey   map[string][]*heldAccept
	n       int           // held
	order   []*heldAccept // in holding order, gone ones too
	due     []heldAccept  // let go by hold, to be stored alone (at most maxHeld)
	dropped uint64        // let go past that, not stored
	fresh   []freshAccept // held since the last persistHeld (at most maxHeld)
	lost    uint64        // fresh ones past that, never written
}

// holdOrLetGo holds rec, an accept server had; one it lets go to stay
// under the caps is stored alone by the next release (the caller must
// not wait on the store). Each accept is also queued for persistHeld,
// which writes it and its Intermediate event.
func (a *accepts) holdOrLetGo(e *entry, rec radius.Observation, now time.Time, server int64, stored chan<- bool) {
	f := newFresh(e, rec, now, server)
	f.stored = stored
	a.mu.Lock()
	defer a.mu.Unlock()
	var out *heldAccept
	f.h, out = a.holdLocked(e, rec, now)
	f.h.server = server
	if len(a.fresh) >= maxHeld {
		a.lost++
		f.tell(false)
	} else {
		a.fresh = append(a.fresh, f)
	}
	if out == nil {
		return
	}
	if len(a.due) >= maxHeld {
		a.dropped++
		return
	}
	a.due = append(a.due, *out)
}

func (a *accepts) key(e *entry, mac string) string { return key(e.customer, mac) }

// hold keeps rec and returns one it had to let go: the client's oldest
// when it has maxHeldPerClient, else the oldest of all when maxHeld are
// held.
func (a *accepts) hold(e *entry, rec radius.Observation, now time.Time) *heldAccept {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, out := a.holdLocked(e, rec, now)
	return out
}

// holdLocked is hold with a.mu held; it also returns the accept held.
func (a *accepts) holdLocked(e *entry, rec radius.Observation, now time.Time) (held, out *heldAccept) {
	mac := wnms.Str(rec.Event.MacAddress)
	if a.byKey == nil {
		a.byKey = map[string][]*heldAccept{}
	}
	k := a.key(e, mac)
	if l := a.byKey[k]; len(l) >= maxHeldPerClient {
		out = a.remove(l[0])
	} else if a.n >= maxHeld {
		out = a.popOldest()
	}
	h := &heldAccept{e: e, rec: rec, at: now, sent: sentAt(rec, now), key: k, id: wnms.Str(rec.Event.EventID)}
	a.byKey[k] = append(a.byKey[k], h)
	a.n++
	a.order = append(a.order, h)
	return h, out
}

// remove lets h go and returns what it held (a.mu held). h itself keeps
// nothing, as order may name it a while longer.
func (a *accepts) remove(h *heldAccept) *heldAccept {
	out := *h
	h.e, h.rec = nil, radius.Observation{}
	l := a.byKey[h.key]
	for i, x := range l {
		if x == h {
			l = append(l[:i:i], l[i+1:]...)
			break
		}
	}
	if len(l) == 0 {
		delete(a.byKey, h.key)
	} else {
		a.byKey[h.key] = l
	}
	h.gone = true
	a.n--
	return &out
}

// popOldest removes the oldest held accept (a.mu held).
func (a *accepts) popOldest() *heldAccept {
	for len(a.order) > 0 {
		h := a.order[0]
		a.order = a.order[1:]
		if !h.gone {
			return a.remove(h)
		}
	}
	return nil
}

// take returns and releases the client's accept that belongs to the
// connection whose association and authentication lines wnms received at
// assoc and auth: the newest the proxy had from acceptLookback before the
// first to acceptSlack after the second. A later one is the client's next
// connection, waiting for its own syslog Success. So each of two
// connections takes its own accept, whichever Success comes first and
// however late. A zero time bounds nothing.
func (a *accepts) take(e *entry, mac string, assoc, auth time.Time) *heldAccept {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.byKey[a.key(e, mac)]
	for i := len(l) - 1; i >= 0; i-- {
		h := l[i]
		if (auth.IsZero() || !h.sent.After(auth.Add(acceptSlack))) && (assoc.IsZero() || !h.sent.Before(assoc.Add(-acceptLookback))) {
			return a.remove(h)
		}
	}
	return nil
}

// held is how many accepts are held.
func (a *accepts) held() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// expired releases the accepts let go by hold and those held since
// before cutoff, and says how many were let go past the cap since the
// last call.
func (a *accepts) expired(cutoff time.Time) (out []heldAccept, dropped uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out, a.due = a.due, nil
	dropped, a.dropped = a.dropped, 0
	for len(a.order) > 0 {
		h := a.order[0]
		if !h.gone && !h.at.Before(cutoff) {
			break
		}
		a.order = a.order[1:]
		if !h.gone {
			out = append(out, *a.remove(h))
		}
	}
	if len(a.order) > 2*maxHeld { // accepts taken since pile up: compact
		live := a.order[:0]
		for _, h := range a.order {
			if !h.gone {
				live = append(live, h)
			}
		}
		clear(a.order[len(live):])
		a.order = live
	}
	return out, dropped
}

// ingestHeld stores held accepts as they are, one ingest a source (of at
// most maxRound records), leaving out those whose Success is stored
// already (see notStoredYet), and then removes their rows from the
// store. A row whose Success could not be stored stays, for the sweep of
// recoverHeld.
func (b *Bridge) ingestHeld(ctx context.Context, hs []heldAccept) {
	hs = b.notStoredYet(ctx, hs)
	bySource := map[*entry][]heldAccept{}
	var order []*entry
	for _, h := range hs {
		if _, ok := bySource[h.e]; !ok {
			order = append(order, h.e)
		}
		bySource[h.e] = append(bySource[h.e], h)
	}
	var done []heldAccept
	for _, e := range order {
		for chunk := range slices.Chunk(bySource[e], maxRound) {
			recs := make([]radius.Observation, len(chunk))
			for i, h := range chunk {
				recs[i] = h.rec
			}
			if err := b.place(ctx, "radius", telemetry.KindEvents, e, netip.Addr{}, recs); err != nil {
				b.Log.Warn("data source: held RADIUS Successes not stored", "source", e.src.Name, "records", len(recs), "err", err)
				continue
			}
			done = append(done, chunk...)
		}
	}
	b.forget(ctx, done)
}

// releaseHeld stores the RADIUS Successes no syslog Success took within
// the hold.
func (b *Bridge) releaseHeld(ctx context.Context) {
	hs, dropped := b.accepts.expired(time.Now().Add(-b.hold()))
	b.records.With("radius", telemetry.KindEvents, OutcomeDropped).Add(dropped)
	b.ingestHeld(ctx, hs)
	b.heartbeatHeld(ctx)
}

// EmitSyslog is the syslog assembler's Sink.
func (b *Bridge) EmitSyslog(ctx context.Context, from netip.Addr, events []syslog.ClientEvent) error {
	b.init()
	e, ok := b.table.Load().lookup(from)
	if !ok || !e.src.Syslog {
		b.records.With("syslog", telemetry.KindEvents, OutcomeUnplaced).Add(uint64(len(events)))
		return nil
	}
	b.heardFrom(e, time.Now())
	all := make([]radius.Observation, len(events))
	for i := range events {
		r := events[i].Record()
		all[i] = radius.Observation{Event: &r}
	}
	recs, taken := b.withAccepts(e, events, all)
	if len(recs) == 0 {
		return nil
	}
	if err := b.place(ctx, "syslog", telemetry.KindEvents, e, from.Unmap(), recs); err != nil {
		// The accepts taken keep their rows: the sweep stores them.
		return err
	}
	b.forget(ctx, taken)
	return nil
}

// withAccepts returns the records of events (all, the same as records)
// to store for source e: each Success with its connection's held RADIUS
// accept, if any, and without the 802.1X failures the proxy made
// first-hand; and the accepts taken. A Success that takes an accept takes
// its eventId too: the connection's one Success has that id whether the
// syslog Success or the accept alone is stored, which is how a restart
// knows an accept it finds in the store was already used.
func (b *Bridge) withAccepts(e *entry, events []syslog.ClientEvent, all []radius.Observation) ([]radius.Observation, []heldAccept) {
	recs := all[:0]
	var taken []heldAccept
	for i, o := range all {
		r := o.Event
		typ := wnms.Str(r.EventType)
		if e.src.RadiusSecret != "" && typ == wnms.Failure && code(r.FailureCode) == wnms.CategoryAuthentication &&
			code(r.SubFailureCode) == wnms.FailRadiusRejected {
			// The source's authentications go through wnms's RADIUS
			// proxy, which made this Failure first-hand.
			continue
		}
		if typ == wnms.Success {
			if h := b.accepts.take(e, wnms.Str(r.MacAddress), events[i].AssocSeen, events[i].AuthSeen); h != nil {
				acc := h.rec.Event
				// The accepted request's User-Name is the client's 802.1X
				// identity, which syslog does not tell.
				if acc.AAALatency != nil {
					r.AAALatency = acc.AAALatency
				}
				if acc.RadiusPrimaryIP != nil {
					r.RadiusPrimaryIP = acc.RadiusPrimaryIP
				}
				if acc.Username != "" {
					r.Username = acc.Username
				}
				// The DHCP ACK's address, else the one the RADIUS server gave.
				if r.IP == nil {
					r.IP = acc.IP
				}
				// The authentication is the accept, on wnms's clock.
				if acc.AuthenticationTimestamp != nil {
					r.AuthenticationTimestamp = acc.AuthenticationTimestamp
				}
				if h.id != "" {
					r.EventID = wnms.Ptr(h.id)
				}
				taken = append(taken, *h)
			}
		}
		recs = append(recs, o)
	}
	return recs, taken
}

// code is a catalogue code of a record, 0 when not sent.
func code(c *int) int {
	if c == nil {
		return 0
	}
	return *c
}

// eventID is the eventId of an event, "" for a sample or an event
// without one.
func eventID(o radius.Observation) string {
	if o.Event == nil {
		return ""
	}
	return wnms.Str(o.Event.EventID)
}

// sentAt is when the proxy had the accept of the Success rec: its
// authenticationTimestamp, else held (when it was held).
func sentAt(rec radius.Observation, held time.Time) time.Time {
	if ms := rec.Event.AuthenticationTimestamp; ms != nil && *ms > 0 {
		return time.UnixMilli(*ms)
	}
	return held
}

// radioFields are the fields place reads and fills, of an event or a
// sample.
func radioFields(o radius.Observation) (bssid **string, channel *int, ssid *string) {
	if o.Event != nil {
		return &o.Event.BSSID, &o.Event.Channel, &o.Event.SSID
	}
	return &o.Sample.BSSID, &o.Sample.Channel, &o.Sample.SSID
}

// place fills each record's AP fields from the customer's APs and
// ingests the placed ones as the source: client events, or (kind
// telemetry.KindStats) the traffic samples of accounting.
func (b *Bridge) place(ctx context.Context, via, kind string, e *entry, from netip.Addr, recs []radius.Observation) error {
	var bssids, names, ips []string
	add := func(l *[]string, v string) {
		if v != "" && !slices.Contains(*l, v) {
			*l = append(*l, v)
		}
	}
	for _, r := range recs {
		bssid, _, _ := radioFields(r)
		add(&bssids, wnms.Str(*bssid))
		add(&names, r.NASIdentifier)
		add(&ips, r.NASIPAddress)
	}
	if from.IsValid() {
		add(&ips, from.String())
	}
	aps, err := b.Store.APsForSources(ctx, e.customer, bssids, names, ips)
	if err != nil {
		return err
	}
	byBSSID := map[string]*wnms.SourceAP{}
	byName := map[string]*wnms.SourceAP{}
	byIP := map[string]*wnms.SourceAP{}
	for i := range aps {
		ap := &aps[i]
		for _, r := range ap.Radios {
			byBSSID[r.BSSID] = ap
		}
		byName[ap.Name] = ap
		if ap.IPAddress != "" {
			byIP[ap.IPAddress] = ap
		}
	}
	var events []wnms.EventRecord
	var samples []wnms.SampleRecord
	var boxes []int64 // the AP of each placed record, 0 for none
	unmatched := 0
	for _, r := range recs {
		bssid, channel, ssid := radioFields(r)
		named := wnms.Str(*bssid)
		ap := byBSSID[named]
		if ap == nil {
			ap = byName[r.NASIdentifier]
		}
		if ap == nil {
			ap = byIP[r.NASIPAddress]
		}
		if ap == nil && from.IsValid() {
			ap = byIP[from.String()]
		}
		if ap == nil {
			// Listed in the source's status, to be registered.
			addr := r.NASIPAddress
			if addr == "" && from.IsValid() {
				addr = from.String()
			}
			b.noAP(e, named, r.NASIdentifier, addr, time.Now())
		}
		if ap == nil || len(ap.Radios) == 0 {
			// At the source's location, where no radio is known.
			unmatched++
			*channel = 0
			boxes = append(boxes, boxOf(ap))
		} else {
			radio := ap.Radios[0]
			for _, x := range ap.Radios {
				if x.BSSID == named || (named == "" && x.SSID != "" && x.SSID == *ssid) {
					radio = x
					break
				}
			}
			*bssid, *channel = wnms.Ptr(radio.BSSID), radio.Channel
			if *ssid == "" && radio.SSID != "" {
				*ssid = radio.SSID
			}
			if r.Event != nil {
				r.Event.AssociatedAPName = ap.Name
			}
			boxes = append(boxes, ap.BoxID)
		}
		if r.Event != nil {
			events = append(events, *r.Event)
		} else {
			samples = append(samples, *r.Sample)
		}
	}
	if unmatched > 0 {
		b.unmatched.With(via, kind).Add(uint64(unmatched))
	}
	if len(boxes) == 0 {
		return nil
	}
	caller, at := b.caller(e), e.src.LocationID.ID
	var res *telemetry.Result
	if kind == telemetry.KindStats {
		res, err = b.Ingest.IngestSourceSamples(ctx, caller, samples, at)
	} else {
		res, err = b.Ingest.IngestSourceEvents(ctx, caller, events, at)
	}
	if err != nil {
		return err
	}
	// The APs of the records stored (or stored before: a retransmission
	// is traffic too) were heard from.
	refused := map[int]bool{}
	for _, x := range res.Rejected {
		refused[x.Index] = true
	}
	var heard []int64
	for i, box := range boxes {
		if box != 0 && !refused[i] && !slices.Contains(heard, box) {
			heard = append(heard, box)
		}
	}
	b.heartbeat(ctx, e.customer, heard)
	b.count(e, OutcomeAccepted, res.Accepted)
	b.count(e, OutcomeDuplicate, res.Duplicates)
	b.count(e, OutcomeRejected, len(res.Rejected))
	b.count(e, OutcomeUnmatched, unmatched)
	b.records.With(via, kind, OutcomeAccepted).Add(uint64(res.Accepted))
	b.records.With(via, kind, OutcomeDuplicate).Add(uint64(res.Duplicates))
	if n := len(res.Rejected); n > 0 {
		b.records.With(via, kind, OutcomeRejected).Add(uint64(n))
		b.Log.Warn("data source: records refused", "via", via, "source", e.src.Name, "refused", n,
			"first", res.Rejected[0].Message)
	}
	return nil
}

// caller is who a source's records are ingested as: the source itself,
// confined to its location.
func (b *Bridge) caller(e *entry) *wnms.Caller {
	return wnms.SourceCaller(e.customer, e.src.Name, e.src.LocationID.ID, b.Store.LocationPaths)
}
