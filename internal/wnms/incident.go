package wnms

// Incident kinds: the kinds of the anomalies an incident groups.
const (
	IncidentConnectivity = "clientsconnectivity"
	IncidentPerformance  = "clientsperformance"
	// IncidentMixed: the incident groups anomalies of both kinds.
	IncidentMixed = "mixed"
)

// Incident is a group of anomalous slots of one site that follow each
// other with at most one slot between them, across the site's floors and
// baselines (GET /incidents).
type Incident struct {
	ID             int64   `json:"id"`
	SiteLocationID int64   `json:"siteLocationId"`
	Floors         []int64 `json:"floors"`
	// From is the start of the first anomalous slot; To the end of the
	// last one once the incident is closed, nil while open.
	From         int64            `json:"from"`
	To           *int64           `json:"to"`
	Kind         string           `json:"kind"`
	Peak         IncidentPeak     `json:"peak"`
	Cause        *IncidentCause   `json:"cause"`
	Scope        IncidentScope    `json:"scope"`
	Evidence     []IncidentFigure `json:"evidence"`
	Acknowledged bool             `json:"acknowledged"`

	CustomerID int64 `json:"-"`
	// LastSlot is the start of the last anomalous slot.
	LastSlot int64 `json:"-"`
}

// IncidentPeak is the incident's anomalous slot with the highest
// observation (the slot's start), with the clients that observation counts
// at its floor: affected (failing, or troubled for performance) of
// attempting (or measured).
type IncidentPeak struct {
	Timestamp         int64   `json:"timestamp"`
	Observation       float64 `json:"observation"`
	AffectedClients   int     `json:"affectedClients"`
	AttemptingClients int     `json:"attemptingClients"`
}

// IncidentCause is the stage and reason shared by most affected clients.
type IncidentCause struct {
	// Stage: association, authentication, dhcp, dns (a connection failure's
	// stage) or performance.
	Stage  string         `json:"stage"`
	Reason IncidentReason `json:"reason"`
	// Share is the fraction of affected clients with this cause.
	Share float64 `json:"share"`
}

// IncidentReason is a failure's failureCode and subFailureCode with the
// catalogue's text; performance reasons have no codes (nil) and one of the
// texts "Low data rate", "High retry rate", "Low RSSI", "Sticky client".
type IncidentReason struct {
	FailureCode    *int   `json:"failureCode"`
	SubFailureCode *int   `json:"subFailureCode"`
	Text           string `json:"text"`
}

// Incident scope types, narrowest first.
const (
	ScopeAP           = "ap"
	ScopeChannel      = "channel"
	ScopeSSID         = "ssid"
	ScopeBand         = "band"
	ScopeRadiusServer = "radiusServer"
	ScopeFloor        = "floor"
	ScopeSite         = "site"
)

// IncidentScope is the narrowest place holding most affected clients.
type IncidentScope struct {
	Type  string  `json:"type"`
	ID    string  `json:"id"`
	Name  string  `json:"name"`
	Share float64 `json:"share"`
}

// IncidentFigure is one line of an incident's evidence: how many affected
// clients one reason, AP, SSID, band, RADIUS server or floor had.
type IncidentFigure struct {
	// Type: reason, ap, ssid, band, radiusServer or floor.
	Type    string `json:"type"`
	ID      string `json:"id"`
	Name    string `json:"name"`
	Clients int    `json:"clients"`
}

// AnomalyCursor is a position in the order anomalies were raised in:
// raised_at, then location, kind and slot.
type AnomalyCursor struct {
	RaisedAt   int64
	LocationID int64
	Kind       string
	Slot       int64
}

// IncidentChange is what the store's SaveIncident did: whether it opened the incident
// (inserted it) and whether it closed it, and the incidents it merged into
// it (a late anomaly joined them), now deleted.
type IncidentChange struct {
	Opened, Closed bool
	Merged         []int64
}

// Tally is how many clients of an incident one value of a dimension (an
// AP's box id, an SSID, a band, a RADIUS server, a location id, a failure
// code pair "code/sub") had: affected (failing or troubled) and in all
// (attempting or measured).
type Tally struct {
	Key       string
	Affected  int
	Attempted int
}

// IncidentCounts are the counts an incident's cause, scope and evidence
// are made of, over its time span and locations: distinct clients,
// aggregated by the database (memory holds the few top values of each
// dimension, never the events).
type IncidentCounts struct {
	Affected, Attempted int
	// Reasons: connection failures by "code/sub", or the performance
	// reasons "lowDataRate", "highRetry", "lowRssi", "sticky".
	Reasons                         []Tally
	APs, SSIDs, Bands, Radius, Locs []Tally
	// Channels: by channel number (performance only: the channel of the
	// clients' statistics samples).
	Channels []Tally
	// Usual is the share of clients usually affected there and then (the
	// baselines of the incident's anomalies, 0 to 1): the scope is chosen
	// on the clients affected beyond it.
	Usual float64
}
