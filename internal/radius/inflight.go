package radius

import "sync"

// Defaults of the bounds on requests in flight (decisions §21): per
// source and per group (a customer), below the listener's total, so that
// one customer's flood or dead upstream never takes another's capacity.
const (
	DefaultMaxInFlight          = 4096
	DefaultMaxInFlightPerSource = 256
	DefaultMaxInFlightPerGroup  = 1024
)

// inflight counts the requests being handled, in all, by source and by
// group, and refuses one more past a bound. Its memory is bounded by the
// requests in flight: a count that falls to zero is forgotten.
type inflight struct {
	max, perSource, perGroup int

	mu      sync.Mutex
	total   int
	sources map[string]int // by Source.key()
	groups  map[int64]int
}

func newInflight(max, perSource, perGroup int) *inflight {
	if max <= 0 {
		max = DefaultMaxInFlight
	}
	if perSource <= 0 {
		perSource = DefaultMaxInFlightPerSource
	}
	if perGroup <= 0 {
		perGroup = DefaultMaxInFlightPerGroup
	}
	return &inflight{max: max, perSource: perSource, perGroup: perGroup,
		sources: map[string]int{}, groups: map[int64]int{}}
}

// acquire takes a place for a request of src, or says which bound
// refused it.
func (l *inflight) acquire(src Source) (DropReason, bool) {
	k := src.key()
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.sources[k] >= l.perSource:
		return DropBusySource, false
	case l.groups[src.Group] >= l.perGroup:
		return DropBusyCustomer, false
	case l.total >= l.max:
		return DropBusy, false
	}
	l.sources[k]++
	l.groups[src.Group]++
	l.total++
	return 0, true
}

// release gives back the place of a request of src.
func (l *inflight) release(src Source) {
	k := src.key()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sources[k]--; l.sources[k] <= 0 {
		delete(l.sources, k)
	}
	if l.groups[src.Group]--; l.groups[src.Group] <= 0 {
		delete(l.groups, src.Group)
	}
	l.total--
}
