package auth

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// maxCachedSessions bounds the session cache; past it the cache starts
// over, which costs each live session one more store read.
const maxCachedSessions = 100_000

// rederiveEvery bounds how long the derived fields of a cached user (lock
// state, time zone offset) may go unrecomputed.
const rederiveEvery = time.Minute

// sessionCache keeps sessions and their users between requests. An entry is
// valid for one store revision (when the revision moves, every entry goes)
// and until an auth event names its session or its user. The store stays
// the only truth; the cache never outlives a change it has heard of.
type sessionCache struct {
	mu  sync.RWMutex
	rev uint64
	// epoch moves with every dropped entry. A load that started before a
	// drop may have read what the drop was about, so put keeps it only
	// when the epoch has not moved since.
	epoch uint64
	m     map[string]*cachedSession
}

type cachedSession struct {
	session  *wnms.Session
	user     *wnms.User
	userJSON []byte // the user as GET users/current answers it
	stale    int64  // ms: recompute the derived fields from here on
}

// get returns the entry for tokenHash if it was loaded at revision rev, and
// the epoch to hand to put after loading it anew.
func (c *sessionCache) get(tokenHash string, rev uint64) (*cachedSession, uint64) {
	c.mu.RLock()
	e, epoch, same := c.m[tokenHash], c.epoch, c.rev == rev
	c.mu.RUnlock()
	if !same {
		c.mu.Lock()
		if c.rev != rev {
			c.rev, c.m = rev, nil
			c.epoch++
		}
		epoch = c.epoch
		c.mu.Unlock()
		return nil, epoch
	}
	return e, epoch
}

// put stores an entry loaded at revision rev and epoch (both read before the
// load, so a change during the load leaves the entry out, never wrong).
func (c *sessionCache) put(tokenHash string, rev, epoch uint64, e *cachedSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rev != rev || c.epoch != epoch {
		return
	}
	if c.m == nil || len(c.m) >= maxCachedSessions {
		c.m = make(map[string]*cachedSession)
	}
	c.m[tokenHash] = e
}

// apply drops what an auth event names.
func (c *sessionCache) apply(ev wnms.AuthEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	switch {
	case ev.All:
		c.m = nil
	case ev.Session != "":
		delete(c.m, ev.Session)
	default:
		for h, e := range c.m {
			if e.session.UserID == ev.User {
				delete(c.m, h)
			}
		}
	}
}

func newCachedSession(s *wnms.Session, u *wnms.User, now time.Time) (*cachedSession, error) {
	b, err := json.Marshal(u)
	if err != nil {
		return nil, err
	}
	stale := now.Add(rederiveEvery).UnixMilli()
	if u.LockedUntil > now.UnixMilli() && u.LockedUntil < stale {
		stale = u.LockedUntil
	}
	return &cachedSession{session: s, user: u, userJSON: b, stale: stale}, nil
}
