package metrics

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// Process registers the series every Prometheus user expects of a Go
// program, under the names and types the Prometheus Go client library
// gives them: the Go runtime's (go_goroutines, go_threads, go_info,
// go_gc_duration_seconds, go_memstats_*) and the process's from
// /proc/self (process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_max_fds,
// process_start_time_seconds). They are read once a scrape. Where /proc
// is missing (not Linux) the process_* series are left out.
//
// They are produced here rather than by the client library so that the
// server keeps no metrics dependency (and its dependency tree) for a
// dozen numbers the runtime and /proc give directly.
func (r *Registry) Process() { r.add(processFamily{}) }

type processFamily struct{}

// writeOne writes a family of one series without labels.
func writeOne(w io.Writer, name, typ, help string, v float64) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %s\n", name, help, name, typ, name, formatFloat(v))
}

func (processFamily) write(w io.Writer) {
	writeOne(w, "go_goroutines", "gauge", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine()))
	threads, _ := runtime.ThreadCreateProfile(nil)
	writeOne(w, "go_threads", "gauge", "Number of OS threads created.", float64(threads))
	fmt.Fprintf(w, "# HELP go_info Information about the Go environment.\n# TYPE go_info gauge\ngo_info%s 1\n",
		labelString([]string{"version"}, []string{runtime.Version()}))

	gc := debug.GCStats{PauseQuantiles: make([]time.Duration, 5)}
	debug.ReadGCStats(&gc)
	fmt.Fprint(w, "# HELP go_gc_duration_seconds A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.\n# TYPE go_gc_duration_seconds summary\n")
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		fmt.Fprintf(w, "go_gc_duration_seconds{quantile=%q} %s\n", q, formatFloat(gc.PauseQuantiles[i].Seconds()))
	}
	fmt.Fprintf(w, "go_gc_duration_seconds_sum %s\ngo_gc_duration_seconds_count %d\n", formatFloat(gc.PauseTotal.Seconds()), gc.NumGC)

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for _, m := range []struct {
		name, typ, help string
		v               uint64
	}{
		{"go_memstats_alloc_bytes", "gauge", "Number of heap bytes allocated and currently in use.", ms.Alloc},
		{"go_memstats_alloc_bytes_total", "counter", "Total number of heap bytes allocated, even if freed.", ms.TotalAlloc},
		{"go_memstats_sys_bytes", "gauge", "Number of bytes obtained from system.", ms.Sys},
		{"go_memstats_mallocs_total", "counter", "Total number of heap objects allocated.", ms.Mallocs},
		{"go_memstats_frees_total", "counter", "Total number of heap objects frees.", ms.Frees},
		{"go_memstats_heap_alloc_bytes", "gauge", "Number of heap bytes allocated and currently in use.", ms.HeapAlloc},
		{"go_memstats_heap_sys_bytes", "gauge", "Number of heap bytes obtained from system.", ms.HeapSys},
		{"go_memstats_heap_idle_bytes", "gauge", "Number of heap bytes waiting to be used.", ms.HeapIdle},
		{"go_memstats_heap_inuse_bytes", "gauge", "Number of heap bytes that are in use.", ms.HeapInuse},
		{"go_memstats_heap_released_bytes", "gauge", "Number of heap bytes released to OS.", ms.HeapReleased},
		{"go_memstats_heap_objects", "gauge", "Number of currently allocated objects.", ms.HeapObjects},
		{"go_memstats_stack_inuse_bytes", "gauge", "Number of bytes obtained from system for stack allocator in non-CGO environments.", ms.StackInuse},
		{"go_memstats_stack_sys_bytes", "gauge", "Number of bytes obtained from system for stack allocator.", ms.StackSys},
		{"go_memstats_next_gc_bytes", "gauge", "Number of heap bytes when next garbage collection will take place.", ms.NextGC},
	} {
		writeOne(w, m.name, m.typ, m.help, float64(m.v))
	}
	writeOne(w, "go_memstats_last_gc_time_seconds", "gauge", "Number of seconds since 1970 of last garbage collection.",
		float64(ms.LastGC)/1e9)

	p, ok := readProc()
	if !ok {
		return
	}
	writeOne(w, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", p.cpu)
	writeOne(w, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", p.rss)
	writeOne(w, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", p.vsize)
	writeOne(w, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", p.start)
	writeOne(w, "process_open_fds", "gauge", "Number of open file descriptors.", p.openFDs)
	if p.maxFDs > 0 {
		writeOne(w, "process_max_fds", "gauge", "Maximum number of open file descriptors.", p.maxFDs)
	}
}

// userHZ is the unit of the times in /proc/PID/stat: Linux reports them
// in USER_HZ, 100 on every architecture Go runs on (the Prometheus
// client library assumes the same).
const userHZ = 100

type procStats struct {
	cpu, rss, vsize, start, openFDs, maxFDs float64
}

// readProc reads this process's numbers from /proc; ok is false where
// there is no /proc.
func readProc() (p procStats, ok bool) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return p, false
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// the fields are counted from the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return p, false
	}
	f := strings.Fields(string(stat[i+1:]))
	// f[0] is field 3 (state): field n is f[n-3].
	if len(f) < 22 {
		return p, false
	}
	num := func(n int) float64 { v, _ := strconv.ParseFloat(f[n-3], 64); return v }
	p.cpu = (num(14) + num(15)) / userHZ
	p.vsize = num(23)
	p.rss = num(24) * float64(os.Getpagesize())
	if boot := bootTime(); boot > 0 {
		p.start = boot + num(22)/userHZ
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		p.openFDs = float64(len(fds))
	}
	p.maxFDs = maxFDs()
	return p, true
}

// bootTime is the system's boot time (the btime line of /proc/stat), in
// seconds since 1970, or 0.
func bootTime() float64 {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return n
		}
	}
	return 0
}

// maxFDs is the soft limit on open files (/proc/self/limits), or 0 when
// unknown or unlimited.
func maxFDs() float64 {
	data, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, err := strconv.ParseFloat(f[0], 64)
				if err == nil {
					return n
				}
			}
		}
	}
	return 0
}
