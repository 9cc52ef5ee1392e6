package baseline

// Counting a slot's observations from per-client rows that arrive one
// client at a time (every row of a client together, as a query ordered by
// MAC gives them): memory holds a count per scope and the scopes of the
// client at hand, however many clients and events the slot has.

import "github.com/wnms/wnms/internal/wnms"

// ConnCounter counts the connectivity of every scope of a slot, client by
// client, as ObserveConnectivity does scope by scope. Use NewConnCounter.
//
// Most clients of a slot are seen at one place only (one row): those are
// counted by place and failures, and spread over their scopes once per
// place at the end, so that a client costs one map update rather than
// one per scope (four levels, two bands and two SSIDs make 16). A client
// with several rows is merged scope by scope, as a client seen in two
// places counts once in the scopes they share.
type ConnCounter struct {
	ancestors map[int64][]int64
	counts    map[scope]*wnms.Connectivity
	mac       string
	rows      int                   // rows of the client at hand
	first     wnms.ScopedAttempt    // its first row
	client    map[scope][4]bool     // the client at hand, by scope, once it has a second row
	alone     map[placeFailures]int // clients seen at one place only
}

// placeFailures is a place (a location, band and SSID) and the categories
// a client failed in there.
type placeFailures struct {
	scope
	f [4]bool
}

// NewConnCounter returns a counter for the scopes that ancestors maps each
// location to (itself and each folder above it).
func NewConnCounter(ancestors map[int64][]int64) *ConnCounter {
	return &ConnCounter{ancestors: ancestors, counts: map[scope]*wnms.Connectivity{}, client: map[scope][4]bool{},
		alone: map[placeFailures]int{}}
}

// Add counts one row: a client's attempts at one place. Every row of a
// client must come before any row of the next.
func (c *ConnCounter) Add(a wnms.ScopedAttempt) {
	if c.rows == 0 || a.MAC != c.mac {
		c.flush()
		c.mac, c.first, c.rows = a.MAC, a, 1
		return
	}
	if c.rows == 1 {
		c.merge(c.first)
	}
	c.rows++
	c.merge(a)
}

// merge adds a row of the client at hand to its scopes.
func (c *ConnCounter) merge(a wnms.ScopedAttempt) {
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
	switch {
	case c.rows == 1:
		c.alone[placeFailures{scope{c.first.LocationID, c.first.Band, c.first.SSID}, c.first.Failures}]++
	case c.rows > 1:
		for k, f := range c.client {
			c.countIn(k, f, 1)
		}
		clear(c.client)
	}
	c.rows = 0
}

// countIn counts n clients failing in f in the scope k.
func (c *ConnCounter) countIn(k scope, f [4]bool, n int) {
	x := c.counts[k]
	if x == nil {
		x = &wnms.Connectivity{}
		c.counts[k] = x
	}
	countClients(x, f, n)
}

// Rows ends the count and returns the connectivity of every scope seen.
func (c *ConnCounter) Rows(slot int64) []wnms.ConnObsRow {
	c.flush()
	for p, n := range c.alone {
		eachScope(p.loc, p.band, p.ssid, c.ancestors, func(k scope) { c.countIn(k, p.f, n) })
	}
	clear(c.alone)
	out := make([]wnms.ConnObsRow, 0, len(c.counts))
	for k, n := range c.counts {
		out = append(out, wnms.ConnObsRow{LocationID: k.loc, Band: k.band, SSID: k.ssid, Slot: slot, Connectivity: wnms.CompleteConnectivity(*n)})
	}
	return out
}

// PerfCounter counts the performance of every scope of a slot, client by
// client, as ObservePerformanceSums does scope by scope, and, in the same
// pass, that of the clients of each AP's radio (Radios). Use
// NewPerfCounter.
type PerfCounter struct {
	ancestors map[int64][]int64
	counts    map[scope]*wnms.Performance
	mac       string
	client    map[scope]*wnms.ClientSums // the client at hand, by scope
	// radios are the counts by AP radio, and atRadio the client at hand's
	// samples at each radio it used, in the slot and in the slot before.
	radios  map[radio]*wnms.APPerformance
	atRadio map[radio]*[2]wnms.ClientSums
}

// radio is an AP's radio at a location: an AP and a band.
type radio struct {
	loc, ap int64
	band    string
}

// NewPerfCounter returns a counter for scopes (see NewConnCounter).
func NewPerfCounter(ancestors map[int64][]int64) *PerfCounter {
	return &PerfCounter{ancestors: ancestors, counts: map[scope]*wnms.Performance{}, client: map[scope]*wnms.ClientSums{},
		radios: map[radio]*wnms.APPerformance{}, atRadio: map[radio]*[2]wnms.ClientSums{}}
}

// Add counts one row: a client's samples at one place, summed. Every row
// of a client must come before any row of the next.
func (c *PerfCounter) Add(x wnms.ScopedSums) {
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
	// A radio is an AP's on a band: samples at no known AP, or of no
	// known band, belong to none.
	if x.APBoxID != 0 && (x.Band == wnms.Band24GHz || x.Band == wnms.Band5GHz) {
		k := radio{x.LocationID, x.APBoxID, x.Band}
		if s := c.atRadio[k]; s != nil {
			s[0].Add(x.ClientSums)
			s[1].Add(x.Before)
		} else {
			c.atRadio[k] = &[2]wnms.ClientSums{x.ClientSums, x.Before}
		}
	}
}

// flush judges the client at hand by its means in each of its scopes,
// and at each radio it used by its means there, and says how they
// changed there since the slot before.
func (c *PerfCounter) flush() {
	for k, s := range c.client {
		p := c.counts[k]
		if p == nil {
			p = &wnms.Performance{}
			c.counts[k] = p
		}
		judge(p, *s)
	}
	clear(c.client)
	for k, s := range c.atRadio {
		now, before := s[0], s[1]
		if now.N == 0 {
			continue
		}
		a := c.radios[k]
		if a == nil {
			a = &wnms.APPerformance{}
			c.radios[k] = a
		}
		var p wnms.Performance
		judge(&p, now)
		a.Clients++
		a.Troubled += p.Troubled
		a.LowRSSI += p.LowRSSI
		a.HighRetry += p.HighRetry
		if before.N > 0 {
			a.Paired++
			a.RSSIChangeSum += now.RSSI/float64(now.N) - before.RSSI/float64(before.N)
			a.RetryChangeSum += now.Retry/float64(now.N) - before.Retry/float64(before.N)
		}
	}
	clear(c.atRadio)
}

// Radios ends the count and returns the performance of the clients of
// every AP radio seen (after Rows, the radios of the same count).
func (c *PerfCounter) Radios(slot int64) []wnms.APObsRow {
	c.flush()
	out := make([]wnms.APObsRow, 0, len(c.radios))
	for k, a := range c.radios {
		out = append(out, wnms.APObsRow{LocationID: k.loc, APBoxID: k.ap, Band: k.band, Slot: slot, APPerformance: *a})
	}
	return out
}

// Rows ends the count and returns the performance of every scope seen.
func (c *PerfCounter) Rows(slot int64) []wnms.PerfObsRow {
	c.flush()
	out := make([]wnms.PerfObsRow, 0, len(c.counts))
	for k, p := range c.counts {
		out = append(out, wnms.PerfObsRow{LocationID: k.loc, Band: k.band, SSID: k.ssid, Slot: slot, Performance: wnms.CompletePerformance(*p)})
	}
	return out
}
