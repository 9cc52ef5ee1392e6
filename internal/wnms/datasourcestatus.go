package wnms

// DataSourceStatus is GET /V5/datasources/status: what this server's
// RADIUS and syslog listeners have seen of the caller's data sources and
// RADIUS upstreams since it started (decisions §21).
type DataSourceStatus struct {
	Sources   []SourceStatus   `json:"sources"`
	Upstreams []UpstreamStatus `json:"upstreams"`
	Pollers   []PollerStatus   `json:"pollers"`
}

// PollerState is a poller's state as its server records it with its
// lease at each poll: up (the last poll was stored), down (two or more
// failed in a row), starting (none done yet); when the last poll
// succeeded (ms, 0: never), the last error, and what it saw.
type PollerState struct {
	State     string
	LastPoll  int64
	LastError string
	Radios    int
	Stations  int
	// Read back only: the server that holds the lease, and when it runs
	// out (ms).
	Holder  string
	Expires int64
}

// PollerStatus is one poller's status: its state, when it was last
// polled, why the last poll failed, and the radios and clients it saw.
// A poller whose lease ran out (no server polls it: its server stopped)
// is down.
type PollerStatus struct {
	Name       string     `json:"name"`
	Kind       string     `json:"kind"`
	LocationID LocationID `json:"locationId"`
	State      string     `json:"state"`
	LastPoll   *int64     `json:"lastPoll"`  // ms; null: never
	LastError  *string    `json:"lastError"` // null: the last poll succeeded
	Radios     int        `json:"radios"`
	Clients    int        `json:"clients"`
}

// PollerStatusOf is p's status from its recorded state (ok false: none
// recorded yet) at now.
func PollerStatusOf(p Poller, st PollerState, ok bool, now int64) PollerStatus {
	out := PollerStatus{Name: p.Name, Kind: p.Kind, LocationID: p.LocationID, State: "starting"}
	if !ok {
		return out
	}
	out.State, out.Radios, out.Clients = st.State, st.Radios, st.Stations
	if st.LastPoll > 0 {
		out.LastPoll = &st.LastPoll
	}
	if st.LastError != "" {
		out.LastError = &st.LastError
	}
	if st.Expires < now {
		out.State = StateDown
		msg := "no server polls it: the lease of the server that did ran out"
		out.LastError = &msg
	}
	return out
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
