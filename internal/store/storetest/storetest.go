// Package storetest opens real stores for tests: SQLite always, and
// PostgreSQL when WNMS_TEST_DATABASE_URL is set (required when
// WNMS_TEST_REQUIRE_POSTGRES=1, as in CI), each test in a fresh schema of
// its own that is dropped when the test ends.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store"
)

// Backend names a store engine under test.
type Backend string

// The backends.
const (
	SQLite   Backend = "sqlite"
	Postgres Backend = "postgres"
)

// Backends returns the engines to run a test against. PostgreSQL is
// skipped when not configured, unless WNMS_TEST_REQUIRE_POSTGRES=1.
func Backends(t testing.TB) []Backend {
	out := []Backend{SQLite}
	if os.Getenv("WNMS_TEST_DATABASE_URL") != "" {
		out = append(out, Postgres)
	} else if os.Getenv("WNMS_TEST_REQUIRE_POSTGRES") == "1" {
		t.Fatal("WNMS_TEST_REQUIRE_POSTGRES=1 but WNMS_TEST_DATABASE_URL is not set")
	}
	return out
}

// ForEachBackend runs f as a subtest per backend.
func ForEachBackend(t *testing.T, f func(t *testing.T, b Backend)) {
	for _, b := range Backends(t) {
		t.Run(string(b), func(t *testing.T) { f(t, b) })
	}
}

// StoreConfig returns a config for a fresh, empty store of backend b,
// removed when the test ends. Each PostgreSQL store is a schema of its own.
func StoreConfig(t testing.TB, b Backend) store.Config {
	t.Helper()
	if b == SQLite {
		return store.Config{DataDir: t.TempDir(), Serving: true}
	}
	base := os.Getenv("WNMS_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("WNMS_TEST_DATABASE_URL not set")
	}
	schema := "t_" + strings.ToLower(rand.Text()[:16])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return store.Config{DatabaseURL: u.String(), DataDir: t.TempDir(), Serving: true}
}

// OpenStore opens a fresh migrated store of backend b.
func OpenStore(t testing.TB, b Backend) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), StoreConfig(t, b))
	if err != nil {
		t.Fatalf("open %s store: %v", b, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// OpenStoreAt opens a second handle on the store that cfg names, as a
// second replica would.
func OpenStoreAt(t testing.TB, cfg store.Config) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
