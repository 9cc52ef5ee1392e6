package main

import (
	"context"
	"database/sql"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/store/storetest"
)

// TestDatabaseMaxConnsBoundsThePool: a server on PostgreSQL opens
// --database-max-conns connections before it serves (so the first second
// is as fast as the rest), holds one more for session changes, and never
// more, however many requests come at once; without the flag it opens
// store.DefaultMaxConns. Counted in pg_stat_activity for the server's
// database.
func TestDatabaseMaxConnsBoundsThePool(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		pool int
	}{
		{"flag", []string{"--database-max-conns", "3"}, nil, 3},
		{"environment", nil, map[string]string{"WNMS_DATABASE_MAX_CONNS": "5"}, 5},
		{"default", nil, nil, store.DefaultMaxConns},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := storetest.StoreConfig(t, storetest.Postgres) // skips without WNMS_TEST_DATABASE_URL
			u, err := url.Parse(cfg.DatabaseURL)
			if err != nil {
				t.Fatal(err)
			}
			dbName := strings.TrimPrefix(u.Path, "/")
			admin, err := sql.Open("pgx", os.Getenv("WNMS_TEST_DATABASE_URL"))
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close()
			count := func() int {
				t.Helper()
				var n int
				// Client backends only: PostgreSQL's autovacuum workers
				// visit the new database too, under its name.
				if err := admin.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = $1
					AND backend_type = 'client backend'`, dbName).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}

			env := map[string]string{"WNMS_DATA": cfg.DataDir, "WNMS_DATABASE_URL": cfg.DatabaseURL,
				"WNMS_BOOTSTRAP_KEY_ID": "pool-key", "WNMS_BOOTSTRAP_KEY_VALUE": "pool-value-0123456789"}
			for k, v := range tc.env {
				env[k] = v
			}
			l, _, _, stop := bootServe(t, env, tc.args...)
			want := tc.pool + 1 // the pool and the listener of session changes
			// The pool is whole when the server says it listens; the
			// listener connects beside it.
			deadline := time.Now().Add(10 * time.Second)
			for count() < want && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if n := count(); n != want {
				t.Fatalf("after start: %d connections, want %d", n, want)
			}

			// Many requests at once, each reading the store.
			base := "http://" + l.API
			ck := login(t, base, "pool-key", "pool-value-0123456789")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			peak := make(chan int)
			go func() {
				most := 0
				for ctx.Err() == nil {
					var n int
					if admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1
						AND backend_type = 'client backend' AND application_name <> 'wnms-auth-listener'`, dbName).Scan(&n) == nil && n > most {
						most = n
					}
				}
				peak <- most
			}()
			var wg sync.WaitGroup
			for i := range 4 * tc.pool {
				wg.Add(1)
				go func() {
					defer wg.Done()
					path := []string{"/V2/locations/tree", "/V5/devices/clients", "/V5/auditlog"}[i%3]
					for range 5 {
						req, _ := http.NewRequest("GET", base+"/new/webservice"+path, nil)
						req.AddCookie(ck)
						resp, err := http.DefaultClient.Do(req)
						if err != nil {
							t.Error(err)
							return
						}
						resp.Body.Close()
						if resp.StatusCode != 200 {
							t.Errorf("%s: %d", path, resp.StatusCode)
							return
						}
					}
				}()
			}
			wg.Wait()
			cancel()
			// The pool's connections, the listener aside. A connection the
			// pool closes (a query whose request went away) and replaces may
			// still be counted while its server process exits: one more than
			// the pool is that, not a pool that grows with the requests
			// (4 × the pool here).
			if most := <-peak; most > tc.pool+1 {
				t.Errorf("under load: %d connections of the pool, want at most %d", most, tc.pool)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
