package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// within waits for c at most 10 s: a test that fails must not hang.
func within[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still waiting after 10 s", what)
		panic("unreachable")
	}
}

// stillWaiting fails the test when c yields within 200 ms.
func stillWaiting[T any](t *testing.T, c <-chan T, what string) {
	t.Helper()
	select {
	case v := <-c:
		t.Fatalf("%s did not wait (%v)", what, v)
	case <-time.After(200 * time.Millisecond):
	}
}

func clientAt(loc, ts int64, name string) wnms.ClientUpdate {
	return wnms.ClientUpdate{MacAddress: "AA:00:00:00:00:08", Timestamp: ts, EventType: "Success", BSSID: "00:11:74:00:00:01",
		SSID: "corp", Channel: 36, Protocol: "A", LocationID: loc, Name: name}
}

// replicas opens two handles on one new store, as two replicas would; on
// SQLite, whose database one process holds, the same handle twice.
func replicas(t *testing.T, b storetest.Backend) (*store.Store, *store.Store) {
	cfg := storetest.StoreConfig(t, b)
	first := storetest.OpenStoreAt(t, cfg)
	if b != storetest.Postgres {
		return first, first
	}
	return first, storetest.OpenStoreAt(t, cfg)
}

// holdScoped starts a scoped update of st and returns once it has read
// where its clients are, holding it there until release is called (at
// the latest when the test ends); done answers its end.
func holdScoped(t *testing.T, st *store.Store, customerID int64, updates map[int64]wnms.ClientUpdate) (release func(), done <-chan error) {
	t.Helper()
	inside, hold, end := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		end <- st.UpdateScopedClients(context.Background(), customerID, updates, func(map[int64]int64) (map[int64]wnms.ClientUpdate, error) {
			close(inside)
			<-hold
			return nil, nil
		})
	}()
	select {
	case <-inside:
	case err := <-end:
		t.Fatalf("the scoped update ended without reading: %v", err)
	}
	release = sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release) // a test that failed before releasing it leaves no transaction open
	return release, end
}

// TestScopedClientUpdatesTakeTurns: one customer's scoped client updates
// run one after another, on PostgreSQL across replicas too: a second
// replica's update reads where a client is only once the first one's
// update committed, and another customer's does not wait (PostgreSQL;
// SQLite's one writer runs every write in turn anyway).
func TestScopedClientUpdatesTakeTurns(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		first, second := replicas(t, b)
		t0 := time.Now().Add(-time.Hour).UnixMilli()
		for cust, box := range map[int64]int64{1: 8, 2: 9} {
			if err := first.UpdateClients(ctx, cust, map[int64]wnms.ClientUpdate{box: clientAt(1, t0, "")}); err != nil {
				t.Fatal(err)
			}
		}
		none := func(map[int64]int64) (map[int64]wnms.ClientUpdate, error) { return nil, nil }

		release, firstDone := holdScoped(t, first, 1, map[int64]wnms.ClientUpdate{8: clientAt(2, t0+1000, "")})
		read, secondDone := make(chan int64, 1), make(chan error, 1)
		go func() {
			secondDone <- second.UpdateScopedClients(ctx, 1, map[int64]wnms.ClientUpdate{8: clientAt(3, t0+2000, "")},
				func(where map[int64]int64) (map[int64]wnms.ClientUpdate, error) {
					read <- where[8]
					return nil, nil
				})
		}()
		if b == storetest.Postgres {
			// Another customer's turn is its own.
			other := make(chan error, 1)
			go func() {
				other <- second.UpdateScopedClients(ctx, 2, map[int64]wnms.ClientUpdate{9: clientAt(2, t0+1000, "")}, none)
			}()
			if err := within(t, other, "another customer's update"); err != nil {
				t.Fatal(err)
			}
		}
		stillWaiting(t, read, "the second update's read, while the first had not committed,")
		release()
		if err := within(t, firstDone, "the first update"); err != nil {
			t.Fatal(err)
		}
		if loc := within(t, read, "the second update's read"); loc != 2 {
			t.Errorf("the second update read the client at %d, want 2 (the first one's)", loc)
		}
		if err := within(t, secondDone, "the second update"); err != nil {
			t.Fatal(err)
		}
		where, err := first.ClientLocations(ctx, 1, []int64{8})
		if err != nil {
			t.Fatal(err)
		}
		if where[8] != 3 {
			t.Errorf("the client ends at %d, want 3", where[8])
		}
	})
}

// TestScopedClientUpdatesKeepOthersOut: no other write of the customer's
// clients (an update at once, or the flush of state written behind) lands
// between a scoped update's read of where its clients are and its commit.
// One that did could move the client to another site with that site's
// name, which the scoped update, having read the client at its own
// location, would keep.
func TestScopedClientUpdatesKeepOthersOut(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		for _, w := range []struct {
			name  string
			write func(ctx context.Context, st *store.Store, u wnms.ClientUpdate) error
		}{
			{"update", func(ctx context.Context, st *store.Store, u wnms.ClientUpdate) error {
				return st.UpdateClients(ctx, 1, map[int64]wnms.ClientUpdate{8: u})
			}},
			{"flush written behind", func(ctx context.Context, st *store.Store, u wnms.ClientUpdate) error {
				evs, bodies := events(u.MacAddress, time.UnixMilli(u.Timestamp), 1)
				if _, err := st.InsertClientEvents(ctx, 1, evs, bodies, map[int64]wnms.ClientUpdate{8: u}); err != nil {
					return err
				}
				return st.FlushDerived(ctx)
			}},
		} {
			t.Run(w.name, func(t *testing.T) {
				ctx := context.Background()
				scoped, other := replicas(t, b)
				other.HoldDerivedForTest() // flushed by the write itself
				t0 := time.Now().Add(-time.Hour).UnixMilli()
				// The client is at the scoped caller's location 2.
				if err := scoped.UpdateClients(ctx, 1, map[int64]wnms.ClientUpdate{8: clientAt(2, t0, "")}); err != nil {
					t.Fatal(err)
				}
				release, scopedDone := holdScoped(t, scoped, 1, map[int64]wnms.ClientUpdate{8: clientAt(2, t0+2000, "")})
				// Meanwhile another site's record, older than the scoped
				// one, puts the client at location 1 with its name.
				otherDone := make(chan error, 1)
				go func() { otherDone <- w.write(ctx, other, clientAt(1, t0+1000, "secret")) }()
				stillWaiting(t, otherDone, "the other write, while the scoped update had not committed,")
				release()
				if err := within(t, scopedDone, "the scoped update"); err != nil {
					t.Fatal(err)
				}
				if err := within(t, otherDone, "the other write"); err != nil {
					t.Fatal(err)
				}
				cs, _, err := scoped.Clients(ctx, wnms.ClientQuery{CustomerID: 1, Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				if len(cs) != 1 || cs[0].LocationID.ID != 2 || cs[0].Name == "secret" {
					t.Errorf("clients %+v, want the one client at 2 without the other site's name", cs)
				}
			})
		}
	})
}

// TestScopedClientUpdateRefused: when the function asked which clients
// moved in answers an error, nothing is written and the error is
// returned as is.
func TestScopedClientUpdateRefused(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := storetest.OpenStore(t, b)
		t0 := time.Now().Add(-time.Hour).UnixMilli()
		if err := st.UpdateClients(ctx, 1, map[int64]wnms.ClientUpdate{8: clientAt(1, t0, "")}); err != nil {
			t.Fatal(err)
		}
		refused := errors.New("ask again")
		err := st.UpdateScopedClients(ctx, 1, map[int64]wnms.ClientUpdate{8: clientAt(2, t0+1000, "")},
			func(map[int64]int64) (map[int64]wnms.ClientUpdate, error) { return nil, refused })
		if err != refused {
			t.Fatalf("error %v, want %v", err, refused)
		}
		where, err := st.ClientLocations(ctx, 1, []int64{8})
		if err != nil {
			t.Fatal(err)
		}
		if where[8] != 1 {
			t.Errorf("the client is at %d after a refused update, want 1", where[8])
		}
	})
}
