package auth_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/wnms"
)

// countingStore is the real store, counting the session reads that reach
// it.
type countingStore struct {
	auth.Store
	reads atomic.Int64
}

func (c *countingStore) SessionUser(ctx context.Context, tokenHash string) (*wnms.Session, *wnms.User, error) {
	c.reads.Add(1)
	return c.Store.SessionUser(ctx, tokenHash)
}

// robotKey makes a VIEWER "robot" and an API key of it, and returns the
// key and its value.
func robotKey(t *testing.T, ctx context.Context, st *store.Store, a *auth.Service) (*wnms.APIKey, string) {
	t.Helper()
	u, err := auth.EnsureAPIUser(ctx, st, "robot", "VIEWER", wnms.OnPremCustomer)
	if err != nil {
		t.Fatal(err)
	}
	k, v, err := a.NewKey(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	return k, v
}

// Sessions are served from the cache on both stores (on PostgreSQL once
// the notification connection is up), and a logout in this process is
// refused at once.
func TestAuthenticateCaches(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		st := apitest.OpenStore(t, b)
		cs := &countingStore{Store: st}
		ctx := context.Background()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, ok := st.AuthRevision(); ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the store offers no cacheable revision")
			}
		}
		a := auth.NewService(cs, []byte("secret"))
		k, v := robotKey(t, ctx, st, a)
		l, err := a.LoginKey(ctx, auth.LoginRequest{ClientIdentifier: "t", Timeout: 600, Addr: "127.0.0.1"}, k.KeyID, v)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 100; i++ {
			if _, err := a.Authenticate(ctx, l.Token); err != nil {
				t.Fatal(err)
			}
		}
		if n := cs.reads.Load(); n != 1 {
			t.Errorf("100 requests read the session %d times, want 1", n)
		}
		c, _ := a.Authenticate(ctx, l.Token)
		if err := a.KeepAlive(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := a.Logout(ctx, c); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Authenticate(ctx, l.Token); wnms.ErrorCode(err) != wnms.SessionExpired {
			t.Errorf("after logout: %v, want SESSION_EXPIRED", err)
		}
	})
}

// failingSessions is the real store whose session inserts fail while
// fail is set.
type failingSessions struct {
	auth.Store
	fail atomic.Bool
}

func (f *failingSessions) CreateSession(ctx context.Context, s *wnms.Session, release []int64) error {
	if f.fail.Load() {
		return errors.New("session insert failed")
	}
	return f.Store.CreateSession(ctx, s, release)
}

// TestLoginWithoutSessionGivesBackAttempts: a login whose credentials were
// right but whose session could not be stored does not count as a failed
// attempt (its attempts went back with the session's transaction, which
// failed): as many of them as the throttle allows failures leave the
// next login free.
func TestLoginWithoutSessionGivesBackAttempts(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		st := apitest.OpenStore(t, b)
		fs := &failingSessions{Store: st}
		ctx := context.Background()
		a := auth.NewService(fs, []byte("secret"))
		k, v := robotKey(t, ctx, st, a)
		req := auth.LoginRequest{ClientIdentifier: "t", Timeout: 600, Addr: "127.0.0.1"}
		fs.fail.Store(true)
		for i := range a.MaxAttempts + 1 {
			if _, err := a.LoginKey(ctx, req, k.KeyID, v); err == nil || wnms.ErrorCode(err) == wnms.RateLimited {
				t.Fatalf("login %d with the session store failing: %v", i+1, err)
			}
		}
		fs.fail.Store(false)
		if _, err := a.LoginKey(ctx, req, k.KeyID, v); err != nil {
			t.Fatalf("after the store recovered: %v", err)
		}
	})
}
