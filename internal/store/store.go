// Package store is the one SQL store of wnms, over embedded SQLite or
// PostgreSQL. Both engines run the same SQL text wherever they can ($N
// placeholders bind on both); the few dialect-specific statements sit side
// by side in dialect.go. The store knows nothing of HTTP.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/wnms/wnms/internal/rounds"
)

// Dialect names an SQL engine.
type Dialect string

// The supported engines.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Store is the SQL store. It is safe for concurrent use.
type Store struct {
	dialect Dialect
	// r serves reads; w serves writes. On SQLite w is a single connection
	// whose transactions begin IMMEDIATE, so writers queue in Go instead of
	// failing with "database is locked"; on PostgreSQL both are one pool.
	r, w *sql.DB
	// tr and tw are the same for telemetry, the volume path. On SQLite they
	// are a second database file with a writer of its own, so that a large
	// ingest batch never makes a login or a configuration write wait; on
	// PostgreSQL they are the one pool.
	tr, tw *sql.DB
	// Path is the SQLite file, empty on PostgreSQL.
	Path string
	// rev is the shared session revision counter (SQLite only).
	rev *authRev
	// events carries session changes to caches (authevents.go).
	events authEvents
	// Now is the clock; tests may replace it.
	Now func() time.Time

	// WriteProbeEvery is how often Ping proves that the store can commit a
	// write (5 s); in between it repeats the last good verdict.
	WriteProbeEvery time.Duration

	// poolSize is how many connections the PostgreSQL pool holds
	// (Config.MaxConns).
	poolSize int

	// partitionDays are the days whose partitions this process knows
	// exist (PostgreSQL; partitions.go).
	partitionDays sync.Map

	// group and behind are the ingest write path: group commit
	// (group.go) and derived state written behind (derived.go).
	group     rounds.Queue[groupWrite]
	behind    writeBehind
	stopSweep chan struct{} // ends sweepJournal (PostgreSQL)
	wal       *checkpointer // keeps the SQLite WALs bounded (wal.go)

	// changes groups the commits of concurrent changes on the SQLite
	// writer (group.go).
	changes rounds.Queue[change]

	// audit holds the statements every audited change runs, prepared
	// once on the SQLite writer (audit.go).
	audit auditStmts

	probeMu  sync.Mutex // guards the readiness write probe
	probeAt  time.Time
	probeErr error
}

// Config says where the store lives.
type Config struct {
	// DatabaseURL selects PostgreSQL when set (postgres://...).
	DatabaseURL string
	// DataDir holds the SQLite file when DatabaseURL is empty.
	DataDir string
	// Synchronous is SQLite's durability: "normal" (the default; a commit
	// survives a crash of the process, and the last commits can be lost on
	// power loss) or "full" (a commit survives power loss; writes are
	// slower).
	Synchronous string
	// CacheMiB is the page cache, in MiB, that SQLite keeps in process
	// memory for the telemetry file, shared out among its reader
	// connections and its writer (0: 64 MiB). Pages in it stay hot however long the
	// server idles, where the operating system's file cache is evicted.
	CacheMiB int
	// MustExist makes Open refuse a store that is not there yet (ErrNoStore)
	// instead of creating it: an SQLite data directory without wnms.db, or
	// a PostgreSQL database without wnms's schema. Commands that only
	// administer a store set it, so a mistyped --data creates nothing.
	MustExist bool
	// MaxConns is how many connections the PostgreSQL pool opens, all of
	// them before a server serves (WarmPool); 0 is DefaultMaxConns. It
	// does not apply to SQLite.
	MaxConns int
	// Serving marks the store of a server (wnms serve), which applies the
	// ingest journal that a stopped server left (derived.go) before it
	// serves and, on PostgreSQL, sweeps what dead replicas leave. Commands
	// that only administer a store leave both to the servers.
	Serving bool
}

// ErrNoStore is Open's error, with Config.MustExist, for a store that does
// not exist.
var ErrNoStore = errors.New("no wnms store there")

// DefaultCacheMiB is the SQLite page pool when Config.CacheMiB is 0: the
// pages of every SQLite connection of the process come from it (see
// setupPageCache), the telemetry file's connections holding up to all of
// it between them and each of the main file's up to 2 MiB.
const DefaultCacheMiB = 64

// DefaultMaxConns is the PostgreSQL pool of one server when
// Config.MaxConns is 0. A default PostgreSQL accepts 100 connections and
// keeps 3 of them for superusers; each server holds its pool and one more
// connection (the listener of session changes), so five servers take 85
// and leave room for psql, pg_dump and monitoring. Sixteen connections
// keep a few cores of PostgreSQL busy; a server with more requests in
// flight queues them for a connection.
const DefaultMaxConns = 16

// telemetryReaders is the size of the telemetry file's reader pool.
const telemetryReaders = 4

// Open opens the store and applies pending migrations. It refuses a schema
// newer than this binary knows.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.MustExist && cfg.DatabaseURL == "" {
		dir := cfg.DataDir
		if dir == "" {
			dir = "wnms-data"
		}
		if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
			return nil, fmt.Errorf("data directory %s is not a directory", dir)
		}
		if _, err := os.Stat(filepath.Join(dir, "wnms.db")); err != nil {
			return nil, fmt.Errorf("%w: %s holds no wnms.db (start wnms serve --data %s once to create it)", ErrNoStore, dir, dir)
		}
	}
	s, err := OpenNoMigrate(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.MustExist {
		if err := s.checkSchemaExists(ctx); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	now := s.Now().UnixMilli()
	if err := s.EnsurePartitions(ctx, now-dayMs, now+PartitionsAhead*dayMs); err != nil {
		s.Close()
		return nil, err
	}
	if !cfg.Serving {
		return s, nil
	}
	// Derived state a stopped server journalled but had not applied.
	if _, err := s.replayJournal(ctx, true); err != nil {
		s.Close()
		return nil, fmt.Errorf("apply the ingest journal: %w", err)
	}
	if sharedByReplicas(s.dialect) {
		s.stopSweep = make(chan struct{})
		go s.sweepJournal(s.stopSweep)
	}
	return s, nil
}

// OpenNoMigrate opens the store without touching its schema.
func OpenNoMigrate(ctx context.Context, cfg Config) (*Store, error) {
	s := &Store{Now: time.Now, WriteProbeEvery: 5 * time.Second}
	s.behind.owner = newJournalOwner()
	if cfg.DatabaseURL != "" {
		if !strings.HasPrefix(cfg.DatabaseURL, "postgres://") && !strings.HasPrefix(cfg.DatabaseURL, "postgresql://") {
			return nil, errors.New("database URL must start with postgres://")
		}
		switch {
		case cfg.MaxConns == 0:
			s.poolSize = DefaultMaxConns
		case cfg.MaxConns < MinMaxConns || cfg.MaxConns > MaxMaxConns:
			return nil, fmt.Errorf("database max conns must be %d to %d, not %d", MinMaxConns, MaxMaxConns, cfg.MaxConns)
		default:
			s.poolSize = cfg.MaxConns
		}
		db, err := openPostgres(cfg.DatabaseURL)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		db.SetMaxOpenConns(s.poolSize)
		db.SetMaxIdleConns(s.poolSize)
		db.SetConnMaxIdleTime(5 * time.Minute)
		db.SetConnMaxLifetime(pgConnLifetime)
		s.dialect, s.r, s.w, s.tr, s.tw = Postgres, db, db, db, db
		s.behind.every = flushEvery(Postgres)
	} else {
		dir := cfg.DataDir
		if dir == "" {
			dir = "wnms-data"
		}
		if err := checkDataDir(dir); err != nil {
			return nil, err
		}
		sync := strings.ToUpper(cfg.Synchronous)
		switch sync {
		case "":
			sync = "NORMAL"
		case "NORMAL", "FULL":
		default:
			return nil, fmt.Errorf("sqlite synchronous must be normal or full, not %q", cfg.Synchronous)
		}
		s.Path = filepath.Join(dir, "wnms.db")
		var err error
		cache := cfg.CacheMiB
		switch {
		case cache == 0:
			cache = DefaultCacheMiB
		case cache < 0:
			return nil, fmt.Errorf("sqlite cache must be a positive number of MiB, not %d", cfg.CacheMiB)
		}
		setupPageCache(cache)
		if s.r, s.w, err = openSQLite(s.Path, sync, 8, 0); err != nil {
			return nil, err
		}
		s.dialect = SQLite
		s.behind.every = flushEvery(SQLite)
		if s.tr, s.tw, err = openSQLite(filepath.Join(dir, TelemetryFile), sync, telemetryReaders, cache*1024/(telemetryReaders+1)); err != nil {
			s.Close()
			return nil, err
		}
		if s.rev, err = openAuthRev(dir); err != nil {
			s.Close()
			return nil, err
		}
		s.wal = startCheckpointer(map[string]*sql.DB{s.Path: s.w, filepath.Join(dir, TelemetryFile): s.tw})
	}
	if err := s.w.PingContext(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("connect to %s: %w", s.dialect, err)
	}
	if err := s.startNotifications(ctx, cfg.DatabaseURL); err != nil {
		s.Close()
		return nil, fmt.Errorf("connect to %s: %w", s.dialect, err)
	}
	return s, nil
}

// TelemetryFile is the SQLite file of telemetry, beside wnms.db.
const TelemetryFile = "wnms-telemetry.db"

// openSQLite opens an SQLite file in WAL mode as a reader pool of readers
// connections and a single writer whose transactions begin IMMEDIATE. A
// cacheKiB above 0 is each connection's page cache (SQLite's default,
// 2 MiB, otherwise): the writer's holds the index pages that inserts
// land on. The writer's statement journals (kept while a statement of a
// multi-statement transaction runs, so that it alone can be undone) live
// in memory rather than in temporary files. A reader's sorts and temporary
// tables stay in its page cache while they fit and go to a temporary file
// beyond it (temp_store FILE): in memory, one read that sorts a crowded
// 15-minute slot took over 1 GB (decisions §19: memory bounded by design).
func openSQLite(path, sync string, readers, cacheKiB int) (r, w *sql.DB, err error) {
	pragmas := "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(" + sync + ")" +
		"&_pragma=journal_size_limit(" + strconv.FormatInt(WALLimit, 10) + ")"
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + pragmas
	if cacheKiB > 0 {
		dsn += "&_pragma=cache_size(-" + strconv.Itoa(cacheKiB) + ")"
	}
	w, err = sql.Open("sqlite", dsn+"&_pragma=temp_store(MEMORY)&_txlock=immediate")
	if err != nil {
		return nil, nil, fmt.Errorf("open sqlite: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	r, err = sql.Open("sqlite", dsn+"&_pragma=temp_store(FILE)")
	if err != nil {
		w.Close()
		return nil, nil, fmt.Errorf("open sqlite: %w", err)
	}
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	r.SetConnMaxIdleTime(0)
	r.SetConnMaxLifetime(0)
	return r, w, nil
}

// checkDataDir makes the data directory if needed and proves it can hold
// the store, so that a problem is reported as one of the directory rather
// than as a failure to open some file inside it.
func checkDataDir(dir string) error {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("data directory %s is not a directory", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("data directory %s cannot be created: %w", dir, errors.Unwrap(err))
	}
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("data directory %s is not writable: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// Dialect is the engine behind the store.
func (s *Store) Dialect() Dialect { return s.dialect }

// Close releases the connections.
func (s *Store) Close() error {
	s.stopAuthListener()
	if s.stopSweep != nil {
		close(s.stopSweep)
		s.stopSweep = nil
	}
	// What is pending is journalled: a failed flush loses nothing.
	err := s.closeBehind()
	s.wal.close()
	s.wal = nil
	if s.tw != nil && s.tw != s.w {
		err = errors.Join(err, s.tw.Close(), s.tr.Close())
	}
	if e := s.w.Close(); err == nil {
		err = e
	}
	if s.rev != nil {
		if e := s.rev.close(); err == nil {
			err = e
		}
	}
	if s.r != s.w {
		if e := s.r.Close(); err == nil {
			err = e
		}
	}
	return err
}

// Ping checks that the database answers and that its schema is the one
// this binary knows.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.r.PingContext(ctx); err != nil {
		return err
	}
	for _, set := range s.migrationSets() {
		have, err := schemaVersion(ctx, set.db)
		if err != nil {
			return err
		}
		if want := latestVersion(); have != want {
			return fmt.Errorf("schema version %d of %s, binary knows %d", have, set.file, want)
		}
	}
	return s.writeProbe(ctx)
}

// writeProbe commits a small write (a heartbeat row in settings) at most
// once every WriteProbeEvery: a store that answers reads but cannot write
// (a full disk, a read-only file system, a replica in recovery) is not
// ready.
func (s *Store) writeProbe(ctx context.Context) error {
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	if now := time.Now(); now.Sub(s.probeAt) >= s.WriteProbeEvery || s.probeErr != nil {
		s.probeAt = now
		_, err := s.w.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES ('readiness_probe', $1)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value`, strconv.FormatInt(now.UnixMilli(), 10))
		if err != nil {
			err = fmt.Errorf("the store cannot commit a write: %w", err)
		}
		s.probeErr = err
	}
	return s.probeErr
}

func (s *Store) nowMS() int64 { return s.Now().UnixMilli() }

// isUnique reports whether err is a unique-constraint violation.
func isUnique(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "23505"
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// isForeignKey reports whether err is a foreign-key violation.
func isForeignKey(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "23503"
	}
	return err != nil && strings.Contains(err.Error(), "FOREIGN KEY constraint failed")
}

// openPostgres opens the pool of databaseURL. Every transaction on it is
// READ COMMITTED, whatever the database's default: a statement that runs
// after a lock was granted must read what the lock's earlier holders
// committed (login attempts, a customer's clients). Each connection sets
// it once connected (a startup parameter would be refused by
// connection poolers such as PgBouncer), and parses the URL anew, as
// sql.Open does, so that certificates and password files it names are
// read again when the pool renews its connections.
func openPostgres(databaseURL string) (*sql.DB, error) {
	pc, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return nil, err
	}
	return stdlib.OpenDB(*pc,
		stdlib.OptionBeforeConnect(func(_ context.Context, cc *pgx.ConnConfig) error {
			fresh, err := pgx.ParseConfig(databaseURL)
			if err != nil {
				return err
			}
			*cc = *fresh
			return nil
		}),
		stdlib.OptionAfterConnect(func(ctx context.Context, c *pgx.Conn) error {
			_, err := c.Exec(ctx, `SET default_transaction_isolation = 'read committed'`)
			return err
		})), nil
}

// querier is what reads need: a pool, a connection or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// tx runs f in a write transaction, committing when f returns nil. When
// ctx carries the audit record of a call that no earlier transaction of
// the call stored, the record is written in this transaction, so the
// change and its record commit together or not at all.
//
// On SQLite, changes that reach the writer while another commits share
// the next commit (changeRound), each in a savepoint. So f:
//   - may run more than once: what it hands out of the transaction it must
//     set, not accumulate;
//   - must return the error of any statement that fails, and never end
//     the transaction itself (COMMIT, ROLLBACK, or a savepoint of the
//     name wnms_change);
//   - must read through tx: a read through the pool does not see the
//     changes before it in its round. A change whose check reads the
//     store otherwise (a caller's callback) goes through txSolo.
func (s *Store) tx(ctx context.Context, f func(*sql.Tx) error) error {
	return s.txChange(ctx, change{ctx: ctx, f: f})
}

// txSolo is tx for a change that must see every change before it
// committed: on SQLite it commits in a transaction of its own, in its
// turn among the changes of its round.
func (s *Store) txSolo(ctx context.Context, f func(*sql.Tx) error) error {
	return s.txChange(ctx, change{ctx: ctx, f: f, solo: true})
}

func (s *Store) txChange(ctx context.Context, c change) error {
	s.prepareAudit(ctx) // outside the transaction: SQLite has one writer connection
	if groupsCommits(s.dialect) {
		err := s.changes.Do(ctx, c, s.changeRound)
		if p, ok := err.(changePanic); ok {
			// c.f's own panic, on its caller's goroutine.
			panic(ChangePanic{Value: p.v, Stack: string(p.stack)})
		}
		return err
	}
	return s.txAlone(ctx, c.f)
}

// txAlone runs f and the call's audit record in a transaction of their own.
func (s *Store) txAlone(ctx context.Context, f func(*sql.Tx) error) error {
	var done func(bool)
	err := txOn(ctx, s.w, func(tx *sql.Tx) (err error) {
		done, err = s.change(ctx, tx, f)
		return err
	})
	if done != nil {
		done(err == nil)
	}
	return err
}

// change runs f on tx and then writes the audit record of the call in
// ctx (auditInTx); done says, once tx ended, whether it committed.
func (s *Store) change(ctx context.Context, tx *sql.Tx, f func(*sql.Tx) error) (done func(committed bool), err error) {
	if err := f(tx); err != nil {
		return nil, err
	}
	return s.auditInTx(ctx, tx)
}

// exec runs one statement as a write transaction of its own (tx), so the
// call's audit record commits with it.
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = tx.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

// txOn runs f in a write transaction on db, committing when f returns nil.
func txOn(ctx context.Context, db *sql.DB, f func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// Setting reads a named setting; ok is false when unset.
func (s *Store) Setting(ctx context.Context, name string) (value string, ok bool, err error) {
	err = s.r.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = $1`, name).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return value, err == nil, err
}

// SettingOrInit returns the named setting, storing init() first if it is
// unset. Concurrent callers all see the one value that won.
func (s *Store) SettingOrInit(ctx context.Context, name string, init func() string) (string, error) {
	if v, ok, err := s.Setting(ctx, name); err != nil || ok {
		return v, err
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, init())
	if err != nil {
		return "", err
	}
	v, _, err := s.Setting(ctx, name)
	return v, err
}

// PutSetting stores a named setting.
func (s *Store) PutSetting(ctx context.Context, name, value string) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, value)
	return err
}

// Backup writes a consistent copy of an SQLite store to path (a .db
// file), and of its telemetry file beside it (-telemetry.db), and returns
// both paths.
func (s *Store) Backup(ctx context.Context, path string) (paths []string, err error) {
	if !backsUpFiles(s.dialect) {
		return nil, errors.New("backup is for the SQLite store; use pg_dump for PostgreSQL")
	}
	if _, err := s.w.ExecContext(ctx, `VACUUM INTO $1`, path); err != nil {
		return nil, err
	}
	tpath := strings.TrimSuffix(path, ".db") + "-telemetry.db"
	if _, err := s.tw.ExecContext(ctx, `VACUUM INTO $1`, tpath); err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	return []string{path, tpath}, nil
}
