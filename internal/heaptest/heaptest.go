// Package heaptest measures what code keeps on the heap, for the
// benchmarks that report a store's bytes per item.
package heaptest

import "runtime"

// Live is the heap's live bytes: garbage is collected first, so what a
// benchmark measures between two calls is what it keeps.
func Live() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
