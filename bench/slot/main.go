// Command slot measures what one crowded 15-minute slot costs a baseline
// read: it loads -events client events (Success and Failure, -clients
// MACs) into a single slot through the ingest API, then, in a second run
// on the same store, has -readers callers read that slot's connectivity
// baseline at once while the slot is out of date, and prints each read's
// time and the process's peak resident memory (VmHWM).
//
//	go run ./bench/slot -data /tmp/slot -phase load    # once: 2,000,000 events
//	go run ./bench/slot -data /tmp/slot -phase read    # a fresh process: the reads
//
// The read phase marks the slot out of date again first, so each run
// recomputes it. -database-url runs both phases on PostgreSQL instead.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/wnms/wnms/bench/internal/benchserver"
	"github.com/wnms/wnms/internal/store"
)

var (
	dataDir = flag.String("data", "", "SQLite data directory (kept between the phases)")
	dbURL   = flag.String("database-url", "", "PostgreSQL URL instead of SQLite")
	phase   = flag.String("phase", "load", "load: fill the slot; read: the concurrent reads")
	nEvents = flag.Int("events", 2_000_000, "events in the slot")
	nMACs   = flag.Int("clients", 300, "client MACs")
	readers = flag.Int("readers", 6, "concurrent readers")
)

// slotStart is the slot the events fill: two hours before the load, at a
// 15-minute boundary. It is written to the data directory so the read
// phase finds it.
func slotFile() string { return *dataDir + "/bench-slot" }

func main() {
	flag.Parse()
	if *dataDir == "" {
		log.Fatal("-data is required (the phases share it)")
	}
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{DataDir: *dataDir, DatabaseURL: *dbURL, Serving: true})
	check(err)
	defer st.Close()
	srv, err := benchserver.Start(ctx, st)
	check(err)
	client := &http.Client{Timeout: 30 * time.Minute}
	cookie, err := srv.Session(ctx, client)
	check(err)
	switch *phase {
	case "load":
		slot := time.Now().Add(-2 * time.Hour).Truncate(15 * time.Minute).UnixMilli()
		check(os.WriteFile(slotFile(), []byte(fmt.Sprint(slot)), 0o600))
		start := time.Now()
		for sent := 0; sent < *nEvents; sent += 10_000 {
			_, err := benchserver.Post(client, srv.Base+"/V5/ingest/clientevents", cookie, batch(slot, sent, min(10_000, *nEvents-sent)))
			check(err)
		}
		fmt.Printf("loaded %d events into the slot at %s in %s\n", *nEvents, time.UnixMilli(slot).UTC().Format(time.RFC3339), time.Since(start).Round(time.Second))
	case "read":
		b, err := os.ReadFile(slotFile())
		check(err)
		var slot int64
		fmt.Sscan(string(b), &slot)
		// Out of date again, as after a new event: every run recomputes.
		_, err = benchserver.Post(client, srv.Base+"/V5/ingest/clientevents", cookie, batch(slot, *nEvents+int(time.Now().UnixNano()%1_000_000_000), 1))
		check(err)
		fmt.Printf("before the reads: VmRSS %s\n", benchserver.ProcStatus(0, "VmRSS"))
		u := fmt.Sprintf("%s/V5/baselines/clientsconnectivity?fromtime=%d&totime=%d", srv.Base, slot, slot+15*60*1000-1)
		var wg sync.WaitGroup
		start := time.Now()
		for i := 0; i < *readers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t := time.Now()
				body, err := benchserver.Get(client, u, cookie)
				check(err)
				fmt.Printf("reader %d: %s, %s\n", i, time.Since(t).Round(time.Millisecond), first(string(body), 160))
			}()
		}
		wg.Wait()
		fmt.Printf("%d concurrent reads of the slot in %s; peak RSS (VmHWM) %s\n", *readers, time.Since(start).Round(time.Millisecond), benchserver.ProcStatus(0, "VmHWM"))
	default:
		log.Fatalf("-phase load or read, not %q", *phase)
	}
}

// batch is n events of the slot, from the sent-th on: every 25th a
// RADIUS failure, the rest successes, spread over the clients.
func batch(slot int64, sent, n int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		k := sent + i
		if i > 0 {
			b.WriteByte(',')
		}
		mac := fmt.Sprintf("aa:bb:%02x:%02x:%02x:%02x", (k%*nMACs)>>24&0xff, (k%*nMACs)>>16&0xff, (k%*nMACs)>>8&0xff, k%*nMACs&0xff)
		ts := slot + int64(k%(15*60*1000))
		fmt.Fprintf(&b, `{"eventId":"slot-%d","macAddress":%q,"bssid":"00:11:74:00:00:01","channel":%d,"ssid":"corp","timestamp":%d,`, k, mac, 1+k%2*35, ts)
		if k%25 == 0 {
			b.WriteString(`"eventType":"Failure","failureCode":2,"subFailureCode":203}`)
		} else {
			b.WriteString(`"eventType":"Success","dhcpLatency":1,"aaaLatency":1,"dnsLatency":0}`)
		}
	}
	b.WriteByte(']')
	return b.Bytes()
}

func first(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
