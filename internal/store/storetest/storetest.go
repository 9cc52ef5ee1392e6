// Package storetest opens real stores for tests: SQLite always, and
// PostgreSQL when WNMS_TEST_DATABASE_URL is set (required when
// WNMS_TEST_REQUIRE_POSTGRES=1, as in CI), each test's store its own,
// dropped when the test ends.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// StoreConfig returns a config for a fresh store of backend b, migrated
// and empty, removed when the test ends. Migrating a store costs a quarter
// to half a second under the race detector, and the suite opens hundreds,
// so each is a copy of a template store migrated once per schema (see
// store.SchemaDigest): an SQLite store copies the template's files, a
// PostgreSQL store is a database made from a template database. When the
// PostgreSQL role may not create databases, each store is a schema of its
// own, migrated when opened.
func StoreConfig(t testing.TB, b Backend) store.Config {
	t.Helper()
	if b == SQLite {
		dir := t.TempDir()
		tmpl, err := sqliteTemplate()
		if err != nil {
			t.Fatalf("template store: %v", err)
		}
		for _, name := range []string{"wnms.db", store.TelemetryFile} {
			if err := copyFile(filepath.Join(tmpl, name), filepath.Join(dir, name)); err != nil {
				t.Fatalf("copy the template store: %v", err)
			}
		}
		return store.Config{DataDir: dir, Serving: true}
	}
	admin, base := pgAdmin(t)
	tmpl, err := pgTemplate(admin, base)
	if err != nil {
		t.Fatalf("template database: %v", err)
	}
	if tmpl == "" {
		return EmptyStoreConfig(t, b)
	}
	name := "wnms_t_" + strings.ToLower(rand.Text()[:16])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+" TEMPLATE "+tmpl); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop database %s: %v", name, err)
		}
	})
	u := *base
	u.Path = "/" + name
	return store.Config{DatabaseURL: u.String(), DataDir: t.TempDir(), Serving: true}
}

// EmptyStoreConfig returns a config for a fresh store of backend b that no
// migration has touched, removed when the test ends: an empty directory,
// or a PostgreSQL schema of its own.
func EmptyStoreConfig(t testing.TB, b Backend) store.Config {
	t.Helper()
	if b == SQLite {
		return store.Config{DataDir: t.TempDir(), Serving: true}
	}
	admin, base := pgAdmin(t)
	schema := "t_" + strings.ToLower(rand.Text()[:16])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
	u := *base
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return store.Config{DatabaseURL: u.String(), DataDir: t.TempDir(), Serving: true}
}

// The process's connection to the test database server, and its URL.
var admin struct {
	once sync.Once
	db   *sql.DB
	url  *url.URL
	err  error
}

// pgAdmin is the connection that makes and drops the tests' databases and
// schemas, and the URL of WNMS_TEST_DATABASE_URL; it skips the test when
// that is not set.
func pgAdmin(t testing.TB) (*sql.DB, *url.URL) {
	t.Helper()
	base := os.Getenv("WNMS_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("WNMS_TEST_DATABASE_URL not set")
	}
	admin.once.Do(func() {
		if admin.url, admin.err = url.Parse(base); admin.err == nil {
			admin.db, admin.err = sql.Open("pgx", base)
		}
	})
	if admin.err != nil {
		t.Fatal(admin.err)
	}
	return admin.db, admin.url
}

// The process's template stores, made (or found) on first use.
var (
	sqliteTmpl struct {
		once sync.Once
		dir  string
		err  error
	}
	pgTmpl struct {
		once sync.Once
		name string
		err  error
	}
)

// sqliteTemplate is the directory of a migrated SQLite store of this
// schema, shared by every test process: made under a temporary name and
// renamed into place, so a process sees it whole or not at all.
func sqliteTemplate() (string, error) {
	sqliteTmpl.once.Do(func() {
		dir := filepath.Join(os.TempDir(), "wnms-test-template-"+store.SchemaDigest())
		if _, err := os.Stat(filepath.Join(dir, "wnms.db")); err == nil {
			sqliteTmpl.dir = dir
			return
		}
		build, err := os.MkdirTemp(os.TempDir(), "wnms-test-template-build-")
		if err != nil {
			sqliteTmpl.err = err
			return
		}
		defer os.RemoveAll(build)
		st, err := store.Open(context.Background(), store.Config{DataDir: build})
		if err != nil {
			sqliteTmpl.err = err
			return
		}
		if err := st.Close(); err != nil {
			sqliteTmpl.err = err
			return
		}
		// Another process may have won the race: its template is as good.
		if err := os.Rename(build, dir); err != nil {
			if _, statErr := os.Stat(filepath.Join(dir, "wnms.db")); statErr != nil {
				sqliteTmpl.err = err
				return
			}
		}
		sqliteTmpl.dir = dir
	})
	return sqliteTmpl.dir, sqliteTmpl.err
}

// pgTemplate is the name of a database holding a migrated store of this
// schema, made once on the server under an advisory lock and never
// connected to again, so that CREATE DATABASE can copy it; "" when the
// role may not create databases.
func pgTemplate(db *sql.DB, base *url.URL) (string, error) {
	pgTmpl.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var may bool
		if pgTmpl.err = db.QueryRowContext(ctx, `SELECT rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&may); pgTmpl.err != nil || !may {
			return
		}
		name := "wnms_tmpl_" + store.SchemaDigest()
		conn, err := db.Conn(ctx)
		if err != nil {
			pgTmpl.err = err
			return
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(hashtext('wnms test template'))`); err != nil {
			pgTmpl.err = err
			return
		}
		defer conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(hashtext('wnms test template'))`)
		var n int
		if pgTmpl.err = conn.QueryRowContext(ctx, `SELECT count(*) FROM pg_database WHERE datname = $1`, name).Scan(&n); pgTmpl.err != nil {
			return
		}
		if n == 0 {
			build := name + "_build"
			conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+build+" WITH (FORCE)")
			if _, pgTmpl.err = conn.ExecContext(ctx, "CREATE DATABASE "+build); pgTmpl.err != nil {
				return
			}
			u := *base
			u.Path = "/" + build
			files, err := os.MkdirTemp(os.TempDir(), "wnms-test-template-build-")
			if err != nil {
				pgTmpl.err = err
				return
			}
			defer os.RemoveAll(files)
			st, err := store.Open(ctx, store.Config{DatabaseURL: u.String(), DataDir: files})
			if err != nil {
				pgTmpl.err = err
				return
			}
			if pgTmpl.err = st.Close(); pgTmpl.err != nil {
				return
			}
			if _, pgTmpl.err = conn.ExecContext(ctx, "ALTER DATABASE "+build+" RENAME TO "+name); pgTmpl.err != nil {
				return
			}
		}
		pgTmpl.name = name
	})
	return pgTmpl.name, pgTmpl.err
}

// copyFile copies the file at from to a new file at to.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
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

// DB opens a connection pool of the test's own on the database of the
// store that cfg names, as another program on the same database would
// (sqlite3, psql): the SQLite file wnms.db in cfg.DataDir, or cfg's
// PostgreSQL database and schema. It is for tests that look at or change
// the database from outside the store; it is closed when the test ends.
func DB(t testing.TB, cfg store.Config) *sql.DB {
	t.Helper()
	return openDB(t, cfg, "wnms.db")
}

// TelemetryDB is DB for the store's telemetry (client events and
// samples): on SQLite the file store.TelemetryFile beside wnms.db, on
// PostgreSQL the same database as DB.
func TelemetryDB(t testing.TB, cfg store.Config) *sql.DB {
	t.Helper()
	return openDB(t, cfg, store.TelemetryFile)
}

// openDB is DB for the SQLite file name of cfg's data directory.
func openDB(t testing.TB, cfg store.Config, name string) *sql.DB {
	t.Helper()
	var db *sql.DB
	var err error
	if cfg.DatabaseURL != "" {
		db, err = sql.Open("pgx", cfg.DatabaseURL)
	} else {
		if cfg.DataDir == "" {
			t.Fatal("storetest.DB: the config names no data directory")
		}
		// The store waits this long for a lock too (its busy_timeout).
		db, err = sql.Open("sqlite", "file:"+(&url.URL{Path: filepath.Join(cfg.DataDir, name)}).EscapedPath()+
			"?_pragma=busy_timeout(10000)")
	}
	if err != nil {
		t.Fatalf("open the store's database: %v", err)
	}
	db.SetMaxOpenConns(2) // a test's few statements; PostgreSQL's connections are shared
	t.Cleanup(func() { db.Close() })
	return db
}
