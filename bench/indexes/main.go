//go:build wnmsbench

// Command indexes measures what each index of the client events table
// costs at ingest. It makes one table per variant, each with the columns
// of client_events and a set of its indexes (on PostgreSQL partitioned by
// day as client_events is, except the reference), and inserts the same
// 10,000-row batches into every variant the fastest way the engine has
// (COPY on PostgreSQL, multi-row INSERTs on SQLite), a batch into each in
// turn, in rotating order, so that the machine's noise falls on all alike.
// It prints each variant's rate per round, and at the end the median time
// a row takes and the variant's rate as a share of the reference's, batch
// by batch (the median and quartiles of the ratios of batches inserted
// within moments of each other, which a shared machine's changing load
// disturbs less than whole rounds): the reference is a plain table with
// only a (customer, mac, ts) and a unique (customer, eventId, ts) index,
// the yardstick of docs/bench-indexes.md.
//
//	go run -tags wnmsbench ./bench/indexes                          # SQLite
//	go run -tags wnmsbench ./bench/indexes -database-url "$URL"     # PostgreSQL, in a schema it drops after
//	go run -tags wnmsbench ./bench/indexes -variants reference,before,after -rounds 3
//
// The events are those of -clients clients (70 % Success, 10 % Failure,
// 20 % Intermediate, half of them at 802.11ac APs) with timestamps spread
// over -span before now (30 days: batches that reach back, as a
// reconnecting AP sends; 1h: live traffic).
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"flag"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/wnms/wnms/internal/store"
)

var (
	dbURL    = flag.String("database-url", "", "PostgreSQL URL; empty: SQLite in a temporary directory")
	rounds   = flag.Int("rounds", 3, "rounds; each inserts -batches batches into every variant")
	batches  = flag.Int("batches", 10, "10,000-row batches a variant takes each round")
	preload  = flag.Int("preload", 0, "rows each variant holds before the rounds (inserted the same way, not timed)")
	nClients = flag.Int("clients", 10_000, "client MACs")
	span     = flag.Duration("span", 30*24*time.Hour, "the events' timestamps spread over this much time before now")
	variants = flag.String("variants", "", "comma-separated variants to run (empty: all of the engine)")
)

const batch = 10_000

// The indexes, as statements on the table {t}.
const (
	eventID     = `CREATE UNIQUE INDEX {t}_event_id ON {t} (customer_id, event_id, ts)`
	macTS       = `CREATE INDEX {t}_mac ON {t} (customer_id, mac, ts)`
	mac         = `CREATE INDEX {t}_mac ON {t} (customer_id, mac, ts, id)`
	tsIndex     = `CREATE INDEX {t}_ts ON {t} (ts)`
	tsBRIN      = `CREATE INDEX {t}_ts ON {t} USING brin (ts)`
	connlog     = `CREATE INDEX {t}_connlog ON {t} (customer_id, mac, event_type, ts, id) WHERE dot11ac`
	connlogConn = `CREATE INDEX {t}_connlog ON {t} (customer_id, mac, event_type, ts, id) WHERE dot11ac AND event_type IN ('Success', 'Failure')`
	slot        = `CREATE INDEX {t}_slot ON {t} (customer_id, (ts / 900000), event_type, mac)`
	slotConn    = `CREATE INDEX {t}_slot ON {t} (customer_id, (ts / 900000), event_type, mac) WHERE event_type IN ('Success', 'Failure')`
	pkey        = `ALTER TABLE {t} ADD PRIMARY KEY (id, ts)`
)

type variant struct {
	name        string
	partitioned bool
	indexes     []string
}

// variantsOf are the variants measured on an engine: the reference; the
// schema of client_events before this work ("before") and after it
// ("after"); and the base (the unique eventId index and the client's
// events index wnms has, with PostgreSQL's primary key) with one more
// index each, whose difference from the base is that index's cost.
func variantsOf(d store.Dialect) []variant {
	if d == store.Postgres {
		base := []string{pkey, eventID, mac}
		with := func(ix ...string) []string { return append(slices.Clone(base), ix...) }
		return []variant{
			{"reference", false, []string{eventID, macTS}},
			{"reference-partitioned", true, []string{eventID, macTS}},
			{"base", true, base},
			{"base-pkey", true, []string{eventID, mac}},
			{"base+ts", true, with(tsIndex)},
			{"base+ts-brin", true, with(tsBRIN)},
			{"base+connlog", true, with(connlog)},
			{"base+connlog-conn", true, with(connlogConn)},
			{"base+slot", true, with(slot)},
			{"base+slot-conn", true, with(slotConn)},
			{"before", true, with(tsIndex, connlog, slot)},
			{"after", true, []string{eventID, mac, tsBRIN, connlogConn, slotConn}},
		}
	}
	base := []string{eventID, mac}
	with := func(ix ...string) []string { return append(slices.Clone(base), ix...) }
	return []variant{
		{"reference", false, []string{eventID, macTS}},
		{"base", false, base},
		{"base+ts", false, with(tsIndex)},
		{"base+connlog", false, with(connlog)},
		{"base+connlog-conn", false, with(connlogConn)},
		{"base+slot", false, with(slot)},
		{"base+slot-conn", false, with(slotConn)},
		{"before", false, with(tsIndex, connlog, slot)},
		{"after", false, with(tsIndex, connlogConn, slotConn)},
	}
}

func main() {
	flag.Parse()
	ctx := context.Background()
	cfg, cleanup := storeConfig(ctx)
	defer cleanup()
	st, err := store.Open(ctx, cfg)
	check(err)
	defer st.Close()

	all := variantsOf(st.Dialect())
	var run []variant
	if *variants == "" {
		run = all
	} else {
		for _, name := range strings.Split(*variants, ",") {
			i := slices.IndexFunc(all, func(v variant) bool { return v.name == strings.TrimSpace(name) })
			if i < 0 {
				check(fmt.Errorf("-variants: no variant %q on %s", name, st.Dialect()))
			}
			run = append(run, all[i])
		}
	}
	now := time.Now().UnixMilli()
	from := now - span.Milliseconds() - 24*3600*1000
	for i, v := range run {
		check(st.EventTableForBench(ctx, table(i), v.partitioned, from, now, v.indexes))
	}
	defer func() {
		for i := range run {
			st.DropTableForBench(context.Background(), table(i))
		}
	}()
	fmt.Printf("== %s: %d variants, %d rounds of %d batches of %d rows each, %d clients, timestamps over %s, %d rows preloaded; machine shared\n",
		st.Dialect(), len(run), *rounds, *batches, batch, *nClients, *span, *preload)

	gen := generator{r: mrand.New(mrand.NewPCG(1, 2)), end: now}
	for done := 0; done < *preload; done += batch {
		rows := gen.rows(min(batch, *preload-done))
		for i := range run {
			check(st.RawInsertIntoForBench(ctx, table(i), rows))
		}
	}
	rates := make([][]float64, len(run))
	// each[i][c] is variant i's time of batch c; the batches of a cycle
	// go to every variant within moments of each other, so their ratio
	// holds whatever the machine's load was meanwhile.
	each := make([][]time.Duration, len(run))
	for r := range *rounds {
		took := make([]time.Duration, len(run))
		for b := range *batches {
			rows := gen.rows(batch)
			for k := range run {
				i := (k + b + r) % len(run)
				t := time.Now()
				check(st.RawInsertIntoForBench(ctx, table(i), rows))
				d := time.Since(t)
				took[i] += d
				each[i] = append(each[i], d)
			}
		}
		fmt.Printf("round %d:", r+1)
		for i, v := range run {
			rate := float64(*batches*batch) / took[i].Seconds()
			rates[i] = append(rates[i], rate)
			fmt.Printf(" %s %.0f;", v.name, rate)
		}
		fmt.Println()
	}
	ref := slices.IndexFunc(run, func(v variant) bool { return v.name == "reference" })
	fmt.Printf("%-24s %-30s %12s %28s\n", "variant", "rows/s, each round", "µs a row", "vs reference, batch by batch")
	for i, v := range run {
		var per []string
		for _, x := range rates[i] {
			per = append(per, fmt.Sprintf("%.0f", x))
		}
		var ratio []float64
		for c := range each[i] {
			if ref >= 0 {
				ratio = append(ratio, float64(each[ref][c])/float64(each[i][c]))
			}
		}
		var times []float64
		for _, d := range each[i] {
			times = append(times, float64(d.Microseconds())/batch)
		}
		vs := ""
		if len(ratio) > 0 {
			vs = fmt.Sprintf("%.2f× (quartiles %.2f–%.2f)", quantile(ratio, 0.5), quantile(ratio, 0.25), quantile(ratio, 0.75))
		}
		fmt.Printf("%-24s %-30s %12.2f %28s\n", v.name, strings.Join(per, " / "), quantile(times, 0.5), vs)
	}
}

func table(i int) string { return fmt.Sprintf("bench_events_%d", i) }

// quantile is the q-quantile of x (nearest rank).
func quantile(x []float64, q float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// generator makes the rows of client events, as InsertClientEvents makes
// them from ingested records.
type generator struct {
	r   *mrand.Rand
	end int64
}

func (g *generator) rows(n int) [][]any {
	out := make([][]any, n)
	for i := range out {
		c := g.r.IntN(*nClients)
		m := fmt.Sprintf("AA:BB:%02X:%02X:%02X:%02X", c>>24&255, c>>16&255, c>>8&255, c&255)
		ap := g.r.IntN(500)
		ts := g.end - g.r.Int64N(span.Milliseconds())
		id := rand.Text()
		var typ string
		var code, sub any
		switch x := g.r.IntN(100); {
		case x < 70:
			typ = "Success"
		case x < 80:
			typ, code, sub = "Failure", int64(2), int64(201+g.r.IntN(5))
		default:
			typ = "Intermediate"
		}
		body := fmt.Sprintf(`{"eventId":%q,"macAddress":%q,"bssid":"00:11:74:%02X:%02X:01","channel":36,"ssid":"corp","timestamp":%d,"eventType":%q,"locationId":{"type":"locallocationid","id":%d},"apBoxId":%d,"protocol":"802.11ac","dhcpLatency":1,"aaaLatency":1,"dnsLatency":0}`,
			id, m, ap/256, ap%256, ts, typ, 10+ap%50, 1000+ap)
		out[i] = []any{int64(1), id, m, ts, typ, int64(10 + ap%50), int64(1000 + ap), ap%2 == 1, "corp", "802.11ac", code, sub, body}
	}
	return out
}

func storeConfig(ctx context.Context) (store.Config, func()) {
	dir, err := os.MkdirTemp("", "wnms-bench-indexes-")
	check(err)
	if *dbURL == "" {
		return store.Config{DataDir: dir, Serving: true}, func() { os.RemoveAll(dir) }
	}
	schema := "bench_" + strings.ToLower(rand.Text()[:10])
	admin, err := sql.Open("pgx", *dbURL)
	check(err)
	_, err = admin.ExecContext(ctx, "CREATE SCHEMA "+schema)
	check(err)
	u, err := url.Parse(*dbURL)
	check(err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return store.Config{DatabaseURL: u.String(), DataDir: dir, Serving: true}, func() {
		admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
		os.RemoveAll(dir)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "indexes bench:", err)
		os.Exit(1)
	}
}
