// Command ingest measures client-event ingest with concurrent senders: for
// each count of -senders it starts a server on a fresh store (SQLite in a
// temporary directory, or the PostgreSQL of -database-url), has that many
// senders POST 10,000-event batches to /V5/ingest/clientevents at once
// until -batches batches (at least one a sender) are in, and prints the
// aggregate rate, the p50 and p99 batch latency, and the peak of batches
// worked on at once. -turns sets how many batches the server works on at
// once (0: its default; a large number: as many as arrive, the behaviour
// before turns).
//
//	go run ./bench/ingest -senders 1,2,50
//	go run ./bench/ingest -senders 50 -turns 1000   # without turns, to compare
//	go run ./bench/ingest -senders 8 -readers 4     # with reads meanwhile: the WAL's peak
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wnms/wnms/bench/internal/benchserver"
)

var (
	dbURL   = flag.String("database-url", "", "PostgreSQL URL; empty: SQLite in a temporary directory")
	senders = flag.String("senders", "1,2,50", "sender counts to run, one run each")
	batches = flag.Int("batches", 40, "batches of 10,000 events in a run (at least one a sender)")
	turns   = flag.Int("turns", 0, "batches the server works on at once (0: its default)")
	readers = flag.Int("readers", 0, "clients reading client events in a loop during each run")
)

func main() {
	flag.Parse()
	run := time.Now().UnixNano()
	for _, f := range strings.Split(*senders, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			log.Fatalf("-senders: %q", f)
		}
		measure(n, fmt.Sprintf("%d-%d", run, n))
	}
}

func measure(n int, tag string) {
	ctx := context.Background()
	st, closeStore, err := benchserver.OpenStore(ctx, *dbURL, "bench-ingest")
	check(err)
	defer closeStore()
	srv, err := benchserver.Start(ctx, st)
	check(err)
	srv.API.Telemetry.IngestTurns = *turns
	client := &http.Client{Timeout: 30 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	cookie, err := srv.Session(ctx, client)
	check(err)
	wal := newWALWatch(st.Path)
	defer wal.stop()
	total := max(*batches, n)
	bodies := make([][]byte, total)
	for i := range bodies {
		bodies[i] = batch(tag, i)
	}
	var next atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	done := make(chan struct{})
	var reads sync.WaitGroup
	for r := range *readers {
		reads.Add(1)
		go func() {
			defer reads.Done()
			for k := 0; ; k++ {
				select {
				case <-done:
					return
				default:
				}
				c := (r*7919 + k) % 25_000
				_, err := benchserver.Get(client, fmt.Sprintf("%s/V5/devices/clientevents/aa:bb:%02x:%02x:%02x:%02x/0/50",
					srv.Base, c>>24&0xff, c>>16&0xff, c>>8&0xff, c&0xff), cookie)
				check(err)
			}
		}()
	}
	start := time.Now()
	for s := 0; s < n; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= total {
					return
				}
				t := time.Now()
				_, err := benchserver.Post(client, srv.Base+"/V5/ingest/clientevents", cookie, bodies[i])
				check(err)
				mu.Lock()
				lat = append(lat, time.Since(t))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	close(done)
	reads.Wait()
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		return lat[min(len(lat)-1, int(p*float64(len(lat))))].Round(time.Millisecond)
	}
	engine := "sqlite"
	if *dbURL != "" {
		engine = "postgres"
	}
	fmt.Printf("%s, %2d senders, turns %d: %d events in %s = %.0f events/s; batch p50 %s, p99 %s; at most %d batches at once\n",
		engine, n, *turns, total*10_000, wall.Round(time.Millisecond), float64(total*10_000)/wall.Seconds(), pct(0.5), pct(0.99),
		srv.API.Telemetry.PeakIngestInFlight())
	if wal != nil {
		peak := wal.peak.Load()
		// The server goes on idling: how far its WAL shrinks in 10 s.
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) && walSize(wal.path) > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		fmt.Printf("  telemetry WAL: peak %.1f MiB during the run, %.1f MiB after idling up to 10 s\n",
			float64(peak)/(1<<20), float64(walSize(wal.path))/(1<<20))
	}
}

// walWatch samples the size of the SQLite telemetry file's WAL every 20 ms
// and keeps its peak; nil on PostgreSQL.
type walWatch struct {
	path string
	peak atomic.Int64
	done chan struct{}
}

func newWALWatch(dbPath string) *walWatch {
	if dbPath == "" {
		return nil
	}
	w := &walWatch{path: filepath.Join(filepath.Dir(dbPath), "wnms-telemetry.db-wal"), done: make(chan struct{})}
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-t.C:
				if n := walSize(w.path); n > w.peak.Load() {
					w.peak.Store(n)
				}
			}
		}
	}()
	return w
}

func (w *walWatch) stop() {
	if w != nil {
		close(w.done)
	}
}

func walSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// batch is 10,000 events of 500 clients over the last hours, 20 each.
func batch(tag string, i int) []byte {
	var b bytes.Buffer
	now := time.Now().Add(-time.Hour).UnixMilli()
	b.WriteByte('[')
	for k := 0; k < 10_000; k++ {
		if k > 0 {
			b.WriteByte(',')
		}
		c := (i*10_000 + k) / 20
		fmt.Fprintf(&b, `{"eventId":"%s-%d-%d","macAddress":"aa:bb:%02x:%02x:%02x:%02x","bssid":"00:11:74:00:00:%02x","channel":36,"ssid":"corp","timestamp":%d,"eventType":"Success","dhcpLatency":1,"aaaLatency":1}`,
			tag, i, k, c>>24&0xff, c>>16&0xff, c>>8&0xff, c&0xff, k%16, now-int64(k)*1000)
	}
	b.WriteByte(']')
	return b.Bytes()
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
