//go:build wnmsbench

// Command slot measures what one crowded 15-minute slot costs its reads:
// it loads -events client events (Success and Failure, -clients MACs, on
// one floor) into a single slot, then, in a second run on the same store,
// has -readers callers read that slot at once and prints each read's time
// and the process's peak resident memory (VmHWM).
//
//	go run -tags wnmsbench ./bench/slot -data /tmp/slot -phase load                 # once: 2,000,000 events
//	go run -tags wnmsbench ./bench/slot -data /tmp/slot -phase read                 # a fresh process: the slot's failing clients
//	go run -tags wnmsbench ./bench/slot -data /tmp/slot -phase read -read baseline  # the slot's connectivity baseline
//
// The load goes through the store's bulk path (-load http: through the
// ingest API, much slower). -read failing (the default) reads
// GET /baselines/clientsconnectivity/failingclients of the slot, whose
// observation is brought up to date first (-dirty=false) or by the reads
// themselves (-dirty); -read baseline reads the slot's connectivity data
// point, out of date, so each run recomputes it. -database-url runs both
// phases on PostgreSQL instead (the database is kept between the phases).
//
// -phase sustain measures the slot being filled: for -duration it
// ingests client events through the API at -rate a second (batches of
// -batch, over -clients MACs, every 25th a Failure, timestamped now),
// and -reads times a second reads the connectivity baseline of the
// current slot (and, as a control of what the busy machine adds to any
// read, the signed-in user at the same rate); every -every it prints the
// reads' p50 and p99 and the process's RSS and Go heap, and at the end
// the whole run's. -align
// starts the run at the next slot boundary, so that a 15-minute run fills
// one whole slot.
//
//	go run -tags wnmsbench ./bench/slot -data /tmp/slot -phase sustain -rate 2000 -clients 5000 -duration 15m -align
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wnms/wnms/bench/internal/benchserver"
	"github.com/wnms/wnms/internal/simulate"
	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

var (
	dataDir  = flag.String("data", "", "SQLite data directory (kept between the phases)")
	dbURL    = flag.String("database-url", "", "PostgreSQL URL instead of SQLite")
	phase    = flag.String("phase", "load", "load: fill the slot; read: the concurrent reads")
	loadWay  = flag.String("load", "bulk", "bulk: the store's bulk path; http: the ingest API")
	readKind = flag.String("read", "failing", "failing: the slot's failing clients; baseline: its connectivity data point")
	dirty    = flag.Bool("dirty", false, "with -read failing, leave the slot out of date so the reads recompute it")
	nEvents  = flag.Int("events", 2_000_000, "events in the slot")
	nMACs    = flag.Int("clients", 100_000, "client MACs (every 25th fails)")
	readers  = flag.Int("readers", 6, "concurrent readers")
	limit    = flag.Int("limit", 100, "failing clients a read asks for")

	rate      = flag.Int("rate", 2000, "sustain: client events ingested a second")
	batchSize = flag.Int("batch", 1000, "sustain: events a request")
	duration  = flag.Duration("duration", 15*time.Minute, "sustain: how long")
	readRate  = flag.Float64("reads", 4, "sustain: baseline reads of the current slot a second")
	every     = flag.Duration("every", 30*time.Second, "sustain: how often to print")
	align     = flag.Bool("align", false, "sustain: start at the next slot boundary")
)

// slotFile holds the slot the events fill (two hours before the load, at
// a 15-minute boundary), so the read phase finds it.
func slotFile() string { return *dataDir + "/bench-slot" }

func main() {
	flag.Parse()
	if *dataDir == "" {
		log.Fatal("-data is required (the phases share it)")
	}
	check(os.MkdirAll(*dataDir, 0o700))
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{DataDir: *dataDir, DatabaseURL: *dbURL, Serving: true})
	check(err)
	defer st.Close()
	check(st.WarmPool(ctx))
	srv, err := benchserver.Start(ctx, st)
	check(err)
	client := &http.Client{Timeout: 30 * time.Minute}
	cookie, err := srv.Session(ctx, client)
	check(err)
	switch *phase {
	case "load":
		slot := time.Now().Add(-2 * time.Hour).Truncate(15 * time.Minute).UnixMilli()
		check(os.WriteFile(slotFile(), []byte(fmt.Sprint(slot)), 0o600))
		floor := benchFloor(ctx, srv)
		start := time.Now()
		for sent := 0; sent < *nEvents; sent += 10_000 {
			n := min(10_000, *nEvents-sent)
			if *loadWay == "http" {
				_, err := benchserver.Post(client, srv.Base+"/V5/ingest/clientevents", cookie, batch(slot, sent, n))
				check(err)
				continue
			}
			var recs []json.RawMessage
			check(json.Unmarshal(batch(slot, sent, n), &recs))
			events, bodies := make([]*wnms.ClientEvent, len(recs)), make([][]byte, len(recs))
			for i, r := range recs {
				e, err := telemetry.ParseEvent(r, time.Now())
				check(err)
				bodies[i], err = e.PlaceAt(nil, floor)
				check(err)
				events[i] = &e.ClientEvent
			}
			check(st.RawInsertEventsForBench(ctx, store.EventRowsForBench(wnms.OnPremCustomer, events, bodies)))
		}
		if *loadWay != "http" {
			// The bulk path writes around ingest: the slot's client rows
			// are made from its events once, as ingest would have kept them.
			check(st.RebuildSlotClients(ctx, wnms.OnPremCustomer, slot))
		}
		if st.Dialect() == store.Postgres {
			check(st.AnalyzeForBench(ctx))
		}
		fmt.Printf("loaded %d events (%d clients) into the slot at %s in %s\n", *nEvents, *nMACs,
			time.UnixMilli(slot).UTC().Format(time.RFC3339), time.Since(start).Round(time.Second))
	case "read":
		b, err := os.ReadFile(slotFile())
		check(err)
		var slot int64
		fmt.Sscan(string(b), &slot)
		// Out of date again, as after a new event.
		_, err = st.MarkSlotsForBench(ctx, wnms.OnPremCustomer, slot)
		check(err)
		u := fmt.Sprintf("%s/V5/baselines/clientsconnectivity?fromtime=%d&totime=%d", srv.Base, slot, slot+15*60*1000-1)
		if *readKind == "failing" {
			if !*dirty {
				t := time.Now()
				_, err := benchserver.Get(client, u, cookie) // brings the observation up to date
				check(err)
				fmt.Printf("slot recomputed in %s\n", time.Since(t).Round(time.Millisecond))
			}
			u = fmt.Sprintf("%s/V5/baselines/clientsconnectivity/failingclients?timestamp=%d&limit=%d", srv.Base, slot, *limit)
		}
		runtime.GC()
		fmt.Printf("before the reads: VmRSS %s, VmHWM %s\n", benchserver.ProcStatus(0, "VmRSS"), benchserver.ProcStatus(0, "VmHWM"))
		resetHWM()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var took []time.Duration
		start := time.Now()
		for i := 0; i < *readers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t := time.Now()
				body, err := benchserver.Get(client, u, cookie)
				check(err)
				d := time.Since(t)
				mu.Lock()
				took = append(took, d)
				mu.Unlock()
				fmt.Printf("reader %d: %s, %s\n", i, d.Round(time.Millisecond), first(string(body), 120))
			}()
		}
		wg.Wait()
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		fmt.Printf("%s: %d concurrent reads of the slot in %s (each %s to %s); peak RSS (VmHWM) %s\n", *readKind, *readers,
			time.Since(start).Round(time.Millisecond), took[0].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond),
			benchserver.ProcStatus(0, "VmHWM"))
	case "sustain":
		sustain(client, srv, cookie)
	default:
		log.Fatalf("-phase load, read or sustain, not %q", *phase)
	}
}

// resetHWM resets the peak resident memory (VmHWM) to the current, so the
// peak printed after the reads is theirs and not the start's.
func resetHWM() {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		fmt.Printf("(VmHWM not reset: %v)\n", err)
	}
}

// benchFloor finds or makes the floor "Bench Floor" at the top of the
// tree, where the events are placed.
func benchFloor(ctx context.Context, srv *benchserver.Server) int64 {
	id, value, err := srv.Key(ctx)
	check(err)
	u, err := url.Parse(srv.Base)
	check(err)
	a := &simulate.API{URL: u.Scheme + "://" + u.Host, KeyID: id, KeyValue: value, HTTP: http.DefaultClient}
	check(a.Login(ctx))
	type locID struct {
		Type string `json:"type"`
		ID   int64  `json:"id"`
	}
	type location struct {
		ID       locID  `json:"id"`
		ParentID *locID `json:"parentId"`
		Name     string `json:"name"`
	}
	var tree struct {
		Locations map[string]location `json:"locations"`
	}
	check(a.JSON(ctx, http.MethodGet, "/V2/locations/tree", nil, &tree))
	for _, l := range tree.Locations {
		if l.Name == "Bench Floor" {
			return l.ID.ID
		}
	}
	var l location
	check(a.JSON(ctx, http.MethodPut, "/V2/locations", map[string]any{"parentLocation": locID{"locallocationid", 0},
		"location": map[string]any{"type": "floorlocation", "name": "Bench Floor"}}, &l))
	return l.ID.ID
}

// batch is n events of the slot, from the sent-th on: every 25th a
// failure (association, authentication and network in turn), the rest
// successes, spread over the clients.
func batch(slot int64, sent, n int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		k := sent + i
		if i > 0 {
			b.WriteByte(',')
		}
		c := k % *nMACs
		mac := fmt.Sprintf("aa:bb:%02x:%02x:%02x:%02x", c>>24&0xff, c>>16&0xff, c>>8&0xff, c&0xff)
		ts := slot + int64(k%(15*60*1000))
		fmt.Fprintf(&b, `{"eventId":"slot-%d","macAddress":%q,"bssid":"00:11:74:00:00:01","channel":%d,"ssid":"corp","timestamp":%d,`, k, mac, 1+k%2*35, ts)
		if k%25 == 0 {
			code := 1 + k/25%3
			fmt.Fprintf(&b, `"eventType":"Failure","failureCode":%d,"subFailureCode":%d}`, code, code*100+1)
		} else {
			b.WriteString(`"eventType":"Success","dhcpLatency":1,"aaaLatency":1,"dnsLatency":0}`)
		}
	}
	b.WriteByte(']')
	return b.Bytes()
}

func first(s string, n int) string {
	s = strings.TrimSpace(s)
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

// sustain ingests at -rate for -duration while reading the current slot's
// connectivity baseline -reads times a second, and prints what the reads
// took and the process's memory as it goes.
func sustain(client *http.Client, srv *benchserver.Server, cookie string) {
	if *align {
		next := time.Now().Truncate(15 * time.Minute).Add(15 * time.Minute)
		fmt.Printf("waiting %s for the slot at %s\n", time.Until(next).Round(time.Second), next.UTC().Format(time.RFC3339))
		time.Sleep(time.Until(next))
	}
	start := time.Now()
	end := start.Add(*duration)
	var sent, posts atomic.Int64
	var ingestErr atomic.Value
	go func() { // ingest: a batch every batch/rate, sent in order
		period := time.Duration(float64(time.Second) * float64(*batchSize) / float64(*rate))
		t := time.NewTicker(period)
		defer t.Stop()
		for k := 0; time.Now().Before(end); k += *batchSize {
			if _, err := benchserver.Post(client, srv.Base+"/V5/ingest/clientevents", cookie, nowBatch(k, *batchSize)); err != nil {
				ingestErr.Store(err)
			}
			sent.Add(int64(*batchSize))
			posts.Add(1)
			<-t.C
		}
	}()
	var mu sync.Mutex
	var window, all, control, controlAll []time.Duration
	var readErrs int
	go func() { // readers: one read every 1/reads, each on its own
		t := time.NewTicker(time.Duration(float64(time.Second) / *readRate))
		defer t.Stop()
		for time.Now().Before(end) {
			<-t.C
			go func() {
				now := time.Now()
				slot := now.Truncate(15 * time.Minute).UnixMilli()
				u := fmt.Sprintf("%s/V5/baselines/clientsconnectivity?fromtime=%d&totime=%d", srv.Base, slot, now.UnixMilli())
				_, err := benchserver.Get(client, u, cookie)
				d := time.Since(now)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					readErrs++
					return
				}
				window, all = append(window, d), append(all, d)
			}()
			// The control: the signed-in user, a read that costs next to
			// nothing, at the same rate. What it takes is what the machine
			// (shared, busy) adds to any read.
			go func() {
				now := time.Now()
				_, err := benchserver.Get(client, srv.Base+"/V5/users/current", cookie)
				d := time.Since(now)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					control, controlAll = append(control, d), append(controlAll, d)
				}
			}()
		}
	}()
	fmt.Printf("%8s %10s %6s %8s %8s %8s %7s %7s %12s %12s\n", "elapsed", "events", "reads", "p50", "p99", "max", "RSS", "heap",
		"control p50", "control p99")
	var rssMin, rssMax, heapMin, heapMax uint64
	t := time.NewTicker(*every)
	defer t.Stop()
	for now := range t.C {
		mu.Lock()
		w, c := window, control
		window, control = nil, nil
		mu.Unlock()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		rss := procKB("VmRSS") << 10
		if rssMin == 0 || rss < rssMin {
			rssMin = rss
		}
		rssMax = max(rssMax, rss)
		if heapMin == 0 || ms.HeapInuse < heapMin {
			heapMin = ms.HeapInuse
		}
		heapMax = max(heapMax, ms.HeapInuse)
		p50, p99, top := percentiles(w)
		c50, c99, _ := percentiles(c)
		fmt.Printf("%8s %10d %6d %8s %8s %8s %6dM %6dM %12s %12s\n", now.Sub(start).Round(time.Second), sent.Load(), len(w), p50, p99, top,
			rss>>20, ms.HeapInuse>>20, c50, c99)
		if !now.Before(end) {
			break
		}
	}
	mu.Lock()
	p50, p99, top := percentiles(all)
	c50, c99, _ := percentiles(controlAll)
	n, errs := len(all), readErrs
	mu.Unlock()
	if err, _ := ingestErr.Load().(error); err != nil {
		fmt.Printf("ingest error (last): %v\n", err)
	}
	fmt.Printf("sustain: %d events in %d requests over %s (%.0f events/s); %d reads (%d failed): p50 %s, p99 %s, max %s "+
		"(control p50 %s, p99 %s); RSS %d-%d MB, heap in use %d-%d MB, peak RSS (VmHWM) %s\n",
		sent.Load(), posts.Load(), time.Since(start).Round(time.Second), float64(sent.Load())/time.Since(start).Seconds(), n, errs,
		p50, p99, top, c50, c99, rssMin>>20, rssMax>>20, heapMin>>20, heapMax>>20, benchserver.ProcStatus(0, "VmHWM"))
}

// percentiles are the p50, p99 and largest of ds.
func percentiles(ds []time.Duration) (p50, p99, top time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))].Round(time.Millisecond) }
	return at(0.50), at(0.99), s[len(s)-1].Round(time.Millisecond)
}

// procKB is a /proc/self/status field in kB.
func procKB(field string) uint64 {
	var kb uint64
	fmt.Sscan(strings.TrimSuffix(benchserver.ProcStatus(0, field), " kB"), &kb)
	return kb
}

// nowBatch is n events timestamped now, from the k-th on: every 25th a
// failure (association, authentication and network in turn), the rest
// successes, spread over -clients MACs.
func nowBatch(k, n int) []byte {
	var b bytes.Buffer
	now := time.Now().UnixMilli()
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		j := k + i
		if i > 0 {
			b.WriteByte(',')
		}
		c := j % *nMACs
		mac := fmt.Sprintf("aa:bb:%02x:%02x:%02x:%02x", c>>24&0xff, c>>16&0xff, c>>8&0xff, c&0xff)
		fmt.Fprintf(&b, `{"eventId":"sustain-%d-%d","macAddress":%q,"bssid":"00:11:74:00:00:01","channel":%d,"ssid":"corp","timestamp":%d,`,
			now, j, mac, 1+j%2*35, now-int64(n-i))
		if j%25 == 0 {
			code := 1 + j/25%3
			fmt.Fprintf(&b, `"eventType":"Failure","failureCode":%d,"subFailureCode":%d}`, code, code*100+1)
		} else {
			b.WriteString(`"eventType":"Success","dhcpLatency":1,"aaaLatency":1,"dnsLatency":0}`)
		}
	}
	b.WriteByte(']')
	return b.Bytes()
}
