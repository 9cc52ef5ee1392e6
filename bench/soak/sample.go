package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// procSample is one second's reading of the server's process.
type procSample struct {
	At       time.Time
	Life     int
	RSS, HWM float64 // bytes: now, and the peak since the last reading
	Threads  int
	FDs      int
	CPU      uint64 // clock ticks, user + system, since the process started
}

// metricSample is one reading of /metrics and the WAL files.
type metricSample struct {
	At   time.Time
	Life int
	Heap float64 // go_memstats_heap_alloc_bytes
	// GoHeld is the memory the Go runtime holds from the system
	// (go_memstats_sys_bytes less go_memstats_heap_released_bytes) and RSS
	// the process's resident memory read in the same scrape: RSS less
	// GoHeld is, roughly, what lives outside the Go heap (SQLite's page
	// caches and statements, the binary).
	GoHeld, RSS       float64
	Goroutines        float64 // go_goroutines
	WALMain, WALTelem int64   // bytes; -1: no such file (PostgreSQL)
	Load1             float64 // the machine's 1-minute load average
}

type sampler struct {
	mu      sync.Mutex
	proc    []procSample
	metrics []metricSample
}

// sample reads the server every second and /metrics every -sample until
// ctx ends.
func (r *run) sample(ctx context.Context, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var lastMetrics time.Time
		mc := &http.Client{Timeout: 5 * time.Second}
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			pid, life := int(r.pid.Load()), int(r.life.Load())
			if pid == 0 {
				continue
			}
			if s, ok := readProc(pid); ok {
				s.Life = life
				r.sampler.mu.Lock()
				r.sampler.proc = append(r.sampler.proc, s)
				r.sampler.mu.Unlock()
			}
			if time.Since(lastMetrics) < *sampleIvl {
				continue
			}
			lastMetrics = time.Now()
			m := metricSample{At: time.Now(), Life: life, WALMain: -1, WALTelem: -1, Load1: loadAvg()}
			if r.dbURL == "" {
				m.WALMain, m.WALTelem = fileSize(filepath.Join(r.data, "wnms.db-wal")), fileSize(filepath.Join(r.data, "wnms-telemetry.db-wal"))
			}
			if resp, err := mc.Get("http://" + r.metrics + "/metrics"); err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				m.Heap, m.Goroutines = metricValue(b, "go_memstats_heap_alloc_bytes"), metricValue(b, "go_goroutines")
				m.GoHeld = metricValue(b, "go_memstats_sys_bytes") - metricValue(b, "go_memstats_heap_released_bytes")
				m.RSS = metricValue(b, "process_resident_memory_bytes")
			}
			r.sampler.mu.Lock()
			r.sampler.metrics = append(r.sampler.metrics, m)
			r.sampler.mu.Unlock()
		}
	}()
}

// readProc reads /proc/pid: resident memory now and its peak since the
// last reading (VmHWM, reset after each reading through clear_refs),
// threads, open files and CPU time.
func readProc(pid int) (procSample, bool) {
	s := procSample{At: time.Now()}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ":")
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseFloat(f[0], 64)
		switch k {
		case "VmRSS":
			s.RSS = n * 1024
		case "VmHWM":
			s.HWM = n * 1024
		case "Threads":
			s.Threads = int(n)
		}
	}
	// "5" resets the peak resident memory to the current (proc(5)).
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
	if d, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		s.FDs = len(d)
	}
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if i := bytes.LastIndexByte(st, ')'); i > 0 {
			f := strings.Fields(string(st[i+1:]))
			if len(f) > 12 {
				u, _ := strconv.ParseUint(f[11], 10, 64)
				sy, _ := strconv.ParseUint(f[12], 10, 64)
				s.CPU = u + sy
			}
		}
	}
	return s, s.RSS > 0
}

// metricValue is the value of an unlabelled series in a /metrics text;
// -1 when it is absent.
func metricValue(b []byte, name string) float64 {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, name+" ") {
			v, err := strconv.ParseFloat(strings.TrimSpace(l[len(name):]), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
