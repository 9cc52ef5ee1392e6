//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lockWait is how long lockDataDir waits out a lock held by someone else
// before it refuses. A lock is an open file description: a child forked by
// the process (in practice a helper a test starts beside an in-process
// server) holds a copy of it from its fork until its exec closes it, so a
// lock just released can still be held for that instant. A second server
// really running holds it for good.
const lockWait = time.Second

// flockWait takes an exclusive lock on f, retrying for lockWait while
// another holder has it.
func flockWait(f *os.File) error {
	deadline := time.Now().Add(lockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lockDataDir holds an exclusive lock on dir/wnms.lock for as long as the
// process runs (the kernel drops it when the process ends, however it
// ends), so that a second wnms serve on the same SQLite data directory
// refuses to start instead of sharing the store unannounced. The CLI's
// store commands take no lock: they are meant to work beside a server.
func lockDataDir(dir string) (release func(), err error) {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("data directory %s is not a directory", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory %s cannot be created: %w", dir, errors.Unwrap(err))
	}
	path := filepath.Join(dir, "wnms.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	if err := flockWait(f); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who := "another wnms serve"
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b[:n]))); perr == nil {
				who += " (pid " + strconv.Itoa(pid) + ")"
			}
			return nil, fmt.Errorf("data directory %s is in use by %s: stop it first, or give this one another --data", dir, who)
		}
		return nil, fmt.Errorf("lock data directory %s: %w", dir, err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, nil
}
