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
	Record     []byte // the Success as the RADIUS proxy made it (ingest format)
}
