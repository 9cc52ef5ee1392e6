package simulate

import (
	"cmp"
	"slices"
	"time"
)

// Generator draws the records of any window of time. A client's day is
// drawn whole (and kept while the window is near it), then cut to the
// window, so the records of a moment are the same whichever windows are
// asked for.
type Generator struct {
	Net       *Network
	Incidents []Incident
	days      map[dayRef]*day
}

type dayRef struct {
	client   int
	midnight int64
}

// NewGenerator returns a generator of the network's records with the
// incidents placed.
func NewGenerator(n *Network, incs []Incident) *Generator {
	return &Generator{Net: n, Incidents: incs, days: map[dayRef]*day{}}
}

// localDays calls f with each local midnight, in tz, of a day that
// overlaps [from, to) (ms).
func localDays(tz *time.Location, from, to int64, f func(midnight time.Time)) {
	t := time.UnixMilli(from).In(tz)
	y, m, d := t.Date()
	for day := time.Date(y, m, d, 0, 0, 0, 0, tz); day.UnixMilli() < to; {
		f(day)
		y, m, d = day.Date()
		day = time.Date(y, m, d+1, 0, 0, 0, 0, tz)
	}
}

func (g *Generator) day(c *Client, midnight time.Time) *day {
	ref := dayRef{c.Index, midnight.UnixMilli()}
	if d, ok := g.days[ref]; ok {
		return d
	}
	d := g.Net.dayOf(c, midnight, g.Incidents)
	g.days[ref] = d
	return d
}

// forget drops the days that ended more than a day before t.
func (g *Generator) forget(t int64) {
	for ref := range g.days {
		if ref.midnight < t-3*24*time.Hour.Milliseconds() {
			delete(g.days, ref)
		}
	}
}

// Window answers the events and samples in [from, to) (ms), oldest first.
func (g *Generator) Window(from, to int64) ([]Event, []Sample) {
	g.forget(from)
	var events []Event
	var samples []Sample
	for _, c := range g.Net.Clients {
		localDays(c.Home.Site.TZ, from, to, func(midnight time.Time) {
			d := g.day(c, midnight)
			for _, e := range d.events {
				if e.Timestamp >= from && e.Timestamp < to {
					events = append(events, e)
				}
			}
			for _, cn := range d.conns {
				lo, hi := max(cn.from, from), min(cn.to, to)
				// The client's first sample time at or after lo.
				t := lo + ((c.offset-lo)%SampleEvery+SampleEvery)%SampleEvery
				for ; t < hi; t += SampleEvery {
					samples = append(samples, g.Net.sample(c, cn.ap, t, g.Incidents))
				}
			}
		})
	}
	slices.SortFunc(events, func(a, b Event) int {
		return cmp.Or(cmp.Compare(a.Timestamp, b.Timestamp), cmp.Compare(a.MacAddress, b.MacAddress))
	})
	slices.SortFunc(samples, func(a, b Sample) int {
		return cmp.Or(cmp.Compare(a.Timestamp, b.Timestamp), cmp.Compare(a.MacAddress, b.MacAddress))
	})
	return events, samples
}

// Associated counts the clients connected to each AP at t.
func (g *Generator) Associated(t int64) map[*AP]int {
	out := map[*AP]int{}
	for _, c := range g.Net.Clients {
		localDays(c.Home.Site.TZ, t, t+1, func(midnight time.Time) {
			for _, cn := range g.day(c, midnight).conns {
				if t >= cn.from && t < cn.to {
					out[cn.ap]++
				}
			}
		})
	}
	return out
}
