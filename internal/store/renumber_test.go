package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/store/storetest"
)

// A store that a binary of the per-engine numbering left (all of its
// migrations, or those up to the day partitions) is renumbered when opened
// and reaches the schema of a new store, migration rows included, with
// its rows kept; three replicas opening it at once all succeed. A binary
// of the old numbering then refuses it.
func TestUpgradeFromPerEngineNumbering(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		fresh, err := store.Open(ctx, storetest.EmptyStoreConfig(t, b))
		if err != nil {
			t.Fatal(err)
		}
		want, err := fresh.SchemaForTest(ctx)
		fresh.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name    string
			through int // the last change the old binary had (MaxInt: all)
		}{
			{"whole", math.MaxInt},
			{"before day partitions", 115},
		} {
			t.Run(tc.name, func(t *testing.T) {
				cfg := storetest.EmptyStoreConfig(t, b)
				cfg.Serving = false
				ts := time.Now().UnixMilli()
				legacyStore(t, cfg, tc.through, ts)

				var wg sync.WaitGroup
				errs := make([]error, 3)
				for i := range errs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						st, err := store.Open(ctx, cfg)
						if err == nil {
							err = st.Close()
						}
						errs[i] = err
					}()
				}
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					t.Fatalf("open the old store: %v", err)
				}

				st, err := store.Open(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				got, err := st.SchemaForTest(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("the upgraded schema differs from a new store's (-new +upgraded):\n%s", diff)
				}

				var login string
				if err := storetest.DB(t, cfg).QueryRow(`SELECT login_id FROM users WHERE login_id = 'kept'`).Scan(&login); err != nil {
					t.Errorf("the user row: %v", err)
				}
				var eventTS int64
				if err := storetest.TelemetryDB(t, cfg).QueryRow(`SELECT ts FROM client_events WHERE event_id = 'kept'`).Scan(&eventTS); err != nil || eventTS != ts {
					t.Errorf("the client event: ts %d, %v; want %d", eventTS, err, ts)
				}

				// What a binary of the old numbering does first: compare the
				// database's highest version with the highest it knows, and
				// refuse a higher one. Every row is above all it knows, so
				// every such binary, however old, refuses.
				for i, db := range []*sql.DB{storetest.DB(t, cfg), storetest.TelemetryDB(t, cfg)} {
					if b == storetest.Postgres && i > 0 {
						break // one database
					}
					var lowest int
					if err := db.QueryRow(`SELECT min(version) FROM schema_migrations`).Scan(&lowest); err != nil {
						t.Fatal(err)
					}
					if old := st.LegacyLatestForTest()[i]; lowest <= old {
						t.Errorf("database %d: version %d after the upgrade, and a binary of the old numbering knows up to %d: it would not refuse", i, lowest, old)
					}
				}
			})
		}
	})
}

// legacyStore makes at cfg the store a binary of the per-engine numbering
// left after the list's change through, with a user and a client event
// of time ts.
func legacyStore(t *testing.T, cfg store.Config, through int, ts int64) {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenNoMigrate(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.MigrateLegacyForTest(ctx, through); err != nil {
		t.Fatal(err)
	}
	if through >= 116 { // the day partitions
		if err := st.EnsurePartitions(ctx, ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := storetest.DB(t, cfg).Exec(`INSERT INTO users (customer_id, login_id, role, user_type, created_at)
		VALUES (1, 'kept', 'VIEWER', 'API', 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := storetest.TelemetryDB(t, cfg).Exec(`INSERT INTO client_events
		(customer_id, event_id, mac, ts, event_type, location_id, dot11ac, ssid, protocol, body)
		VALUES (1, 'kept', '00:11:22:33:44:55', $1, 'Success', 0, FALSE, 'ssid', '802.11ax', '{}')`, ts); err != nil {
		t.Fatal(err)
	}
}

// A store of the old numbering with a migration this binary does not know
// is refused, and left as it was: one numbered above its tree's last (a
// newer binary of the old numbering) as a schema too new, one of a known
// version under another name as not a release's.
func TestRenumberRefusesUnknownMigrations(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		for _, tc := range []struct {
			name    string
			version func(latest int) int
			file    string
			tooNew  bool
		}{
			{"newer", func(latest int) int { return latest + 1 }, "future.sql", true},
			{"foreign", func(int) int { return 3 }, "0003_something_else.sql", false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				cfg := storetest.EmptyStoreConfig(t, b)
				cfg.Serving = false
				legacyStore(t, cfg, math.MaxInt, time.Now().UnixMilli())
				st, err := store.OpenNoMigrate(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				v := tc.version(st.LegacyLatestForTest()[0])
				st.Close()
				db := storetest.DB(t, cfg)
				if _, err := db.Exec(`DELETE FROM schema_migrations WHERE version = $1`, v); err != nil {
					t.Fatal(err)
				}
				if _, err := db.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, 0)`, v, tc.file); err != nil {
					t.Fatal(err)
				}
				before := migrationRows(t, db)

				_, err = store.Open(ctx, cfg)
				if err == nil {
					t.Fatal("opened")
				}
				if got := errors.Is(err, store.ErrSchemaTooNew); got != tc.tooNew {
					t.Errorf("error %v: ErrSchemaTooNew %v, want %v", err, got, tc.tooNew)
				}
				if !strings.Contains(err.Error(), tc.file) && !strings.Contains(err.Error(), "binary knows") {
					t.Errorf("error %v names neither the migration nor the version known", err)
				}
				if diff := cmp.Diff(before, migrationRows(t, db)); diff != "" {
					t.Errorf("schema_migrations changed (-before +after):\n%s", diff)
				}
			})
		}
	})
}

// migrationRows lists db's schema_migrations as "version name".
func migrationRows(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT version, name FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v int
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d %s", v, name))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
