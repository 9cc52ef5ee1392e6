package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// migrations is the schema's one numbered list of changes, the same for
// both engines. The directory migrations/NNNN_name is change NNNN; it
// holds that change's SQL for each database a store may have:
//
//	postgres.sql          the PostgreSQL database
//	sqlite.sql            the main SQLite file (wnms.db)
//	sqlite-telemetry.sql  the SQLite telemetry file (TelemetryFile)
//
// postgres.sql is always there, and so is at least one of the two SQLite
// files; a change that leaves an engine alone says why in a file holding
// only a comment. An absent SQLite file means the change does not touch
// that file. A database records every number of the list as it passes it,
// whether or not the change had SQL for it, so a store's schema version
// is one number on either engine, the list's last.
//
// A change is a directory rather than a file per engine so that its number
// and name cannot differ between the engines, and a file of another name
// fails the loading (parseMigrations), as do a missing engine, a gap and
// a number taken twice; TestMigrationList keeps the shipped list so.
//
// Numbers start at 101 (firstVersion): stores made before the list was one
// carry the three trees' numbers, all below it, and are renumbered once
// (renumber.go).
//
//go:embed migrations
var migrations embed.FS

// The files a change may hold, one per database of a store.
const (
	pgFile        = "postgres"
	sqliteFile    = "sqlite"
	telemetryFile = "sqlite-telemetry"
)

// firstVersion is the number of the list's first change. Every number of
// the per-engine trees that came before was below it, so a row of
// schema_migrations says by its number alone which numbering it is in,
// and a binary of that time, seeing a version above all it knows,
// refuses a store this one migrated.
const firstVersion = 101

// schemaChange is one numbered change of the schema, with its SQL per file
// (pgFile, sqliteFile, telemetryFile).
type schemaChange struct {
	version int
	name    string // the directory, e.g. 0120_webhooks
	sql     map[string]string
}

// migration is a change as one database applies it.
type migration struct {
	version int
	name    string
	sql     string // "" when the change does not touch this database
}

// migrationSet is a database of the store and which file of each change
// is its SQL.
type migrationSet struct {
	db   *sql.DB
	file string
}

// migrationSets are the store's databases: the main one, and on SQLite
// the telemetry file (on PostgreSQL telemetry's tables are in the main
// database).
func (s *Store) migrationSets() []migrationSet {
	sets := []migrationSet{{s.w, mainFile(s.dialect)}}
	if s.tw != s.w {
		sets = append(sets, migrationSet{s.tw, telemetryFile})
	}
	return sets
}

var changeDir = regexp.MustCompile(`^([0-9]{4})_[a-z0-9_]+$`)

// parseMigrations reads the list of changes under dir of fsys, and
// returns an error if it breaks a rule of the list (see migrations).
func parseMigrations(fsys fs.FS, dir string) ([]schemaChange, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []schemaChange
	for _, e := range entries {
		m := changeDir.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			return nil, fmt.Errorf("%s/%s: not a change (a directory NNNN_name)", dir, e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		c := schemaChange{version: v, name: e.Name(), sql: map[string]string{}}
		files, err := fs.ReadDir(fsys, dir+"/"+e.Name())
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			file, ok := strings.CutSuffix(f.Name(), ".sql")
			if !ok || (file != pgFile && file != sqliteFile && file != telemetryFile) {
				return nil, fmt.Errorf("%s/%s: %s is not postgres.sql, sqlite.sql or sqlite-telemetry.sql", dir, e.Name(), f.Name())
			}
			b, err := fs.ReadFile(fsys, dir+"/"+e.Name()+"/"+f.Name())
			if err != nil {
				return nil, err
			}
			c.sql[file] = string(b)
		}
		_, pg := c.sql[pgFile]
		_, lite := c.sql[sqliteFile]
		_, tele := c.sql[telemetryFile]
		if !pg || !lite && !tele {
			return nil, fmt.Errorf("%s/%s: a change needs postgres.sql and sqlite.sql or sqlite-telemetry.sql "+
				"(a file with only a comment where an engine has nothing to do)", dir, e.Name())
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, c := range out {
		// A gap or a number taken twice is two branches' changes merged
		// without renumbering one of them: one would never run.
		if want := firstVersion + i; c.version != want {
			return nil, fmt.Errorf("%s/%s: the list needs number %04d here (numbers run on from %d, one change each)", dir, c.name, want, firstVersion)
		}
	}
	return out, nil
}

// schemaChanges is the embedded list, read once.
var schemaChanges = sync.OnceValue(func() []schemaChange {
	cs, err := parseMigrations(migrations, "migrations")
	if err != nil {
		panic(err)
	}
	return cs
})

// loadMigrations is the list as the database of file applies it.
func loadMigrations(file string) []migration {
	var out []migration
	for _, c := range schemaChanges() {
		out = append(out, migration{version: c.version, name: c.name, sql: c.sql[file]})
	}
	return out
}

// latestVersion is the schema version this binary migrates every
// database of a store to.
func latestVersion() int {
	cs := schemaChanges()
	return cs[len(cs)-1].version
}

// ErrSchemaTooNew is returned when the database was migrated by a newer
// binary.
var ErrSchemaTooNew = errors.New("database schema is newer than this binary")

func schemaVersion(ctx context.Context, db *sql.DB) (int, error) {
	var v sql.NullInt64
	err := db.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, err
	}
	return int(v.Int64), nil
}

// SchemaDigest identifies the schema this binary migrates to: a hash of
// every embedded migration. Two binaries with the same digest make the
// same empty store, so a copy of one migrated store stands for another
// (the tests clone one rather than migrate each of theirs).
func SchemaDigest() string {
	h := sha256.New()
	fs.WalkDir(migrations, "migrations", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := migrations.ReadFile(path)
		fmt.Fprintf(h, "%s %d\n", path, len(b))
		h.Write(b)
		return err
	})
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Migrate applies the pending embedded migrations, each in a transaction of
// its own, and records them; a store of the numbering before the one list
// is first renumbered (renumber.go). Concurrent replicas serialize on a
// lock. It returns ErrSchemaTooNew, having changed nothing, for a store
// that a newer binary migrated.
func (s *Store) Migrate(ctx context.Context) error {
	for _, set := range s.migrationSets() {
		if err := s.migrate(ctx, set); err != nil {
			return err
		}
	}
	return nil
}

// createSchemaMigrations makes the table that records the migrations a
// database has, by number and name.
const createSchemaMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`

func (s *Store) migrate(ctx context.Context, set migrationSet) error {
	if _, err := set.db.ExecContext(ctx, createSchemaMigrations); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	if err := s.renumber(ctx, set); err != nil {
		return err
	}
	latest := latestVersion()
	for _, m := range loadMigrations(set.file) {
		if _, err := s.applyMigration(ctx, set.db, m, latest); err != nil {
			return err
		}
	}
	have, err := schemaVersion(ctx, set.db)
	if err != nil {
		return err
	}
	if have > latest {
		return fmt.Errorf("%w: schema %d, binary knows %d", ErrSchemaTooNew, have, latest)
	}
	return nil
}

func (s *Store) applyMigration(ctx context.Context, db *sql.DB, m migration, latest int) (bool, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	if err := lockMigrations(ctx, tx, s.dialect); err != nil {
		return false, err
	}
	var have sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&have); err != nil {
		return false, err
	}
	if int(have.Int64) > latest {
		return false, fmt.Errorf("%w: schema %d, binary knows %d", ErrSchemaTooNew, have.Int64, latest)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = $1`, m.version).Scan(&n); err != nil {
		return false, err
	}
	if n > 0 {
		return false, nil
	}
	if strings.TrimSpace(m.sql) != "" {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return false, fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
		m.version, m.name, time.Now().UnixMilli()); err != nil {
		return false, err
	}
	return true, tx.Commit()
}
