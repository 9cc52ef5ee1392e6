package store

import (
	"sort"
	"strings"
	"testing"
	"testing/fstest"
)

// Every number of the list is one change with SQL for each engine:
// postgres.sql, and sqlite.sql or sqlite-telemetry.sql (a comment-only
// file where an engine has nothing to do), numbered on from firstVersion
// without gaps.
func TestMigrationList(t *testing.T) {
	cs, err := parseMigrations(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		if c.version != firstVersion+i {
			t.Errorf("%s: number %d, want %d", c.name, c.version, firstVersion+i)
		}
		if strings.TrimSpace(c.sql[pgFile]) == "" {
			t.Errorf("%s: no postgres.sql", c.name)
		}
		if strings.TrimSpace(c.sql[sqliteFile]+c.sql[telemetryFile]) == "" {
			t.Errorf("%s: neither sqlite.sql nor sqlite-telemetry.sql", c.name)
		}
	}
}

// The frozen table of the old numbering covers each old tree without
// holes in its meaning: every old file names a change of the list that has
// SQL for its tree, no old file is named twice, and in each tree the old
// order is the list's order, so a store renumbered part way through its
// tree goes on with the same migrations, in the same order, as the old
// binary would have.
func TestLegacyMigrations(t *testing.T) {
	seen := map[string]bool{}
	for change, paths := range legacyMigrations {
		if change < firstVersion || change > latestVersion() {
			t.Errorf("%v: change %d is not in the list", paths, change)
			continue
		}
		for _, p := range paths {
			tree, _, _ := strings.Cut(p, "/")
			if strings.TrimSpace(schemaChanges()[change-firstVersion].sql[tree]) == "" {
				t.Errorf("%s: change %s has no %s.sql", p, changeName(change), tree)
			}
			if seen[p] {
				t.Errorf("%s named twice", p)
			}
			seen[p] = true
		}
	}
	for tree, ms := range legacyTrees() {
		var old []legacyMigration
		for _, m := range ms {
			if m.version >= firstVersion {
				t.Errorf("%s/%s: an old version must be below %d", tree, m.name, firstVersion)
			}
			old = append(old, m)
		}
		sort.Slice(old, func(i, j int) bool { return old[i].version < old[j].version })
		for i := 1; i < len(old); i++ {
			if old[i].change <= old[i-1].change {
				t.Errorf("%s: %s (change %d) comes after %s (change %d) in the old tree but not in the list",
					tree, old[i].name, old[i].change, old[i-1].name, old[i-1].change)
			}
		}
	}
}

// A list that breaks a rule does not load.
func TestParseMigrationsRefuses(t *testing.T) {
	ok := func() fstest.MapFS {
		return fstest.MapFS{
			"m/0101_a/postgres.sql":         {Data: []byte("SELECT 1;")},
			"m/0101_a/sqlite.sql":           {Data: []byte("SELECT 1;")},
			"m/0102_b/postgres.sql":         {Data: []byte("-- nothing on PostgreSQL")},
			"m/0102_b/sqlite-telemetry.sql": {Data: []byte("SELECT 1;")},
		}
	}
	if _, err := parseMigrations(ok(), "m"); err != nil {
		t.Fatalf("a good list: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(fstest.MapFS)
		want   string
	}{
		{"no postgres.sql", func(f fstest.MapFS) { delete(f, "m/0102_b/postgres.sql") }, "needs postgres.sql"},
		{"no SQLite file", func(f fstest.MapFS) { delete(f, "m/0102_b/sqlite-telemetry.sql") }, "needs postgres.sql and sqlite.sql"},
		{"a misspelled file", func(f fstest.MapFS) { f["m/0102_b/postgresql.sql"] = &fstest.MapFile{} }, "postgresql.sql is not"},
		{"a file beside the changes", func(f fstest.MapFS) { f["m/0103_c.sql"] = &fstest.MapFile{} }, "not a change"},
		{"a gap", func(f fstest.MapFS) {
			f["m/0104_d/postgres.sql"] = &fstest.MapFile{}
			f["m/0104_d/sqlite.sql"] = &fstest.MapFile{}
		}, "needs number 0103"},
		{"a number taken twice", func(f fstest.MapFS) {
			f["m/0102_c/postgres.sql"] = &fstest.MapFile{}
			f["m/0102_c/sqlite.sql"] = &fstest.MapFile{}
		}, "needs number 0103"},
		{"not from the first number", func(f fstest.MapFS) {
			delete(f, "m/0101_a/postgres.sql")
			delete(f, "m/0101_a/sqlite.sql")
		}, "needs number 0101"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := ok()
			tc.change(f)
			_, err := parseMigrations(f, "m")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
