package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to read the PostgreSQL store as it is

	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/store/storetest"
)

// A store that a newer wnms migrated is refused by this one: `wnms
// migrate` and `wnms serve` exit 1 with a message naming the store's
// schema version and the one this binary knows, and saying what to do
// (run the newer binary, or restore the backup), and the store is left
// exactly as it was, on both engines.
func TestDowngradeRefused(t *testing.T) {
	t.Parallel()
	const future = 9001 // a migration of a wnms from the future
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			cfg := storetest.StoreConfig(t, b)
			dbs := openRaw(t, cfg)
			// What the newer binary did: its migration, and a table of its own.
			for _, stmt := range []string{
				`CREATE TABLE future_feature (id INTEGER PRIMARY KEY, note TEXT)`,
				`INSERT INTO future_feature (id, note) VALUES (1, 'from the future')`,
				fmt.Sprintf(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (%d, '%d_future_feature.sql', 0)`, future, future),
			} {
				if _, err := dbs[0].Exec(stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			before := fingerprint(t, b, dbs)

			storeArgs := []string{"--data", cfg.DataDir}
			if cfg.DatabaseURL != "" {
				storeArgs = append(storeArgs, "--database-url", cfg.DatabaseURL)
			}
			wantRestore := "wnms backup"
			if b == storetest.Postgres {
				wantRestore = "pg_dump"
			}
			for _, args := range [][]string{
				append([]string{"migrate"}, storeArgs...),
				append([]string{"serve", "--listen", "127.0.0.1:0", "--analytics-listen", "127.0.0.1:0",
					"--snmp-agent-listen", "off", "--metrics-listen", "off"}, storeArgs...),
			} {
				code, stderr := runWnms(t, args...)
				if code != 1 {
					t.Errorf("wnms %s on a newer store: exit %d, want 1\n%s", args[0], code, stderr)
				}
				m := regexp.MustCompile(`schema (\d+), binary knows (\d+)`).FindStringSubmatch(stderr)
				if m == nil || m[1] != strconv.Itoa(future) {
					t.Errorf("wnms %s: the message does not name the store's schema version %d:\n%s", args[0], future, stderr)
				} else if known, _ := strconv.Atoi(m[2]); known <= 0 || known >= future {
					t.Errorf("wnms %s: the binary's schema version %s is not what it knows:\n%s", args[0], m[2], stderr)
				}
				for _, want := range []string{"newer than this binary", "never migrated back", "Nothing was changed",
					"Run the newer wnms", wantRestore} {
					if !strings.Contains(stderr, want) {
						t.Errorf("wnms %s: the message lacks %q:\n%s", args[0], want, stderr)
					}
				}
				if after := fingerprint(t, b, dbs); after != before {
					t.Errorf("wnms %s changed the store:\n%s", args[0], firstDifference(before, after))
				}
			}
		})
	}
}

// runWnms runs this test binary as wnms with args and returns its exit
// code and standard error; it fails the test if wnms runs for 2 minutes.
func runWnms(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "WNMS_TEST_AS_WNMS=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("wnms %v still ran after 2 minutes:\n%s", args, stderr.String())
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stderr.String()
	}
	t.Fatalf("wnms %v: %v", args, err)
	return 0, ""
}

// openRaw opens the databases of the store of cfg directly, without
// wnms: the main one first (on SQLite, then the telemetry file).
func openRaw(t *testing.T, cfg store.Config) []*sql.DB {
	t.Helper()
	var dbs []*sql.DB
	open := func(driver, dsn string) {
		db, err := sql.Open(driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
	}
	if cfg.DatabaseURL != "" {
		open("pgx", cfg.DatabaseURL)
	} else {
		open("sqlite", filepath.Join(cfg.DataDir, "wnms.db"))
		open("sqlite", filepath.Join(cfg.DataDir, store.TelemetryFile))
	}
	return dbs
}

// fingerprint is every table's definition and every row of the store's
// databases, as sorted lines of text.
func fingerprint(t *testing.T, b storetest.Backend, dbs []*sql.DB) string {
	t.Helper()
	var lines []string
	query := func(db *sql.DB, prefix, q string) {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if bs, ok := v.([]byte); ok {
					vals[i] = string(bs)
				}
			}
			lines = append(lines, prefix+fmt.Sprint(vals...))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	tables := func(db *sql.DB, q string) []string {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				t.Fatal(err)
			}
			out = append(out, name)
		}
		return out
	}
	for i, db := range dbs {
		prefix := fmt.Sprintf("db%d ", i)
		var names []string
		if b == storetest.Postgres {
			query(db, prefix+"column ", `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema = current_schema()`)
			query(db, prefix+"index ", `SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()`)
			names = tables(db, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
		} else {
			query(db, prefix+"schema ", `SELECT type, name, sql FROM sqlite_master`)
			names = tables(db, `SELECT name FROM sqlite_master WHERE type = 'table'`)
		}
		for _, name := range names {
			query(db, prefix+name+" ", `SELECT * FROM "`+name+`"`)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// firstDifference shows where two fingerprints part.
func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: before %q, after %q", i, x, y)
		}
	}
	return ""
}
