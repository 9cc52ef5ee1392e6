//go:build unix

package store

import (
	"fmt"
	"syscall"
	"unsafe"
)

// mapPool maps the pool outside the Go heap: SQLite holds pointers into
// it for the life of the process, and the collector must neither move nor
// scan it.
func mapPool(n int) ([]byte, error) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("map the SQLite page pool (%d bytes): %w", n, err)
	}
	return b, nil
}

func unmapPool(b []byte) { syscall.Munmap(b) }

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
