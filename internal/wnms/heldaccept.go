package wnms

// HeldAccept is a RADIUS accept waiting for the syslog Success of its
// connection, as the store keeps it so that a restart does not lose it
// (docs/datasources.md, "Accepts held for the syslog join").
type HeldAccept struct {
	ServerID   int64  // the server that held it (--server-id)
	EventID    string // the eventId the connection's one Success takes
	CustomerID int64
	Source     string // the data source's name
	HeldAt     int64  // when it was held (ms)
	// Success is the Success as the RADIUS proxy made it, and where its
	// NAS said it was; the store keeps it in the ingest format's JSON.
	// A row that no longer reads as one has a nil Success.MacAddress.
	Success HeldRecord
}

// HeldRecord is a held accept's Success, with where its NAS said it was
// (NAS-Identifier, NAS-IP-Address).
type HeldRecord struct {
	EventRecord
	NASIdentifier string `json:"nasIdentifier,omitempty"`
	NASIPAddress  string `json:"nasIpAddress,omitempty"`
}
