package auth

import (
	"testing"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

func entry(user int64) *cachedSession {
	return &cachedSession{session: &wnms.Session{UserID: user}, user: &wnms.User{UserID: user}}
}

// TestSessionCacheEvents shows what each auth event drops, and that a load
// which raced an event is never kept.
func TestSessionCacheEvents(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   wnms.AuthEvent
		kept map[string]bool
	}{
		{"one session", wnms.AuthEvent{Session: "a1"}, map[string]bool{"a1": false, "a2": true, "b1": true}},
		{"a keep-alive drops just its session", wnms.AuthEvent{Session: "a2", Extended: true}, map[string]bool{"a1": true, "a2": false, "b1": true}},
		{"one user", wnms.AuthEvent{User: 1}, map[string]bool{"a1": false, "a2": false, "b1": true}},
		{"everything", wnms.AuthEvent{All: true}, map[string]bool{"a1": false, "a2": false, "b1": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c sessionCache
			_, epoch := c.get("x", 7)
			c.put("a1", 7, epoch, entry(1))
			c.put("a2", 7, epoch, entry(1))
			c.put("b1", 7, epoch, entry(2))
			c.apply(tc.ev)
			for h, want := range tc.kept {
				got, _ := c.get(h, 7)
				if (got != nil) != want {
					t.Errorf("%s cached %v, want %v", h, got != nil, want)
				}
			}
		})
	}
	t.Run("a load that raced an event is not kept", func(t *testing.T) {
		var c sessionCache
		_, epoch := c.get("a1", 7) // the load starts
		c.apply(wnms.AuthEvent{User: 1})
		c.put("a1", 7, epoch, entry(1)) // and ends with what it read before the event
		if got, _ := c.get("a1", 7); got != nil {
			t.Error("a stale load was cached")
		}
	})
	t.Run("a new revision drops everything", func(t *testing.T) {
		var c sessionCache
		_, epoch := c.get("a1", 7)
		c.put("a1", 7, epoch, entry(1))
		if got, _ := c.get("a1", 8); got != nil {
			t.Error("an entry outlived its revision")
		}
		if got, _ := c.get("a1", 7); got != nil {
			t.Error("an entry came back with the old revision")
		}
	})
}

func TestPasswordHashing(t *testing.T) {
	p := Argon2Params{Memory: 64, Time: 1, Threads: 1}
	h, err := HashPassword("correct horse", p)
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := HashPassword("correct horse", p)
	if h == h2 {
		t.Error("two hashes of one password are equal: no salt")
	}
	for _, tc := range []struct {
		hash, pw string
		want     bool
	}{
		{h, "correct horse", true},
		{h, "correct horse ", false},
		{h, "", false},
		{"", "correct horse", false},
		{"$argon2id$v=19$m=64,t=1,p=1$bad", "correct horse", false},
		{"$argon2i$v=19$m=64,t=1,p=1$AAAA$AAAA", "correct horse", false},
		{"$argon2id$v=19$m=99999999,t=1,p=1$AAAA$AAAA", "x", false}, // absurd cost is refused, not run
	} {
		if got := CheckPassword(tc.hash, tc.pw); got != tc.want {
			t.Errorf("CheckPassword(%q, %q) = %v, want %v", tc.hash, tc.pw, got, tc.want)
		}
	}
}

func TestKeyHash(t *testing.T) {
	secret := []byte("server secret")
	h := KeyHash(secret, "wk1", "value")
	for _, tc := range []struct {
		secret    []byte
		id, value string
		hash      []byte
		want      bool
	}{
		{secret, "wk1", "value", h, true},
		{secret, "wk2", "value", h, false}, // a hash does not move to another key
		{secret, "wk1", "other", h, false},
		{[]byte("other secret"), "wk1", "value", h, false},
		{secret, "wk1", "value", nil, false},
	} {
		if got := CheckKey(tc.secret, tc.id, tc.value, tc.hash); got != tc.want {
			t.Errorf("CheckKey(%s, %s) = %v, want %v", tc.id, tc.value, got, tc.want)
		}
	}
	if RetryAfter(1500*time.Millisecond) != "2" || RetryAfter(time.Second) != "1" {
		t.Error("RetryAfter does not round up to whole seconds")
	}
}
