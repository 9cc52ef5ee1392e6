package store

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite's page caches draw their pages from one pool that the process
// sets aside when it first opens an SQLite file (SQLITE_CONFIG_PAGECACHE),
// sized by the page cache setting: every connection's pages, of both
// files, come from it. Without the pool each cached page is an allocation
// of its own, which the SQLite build's allocator rounds up from 4.4 KiB to
// an 8 KiB slot, and whose freed slots (a reader's cache is emptied at
// its next read after any write) scatter among the pages still held: the
// process's resident memory then crept up for as long as it ran. With the
// pool a page costs its size, a freed slot is the next one taken, and
// the resident memory of the caches is the pool's, from the start. When
// the pool runs low the caches reuse their own least recently used pages
// rather than grow; a page the pool cannot hold (a connection holding
// every page of its cache in use at once) falls back to an allocation of
// its own, and PageCacheStats counts those bytes.

// pageCachePageSize is the page size of wnms's SQLite files (SQLite's
// default); a larger page does not fit a slot and takes an allocation of
// its own.
const pageCachePageSize = 4096

var pagePool struct {
	once  sync.Once
	slots int   // 0: no pool (the process had opened SQLite before, or the set-up failed)
	size  int   // bytes a slot
	err   error // why there is no pool
	mem   []byte
}

// setupPageCache sets the pool aside for mib MiB of pages, once per
// process and before its first SQLite connection; later calls do nothing.
func setupPageCache(mib int) {
	pagePool.once.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		va := libc.Xmalloc(tls, 32)
		if va == 0 {
			pagePool.err = fmt.Errorf("out of memory")
			return
		}
		defer libc.Xfree(tls, va)
		// SQLITE_CONFIG_PCACHE_HDRSZ: the bytes SQLite keeps beside each
		// page, written into an int.
		hdr := new(int64) // on the Go heap, which does not move it
		rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_PCACHE_HDRSZ, libc.VaList(va, addr(hdr)))
		runtime.KeepAlive(hdr)
		if rc != sqlite3.SQLITE_OK {
			pagePool.err = fmt.Errorf("sqlite3_config(PCACHE_HDRSZ): code %d", rc)
			return
		}
		size := (pageCachePageSize + int(int32(*hdr)) + 7) &^ 7
		slots := mib << 20 / pageCachePageSize
		mem, err := mapPool(slots * size)
		if err != nil {
			pagePool.err = err
			return
		}
		if rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_PAGECACHE, libc.VaList(va, uintptrOf(mem), int32(size), int32(slots))); rc != sqlite3.SQLITE_OK {
			// SQLITE_MISUSE: SQLite was initialised before (a connection
			// opened elsewhere in this process); its caches allocate page by
			// page as before.
			unmapPool(mem)
			pagePool.err = fmt.Errorf("sqlite3_config(PAGECACHE): code %d", rc)
			return
		}
		pagePool.slots, pagePool.size, pagePool.mem = slots, size, mem
	})
}

// PageCacheStats is the state of SQLite's page pool: its size in bytes
// (0 without a pool), the bytes of its slots in use now, and the bytes of
// pages that did not fit it and were allocated one by one.
type PageCacheStats struct {
	PoolBytes, UsedBytes, OverflowBytes int64
}

// PageCache reads the pool's counters (sqlite3_status64).
func PageCache() PageCacheStats {
	st := PageCacheStats{PoolBytes: int64(pagePool.slots) * int64(pagePool.size)}
	if st.PoolBytes == 0 {
		return st
	}
	tls := libc.NewTLS()
	defer tls.Close()
	v := new([2]int64) // current and highwater, on the Go heap, which does not move it
	read := func(op int32) int64 {
		rc := sqlite3.Xsqlite3_status64(tls, op, addr(&v[0]), addr(&v[1]), 0)
		runtime.KeepAlive(v)
		if rc != sqlite3.SQLITE_OK {
			return -1
		}
		return v[0]
	}
	if used := read(sqlite3.SQLITE_STATUS_PAGECACHE_USED); used >= 0 {
		st.UsedBytes = used * int64(pagePool.size)
	}
	st.OverflowBytes = read(sqlite3.SQLITE_STATUS_PAGECACHE_OVERFLOW)
	return st
}

// addr is the address of a Go heap value, for SQLite to write through.
func addr[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }
