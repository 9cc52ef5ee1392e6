// Package notify is the one place where wnms raises events: an AP down or
// up, a baseline anomaly, a user locked by failed logins, a RADIUS
// upstream down or up, and (from the
// store, in the transaction of the change) a configuration change. Each
// event is stored in the outbox, sent as an SNMP trap where the MIB has
// one, and handed to the event stream's subscribers and the webhooks from
// the outbox, so that replicas on one PostgreSQL see the same events in
// the same order.
package notify

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/snmp"
	"github.com/wnms/wnms/internal/wnms"
)

// Store is what the hub needs of the store.
type Store interface {
	wnms.EventStore
	// LocationPaths maps location ids to their materialized paths.
	LocationPaths(ctx context.Context, ids []int64) (map[int64]string, error)
	// LocationNamePath is a location's path of names, for a trap.
	LocationNamePath(ctx context.Context, id int64) (string, error)
	Sequencer
}

// Sequencer gives the events that changes stored (in their own
// transactions, on any replica) their outbox ids.
type Sequencer interface {
	// SequenceEvents sequences a batch of them and returns how many.
	SequenceEvents(ctx context.Context) (int, error)
}

// Traps are the SNMP traps of the events that have one.
type Traps interface {
	APChange(customerID, boxID int64, name, mac, locationPath string, up bool)
	BaselineAnomaly(a snmp.Anomaly)
	UserLocked(customerID int64, login string)
	UpstreamChange(customerID int64, address, kind string, up bool)
	IncidentChange(in snmp.Incident, closed bool)
}

// Retention is how long the outbox keeps an event: the event stream
// resumes from, and webhooks retry, within it.
const Retention = 24 * time.Hour

// Hub raises events and fans them out from the outbox.
type Hub struct {
	Store Store
	Traps Traps // nil: no traps
	Log   *slog.Logger
	// Poll is how often the outbox is read for events that another
	// replica (or a configuration change in the store) raised; events
	// this process raises are read at once.
	Poll time.Duration
	// OnEvents, if set, sees every batch of events read from the outbox,
	// in id order (the webhooks' dispatcher).
	OnEvents func(evs []*wnms.Event)

	mu    sync.Mutex
	subs  map[*Sub]struct{}
	last  int64 // the newest event handed to subscribers
	wake  chan struct{}
	ready chan struct{}
	once  sync.Once

	// Events raised at the same time are stored in one transaction (as
	// one commit): the outbox's order takes one lock per commit.
	amu       sync.Mutex
	appending bool
	queue     []appendReq
}

// appendReq is an event waiting to be stored, and where its verdict goes.
type appendReq struct {
	e    *wnms.Event
	done chan error
}

// SubBuffer is how many events a subscriber may fall behind before it is
// dropped (it resumes from the outbox).
const SubBuffer = 1024

// Sub is a subscriber: the events read from the outbox after it
// subscribed arrive on C, in id order. C is closed when the subscriber
// fell SubBuffer events behind: it must resume from the outbox after the
// last event it saw.
type Sub struct {
	C     chan *wnms.Event
	Start int64 // the newest event before the subscription
}

func (h *Hub) init() {
	h.once.Do(func() {
		h.subs = map[*Sub]struct{}{}
		h.wake = make(chan struct{}, 1)
		h.ready = make(chan struct{})
		if h.Poll == 0 {
			h.Poll = 250 * time.Millisecond
		}
	})
}

// Subscribe registers a subscriber; Unsubscribe must follow.
func (h *Hub) Subscribe() *Sub {
	h.init()
	h.mu.Lock()
	defer h.mu.Unlock()
	s := &Sub{C: make(chan *wnms.Event, SubBuffer), Start: h.last}
	h.subs[s] = struct{}{}
	return s
}

// Unsubscribe removes a subscriber.
func (h *Hub) Unsubscribe(s *Sub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		close(s.C)
	}
}

// Subscribers is how many subscribers are connected.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Ready is closed once Run has found where the outbox ends: subscribers
// from then on get every later event.
func (h *Hub) Ready() <-chan struct{} {
	h.init()
	return h.ready
}

// Wake makes the hub read the outbox now (a change stored an event).
func (h *Hub) Wake() {
	h.init()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Run reads the outbox and fans its events out until ctx ends. It starts
// after the newest event stored: subscribers resume older ones from the
// outbox themselves.
func (h *Hub) Run(ctx context.Context) {
	h.init()
	for {
		last, err := h.Store.LastEventID(ctx)
		if err == nil {
			h.mu.Lock()
			h.last = last
			h.mu.Unlock()
			close(h.ready)
			break
		}
		h.Log.Error("event outbox: reading the newest event failed", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
	t := time.NewTicker(h.Poll)
	defer t.Stop()
	purge := time.NewTicker(time.Hour)
	defer purge.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-h.wake:
		case <-purge.C:
			if _, err := h.Store.PurgeEvents(ctx, time.Now().Add(-Retention).UnixMilli()); err != nil && ctx.Err() == nil {
				h.Log.Error("event outbox: purge failed", "err", err)
			}
		}
		h.drain(ctx)
	}
}

// drain sequences the events that changes stored meanwhile, then hands
// every event after the last one handed out to the subscribers and
// OnEvents.
func (h *Hub) drain(ctx context.Context) {
	for {
		n, err := h.Store.SequenceEvents(ctx)
		if err != nil && ctx.Err() == nil {
			h.Log.Error("event outbox: sequencing failed", "err", err)
		}
		if err != nil || n == 0 {
			break
		}
	}
	for {
		h.mu.Lock()
		last := h.last
		h.mu.Unlock()
		evs, err := h.Store.EventsAfter(ctx, last, 500)
		if err != nil {
			if ctx.Err() == nil {
				h.Log.Error("event outbox: read failed", "err", err)
			}
			return
		}
		if len(evs) == 0 {
			return
		}
		for _, e := range evs {
			if err := e.Encode(); err != nil {
				h.Log.Error("event outbox: encoding failed", "id", e.ID, "err", err)
			}
		}
		h.mu.Lock()
		for _, e := range evs {
			for s := range h.subs {
				select {
				case s.C <- e:
				default:
					// Fallen behind: it resumes from the outbox.
					delete(h.subs, s)
					close(s.C)
				}
			}
		}
		h.last = evs[len(evs)-1].ID
		h.mu.Unlock()
		if h.OnEvents != nil {
			h.OnEvents(evs)
		}
		if len(evs) < 500 {
			return
		}
	}
}

// raise stores an event and wakes the fan-out.
func (h *Hub) raise(ctx context.Context, e *wnms.Event, data any) {
	b, err := json.Marshal(data)
	if err == nil {
		e.Data = b
		err = h.store(ctx, e)
	}
	if err != nil {
		h.Log.Error("event not stored", "kind", e.Kind, "customer_id", e.CustomerID, "err", err)
		return
	}
	h.Wake()
}

// MaxQueued is how many raised events may wait to be stored before a
// raiser waits for its own to be committed.
const MaxQueued = 10_000

// store queues e to be stored with the events raised meanwhile, in one
// transaction, by one writer at a time. The raiser goes on at once (what
// the event reports, an AP's state or an anomaly, is committed already);
// while MaxQueued events wait, it waits for its own to be committed.
func (h *Hub) store(ctx context.Context, e *wnms.Event) error {
	r := appendReq{e: e, done: make(chan error, 1)}
	h.amu.Lock()
	h.queue = append(h.queue, r)
	backlog := len(h.queue) > MaxQueued
	lead := !h.appending
	h.appending = true
	h.amu.Unlock()
	if lead {
		go h.appendAll()
	}
	if !backlog {
		return nil
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Flush waits until every event raised so far is stored.
func (h *Hub) Flush(ctx context.Context) error {
	for {
		h.amu.Lock()
		idle := !h.appending
		h.amu.Unlock()
		if idle {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// appendAll writes what is queued, round after round, until nothing is.
func (h *Hub) appendAll() {
	for {
		h.amu.Lock()
		round := h.queue
		h.queue = nil
		if len(round) == 0 {
			h.appending = false
			h.amu.Unlock()
			return
		}
		h.amu.Unlock()
		evs := make([]*wnms.Event, len(round))
		for i, r := range round {
			evs[i] = r.e
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := h.Store.AppendEvents(ctx, evs)
		cancel()
		if err != nil {
			h.Log.Error("events not stored", "events", len(evs), "err", err)
		} else {
			h.Wake()
		}
		for _, r := range round {
			r.done <- err
		}
	}
}

// locate returns a location's materialized path and its path of names.
func (h *Hub) locate(ctx context.Context, id int64) (path, names string) {
	paths, err := h.Store.LocationPaths(ctx, []int64{id})
	if err != nil {
		h.Log.Error("event: reading the location failed", "location_id", id, "err", err)
	}
	names, err = h.Store.LocationNamePath(ctx, id)
	if err != nil {
		h.Log.Error("event: reading the location's name failed", "location_id", id, "err", err)
	}
	return paths[id], names
}

// AP is what an AP event says of the AP.
type AP struct {
	CustomerID int64
	BoxID      int64
	Name       string
	MacAddress string
	LocationID int64
}

// APChange raises apDown or apUp, with its trap.
func (h *Hub) APChange(ctx context.Context, ap AP, up bool) {
	path, names := h.locate(ctx, ap.LocationID)
	kind := wnms.EventAPDown
	if up {
		kind = wnms.EventAPUp
	}
	h.raise(ctx, &wnms.Event{Kind: kind, CustomerID: ap.CustomerID, LocationPath: path}, map[string]any{
		"boxId": ap.BoxID, "name": ap.Name, "macAddress": ap.MacAddress,
		"locationId": map[string]any{"type": "locallocationid", "id": ap.LocationID}, "locationPath": names,
	})
	if h.Traps != nil {
		h.Traps.APChange(ap.CustomerID, ap.BoxID, ap.Name, ap.MacAddress, names, up)
	}
}

// Anomaly is what an anomaly event says.
type Anomaly struct {
	CustomerID  int64
	LocationID  int64
	Kind        string
	Slot        int64
	Observation float64
	Baseline    float64
	Threshold   float64
	// AP is the AP radio whose clients made a performance slot
	// anomalous, nil when the floor's share of troubled clients did.
	AP *wnms.AnomalyAP
}

// RaiseAnomaly raises anomaly, with its trap. An anomaly that names an AP
// says which, in the event's ap and in the trap's AP objects.
func (h *Hub) RaiseAnomaly(ctx context.Context, a Anomaly) {
	path, names := h.locate(ctx, a.LocationID)
	data := map[string]any{
		"kind": a.Kind, "slot": a.Slot, "observation": a.Observation, "baseline": a.Baseline, "threshold": a.Threshold,
		"locationId": map[string]any{"type": "locallocationid", "id": a.LocationID}, "locationPath": names,
	}
	if a.AP != nil {
		data["ap"] = a.AP
	}
	h.raise(ctx, &wnms.Event{Kind: wnms.EventAnomaly, CustomerID: a.CustomerID, LocationPath: path}, data)
	if h.Traps != nil {
		t := snmp.Anomaly{CustomerID: a.CustomerID, Kind: a.Kind, LocationPath: names,
			SlotStart: time.UnixMilli(a.Slot), Observation: a.Observation, Threshold: a.Threshold}
		if a.AP != nil {
			t.AP = &snmp.AnomalyAP{BoxID: a.AP.BoxID, Name: a.AP.Name, MacAddress: a.AP.MacAddress}
		}
		h.Traps.BaselineAnomaly(t)
	}
}

// UpstreamChange raises upstreamDown or upstreamUp, with its trap: a
// RADIUS upstream (kind "auth" or "accounting", at address as
// configured) of the customer's data sources stopped answering or
// answers again. The upstreams are the customer's (only callers allowed
// at the root change them), so the event concerns the whole customer.
func (h *Hub) UpstreamChange(ctx context.Context, customerID int64, address, kind string, up bool) {
	k := wnms.EventUpstreamDown
	if up {
		k = wnms.EventUpstreamUp
	}
	h.raise(ctx, &wnms.Event{Kind: k, CustomerID: customerID}, map[string]any{"address": address, "kind": kind})
	if h.Traps != nil {
		h.Traps.UpstreamChange(customerID, address, kind, up)
	}
}

// SourceChange raises sourceDown or sourceUp: a poller of the customer's
// data sources (name, of kind) at locationID stopped answering, for
// reason, or answers again. The event concerns the poller's location.
func (h *Hub) SourceChange(ctx context.Context, customerID int64, name, kind string, locationID int64, up bool, reason string) {
	path, names := h.locate(ctx, locationID)
	k := wnms.EventSourceDown
	if up {
		k = wnms.EventSourceUp
	}
	data := map[string]any{"name": name, "kind": kind,
		"locationId": map[string]any{"type": "locallocationid", "id": locationID}, "locationPath": names}
	if !up {
		data["reason"] = reason
	}
	h.raise(ctx, &wnms.Event{Kind: k, CustomerID: customerID, LocationPath: path}, data)
}

// UserLocked raises userLocked, with its trap. The event concerns the
// whole customer: callers allowed at the root see it.
func (h *Hub) UserLocked(ctx context.Context, u *wnms.User) {
	h.raise(ctx, &wnms.Event{Kind: wnms.EventUserLocked, CustomerID: u.CustomerID},
		map[string]any{"userId": u.UserID, "loginId": u.LoginID, "lockedUntil": u.LockedUntil})
	if h.Traps != nil {
		h.Traps.UserLocked(u.CustomerID, u.LoginID)
	}
}

// RaiseIncident raises incidentOpened, or incidentClosed when closed, with
// its trap. The event concerns the incident's site; its data is the
// incident as GET /incidents/{id} answers it, with the site's path of
// names (locationPath).
func (h *Hub) RaiseIncident(ctx context.Context, in *wnms.Incident, closed bool) {
	path, names := h.locate(ctx, in.SiteLocationID)
	kind := wnms.EventIncidentOpened
	if closed {
		kind = wnms.EventIncidentClosed
	}
	h.raise(ctx, &wnms.Event{Kind: kind, CustomerID: in.CustomerID, LocationPath: path}, struct {
		*wnms.Incident
		LocationPath string `json:"locationPath"`
	}{in, names})
	if h.Traps != nil {
		scope := in.Scope.Type + " " + in.Scope.Name
		if in.Scope.Type == wnms.ScopeChannel {
			scope = in.Scope.Name // "5 GHz channel 36" says what it is
		}
		t := snmp.Incident{CustomerID: in.CustomerID, ID: in.ID, LocationPath: names, At: time.UnixMilli(in.From), Scope: scope}
		if closed && in.To != nil {
			t.At = time.UnixMilli(*in.To)
		}
		if in.Cause != nil {
			t.Cause = in.Cause.Stage + ": " + in.Cause.Reason.Text
		}
		h.Traps.IncidentChange(t, closed)
	}
}
