//go:build unix

package store

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// authRev is a counter shared by every process that opens the same SQLite
// store: eight bytes of a file in the data directory, mapped shared into
// each process (the same technique as SQLite's own wal-index). The store
// bumps it after each committed change that can end or alter a session,
// and readers load it on every request, so an in-process session cache
// knows at once when it may be stale, whichever process made the change.
type authRev struct {
	f   *os.File
	mem []byte
}

// authRevFile is the counter's file name in the data directory.
const authRevFile = "auth-revision"

func openAuthRev(dir string) (*authRev, error) {
	f, err := os.OpenFile(filepath.Join(dir, authRevFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", authRevFile, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.Size() < 8 {
		if err := f.Truncate(8); err != nil {
			f.Close()
			return nil, err
		}
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, 8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("map %s: %w", authRevFile, err)
	}
	return &authRev{f: f, mem: mem}, nil
}

// counter points at the mapped word; mmap returns page-aligned memory, so
// it is aligned for atomic access.
func (a *authRev) counter() *uint64 { return (*uint64)(unsafe.Pointer(&a.mem[0])) }

func (a *authRev) load() uint64 { return atomic.LoadUint64(a.counter()) }

func (a *authRev) bump() { atomic.AddUint64(a.counter(), 1) }

func (a *authRev) close() error {
	err := syscall.Munmap(a.mem)
	if e := a.f.Close(); err == nil {
		err = e
	}
	return err
}
