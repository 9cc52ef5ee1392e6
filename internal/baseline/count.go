package baseline

// Counting a slot's observations from per-client rows that arrive one
// client at a time (every row of a client together, as a query ordered by
// MAC gives them): memory holds a count per scope and the scopes of the
// client at hand, however many clients and events the slot has.

// ConnCounter counts the connectivity of every scope of a slot, client by
// client, as ObserveConnectivity does scope by scope. Use NewConnCounter.
type ConnCounter struct {
	ancestors map[int64][]int64
	counts    map[scope]*Connectivity
	mac       string
	client    map[scope][4]bool // the client at hand, by scope
}

// NewConnCounter returns a counter for the scopes that ancestors maps each
// location to (itself and each folder above it).
func NewConnCounter(ancestors map[int64][]int64) *ConnCounter {
	return &ConnCounter{ancestors: ancestors, counts: map[scope]*Connectivity{}, client: map[scope][4]bool{}}
}

// Add counts one row: a client's attempts at one place. Every row of a
// client must come before any row of the next.
func (c *ConnCounter) Add(a ScopedAttempt) {
	if a.MAC != c.mac {
		c.flush()
		c.mac = a.MAC
	}
	eachScope(a.LocationID, a.Band, a.SSID, c.ancestors, func(k scope) {
		f := c.client[k]
		for i := range f {
			f[i] = f[i] || a.Failures[i]
		}
		c.client[k] = f
	})
}

// flush counts the client at hand once in each of its scopes.
func (c *ConnCounter) flush() {
	for k, f := range c.client {
		n := c.counts[k]
		if n == nil {
			n = &Connectivity{}
			c.counts[k] = n
		}
		count(n, f)
	}
	clear(c.client)
}

// Rows ends the count and returns the connectivity of every scope seen.
func (c *ConnCounter) Rows(slot int64) []ConnObsRow {
	c.flush()
	out := make([]ConnObsRow, 0, len(c.counts))
	for k, n := range c.counts {
		out = append(out, ConnObsRow{LocationID: k.loc, Band: k.band, SSID: k.ssid, Slot: slot, Connectivity: Complete(*n)})
	}
	return out
}

// PerfCounter counts the performance of every scope of a slot, client by
// client, as ObservePerformanceSums does scope by scope. Use
// NewPerfCounter.
type PerfCounter struct {
	ancestors map[int64][]int64
	counts    map[scope]*Performance
	mac       string
	client    map[scope]*ClientSums // the client at hand, by scope
}

// NewPerfCounter returns a counter for scopes (see NewConnCounter).
func NewPerfCounter(ancestors map[int64][]int64) *PerfCounter {
	return &PerfCounter{ancestors: ancestors, counts: map[scope]*Performance{}, client: map[scope]*ClientSums{}}
}

// Add counts one row: a client's samples at one place, summed. Every row
// of a client must come before any row of the next.
func (c *PerfCounter) Add(x ScopedSums) {
	if x.MAC != c.mac {
		c.flush()
		c.mac = x.MAC
	}
	eachScope(x.LocationID, x.Band, x.SSID, c.ancestors, func(k scope) {
		if s := c.client[k]; s != nil {
			s.Add(x.ClientSums)
		} else {
			cs := x.ClientSums
			c.client[k] = &cs
		}
	})
}

// flush judges the client at hand by its means in each of its scopes.
func (c *PerfCounter) flush() {
	for k, s := range c.client {
		p := c.counts[k]
		if p == nil {
			p = &Performance{}
			c.counts[k] = p
		}
		judge(p, *s)
	}
	clear(c.client)
}

// Rows ends the count and returns the performance of every scope seen.
func (c *PerfCounter) Rows(slot int64) []PerfObsRow {
	c.flush()
	out := make([]PerfObsRow, 0, len(c.counts))
	for k, p := range c.counts {
		out = append(out, PerfObsRow{LocationID: k.loc, Band: k.band, SSID: k.ssid, Slot: slot, Performance: CompletePerformance(*p)})
	}
	return out
}
