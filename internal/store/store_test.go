package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// A binary refuses a schema newer than it knows, and migrating twice is a
// no-op.
func TestMigrationsAndNewerSchema(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		cfg := storetest.EmptyStoreConfig(t, b) // migrated from nothing here
		st, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.Migrate(ctx); err != nil {
			t.Fatalf("second migrate: %v", err)
		}
		if err := st.Ping(ctx); err != nil {
			t.Fatalf("ping: %v", err)
		}
		if err := st.PutSetting(ctx, "probe", "1"); err != nil {
			t.Fatal(err)
		}
		// A newer binary has been here.
		if err := st.ExecForTest(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', 0)`); err != nil {
			t.Fatal(err)
		}
		if err := st.Ping(ctx); err == nil {
			t.Error("ping passes on a newer schema")
		}
		_, err = store.Open(ctx, cfg)
		if !errors.Is(err, store.ErrSchemaTooNew) {
			t.Fatalf("open on a newer schema: %v, want ErrSchemaTooNew", err)
		}
	})
}

// Many concurrent writers never fail with "database is locked".
func TestConcurrentWrites(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		cfg := storetest.StoreConfig(t, b)
		st1 := storetest.OpenStoreAt(t, cfg)
		st2 := storetest.OpenStoreAt(t, cfg) // a second process-like handle on the same file
		var wg sync.WaitGroup
		errs := make(chan error, 400)
		for w := 0; w < 16; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				st := st1
				if w%2 == 1 {
					st = st2
				}
				for i := 0; i < 20; i++ {
					u := &wnms.User{LoginID: fmt.Sprintf("w%d-%d", w, i), Role: wnms.Viewer, UserType: wnms.UserTypeAPI,
						CustomerID: 1, AllowedLocations: []wnms.LocationID{wnms.LocalID(0)}}
					if err := st.CreateUser(ctx, u, ""); err != nil {
						errs <- err
						return
					}
					if _, _, err := st.ReserveGuess(ctx, u.UserID, 5); err != nil {
						errs <- err
						return
					}
					if _, err := st.Users(ctx, 1); err != nil {
						errs <- err
						return
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		n, err := st1.CountUsers(ctx)
		if err != nil || n != 320 {
			t.Fatalf("users %d, %v; want 320", n, err)
		}
	})
}

func TestLocationMoveRewritesSubtree(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := storetest.OpenStore(t, b)
		mk := func(parent int64, typ, name string) *wnms.Location {
			p := wnms.LocalID(parent)
			l := &wnms.Location{Type: typ, Name: name, ParentID: &p, CustomerID: 1}
			if err := st.CreateLocation(ctx, l); err != nil {
				t.Fatal(err)
			}
			return l
		}
		a := mk(0, wnms.FolderLocation, "A")
		a1 := mk(a.ID.ID, wnms.FolderLocation, "A1")
		f := mk(a1.ID.ID, wnms.FloorLocation, "F")
		bb := mk(0, wnms.FolderLocation, "B")
		a1.ParentID = &bb.ID
		if err := st.UpdateLocation(ctx, a1); err != nil {
			t.Fatal(err)
		}
		got, err := st.Location(ctx, f.ID.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("/0/%d/%d/%d/", bb.ID.ID, a1.ID.ID, f.ID.ID)
		if got.Path != want {
			t.Errorf("floor path %s, want %s", got.Path, want)
		}
		a.ParentID = &f.ID
		if err := st.UpdateLocation(ctx, a); wnms.ErrorCode(err) != wnms.ValidationFailed {
			t.Errorf("move under a floor: %v", err)
		}
		bb.ParentID = &a1.ID
		if err := st.UpdateLocation(ctx, bb); wnms.ErrorCode(err) != wnms.ValidationFailed {
			t.Errorf("move under own child: %v", err)
		}
	})
}

// Every subtree match (templates of a location's subtree, floors under a
// location, a moved location's descendants) is one range condition on the
// path; both engines must answer it from the path index, with the plan a
// prepared statement keeps.
func TestSubtreeMatchUsesThePathIndex(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		st := storetest.OpenStore(t, b)
		plan, err := st.SubtreePlanForTest(context.Background(), "/0/5/")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "locations_path") {
			t.Errorf("the subtree match does not use the path index:\n%s", plan)
		}
		t.Logf("plan:\n%s", plan)
	})
}

// However many guesses race, no more than max are ever reserved for
// judging: the count and the check are one atomic step.
func TestReserveGuessIsAtomic(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		st := storetest.OpenStore(t, b)
		ctx := context.Background()
		if err := st.EnsureCustomer(ctx, 1, "c"); err != nil {
			t.Fatal(err)
		}
		u := &wnms.User{LoginID: "guess", Role: wnms.Viewer, UserType: wnms.UserTypeLocal, CustomerID: 1,
			AllowedLocations: []wnms.LocationID{wnms.LocalID(0)}}
		if err := st.CreateUser(ctx, u, "x"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		reserved := 0
		for i := 0; i < 60; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, ok, err := st.ReserveGuess(ctx, u.UserID, 5)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					reserved++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if reserved != 5 {
			t.Errorf("%d of 60 racing guesses were reserved, want 5", reserved)
		}
	})
}

// TestReadCommitted: the store's transactions on PostgreSQL are READ
// COMMITTED even where the database's default is another level (the
// store's locks rely on each statement reading what was committed when
// it began).
func TestReadCommitted(t *testing.T) {
	if !slices.Contains(storetest.Backends(t), storetest.Postgres) {
		t.Skip("PostgreSQL only")
	}
	ctx := context.Background()
	cfg := storetest.StoreConfig(t, storetest.Postgres)
	admin, err := sql.Open("pgx", cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var name string
	if err := admin.QueryRowContext(ctx, `SELECT current_database()`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(name, "wnms_t_") {
		t.Skip("changes its database's default: needs a database of its own")
	}
	if _, err := admin.ExecContext(ctx, `ALTER DATABASE `+pgx.Identifier{name}.Sanitize()+` SET default_transaction_isolation = 'repeatable read'`); err != nil {
		t.Fatal(err)
	}
	st := storetest.OpenStoreAt(t, cfg)
	var level string
	if err := st.QueryRowForTest(ctx, `SHOW transaction_isolation`).Scan(&level); err != nil {
		t.Fatal(err)
	}
	if level != "read committed" {
		t.Errorf("transaction isolation %q, want read committed", level)
	}
}
