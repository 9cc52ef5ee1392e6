package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestWALBounded writes far more than WALLimit into the telemetry file
// while reads run all the time, and expects the WAL back under the limit
// while they go on, then emptied once writes stop (SQLite only: the WAL is
// SQLite's).
func TestWALBounded(t *testing.T) {
	defer func(old int64) { WALLimit = old }(WALLimit)
	WALLimit = 128 << 10
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wal := filepath.Join(dir, TelemetryFile) + "-wal"
	size := func() int64 {
		fi, err := os.Stat(wal)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	if _, err := s.tw.ExecContext(ctx, `CREATE TABLE wal_probe (id INTEGER PRIMARY KEY, blob BLOB NOT NULL)`); err != nil {
		t.Fatal(err)
	}

	// Readers that never stop while the test runs, each holding a read
	// transaction (a snapshot of the WAL as it was when it began) across
	// the commits of a few milliseconds.
	stop := make(chan struct{})
	var readers sync.WaitGroup
	defer func() { close(stop); readers.Wait() }()
	for range 3 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				tx, err := s.tr.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
				if err != nil {
					t.Error(err)
					return
				}
				var n int64
				for range 2 {
					if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM wal_probe`).Scan(&n); err != nil {
						t.Error(err)
						tx.Rollback()
						return
					}
					select {
					case <-stop:
						tx.Rollback()
						return
					case <-tick.C:
					}
				}
				tx.Rollback()
			}
		}()
	}

	// 4 MiB in transactions of 1 MiB: 32 times the limit.
	var peak int64
	for i := range 4 {
		tx, err := s.tw.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k := range 256 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO wal_probe (id, blob) VALUES (?, randomblob(4096))`, i*256+k); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		peak = max(peak, size())
	}
	if peak <= 4*WALLimit {
		t.Fatalf("the WAL grew only to %d bytes: the test proves nothing", peak)
	}
	t.Logf("WAL peak %d bytes with a limit of %d", peak, WALLimit)

	poll := func(what string, ok func(int64) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ok(size()) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the WAL is still %d bytes (limit %d)", what, size(), WALLimit)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	poll("under the limit while reads go on", func(n int64) bool { return n <= WALLimit })
	poll("emptied once idle", func(n int64) bool { return n == 0 })
	var n int
	if err := s.tr.QueryRowContext(ctx, `SELECT count(*) FROM wal_probe`).Scan(&n); err != nil || n != 4*256 {
		t.Fatalf("rows after the checkpoints: %d, %v", n, err)
	}
}
