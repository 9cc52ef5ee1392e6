// Command soak runs a real `wnms serve` (the built binary, over SQLite or
// PostgreSQL) for a long while under the mixed load of a busy site, with
// faults, and checks at the end that nothing acknowledged was lost and
// that memory, latency and errors stayed within bounds (issue 36):
//
//   - the live simulator (`wnms simulate --live`);
//   - 1,000-event ingest batches every 2 s, each resent until acknowledged,
//     as a real client does when a server dies under it;
//   - ~20 reads/s: the current user, client event pages, and 4 reads/s of
//     the connectivity baseline of the 15-minute slot being filled;
//   - an open event stream;
//   - RADIUS: ~20 authentications/s by radclient through wnms (the proxy)
//     to a real FreeRADIUS upstream, and accounting sessions (Start,
//     Interim-Update, Stop) answered by wnms, each packet resent until
//     answered;
//   - 100 syslog lines/s over UDP;
//
// and, spread over the run, the faults: kill -9 and restart of wnms
// (-kills), FreeRADIUS stopped (-radius-down), a burst of junk (8 MiB
// bodies, bad JSON, garbage datagrams to the RADIUS and syslog ports),
// and with -pg-restart a restart of PostgreSQL.
//
// It samples the server every second (RSS and the peak of each second,
// threads, open files) and every -sample (Go heap and goroutines from
// /metrics, SQLite's WAL files), and prints a table of the run, then the
// checks: every acknowledged batch, answered accounting packet and
// accepted authentication stored once; 5xx inside and outside the down
// windows; PRAGMA quick_check on SQLite; and pass/fail against the
// targets (docs/bench-soak.md).
//
//	go run ./bench/soak -duration 30m                               # SQLite
//	go run ./bench/soak -duration 30m -database-url "$URL" -pg-restart # PostgreSQL
//
// It needs freeradius, radclient, make and openssl (FreeRADIUS's test
// certificates), and for -pg-restart the right to run pg_ctlcluster.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"
)

var (
	duration   = flag.Duration("duration", 30*time.Minute, "how long the load runs")
	warmup     = flag.Duration("warmup", 2*time.Minute, "left out of the memory targets at the start of the run and of each restarted server")
	scale      = flag.Float64("scale", 1, "multiplies every load's rate (ingest batch size, reads, RADIUS, syslog)")
	dbURL      = flag.String("database-url", "", "PostgreSQL URL of a database the run may create others beside (it makes its own, wnms_soak_<time>, and drops it after); empty: SQLite in a temporary directory")
	kills      = flag.Int("kills", 3, "kill -9 and restarts of wnms, spread over the run")
	radiusDown = flag.Duration("radius-down", 60*time.Second, "how long FreeRADIUS is stopped, once (0: never)")
	junk       = flag.Bool("junk", true, "send a burst of junk once: 8 MiB bodies, bad JSON, garbage datagrams")
	pgRestart  = flag.Bool("pg-restart", false, "restart PostgreSQL once (-pg-restart-cmd); PostgreSQL only; the cluster may be shared: other users of it see errors meanwhile")
	pgCmd      = flag.String("pg-restart-cmd", "pg_ctlcluster 15 main restart", "the command that restarts PostgreSQL")
	simClients = flag.Int("sim-clients", 1000, "clients of the live simulator (0: no simulator)")
	clients    = flag.Int("clients", 5000, "client MACs the ingest batches go round")
	population = flag.Int("population", 5000, "client MACs each of the RADIUS authentications, accounting sessions and syslog connections go round (0: a new client every time)")
	sampleIvl  = flag.Duration("sample", 5*time.Second, "how often /metrics and the WAL files are read (the process itself is read every second)")
	keep       = flag.Bool("keep", false, "keep the temporary directory (binary, data, logs) and the PostgreSQL database")
	wnmsBin    = flag.String("wnms", "", "a built wnms binary to run (default: build ./cmd/wnms)")
	samplesOut = flag.String("samples", "", "also write every sample (TSV) to this file")
	debugAddr  = flag.String("debug-listen", "", "also serve Go's profiler at this loopback address (wnms serve --debug-listen), to take heap profiles during the run")
)

func main() {
	flag.Parse()
	if *duration <= 0 || *scale <= 0 || *kills < 0 {
		log.Fatal("-duration and -scale must be positive, -kills not negative")
	}
	if *pgRestart && *dbURL == "" {
		log.Fatal("-pg-restart needs -database-url")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := newRun(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer r.cleanup()
	if err := r.soak(ctx); err != nil {
		r.cleanup()
		log.Fatal(err)
	}
	if !r.report(os.Stdout) {
		r.cleanup()
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "soak %s: %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}
