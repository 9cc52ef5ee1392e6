//go:build wnmsbench

// Command telemetry measures the telemetry path of wnms on one store
// engine, side by side with what the engine does without wnms:
//
//  1. ingest: batches of 10,000 client events POSTed over HTTP by two
//     concurrent senders, against the same rows inserted raw (COPY on
//     PostgreSQL, batched multi-row INSERTs on SQLite) into the same table
//     with the same indexes, and into a plain table with only a (customer,
//     mac, ts) and a unique eventId index (the two-index yardstick of
//     docs/bench-indexes.md), alternating block by block;
//  2. load: the store is filled to -events events (30 days, -clients
//     clients, -aps APs) through the store's own bulk path;
//  3. reads: a page of 50 client events with totalCount, and a client's
//     connection logs, through HTTP, against the store's query for the same
//     page called directly (the raw SQL, with the driver); hot, and cold
//     after -idle of rest;
//  4. the process's resident memory (VmRSS), server and generator together;
//  5. with -baselines: the rebuild of every slot's observations, a day of
//     the connectivity baseline of the whole tree, a day of one client's
//     data rate (the APs stand on -floors floors, and -sample-clients
//     clients have a sample every 5 minutes of the -days), hot and cold,
//     and the cost of the minute-by-minute anomaly evaluation.
//
// The server runs in this process on a loopback port (the real listener
// kit and handlers); SQLite lives in a temporary directory, PostgreSQL in a
// fresh schema of -database-url that is dropped at the end.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wnms/wnms/bench/internal/stats"

	"github.com/wnms/wnms/bench/internal/benchserver"
	"github.com/wnms/wnms/internal/simulate"
	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

var (
	dbURL      = flag.String("database-url", "", "PostgreSQL URL; empty: SQLite in a temporary directory")
	nEvents    = flag.Int("events", 1_000_000, "events to load for the reads")
	nClients   = flag.Int("clients", 50_000, "client MACs")
	nAPs       = flag.Int("aps", 500, "APs")
	days       = flag.Int("days", 30, "days the events span")
	ingestN    = flag.Int("ingest-batches", 20, "10,000-event batches for the ingest comparison (half raw, half HTTP, in two blocks of each)")
	readsN     = flag.Int("reads", 400, "requests of each read kind")
	idle       = flag.Duration("idle", 90*time.Second, "rest before the cold reads (0: skip them)")
	cpuProf    = flag.String("cpuprofile", "", "write a CPU profile of the ingest comparison to this file")
	dataDir    = flag.String("data", "", "SQLite data directory to keep (and reuse: a store that holds -events events skips the ingest and load); empty: a temporary one")
	cacheMiB   = flag.Int("sqlite-cache-mib", store.DefaultCacheMiB, "SQLite telemetry page cache, as wnms serve --sqlite-cache-mib")
	baselines  = flag.Bool("baselines", false, "also measure the baselines: rebuild the slot observations, read a day of connectivity and of a client's data rate, and time the anomaly evaluation")
	nFloors    = flag.Int("floors", 50, "floors the APs stand on, 5 to a site")
	sampleN    = flag.Int("sample-clients", 1000, "clients with a statistics sample every 5 minutes of the -days (for the data-rate baseline)")
	evalN      = flag.Int("evaluations", 20, "anomaly evaluations of each kind to time")
	rebuild    = flag.Bool("rebuild", true, "with -baselines, rebuild the observations of every slot first (false: a kept -data store whose slots are rebuilt already)")
	readProf   = flag.String("readprofile", "", "write a CPU profile of the hot reads to this file")
	rawLoad    = flag.Bool("raw-load", false, "load the events raw (COPY on PostgreSQL) instead of through the store's bulk path: fast enough for tens of millions")
	ingestAt   = flag.String("ingest-at", "", "comma-separated event counts (e.g. 1000000,50000000) at which the load stops for another ingest comparison")
	markDays   = flag.Int("rebuild-days", 0, "with -baselines, rebuild the observations of the last N days only (0: all)")
	keepSchema = flag.String("schema", "", "with -database-url: use this existing schema (a store a previous run kept) and keep it")
	span       = flag.Duration("ingest-span", 0, "spread the ingest comparison's events over this much time before now, as live traffic is (0: over -days, as the load)")
	dropDay    = flag.Bool("drop-day", false, "at the end, drop the oldest day's partitions (PostgreSQL) while a reader reads event pages, and time both")
)

const batch = 10_000

func main() {
	flag.Parse()
	ctx := context.Background()
	cfg, cleanup := storeConfig(ctx)
	defer cleanup()
	st, err := store.Open(ctx, cfg)
	check(err)
	defer st.Close()
	fmt.Printf("== engine %s: %d events, %d clients, %d APs, %d days\n", st.Dialect(), *nEvents, *nClients, *nAPs, *days)

	// The server, on a loopback port.
	srv, err := benchserver.Start(ctx, st)
	check(err)
	base := srv.Base
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	cookie, err := srv.Session(ctx, client)
	check(err)

	// APs, each with one radio, spread over the floors.
	floors := benchFloors(ctx, srv)
	var aps []string
	for i := 0; i < *nAPs; i++ {
		aps = append(aps, fmt.Sprintf(`{"macaddress":"00:11:74:%02x:%02x:00","deviceCapability":%d,"locationId":{"type":"locallocationid","id":%d},"radios":[{"macaddress":"00:11:74:%02x:%02x:01","channel":%d}]}`,
			i/256, i%256, 1+2*(i%2), floors[i%len(floors)], i/256, i%256, []int{1, 6, 11, 36, 40, 44}[i%6]))
	}
	post(client, base+"/V5/ingest/aps", cookie, []byte("["+strings.Join(aps, ",")+"]"))

	gen := generator{r: mrand.New(mrand.NewPCG(1, 2)), end: time.Now().Add(-time.Minute)}
	svc := srv.API.Telemetry

	have, err := st.CountEventsForBench(ctx)
	check(err)
	if have >= int64(*nEvents) {
		fmt.Printf("the store holds %d events: load skipped\n", have)
		if *span == 0 {
			*ingestN = 0
		}
	}

	// The partitions of every day the events may fall in (PostgreSQL).
	check(st.EnsurePartitions(ctx, gen.end.Add(-time.Duration(*days)*24*time.Hour).UnixMilli(), gen.end.UnixMilli()))

	// 1. Ingest, side by side; again at each -ingest-at count.
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		check(err)
		check(pprof.StartCPUProfile(f))
	}
	loaded := int(have)
	if *ingestN > 0 {
		loaded += ingestRound(ctx, st, svc, client, base, cookie, &gen, fmt.Sprintf("at %d events", have))
	}
	if *cpuProf != "" {
		pprof.StopCPUProfile()
	}

	// 2. Load the rest through the store's bulk path (or raw).
	t0 := time.Now()
	var marks []int
	for _, f := range strings.Split(*ingestAt, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > loaded {
			marks = append(marks, n)
		}
	}
	fromLoad := loaded
	var loadTime time.Duration
	for loaded < *nEvents || len(marks) > 0 {
		if len(marks) > 0 && loaded >= marks[0] {
			loadTime += time.Since(t0)
			loaded += ingestRound(ctx, st, svc, client, base, cookie, &gen, fmt.Sprintf("at %d events", loaded))
			marks = marks[1:]
			t0 = time.Now()
			continue
		}
		n := min(batch, *nEvents-loaded)
		if len(marks) > 0 {
			n = min(batch, marks[0]-loaded)
		}
		if n <= 0 {
			break
		}
		events, bodies := gen.parse(ctx, svc, gen.records(n))
		if *rawLoad {
			check(st.RawInsertEventsForBench(ctx, store.EventRowsForBench(1, events, bodies)))
		} else {
			_, err := st.InsertClientEvents(ctx, 1, events, bodies, nil)
			check(err)
		}
		loaded += n
		if loaded%(batch*100) == 0 {
			fmt.Printf("  loaded %d events (%.0f/s)\n", loaded, float64(loaded-fromLoad)/(loadTime+time.Since(t0)).Seconds())
		}
	}
	loadTime += time.Since(t0)
	fmt.Printf("load: %d events in %s; RSS %s\n", loaded, loadTime.Round(time.Second), rss())
	if *baselines {
		loadSamples(ctx, st, cfg, floors)
	}

	// 3. Reads.
	reads := func(label string) {
		// HTTP and the raw query read different clients, in turns, so that
		// neither warms the pages the other then reads.
		pick := mrand.New(mrand.NewPCG(3, 4))
		var httpPage, rawPage, httpLogs, rawLogs []time.Duration
		for i := 0; i < *readsN; i++ {
			// The store holds MACs as ingest writes them: upper case.
			macHTTP, macRaw := gen.mac(pick.IntN(*nClients)), strings.ToUpper(gen.mac(pick.IntN(*nClients)))
			viaHTTP := func() {
				t := time.Now()
				get(client, base+"/V5/devices/clientevents/"+macHTTP+"/0/50?totalcountrequired=true", cookie)
				httpPage = append(httpPage, time.Since(t))
				t = time.Now()
				get(client, base+"/V5/devices/clients/connectionlogs?clientmacaddress="+macHTTP, cookie)
				httpLogs = append(httpLogs, time.Since(t))
			}
			raw := func() {
				t := time.Now()
				_, _, err := st.ClientEvents(ctx, wnms.EventQuery{CustomerID: 1, MAC: macRaw, From: -1, To: -1, Limit: 50, Count: true})
				check(err)
				rawPage = append(rawPage, time.Since(t))
				t = time.Now()
				for _, typ := range []string{wnms.Success, wnms.Failure} {
					_, _, err := st.ClientEvents(ctx, wnms.EventQuery{CustomerID: 1, MAC: macRaw, From: -1, To: -1, Limit: 100,
						Types: []string{typ}, Dot11ACOnly: true})
					check(err)
				}
				rawLogs = append(rawLogs, time.Since(t))
			}
			if i%2 == 0 {
				viaHTTP()
				raw()
			} else {
				raw()
				viaHTTP()
			}
		}
		for _, r := range []struct {
			name      string
			http, raw []time.Duration
		}{{"events page of 50 + count", httpPage, rawPage}, {"connection logs", httpLogs, rawLogs}} {
			hp50, hp99 := stats.Pct(r.http, 50), stats.Pct(r.http, 99)
			rp50, rp99 := stats.Pct(r.raw, 50), stats.Pct(r.raw, 99)
			fmt.Printf("%s %s: HTTP p50 %s p99 %s; raw SQL p50 %s p99 %s; p50 ratio %.2f\n", label, r.name,
				stats.MS(hp50), stats.MS(hp99), stats.MS(rp50), stats.MS(rp99), float64(hp50)/float64(rp50))
		}
		fmt.Printf("%s RSS %s\n", label, rss())
	}
	if *readProf != "" {
		f, err := os.Create(*readProf)
		check(err)
		check(pprof.StartCPUProfile(f))
	}
	if *baselines {
		measureBaselines(ctx, srv, client, base, cookie)
		measureEvaluation(ctx, srv, client, base, cookie, &gen)
	}
	reads("hot")
	if *readProf != "" {
		pprof.StopCPUProfile()
	}
	if *idle > 0 {
		time.Sleep(*idle)
		reads("cold")
		if *baselines {
			baselineReads(client, base, cookie, "cold")
		}
	}
	if *dropDay {
		measureDrop(ctx, st, client, base, cookie, &gen)
	}
}

// ingestRound compares ingest over HTTP (10,000-event batches, POSTed by
// two senders at once) with the same number of rows inserted raw in
// 10,000-row transactions, in two alternating blocks of -ingest-batches/4
// batches a side, and returns how many events it stored. An HTTP block ends when the
// derived state its batches wrote behind (clients, baseline marks) is
// applied too, so its time includes all the work ingest causes.
func ingestRound(ctx context.Context, st *store.Store, svc *telemetry.Service, client *http.Client, base, cookie string, load *generator, label string) int {
	gen := load
	if *span > 0 {
		gen = &generator{r: load.r, end: time.Now(), span: *span}
		label += fmt.Sprintf(" (events of the last %s)", *span)
	}
	var rawDur, refDur, httpDur time.Duration
	var rawRows, httpRows int
	per := max(*ingestN/4, 1)
	// The two-index yardstick: a plain table with the columns of
	// client_events and only a (customer, mac, ts) and a unique (customer,
	// eventId, ts) index, which takes the same rows as the raw side.
	check(st.EventTableForBench(ctx, "bench_reference", false, 0, 0, []string{
		`CREATE UNIQUE INDEX {t}_event_id ON {t} (customer_id, event_id, ts)`, `CREATE INDEX {t}_mac ON {t} (customer_id, mac, ts)`}))
	defer st.DropTableForBench(context.Background(), "bench_reference")
	for range 2 {
		for range per {
			recs := gen.records(batch)
			events, bodies := gen.parse(ctx, svc, recs)
			rows := store.EventRowsForBench(1, events, bodies)
			t0 := time.Now()
			check(st.RawInsertEventsForBench(ctx, rows))
			rawDur += time.Since(t0)
			t0 = time.Now()
			check(st.RawInsertIntoForBench(ctx, "bench_reference", rows))
			refDur += time.Since(t0)
			rawRows += len(events)
		}
		// The block's batches, taken in turn by two senders.
		bodies := make([][]byte, per)
		for i := range bodies {
			bodies[i] = []byte("[" + strings.Join(gen.records(batch), ",") + "]")
		}
		t0 := time.Now()
		var wg sync.WaitGroup
		for j := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := j; i < len(bodies); i += 2 {
					post(client, base+"/V5/ingest/clientevents", cookie, bodies[i])
				}
			}()
		}
		wg.Wait()
		check(st.FlushDerived(ctx))
		httpDur += time.Since(t0)
		httpRows += len(bodies) * batch
	}
	rawRate, httpRate := float64(rawRows)/rawDur.Seconds(), float64(httpRows)/httpDur.Seconds()
	refRate := float64(rawRows) / refDur.Seconds()
	fmt.Printf("ingest %s: raw %.0f rows/s, HTTP (2 senders, %d-event batches) %.0f rows/s, ratio %.2f\n",
		label, rawRate, batch, httpRate, httpRate/rawRate)
	fmt.Printf("ingest %s: raw into a table with only a (customer, mac, ts) and a unique eventId index %.0f rows/s; HTTP's ratio to it %.2f, the raw insert's %.2f\n",
		label, refRate, httpRate/refRate, rawRate/refRate)
	return rawRows + httpRows
}

// measureDrop drops the oldest day's partitions while a reader reads
// client event pages without pause, and prints how long the drop took and
// what the reader saw meanwhile.
func measureDrop(ctx context.Context, st *store.Store, client *http.Client, base, cookie string, gen *generator) {
	oldest := gen.end.Add(-time.Duration(*days) * 24 * time.Hour).UTC().Truncate(24 * time.Hour)
	stop := make(chan struct{})
	done := make(chan []time.Duration)
	go func() {
		pick := mrand.New(mrand.NewPCG(7, 8))
		var d []time.Duration
		for {
			select {
			case <-stop:
				done <- d
				return
			default:
			}
			t := time.Now()
			get(client, base+"/V5/devices/clientevents/"+gen.mac(pick.IntN(*nClients))+"/0/50?totalcountrequired=true", cookie)
			d = append(d, time.Since(t))
		}
	}()
	time.Sleep(2 * time.Second) // the reader's pace before
	t0 := time.Now()
	dropped, err := st.DropPartitionsBefore(ctx, oldest.Add(24*time.Hour).UnixMilli())
	took := time.Since(t0)
	check(err)
	time.Sleep(2 * time.Second) // and after
	close(stop)
	d := <-done
	fmt.Printf("drop: %d partitions of %s dropped in %s; meanwhile %d event pages read, p50 %s p99 %s max %s\n",
		len(dropped), oldest.Format(time.DateOnly), took.Round(time.Millisecond), len(d),
		stats.MS(stats.Pct(d, 50)), stats.MS(stats.Pct(d, 99)), stats.MS(stats.Pct(d, 100)))
}

// measureBaselines marks every slot of the stored events out of date,
// times the refresh that rebuilds their observations, and reads a day
// of the connectivity baseline hot.
func measureBaselines(ctx context.Context, srv *benchserver.Server, client *http.Client, base, cookie string) {
	st := srv.Store
	if !*rebuild {
		baselineReads(client, base, cookie, "hot")
		return
	}
	from := int64(0)
	if *markDays > 0 {
		from = time.Now().Add(-time.Duration(*markDays) * 24 * time.Hour).UnixMilli()
	}
	_, err := st.MarkSlotsForBench(ctx, 1, from) // the slots that ingest has not marked already
	check(err)
	n, err := st.DirtySlotCountForBench(ctx)
	check(err)
	t0 := time.Now()
	get(client, base+"/V5/baselines/clientsconnectivity", cookie) // refreshes the slots a day of it needs
	fmt.Printf("baselines: the first day read (which recomputes the 15 days of slots it needs) took %s\n", time.Since(t0).Round(time.Millisecond))
	check(srv.API.Baselines.Refresh(ctx, 1, from, math.MaxInt64, 0)) // and the rest, as the evaluation would over the next minutes
	fmt.Printf("baselines: rebuilt the observations of %d slots in %s (%.1f ms a slot)\n", n, time.Since(t0).Round(time.Millisecond),
		float64(time.Since(t0).Milliseconds())/float64(max(n, 1)))
	check(st.AnalyzeForBench(ctx)) // as autovacuum would after a bulk load
	baselineReads(client, base, cookie, "hot")
}

// baselineReads times a day (96 slots) of the connectivity baseline at
// the root, each band, and a day of the data rate of sampled clients
// (each read a different client, so that none finds its pages warm from
// the last).
func baselineReads(client *http.Client, base, cookie, label string) {
	var d []time.Duration
	for i := 0; i < *readsN/4; i++ {
		band := []string{"ANY", "5GHz", "2.4GHz"}[i%3]
		t := time.Now()
		get(client, base+"/V5/baselines/clientsconnectivity?locationid=0&frequencyband="+band, cookie)
		d = append(d, time.Since(t))
	}
	fmt.Printf("%s connectivity baseline, one day (96 slots) over HTTP: p50 %s p99 %s\n", label, stats.MS(stats.Pct(d, 50)), stats.MS(stats.Pct(d, 99)))
	if *sampleN == 0 {
		return
	}
	d = d[:0]
	pick := mrand.New(mrand.NewPCG(5, uint64(len(label))))
	var gen generator
	for i := 0; i < *readsN/4; i++ {
		t := time.Now()
		get(client, base+"/V5/baselines/clientdatarate?macaddress="+gen.mac(pick.IntN(*sampleN)), cookie)
		d = append(d, time.Since(t))
	}
	fmt.Printf("%s data-rate baseline of a client, one day (96 slots) over HTTP: p50 %s p99 %s\n", label, stats.MS(stats.Pct(d, 50)), stats.MS(stats.Pct(d, 99)))
}

// benchFloors finds or makes -floors floors, five to a folder "Bench
// Site N", and answers their location ids.
func benchFloors(ctx context.Context, srv *benchserver.Server) []int64 {
	id, value, err := srv.Key(ctx)
	check(err)
	u, _ := url.Parse(srv.Base)
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
	findOrMake := func(parent int64, typ, name string) int64 {
		for _, l := range tree.Locations {
			if l.ParentID != nil && l.ParentID.ID == parent && l.Name == name {
				return l.ID.ID
			}
		}
		var l location
		check(a.JSON(ctx, http.MethodPut, "/V2/locations", map[string]any{"parentLocation": locID{"locallocationid", parent},
			"location": map[string]any{"type": typ, "name": name}}, &l))
		return l.ID.ID
	}
	var out []int64
	site := int64(0)
	for i := 0; i < max(*nFloors, 1); i++ {
		if i%5 == 0 {
			site = findOrMake(0, "folderlocation", fmt.Sprintf("Bench Site %d", i/5+1))
		}
		out = append(out, findOrMake(site, "floorlocation", fmt.Sprintf("Floor %d", i%5+1)))
	}
	return out
}

// loadSamples stores a sample every 5 minutes of the -days for each of
// the first -sample-clients clients, each at its own AP, through the
// store's bulk path, unless the store (st, of cfg) holds them already.
func loadSamples(ctx context.Context, st *store.Store, cfg store.Config, floors []int64) {
	per := *days * 288
	have, err := storedSamples(ctx, cfg)
	check(err)
	if have >= int64(*sampleN*per) {
		fmt.Printf("the store holds %d samples: sample load skipped\n", have)
		return
	}
	t0 := time.Now()
	r := mrand.New(mrand.NewPCG(7, 8))
	end := time.Now().Truncate(5 * time.Minute).UnixMilli()
	var g generator
	var buf []*wnms.Sample
	n := 0
	// In time order, every client at each 5-minute tick, as they arrive:
	// a client's samples are spread over the table as in a real store.
	for k := per - 1; k >= 0; k-- {
		for c := 0; c < *sampleN; c++ {
			ap := c % *nAPs
			buf = append(buf, &wnms.Sample{MacAddress: strings.ToUpper(g.mac(c)), Timestamp: end - int64(k)*300_000,
				BSSID: fmt.Sprintf("00:11:74:%02X:%02X:01", ap/256, ap%256), SSID: "corp", Channel: []int{1, 6, 11, 36, 40, 44}[ap%6],
				RSSI: -50 - r.IntN(30), DataRateMbps: 20 + 10*float64(c%20) + r.Float64()*40, RetryRatePct: r.Float64() * 15,
				LocationID: floors[ap%len(floors)]})
			if len(buf) == batch {
				_, err := st.InsertClientStats(ctx, 1, buf, nil)
				check(err)
				n += len(buf)
				buf = buf[:0]
			}
		}
	}
	_, err = st.InsertClientStats(ctx, 1, buf, nil)
	check(err)
	n += len(buf)
	fmt.Printf("samples: %d clients, %d samples in %s\n", *sampleN, n, time.Since(t0).Round(time.Second))
}

// measureEvaluation times the two kinds of minute of the anomaly
// evaluation: one where a slot has just closed (every floor's
// connectivity is evaluated for it), and an ordinary one, after a minute
// of live events (about 1/43,200 of the store, in the open slot) has
// marked that slot out of date. It reports wall time and this process's
// CPU time of each (on PostgreSQL the database's own CPU is not in the
// latter; the wall time bounds both), and the share of one core an hour
// of them takes: 4 closing minutes and 56 ordinary ones.
func measureEvaluation(ctx context.Context, srv *benchserver.Server, client *http.Client, base, cookie string, gen *generator) {
	svc := srv.API.Baselines
	key := "anomaly_evaluated_slot:1"
	perMinute := max(*nEvents/(*days*24*60), 1)
	var closing, ordinary, closingCPU, ordinaryCPU []time.Duration
	for i := 0; i < *evalN; i++ {
		newest := wnms.SlotOf(time.Now().UnixMilli()) - wnms.SlotDuration.Milliseconds()
		// A minute where the slot newest has just closed.
		check(srv.Store.PutSetting(ctx, key, strconv.FormatInt(newest-wnms.SlotDuration.Milliseconds(), 10)))
		wall, cpu := timed(func() { check(svc.EvaluateCustomer(ctx, 1)) })
		closing, closingCPU = append(closing, wall), append(closingCPU, cpu)

		// An ordinary minute: the last minute's events arrived.
		live := *gen
		live.end, live.span = time.Now(), time.Minute
		post(client, base+"/V5/ingest/clientevents", cookie, []byte("["+strings.Join(live.records(perMinute), ",")+"]"))
		wall, cpu = timed(func() { check(svc.EvaluateCustomer(ctx, 1)) })
		ordinary, ordinaryCPU = append(ordinary, wall), append(ordinaryCPU, cpu)
	}
	for _, r := range []struct {
		name      string
		wall, cpu []time.Duration
	}{{"a minute that closes a slot (every floor evaluated)", closing, closingCPU},
		{fmt.Sprintf("an ordinary minute (%d new events refreshed)", perMinute), ordinary, ordinaryCPU}} {
		fmt.Printf("anomaly evaluation, %s: wall p50 %s p99 %s; CPU of this process p50 %s\n", r.name,
			stats.MS(stats.Pct(r.wall, 50)), stats.MS(stats.Pct(r.wall, 99)), stats.MS(stats.Pct(r.cpu, 50)))
	}
	hour := func(a, b []time.Duration) float64 {
		return (4*stats.Pct(a, 50) + 56*stats.Pct(b, 50)).Seconds() / 3600 * 100
	}
	fmt.Printf("anomaly evaluation share of one core: %.2f%% by wall time, %.2f%% by this process's CPU\n",
		hour(closing, ordinary), hour(closingCPU, ordinaryCPU))
}

// timed runs f and answers its wall time and the CPU time (user and
// system) this process spent meanwhile.
func timed(f func()) (wall, cpu time.Duration) {
	var r0, r1 syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &r0))
	t := time.Now()
	f()
	wall = time.Since(t)
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &r1))
	tv := func(r syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return wall, tv(r1) - tv(r0)
}

// generator makes deterministic events: -clients MACs, -aps BSSIDs,
// timestamps over -days, a realistic mix of types.
type generator struct {
	r    *mrand.Rand
	end  time.Time
	span time.Duration // the timestamps' spread before end; 0: -days
}

func (g *generator) mac(i int) string {
	return fmt.Sprintf("aa:bb:%02x:%02x:%02x:%02x", i>>24&255, i>>16&255, i>>8&255, i&255)
}

func (g *generator) records(n int) []string {
	out := make([]string, n)
	span := int64(*days) * 24 * 3600 * 1000
	if g.span > 0 {
		span = g.span.Milliseconds()
	}
	for i := range out {
		ap := g.r.IntN(*nAPs)
		ch := []int{1, 6, 11, 36, 40, 44}[ap%6]
		ts := g.end.UnixMilli() - g.r.Int64N(span)
		id := rand.Text()
		head := fmt.Sprintf(`{"eventId":%q,"macAddress":%q,"bssid":"00:11:74:%02x:%02x:01","channel":%d,"ssid":"corp","timestamp":%d`,
			id, g.mac(g.r.IntN(*nClients)), ap/256, ap%256, ch, ts)
		switch x := g.r.IntN(100); {
		case x < 70:
			out[i] = head + `,"eventType":"Success","dhcpLatency":1,"aaaLatency":1,"dnsLatency":0}`
		case x < 80:
			out[i] = head + fmt.Sprintf(`,"eventType":"Failure","failureCode":2,"subFailureCode":%d}`, 201+g.r.IntN(5))
		default:
			out[i] = head + `,"eventType":"Intermediate","categoryCode":1,"typeCode":2,"subTypeCode":1}`
		}
	}
	return out
}

// parse checks and places records as ingest does, for the paths that
// bypass HTTP.
func (g *generator) parse(ctx context.Context, svc *telemetry.Service, recs []string) ([]*wnms.ClientEvent, [][]byte) {
	var bssids []string
	events := make([]*telemetry.Event, 0, len(recs))
	now := time.Now()
	for _, r := range recs {
		e, err := telemetry.ParseEvent(json.RawMessage(r), now)
		check(err)
		events = append(events, e)
		bssids = append(bssids, e.BSSID)
	}
	radios, err := svc.Store.RadiosByBSSID(ctx, 1, bssids)
	check(err)
	placed, bodies := make([]*wnms.ClientEvent, len(events)), make([][]byte, len(events))
	for i, e := range events {
		var ap *wnms.RadioAP
		if x, ok := radios[e.BSSID]; ok {
			ap = &x
		}
		bodies[i], err = e.Place(ap)
		check(err)
		placed[i] = &e.ClientEvent
	}
	return placed, bodies
}

// storedSamples counts the samples in the store of cfg, on a connection
// of its own: the store has no call that counts them.
func storedSamples(ctx context.Context, cfg store.Config) (int64, error) {
	driver, dsn := "pgx", cfg.DatabaseURL
	if dsn == "" {
		driver, dsn = "sqlite", "file:"+(&url.URL{Path: filepath.Join(cfg.DataDir, store.TelemetryFile)}).EscapedPath()+
			"?_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	err = db.QueryRowContext(ctx, `SELECT count(*) FROM client_stats`).Scan(&n)
	return n, err
}

func storeConfig(ctx context.Context) (store.Config, func()) {
	if *dbURL == "" && *dataDir != "" {
		return store.Config{DataDir: *dataDir, CacheMiB: *cacheMiB, Serving: true}, func() {}
	}
	if *dbURL == "" {
		dir, err := os.MkdirTemp("", "wnms-bench-")
		check(err)
		return store.Config{DataDir: dir, CacheMiB: *cacheMiB, Serving: true}, func() { os.RemoveAll(dir) }
	}
	schema, keep := "bench_"+strings.ToLower(rand.Text()[:10]), *keepSchema != ""
	if keep {
		schema = *keepSchema
	}
	admin, err := sql.Open("pgx", *dbURL)
	check(err)
	if !keep {
		_, err = admin.ExecContext(ctx, "CREATE SCHEMA "+schema)
		check(err)
	}
	u, err := url.Parse(*dbURL)
	check(err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	dir, err := os.MkdirTemp("", "wnms-bench-")
	check(err)
	return store.Config{DatabaseURL: u.String(), DataDir: dir, Serving: true}, func() {
		if !keep {
			admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		}
		admin.Close()
		os.RemoveAll(dir)
	}
}

func post(c *http.Client, u, cookie string, body []byte) {
	b, err := benchserver.Post(c, u, cookie, body)
	check(err)
	if bytes.Contains(b, []byte(`"index"`)) {
		check(fmt.Errorf("POST %s: records rejected: %.300s", u, b))
	}
}

func get(c *http.Client, u, cookie string) {
	_, err := benchserver.Get(c, u, cookie)
	check(err)
}

func rss() string { return benchserver.ProcStatus(0, "VmRSS") }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "telemetry bench:", err)
		os.Exit(1)
	}
}
