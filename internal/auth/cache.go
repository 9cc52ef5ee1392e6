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

// sessionCache keeps sessions and their users between requests, valid for
// one store revision: when the revision moves (a logout, a revoked key, a
// changed user, in any process on the store) every entry is dropped. The
// store stays the only truth; the cache never outlives a change to it.
type sessionCache struct {
	mu  sync.RWMutex
	rev uint64
	m   map[string]*cachedSession
}

type cachedSession struct {
	session  *wnms.Session
	user     *wnms.User
	userJSON []byte // the user as GET users/current answers it
	stale    int64  // ms: recompute the derived fields from here on
}

// get returns the entry for tokenHash if it was loaded at revision rev.
func (c *sessionCache) get(tokenHash string, rev uint64) *cachedSession {
	c.mu.RLock()
	e := c.m[tokenHash]
	same := c.rev == rev
	c.mu.RUnlock()
	if !same {
		c.mu.Lock()
		if c.rev != rev {
			c.rev, c.m = rev, nil
		}
		c.mu.Unlock()
		return nil
	}
	return e
}

// put stores an entry loaded at revision rev (read before the load, so a
// change during the load leaves the entry stale, never wrong).
func (c *sessionCache) put(tokenHash string, rev uint64, e *cachedSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rev != rev {
		return
	}
	if c.m == nil || len(c.m) >= maxCachedSessions {
		c.m = make(map[string]*cachedSession)
	}
	c.m[tokenHash] = e
}

// drop removes an entry (a session this process saw expire or end).
func (c *sessionCache) drop(tokenHash string) {
	c.mu.Lock()
	delete(c.m, tokenHash)
	c.mu.Unlock()
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
