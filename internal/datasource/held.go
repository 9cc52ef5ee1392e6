package datasource

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/radius"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// Accepts held for the syslog join survive a restart (decisions §21,
// "Nothing the NAS received is lost"). An accept the proxy had is held in
// memory first (HoldSuccess: the NAS must not wait on the store); as soon
// as it can be (at once, or with the others that come while a write is
// under way) it is written to the store as a row of its own
// (held_accepts) and shown as an Intermediate 2/11 "RADIUS accept" event.
// The row goes once the connection's Success is stored. A server that
// starts takes back its rows, and any server takes rows left past their
// hold (a server that did not come back): each is held again for the
// rest of its hold, or stored alone. The connection's one Success has the
// accept's eventId whichever way it is stored (withAccepts), so a row
// whose Success is stored already is only removed: never a second
// Success. A graceful stop writes what is still in memory (Flush); kill
// -9 loses at most the accepts of the write under way and those waiting
// for it.

// HeldStore keeps held accepts (store.Store).
type HeldStore interface {
	PutHeldAccepts(ctx context.Context, hs []wnms.HeldAccept) error
	DeleteHeldAccepts(ctx context.Context, serverID int64, eventIDs []string) error
	// HeldAccepts lists the rows of serverID (none for 0) and those of
	// any server held before leftBefore (ms), oldest first.
	HeldAccepts(ctx context.Context, serverID, leftBefore int64, limit int) ([]wnms.HeldAccept, error)
	// StoredEventIDs tells which eventIds the customer stored as client
	// events at or after since (ms).
	StoredEventIDs(ctx context.Context, customerID int64, eventIDs []string, since int64) (map[string]bool, error)
}

// persistOnWake writes the new held accepts each time holdAccept tells
// of one, until ctx ends: at once when no write is under way, else when
// it ends, with all that came meanwhile (one transaction, then one ingest
// of their events). A write under way when ctx ends is finished.
func (b *Bridge) persistOnWake(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.wake:
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		b.persistHeld(wctx)
		cancel()
	}
}

// eventsOnWake stores the RADIUS accept events persistHeld queues, until
// ctx ends, apart from the rows: a slow ingest never holds the next
// accepts' rows back. What is queued when ctx ends is left to Flush.
func (b *Bridge) eventsOnWake(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.eventsWake:
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		b.storeAcceptEvents(wctx)
		cancel()
	}
}

// acceptEvents are RADIUS accept events waiting to be stored.
type acceptEvents struct {
	mu      sync.Mutex
	pending []freshAccept // at most maxHeld
	lost    uint64        // past that
}

// queueEvents queues the events of fs for storeAcceptEvents.
func (b *Bridge) queueEvents(fs []freshAccept) {
	b.events.mu.Lock()
	for _, f := range fs {
		if len(b.events.pending) >= maxHeld {
			b.events.lost++
			continue
		}
		b.events.pending = append(b.events.pending, f)
	}
	b.events.mu.Unlock()
	select {
	case b.eventsWake <- struct{}{}:
	default:
	}
}

// storeAcceptEvents stores the queued RADIUS accept events, one ingest a
// source (of at most maxRound).
func (b *Bridge) storeAcceptEvents(ctx context.Context) {
	b.events.mu.Lock()
	fresh := b.events.pending
	b.events.pending = nil
	lost := b.events.lost
	b.events.lost = 0
	b.events.mu.Unlock()
	if lost > 0 {
		b.Log.Warn("data source: RADIUS accept events not stored (too many at once)", "events", lost)
	}
	bySource := map[*entry][]radius.Observation{}
	var order []*entry
	for _, f := range fresh {
		if _, ok := bySource[f.e]; !ok {
			order = append(order, f.e)
		}
		bySource[f.e] = append(bySource[f.e], f.event)
	}
	for _, e := range order {
		for recs := range slices.Chunk(bySource[e], maxRound) {
			if err := b.place(ctx, "radius", telemetry.KindEvents, e, netip.Addr{}, recs); err != nil {
				b.Log.Warn("data source: RADIUS accept events not stored", "source", e.src.Name, "records", len(recs), "err", err)
			}
		}
	}
}

// sweepEvery is how often rows left past their hold are looked for;
// sweepGrace is how long past its hold a row must be to be taken.
const (
	sweepEvery = 30 * time.Second
	sweepGrace = 30 * time.Second
)

// freshAccept is an accept held since the last persistHeld: its row and
// its Intermediate event.
type freshAccept struct {
	e     *entry
	h     *heldAccept // nil: only its event is to be stored (a row taken back)
	write bool        // the row is to be written
	row   wnms.HeldAccept
	event radius.Observation
	// stored, when not nil (room for one), is told once whether the row
	// is written: the proxy answers the NAS after that.
	stored chan<- bool
}

// tell tells f's waiter, if any, whether its row is written.
func (f *freshAccept) tell(ok bool) {
	if f.stored != nil {
		f.stored <- ok
		f.stored = nil
	}
}

// newFresh makes the row and the Intermediate event of rec, an accept of
// source e held at now by server, before anything else reads or changes
// rec.
func newFresh(e *entry, rec radius.Observation, now time.Time, server int64) freshAccept {
	success := wnms.HeldRecord{EventRecord: *rec.Event, NASIdentifier: rec.NASIdentifier, NASIPAddress: rec.NASIPAddress}
	return freshAccept{e: e, write: true, event: acceptEvent(rec), row: wnms.HeldAccept{ServerID: server,
		EventID: wnms.Str(rec.Event.EventID), CustomerID: e.customer, Source: e.src.Name, HeldAt: now.UnixMilli(), Success: success}}
}

// acceptEvent is the Intermediate 2/11 "RADIUS accept" event of a RADIUS
// Success: at the accept's time, with its client, AP, username and
// upstream, and an eventId derived from the Success's.
func acceptEvent(rec radius.Observation) radius.Observation {
	a := rec.Event
	ev := &wnms.EventRecord{EventType: wnms.Ptr(wnms.Intermediate), CategoryCode: wnms.Ptr(wnms.CategoryAuthentication),
		TypeCode: wnms.Ptr(wnms.TypeRadiusAccept), Timestamp: a.Timestamp, MacAddress: a.MacAddress, BSSID: a.BSSID,
		SSID: a.SSID, Username: a.Username}
	ev.RadiusPrimaryIP = a.RadiusPrimaryIP
	if ts := a.AuthenticationTimestamp; ts != nil && *ts > 0 {
		ev.Timestamp = ts
	}
	if id := wnms.Str(a.EventID); id != "" {
		ev.EventID = wnms.Ptr(acceptEventID(id))
	}
	return radius.Observation{Event: ev, NASIdentifier: rec.NASIdentifier, NASIPAddress: rec.NASIPAddress}
}

// acceptEventID is the eventId of the Intermediate event of the Success
// with eventId id.
func acceptEventID(id string) string {
	return "radius-accept-" + strings.TrimPrefix(id, "radius-")
}

// queueFresh queues f for persistHeld (a.mu held).
func (a *accepts) queueFresh(f freshAccept) {
	if len(a.fresh) >= maxHeld {
		a.lost++
		f.tell(false)
		return
	}
	a.fresh = append(a.fresh, f)
}

// holds reports whether the accept of the customer's client with eventId
// id is held.
func (a *accepts) holds(customer int64, mac, id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, h := range a.byKey[key(customer, mac)] {
		if h.id == id {
			return true
		}
	}
	return false
}

// persistHeld writes the accepts held since its last call to the store
// and queues their Intermediate events for storeAcceptEvents. Rows that
// cannot be written wait for the next call.
func (b *Bridge) persistHeld(ctx context.Context) {
	b.persisting.Lock()
	defer b.persisting.Unlock()
	a := &b.accepts
	a.mu.Lock()
	fresh := a.fresh
	a.fresh = nil
	lost := a.lost
	a.lost = 0
	var rows []wnms.HeldAccept
	for _, f := range fresh {
		// One taken or let go already has its Success on the way, which
		// removes its row: the row would only be left behind.
		if f.write && f.h != nil && !f.h.gone {
			rows = append(rows, f.row)
		}
	}
	a.mu.Unlock()
	if lost > 0 {
		b.Log.Warn("data source: held RADIUS accepts not written to the store (too many at once)", "accepts", lost)
	}
	if len(fresh) == 0 {
		return
	}
	if b.Held != nil && len(rows) > 0 {
		if err := b.Held.PutHeldAccepts(ctx, rows); err != nil {
			b.Log.Warn("data source: held RADIUS accepts not written to the store; trying again", "accepts", len(rows), "err", err)
			a.mu.Lock()
			for _, f := range fresh {
				a.queueFresh(f)
			}
			a.mu.Unlock()
			return
		}
	}
	for i := range fresh {
		// Written (or its Success is on the way already): the NAS may
		// have the accept.
		fresh[i].tell(true)
	}
	b.queueEvents(fresh)
}

// forget removes the rows of accepts whose Success is stored.
func (b *Bridge) forget(ctx context.Context, hs []heldAccept) {
	if b.Held == nil || len(hs) == 0 {
		return
	}
	byServer := map[int64][]string{}
	for _, h := range hs {
		if h.id != "" {
			byServer[h.server] = append(byServer[h.server], h.id)
		}
	}
	for server, ids := range byServer {
		if err := b.Held.DeleteHeldAccepts(ctx, server, ids); err != nil {
			// Left for the sweep, which finds their Successes stored.
			b.Log.Warn("data source: rows of held RADIUS accepts not removed", "accepts", len(ids), "err", err)
		}
	}
}

// notStoredYet returns the accepts of hs whose Success is not stored
// yet, and removes the rows of the others. When that cannot be read it
// returns them all: a Success stored twice is a duplicate when it is the
// accept's alone, and losing one is worse.
func (b *Bridge) notStoredYet(ctx context.Context, hs []heldAccept) []heldAccept {
	if b.Held == nil || len(hs) == 0 {
		return hs
	}
	byCustomer := map[int64][]heldAccept{}
	for _, h := range hs {
		byCustomer[h.e.customer] = append(byCustomer[h.e.customer], h)
	}
	var out, stored []heldAccept
	for customer, l := range byCustomer {
		ids := make([]string, 0, len(l))
		since := time.Now()
		for _, h := range l {
			ids = append(ids, h.id)
			if h.sent.Before(since) {
				since = h.sent
			}
		}
		// The syslog Success's own timestamp (the AP's clock) may be
		// earlier than the accept's.
		got, err := b.Held.StoredEventIDs(ctx, customer, ids, since.Add(-24*time.Hour).UnixMilli())
		if err != nil {
			b.Log.Warn("data source: cannot tell which held RADIUS accepts have their Success", "err", err)
			return hs
		}
		for _, h := range l {
			if got[h.id] {
				stored = append(stored, h)
			} else {
				out = append(out, h)
			}
		}
	}
	b.forget(ctx, stored)
	return out
}

// recoverHeld takes back the held accepts of the store that no server
// holds: at start (startup) this server's own rows and any left past
// their hold, later only the latter. Each whose Success is not stored
// yet is held again for the rest of its hold, or stored alone when that
// is over; its Intermediate event is stored again (a duplicate if it was
// stored before).
func (b *Bridge) recoverHeld(ctx context.Context, startup bool) {
	if b.Held == nil {
		return
	}
	server := int64(0)
	if startup {
		server = b.ServerID
	}
	now := time.Now()
	rows, err := b.Held.HeldAccepts(ctx, server, now.Add(-b.hold()-sweepGrace).UnixMilli(), maxHeld)
	if err != nil {
		if ctx.Err() == nil {
			b.Log.Warn("data source: held RADIUS accepts not read from the store", "err", err)
		}
		return
	}
	t := b.table.Load()
	var found, unknown []heldAccept
	for _, r := range rows {
		if r.Success.MacAddress == nil {
			unknown = append(unknown, heldAccept{id: r.EventID, server: r.ServerID})
			continue
		}
		rec := radius.Observation{Event: &r.Success.EventRecord, NASIdentifier: r.Success.NASIdentifier, NASIPAddress: r.Success.NASIPAddress}
		if b.accepts.holds(r.CustomerID, *r.Success.MacAddress, r.EventID) {
			continue
		}
		e, ok := t.byName[key(r.CustomerID, r.Source)]
		if !ok {
			// Its source is not in force (removed, or its configuration
			// not loaded yet): kept a day for it to come back.
			if now.Sub(time.UnixMilli(r.HeldAt)) > 24*time.Hour {
				unknown = append(unknown, heldAccept{id: r.EventID, server: r.ServerID})
			}
			continue
		}
		heldAt := time.UnixMilli(r.HeldAt)
		h := heldAccept{e: e, rec: rec, at: heldAt, sent: sentAt(rec, heldAt), id: r.EventID, server: r.ServerID}
		found = append(found, h)
	}
	b.forget(ctx, unknown)
	found = b.notStoredYet(ctx, found)
	if len(found) == 0 {
		return
	}
	// The RADIUS accept events a kill kept from being stored (their rows
	// were written first) are stored now; the others are not ingested
	// again.
	shown := map[string]bool{}
	byCustomer := map[int64][]string{}
	for _, h := range found {
		byCustomer[h.e.customer] = append(byCustomer[h.e.customer], acceptEventID(h.id))
	}
	for customer, ids := range byCustomer {
		got, err := b.Held.StoredEventIDs(ctx, customer, ids, now.Add(-24*time.Hour).UnixMilli())
		if err != nil {
			b.Log.Warn("data source: cannot tell which RADIUS accept events are stored", "err", err)
			continue
		}
		for id := range got {
			shown[key(customer, id)] = true
		}
	}
	var over []heldAccept
	var missing []freshAccept
	a := &b.accepts
	for _, h := range found {
		if !shown[key(h.e.customer, acceptEventID(h.id))] {
			missing = append(missing, freshAccept{e: h.e, event: acceptEvent(h.rec)})
		}
		if now.Sub(h.at) >= b.hold() {
			over = append(over, h)
			continue
		}
		// Its row is there, and its event queued below when missing.
		a.mu.Lock()
		held, out := a.holdLocked(h.e, h.rec, h.at)
		held.server = h.server
		a.mu.Unlock()
		if out != nil {
			over = append(over, *out)
		}
	}
	b.queueEvents(missing)
	b.Log.Info("data source: held RADIUS accepts taken back from the store", "held", len(found)-len(over), "storedAlone", len(over))
	b.ingestHeld(ctx, over)
}

// Flush writes the accepts held since the last write to the store, with
// their Intermediate events, and stores those let go: a graceful stop
// loses none. Call it once the listeners and Run have stopped.
func (b *Bridge) Flush(ctx context.Context) {
	b.init()
	b.persistHeld(ctx)
	b.storeAcceptEvents(ctx)
	due, dropped := b.accepts.expired(time.Time{})
	b.records.With("radius", telemetry.KindEvents, OutcomeDropped).Add(dropped)
	b.ingestHeld(ctx, due)
}
