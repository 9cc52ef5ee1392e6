package datasource

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// SourceIdleAfter is how long a source may send nothing and still count
// as up in the status.
const SourceIdleAfter = 5 * time.Minute

// maxUnmatched bounds the unmatched BSSIDs, NAS-Identifiers and
// addresses kept per source; past it the least recently seen is
// forgotten.
const maxUnmatched = 256

// sourceStats is what the status tells of one source.
type sourceStats struct {
	mu        sync.Mutex
	last      time.Time
	counts    map[string]uint64
	unmatched map[wnms.UnmatchedID]*wnms.UnmatchedID // keyed by the id with LastSeen and Records zero
}

// stats returns source e's stats, made on first use.
func (b *Bridge) stats(e *entry) *sourceStats {
	k := key(e.customer, e.src.Name)
	b.statsMu.Lock()
	defer b.statsMu.Unlock()
	if b.sourceStats == nil {
		b.sourceStats = map[string]*sourceStats{}
	}
	s := b.sourceStats[k]
	if s == nil {
		s = &sourceStats{counts: map[string]uint64{}, unmatched: map[wnms.UnmatchedID]*wnms.UnmatchedID{}}
		b.sourceStats[k] = s
	}
	return s
}

// forgetStats drops the stats of the sources t does not hold (removed or
// renamed), so they stay bounded by the sources configured.
func (b *Bridge) forgetStats(t *table) {
	b.statsMu.Lock()
	defer b.statsMu.Unlock()
	for k := range b.sourceStats {
		if _, ok := t.byName[k]; !ok {
			delete(b.sourceStats, k)
		}
	}
}

// heardFrom records that source e sent something at now.
func (b *Bridge) heardFrom(e *entry, now time.Time) {
	s := b.stats(e)
	s.mu.Lock()
	if now.After(s.last) {
		s.last = now
	}
	s.mu.Unlock()
}

// count adds n records of source e with outcome.
func (b *Bridge) count(e *entry, outcome string, n int) {
	if n <= 0 {
		return
	}
	s := b.stats(e)
	s.mu.Lock()
	s.counts[outcome] += uint64(n)
	s.mu.Unlock()
}

// noAP records the BSSID, NAS-Identifier and address a record of source
// e named when they matched no AP.
func (b *Bridge) noAP(e *entry, bssid, nasID, address string, now time.Time) {
	s := b.stats(e)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range []wnms.UnmatchedID{{BSSID: bssid}, {NASIdentifier: nasID}, {Address: address}} {
		if id == (wnms.UnmatchedID{}) {
			continue
		}
		u := s.unmatched[id]
		if u == nil {
			if len(s.unmatched) >= maxUnmatched {
				var oldest *wnms.UnmatchedID
				var oldestKey wnms.UnmatchedID
				for k, x := range s.unmatched {
					if oldest == nil || x.LastSeen < oldest.LastSeen {
						oldest, oldestKey = x, k
					}
				}
				delete(s.unmatched, oldestKey)
			}
			u = &wnms.UnmatchedID{BSSID: id.BSSID, NASIdentifier: id.NASIdentifier, Address: id.Address}
			s.unmatched[id] = u
		}
		u.LastSeen = max(u.LastSeen, now.UnixMilli())
		u.Records++
	}
}

// Status tells what this server's listeners saw of the sources srcs (of
// customer, as its configuration holds them) and, with upstreams, of the
// customer's RADIUS upstreams.
func (b *Bridge) Status(customer int64, srcs []wnms.DataSource, upstreams bool, now time.Time) *wnms.DataSourceStatus {
	b.init()
	out := &wnms.DataSourceStatus{Sources: []wnms.SourceStatus{}, Upstreams: []wnms.UpstreamStatus{}}
	for _, src := range srcs {
		st := wnms.SourceStatus{Name: src.Name, LocationID: src.LocationID, State: wnms.StateIdle,
			Counts: map[string]uint64{}, Unmatched: []wnms.UnmatchedID{}}
		for _, o := range []string{OutcomeAccepted, OutcomeDuplicate, OutcomeRejected, OutcomeUnmatched} {
			st.Counts[o] = 0
		}
		b.statsMu.Lock()
		s := b.sourceStats[key(customer, src.Name)]
		b.statsMu.Unlock()
		if s != nil {
			s.mu.Lock()
			if !s.last.IsZero() {
				ms := s.last.UnixMilli()
				st.LastPacket = &ms
				if now.Sub(s.last) < SourceIdleAfter {
					st.State = wnms.StateUp
				}
			}
			for o, n := range s.counts {
				st.Counts[o] = n
			}
			for _, u := range s.unmatched {
				st.Unmatched = append(st.Unmatched, *u)
			}
			s.mu.Unlock()
		}
		slices.SortFunc(st.Unmatched, func(a, b wnms.UnmatchedID) int {
			return cmp.Or(cmp.Compare(b.LastSeen, a.LastSeen), cmp.Compare(a.BSSID, b.BSSID),
				cmp.Compare(a.NASIdentifier, b.NASIdentifier), cmp.Compare(a.Address, b.Address))
		})
		if src.RadiusSecret != "" && !b.RadiusOn || src.Syslog && !b.SyslogOn {
			st.State = wnms.StateDown
		}
		out.Sources = append(out.Sources, st)
	}
	if upstreams {
		for _, u := range b.Health.Status(customer) {
			us := wnms.UpstreamStatus{Address: u.Address, Kind: u.Kind, State: wnms.StateDown,
				Counts: map[string]uint64{"answered": u.Answered, "failed": u.Failed}}
			if u.Up {
				us.State = wnms.StateUp
			}
			if !u.LastAnswer.IsZero() {
				ms := u.LastAnswer.UnixMilli()
				us.LastAnswer = &ms
			}
			out.Upstreams = append(out.Upstreams, us)
		}
		out.Upstreams = withIdle(out.Upstreams, b.configured(customer))
	}
	return out
}

// configured lists the customer's upstreams in force, as kind and
// address.
func (b *Bridge) configured(customer int64) [][2]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.upstreams[customer]
}

// withIdle adds the configured upstreams not tried yet, idle, and puts
// them in configured order (auth first); those no longer configured are
// left out.
func withIdle(seen []wnms.UpstreamStatus, configured [][2]string) []wnms.UpstreamStatus {
	out := make([]wnms.UpstreamStatus, 0, len(configured))
	for _, c := range configured {
		i := slices.IndexFunc(seen, func(u wnms.UpstreamStatus) bool { return u.Kind == c[0] && u.Address == c[1] })
		if i >= 0 {
			out = append(out, seen[i])
			continue
		}
		out = append(out, wnms.UpstreamStatus{Address: c[1], Kind: c[0], State: wnms.StateIdle,
			Counts: map[string]uint64{"answered": 0, "failed": 0}})
	}
	return out
}
