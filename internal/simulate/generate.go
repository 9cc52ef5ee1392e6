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

// Records are the records of a window of time, each kind oldest first.
type Records struct {
	Events  []Event
	Samples []Sample
	Radios  []RadioSample
}

// Window answers the events and samples in [from, to) (ms), oldest first.
func (g *Generator) Window(from, to int64) ([]Event, []Sample) {
	rec := g.Records(from, to)
	return rec.Events, rec.Samples
}

// radioAt names a radio at a sample time.
type radioAt struct {
	ap    *AP
	band5 bool
	t     int64
}

// Records answers the records in [from, to) (ms): the clients' events and
// samples, and a sample of every radio of every AP that is up at each
// SampleEvery boundary, with the clients connected to it then.
func (g *Generator) Records(from, to int64) Records {
	g.forget(from)
	var rec Records
	loads := map[radioAt]load{}
	for _, c := range g.Net.Clients {
		localDays(c.Home.Site.TZ, from, to, func(midnight time.Time) {
			d := g.day(c, midnight)
			for _, e := range d.events {
				if e.Timestamp >= from && e.Timestamp < to {
					rec.Events = append(rec.Events, e)
				}
			}
			for _, cn := range d.conns {
				lo, hi := max(cn.from, from), min(cn.to, to)
				// The client's first sample time at or after lo.
				t := lo + ((c.offset-lo)%SampleEvery+SampleEvery)%SampleEvery
				for ; t < hi; t += SampleEvery {
					rec.Samples = append(rec.Samples, g.Net.sample(c, cn, t, g.Incidents))
				}
				for t := bucket(lo + SampleEvery - 1); t < hi; t += SampleEvery {
					k := radioAt{cn.ap, c.Band5, t}
					l := loads[k]
					l.clients++
					l.airtime += airtime[c.Kind]
					loads[k] = l
				}
			}
		})
	}
	aps := g.Net.APs()
	for t := bucket(from + SampleEvery - 1); t < to; t += SampleEvery {
		for _, ap := range aps {
			if down(ap, t, g.Incidents) {
				continue
			}
			for _, band5 := range []bool{false, true} {
				rec.Radios = append(rec.Radios, g.Net.radioSample(ap, band5, t, loads[radioAt{ap, band5, t}], g.Incidents))
			}
		}
	}
	slices.SortFunc(rec.Events, func(a, b Event) int {
		return cmp.Or(cmp.Compare(a.Timestamp, b.Timestamp), cmp.Compare(a.MacAddress, b.MacAddress))
	})
	slices.SortFunc(rec.Samples, func(a, b Sample) int {
		return cmp.Or(cmp.Compare(a.Timestamp, b.Timestamp), cmp.Compare(a.MacAddress, b.MacAddress))
	})
	return rec
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
