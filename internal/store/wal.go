package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"os"
	"strconv"
	"sync"
	"time"
)

// The WAL of each SQLite file is bounded (decisions §18).
//
// SQLite's own checkpoint, run by the commit that takes the WAL past
// 1,000 pages, is PASSIVE: it copies into the database only the pages no
// running read still needs, and the WAL starts over from its beginning
// only when a write finds every page copied and no read still using it.
// Under a steady ingest with readers (the API's reads, the baselines) that
// moment rarely comes, so the WAL grew with every commit; and even when it
// started over, the file kept its largest size, for nothing limited it.
//
// Now:
//   - journal_size_limit truncates the WAL to WALLimit whenever it starts
//     over;
//   - a checkpointer looks at each WAL every second, and when it is over
//     WALLimit, or when no write has touched it for walIdleAfter, runs a
//     TRUNCATE checkpoint on the file's writer connection. That checkpoint
//     waits for the reads that still need the WAL, at most walBusy (the
//     writer is held that long at most), then copies every page and
//     empties the file; if a read is still running it tries again a
//     second later.
//
// So the WAL goes above WALLimit only by what is written in about a
// second, or while a read that began before those writes is still
// running, and is brought back to WALLimit or less within a second or so
// after; an idle server's WAL is empty.

// WALLimit is the size, in bytes, that each SQLite WAL is brought back to.
var WALLimit int64 = 16 << 20

const (
	// walCheckEvery is how often the checkpointer looks at a WAL.
	walCheckEvery = time.Second
	// walIdleAfter is how long a WAL must be left unwritten before it is
	// emptied.
	walIdleAfter = 5 * time.Second
	// walBusy is how long a checkpoint waits for the reads that still need
	// the WAL.
	walBusy = 100 * time.Millisecond
)

// checkpointer keeps the WALs of a store's SQLite files bounded.
type checkpointer struct {
	stop chan struct{}
	done sync.WaitGroup
}

// startCheckpointer starts a checkpointer for each SQLite file: path and
// its writer.
func startCheckpointer(files map[string]*sql.DB) *checkpointer {
	c := &checkpointer{stop: make(chan struct{})}
	for path, w := range files {
		c.done.Add(1)
		go func() {
			defer c.done.Done()
			c.run(path+"-wal", w)
		}()
	}
	return c
}

func (c *checkpointer) close() {
	if c == nil {
		return
	}
	close(c.stop)
	c.done.Wait()
}

func (c *checkpointer) run(wal string, w *sql.DB) {
	t := time.NewTicker(walCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		fi, err := os.Stat(wal)
		if err != nil || fi.Size() == 0 {
			continue
		}
		if fi.Size() > WALLimit || time.Since(fi.ModTime()) >= walIdleAfter {
			truncateWAL(w)
		}
	}
}

// truncateWAL runs a TRUNCATE checkpoint on the writer w, waiting at most
// walBusy for reads. A checkpoint that could not finish is tried again
// at the next look; its error is of no use to anyone else.
func truncateWAL(w *sql.DB) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := w.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.Itoa(int(walBusy/time.Millisecond))); err != nil {
		return
	}
	var busy, log, done int
	_ = conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &done)
	// Back to the writer's own wait for other processes' locks (openSQLite).
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 10000"); err != nil {
		// A writer left with a short wait would fail where it should wait:
		// retire the connection, the pool opens a fresh one.
		conn.Raw(func(any) error { return driver.ErrBadConn })
	}
}
