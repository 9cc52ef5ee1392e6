package wnms

import (
	"context"
	"encoding/json"
)

// The kinds of events the event stream and webhooks carry.
const (
	EventAPDown        = "apDown"
	EventAPUp          = "apUp"
	EventAnomaly       = "anomaly"
	EventUserLocked    = "userLocked"
	EventConfigChanged = "configChanged"
	// EventUpstreamDown and EventUpstreamUp: a RADIUS upstream of the
	// customer's data sources stopped answering, or answers again.
	EventUpstreamDown = "upstreamDown"
	EventUpstreamUp   = "upstreamUp"
	// EventSourceDown and EventSourceUp: a poller of the customer's data
	// sources stopped answering (twice in a row), or answers again.
	EventSourceDown = "sourceDown"
	EventSourceUp   = "sourceUp"
	// EventIncidentOpened and EventIncidentClosed: a site's anomalies
	// began an incident, or the incident ended.
	EventIncidentOpened = "incidentOpened"
	EventIncidentClosed = "incidentClosed"
	// EventTest is what POST /webhooks/{id}/test sends; it is never
	// stored or streamed.
	EventTest = "test"
)

// EventKinds are the kinds an event stream or a webhook may select.
var EventKinds = []string{EventAPDown, EventAPUp, EventAnomaly, EventUserLocked, EventConfigChanged,
	EventUpstreamDown, EventUpstreamUp, EventIncidentOpened, EventIncidentClosed, EventSourceDown, EventSourceUp}

// Event is something that happened which other systems are told of: an AP
// down or up, a baseline anomaly, a user locked by failed logins, a
// configuration change. Its ID grows with each event, in the order they
// were committed, so a reader that has seen an id has seen every event
// before it.
type Event struct {
	ID         int64           `json:"id"`
	Kind       string          `json:"kind"`
	Timestamp  int64           `json:"timestamp"`
	CustomerID int64           `json:"customerId"`
	Data       json.RawMessage `json:"data"`
	// LocationPath is the materialized path of the location the event
	// concerns; "" concerns the whole customer, and only callers allowed
	// at the root see it.
	LocationPath string `json:"-"`
	// JSON is the event as JSON, made once for every subscriber that
	// sends it (nil until Encode).
	JSON []byte `json:"-"`
}

// Encode sets e.JSON, once.
func (e *Event) Encode() error {
	if e.JSON != nil {
		return nil
	}
	b, err := json.Marshal(e)
	e.JSON = b
	return err
}

// Visible reports whether a caller of customerID whose allowed subtrees
// are scope may see the event.
func (e *Event) Visible(customerID int64, scope []string) bool {
	if e.CustomerID != customerID {
		return false
	}
	path := e.LocationPath
	if path == "" {
		path = RootPath
	}
	return UnderAny(path, scope)
}

// EventStore keeps the events of the last day (the outbox the event stream
// resumes from and webhooks deliver from).
type EventStore interface {
	// AppendEvents stores events, setting their ids.
	AppendEvents(ctx context.Context, evs []*Event) error
	// EventsAfter lists at most limit events with an id above after,
	// oldest first.
	EventsAfter(ctx context.Context, after int64, limit int) ([]*Event, error)
	// LastEventID is the id of the newest event (0: none).
	LastEventID(ctx context.Context) (int64, error)
	// PurgeEvents deletes the events older than before (ms).
	PurgeEvents(ctx context.Context, before int64) (int64, error)
}
