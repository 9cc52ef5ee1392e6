package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// TestScopedClientUpdatesTakeTurns: one customer's scoped client updates
// run one after another, on PostgreSQL across replicas too: a second
// replica's update reads where a client is only once the first one's
// update committed, and another customer's does not wait (PostgreSQL;
// SQLite's one writer runs every write in turn anyway).
func TestScopedClientUpdatesTakeTurns(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		cfg := storetest.StoreConfig(t, b)
		first := storetest.OpenStoreAt(t, cfg)
		second := first // SQLite: one process holds the database
		if b == storetest.Postgres {
			second = storetest.OpenStoreAt(t, cfg)
		}
		t0 := time.Now().Add(-time.Hour).UnixMilli()
		at := func(mac string, loc, ts int64) wnms.ClientUpdate {
			return wnms.ClientUpdate{MacAddress: mac, Timestamp: ts, EventType: "Success", BSSID: "00:11:74:00:00:01",
				SSID: "corp", Channel: 36, Protocol: "A", LocationID: loc}
		}
		for cust, box := range map[int64]int64{1: 8, 2: 9} {
			if err := first.UpdateClients(ctx, cust, map[int64]wnms.ClientUpdate{box: at("AA:00:00:00:00:08", 1, t0)}); err != nil {
				t.Fatal(err)
			}
		}
		none := func(map[int64]int64) (map[int64]wnms.ClientUpdate, error) { return nil, nil }

		inside, release, firstDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			firstDone <- first.UpdateScopedClients(ctx, 1, map[int64]wnms.ClientUpdate{8: at("AA:00:00:00:00:08", 2, t0+1000)},
				func(map[int64]int64) (map[int64]wnms.ClientUpdate, error) {
					close(inside)
					<-release
					return nil, nil
				})
		}()
		<-inside
		read, secondDone := make(chan int64, 1), make(chan error, 1)
		go func() {
			secondDone <- second.UpdateScopedClients(ctx, 1, map[int64]wnms.ClientUpdate{8: at("AA:00:00:00:00:08", 3, t0+2000)},
				func(where map[int64]int64) (map[int64]wnms.ClientUpdate, error) {
					read <- where[8]
					return nil, nil
				})
		}()
		if b == storetest.Postgres {
			// Another customer's turn is its own.
			if err := second.UpdateScopedClients(ctx, 2, map[int64]wnms.ClientUpdate{9: at("AA:00:00:00:00:08", 2, t0+1000)}, none); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(200 * time.Millisecond)
		select {
		case loc := <-read:
			t.Fatalf("the second update read the client at %d while the first one had not committed", loc)
		default:
		}
		close(release)
		if err := <-firstDone; err != nil {
			t.Fatal(err)
		}
		if loc := <-read; loc != 2 {
			t.Errorf("the second update read the client at %d, want 2 (the first one's)", loc)
		}
		if err := <-secondDone; err != nil {
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

// TestScopedClientUpdatesLeaveConnections: the function a scoped update
// calls inside its transaction may read through the pool; with more such
// updates at once than the pool has connections (each another
// customer's), every read still finds a connection.
func TestScopedClientUpdatesLeaveConnections(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		st := storetest.OpenStore(t, b)
		const n = 40 // more than PostgreSQL's pool of 32
		ts := time.Now().Add(-time.Hour).UnixMilli()
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for cust := int64(1); cust <= n; cust++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				u := wnms.ClientUpdate{MacAddress: "AA:00:00:00:00:08", Timestamp: ts, EventType: "Success",
					BSSID: "00:11:74:00:00:01", SSID: "corp", Channel: 36, Protocol: "A", LocationID: 1}
				errs <- st.UpdateScopedClients(context.Background(), cust, map[int64]wnms.ClientUpdate{1000 + cust: u},
					func(map[int64]int64) (map[int64]wnms.ClientUpdate, error) {
						// Long enough for every update to have begun.
						time.Sleep(50 * time.Millisecond)
						ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
						defer cancel()
						var one int
						return nil, st.QueryRowForTest(ctx, `SELECT 1`).Scan(&one)
					})
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("a read inside a scoped update: %v", err)
			}
		}
	})
}
