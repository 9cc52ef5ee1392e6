package poller

import "time"

// SetInterval makes every poller of m poll every d, whatever its
// configuration says (the tests' faster clock).
func SetInterval(m *Manager, d time.Duration) { m.interval = d }
