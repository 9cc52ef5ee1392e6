package radius

import (
	"sync"
	"time"
)

// Upstream kinds, as Health names them.
const (
	UpstreamAuth       = "auth"       // an upstream of the authentication proxy
	UpstreamAccounting = "accounting" // an accounting upstream
)

// UpstreamStatus is what a Health knows of one upstream of one group
// (customer): whether its last exchange was answered, when, and how many
// were and were not.
type UpstreamStatus struct {
	Group      int64
	Address    string // as configured
	Kind       string // UpstreamAuth or UpstreamAccounting
	Up         bool   // the last exchange was answered
	LastTry    time.Time
	LastAnswer time.Time // zero: never answered
	Answered   uint64
	Failed     uint64 // timed out or unreachable
}

// Health follows the upstreams' answers for the status of data sources
// and raises their changes: an upstream that stops answering goes down
// (also when it never answered since the server started), one that
// answers again comes up. It keeps at most maxUpstreams upstreams, the
// least recently tried forgotten first. The zero value is ready; a nil
// *Health follows nothing.
type Health struct {
	// OnChange, if set, is told of each change, outside Health's lock. It
	// must not block.
	OnChange func(s UpstreamStatus)

	mu sync.Mutex
	m  map[healthKey]*UpstreamStatus
}

type healthKey struct {
	group         int64
	address, kind string
}

// maxUpstreams bounds the upstreams a Health follows.
const maxUpstreams = 4096

// observe records an exchange with u (answered or not) at now.
func (h *Health) observe(u *upstream, kind string, answered bool, now time.Time) {
	if h == nil || u == nil {
		return
	}
	k := healthKey{u.group, u.text, kind}
	h.mu.Lock()
	if h.m == nil {
		h.m = map[healthKey]*UpstreamStatus{}
	}
	s := h.m[k]
	if s == nil {
		if len(h.m) >= maxUpstreams {
			var oldest healthKey
			for k, x := range h.m {
				if h.m[oldest] == nil || x.LastTry.Before(h.m[oldest].LastTry) {
					oldest = k
				}
			}
			delete(h.m, oldest)
		}
		s = &UpstreamStatus{Group: u.group, Address: u.text, Kind: kind}
		h.m[k] = s
	}
	// Down from up or from nothing known; up from down only (a first
	// answer is no coming back).
	fresh := s.Answered+s.Failed == 0
	changed := !answered && (fresh || s.Up) || answered && !fresh && !s.Up
	s.Up, s.LastTry = answered, now
	if answered {
		s.Answered++
		s.LastAnswer = now
	} else {
		s.Failed++
	}
	out := *s
	h.mu.Unlock()
	if changed && h.OnChange != nil {
		h.OnChange(out)
	}
}

// Status returns what h knows of the group's upstreams.
func (h *Health) Status(group int64) []UpstreamStatus {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []UpstreamStatus
	for k, s := range h.m {
		if k.group == group {
			out = append(out, *s)
		}
	}
	return out
}
