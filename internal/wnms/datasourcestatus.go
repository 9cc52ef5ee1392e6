package wnms

// DataSourceStatus is GET /V5/datasources/status: what this server's
// RADIUS and syslog listeners have seen of the caller's data sources and
// RADIUS upstreams since it started (decisions §21).
type DataSourceStatus struct {
	Sources   []SourceStatus   `json:"sources"`
	Upstreams []UpstreamStatus `json:"upstreams"`
}

// Source and upstream states.
const (
	StateUp   = "up"
	StateDown = "down"
	StateIdle = "idle"
)

// SourceStatus is one source's status: up when it sent a record within
// the last SourceIdleAfter, idle when not, down when a listener it needs
// is off on this server.
type SourceStatus struct {
	Name       string     `json:"name"`
	LocationID LocationID `json:"locationId"`
	State      string     `json:"state"`
	LastPacket *int64     `json:"lastPacket"` // ms; null: none since the server started
	// Counts are the source's records by outcome: accepted, duplicate,
	// rejected, unmatched (placed at the source's location, no AP
	// matched; also counted by the others).
	Counts map[string]uint64 `json:"counts"`
	// Unmatched are the BSSIDs, NAS-Identifiers and addresses its records
	// named that no AP matched, newest first (bounded).
	Unmatched []UnmatchedID `json:"unmatched"`
}

// UnmatchedID is a BSSID, NAS-Identifier or address (NAS-IP-Address, or
// the address a syslog line came from) a source's records named that
// matched no AP of its customer: one of the three.
type UnmatchedID struct {
	BSSID         string `json:"bssid,omitempty"`
	NASIdentifier string `json:"nasIdentifier,omitempty"`
	Address       string `json:"address,omitempty"`
	LastSeen      int64  `json:"lastSeen"` // ms
	Records       uint64 `json:"records"`
}

// UpstreamStatus is one RADIUS upstream's status: up when its last
// exchange was answered, down when not, idle when this server has sent
// it nothing yet.
type UpstreamStatus struct {
	Address    string            `json:"address"`
	Kind       string            `json:"kind"` // auth or accounting
	State      string            `json:"state"`
	LastAnswer *int64            `json:"lastAnswer"` // ms; null: none since the server started
	Counts     map[string]uint64 `json:"counts"`     // answered, failed
}
