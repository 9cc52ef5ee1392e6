package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/simulate"
	"github.com/wnms/wnms/internal/wnms"
)

// incidentFlags is the repeatable --incident flag (its environment twin
// takes a comma-separated list).
type incidentFlags []simulate.Incident

func (f *incidentFlags) String() string {
	var s []string
	for _, in := range *f {
		s = append(s, in.Kind+"@"+in.Ago.String())
	}
	return strings.Join(s, ",")
}

func (f *incidentFlags) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		in, err := simulate.ParseIncident(strings.TrimSpace(part))
		if err != nil {
			return err
		}
		*f = append(*f, in)
	}
	return nil
}

func (f *incidentFlags) Get() any { return *f }

// simFlags are the flags of the simulated network's sizes, shared by
// `wnms simulate` and `wnms serve --demo`.
type simFlags struct {
	sizes simulate.Sizes
	seed  uint64
}

func (sf *simFlags) register(fs *flag.FlagSet, prefix string) {
	fs.IntVar(&sf.sizes.Sites, prefix+"sites", 2, "simulated sites (folders \"Sim Site N\")")
	fs.IntVar(&sf.sizes.Floors, prefix+"floors", 2, "floors of each site")
	fs.IntVar(&sf.sizes.APsPerFloor, prefix+"aps-per-floor", 6, "APs on each floor")
	fs.IntVar(&sf.sizes.Clients, prefix+"clients", 300, "simulated clients")
	fs.Uint64Var(&sf.seed, prefix+"seed", 1, "seed of every random choice: the same seed and sizes send the same records")
}

// loadZone loads the sites' time zone named by flag --flagName.
func loadZone(flagName, name string) (*time.Location, error) {
	tz, err := wnms.LoadLocation(name)
	if err != nil || name == "" || name == "Local" {
		return nil, usagef("--%s %q: expected an IANA time zone such as Europe/Berlin or UTC", flagName, name)
	}
	return tz, nil
}

func runSimulate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := newCommand("simulate", "", `Drives a wnms server through its public API with a simulated network. It creates (or finds)
"Sim Site N" folders with "Floor M" floors and their layouts, reports the APs, backfills --days of
client events and samples and AP radio samples, and with --live keeps sending in real time (AP heartbeats every
minute) until interrupted. The same --seed and sizes send the same records with the same eventIds,
so a re-run is answered with duplicates. --incident KIND@AGO (repeatable) starts an incident AGO
before the end of the backfill, for 45 minutes: radius-down, radius-reject, wrong-psk,
dhcp-exhaustion, slow-dhcp, ap-down, one-bad-ap, interference, coverage-hole or
co-channel-interference; the n-th incident hits site n
(or the next site with no incident within 30 minutes of it). The summary gives each incident's
ground truth: kind, site, window, scope and expected cause. Progress goes to stderr on a terminal; the last line
on stdout is a JSON summary. A URL where no server answers at all ends the run at once (exit 2);
a server that goes away after it answered is waited for (--retry-for), and what was sent already
is answered with duplicates, never stored twice.`, stdout, stderr)
	fs := cmd.fs
	var (
		sf              simFlags
		u, keyID, keyV  string
		days, batch     int
		live            bool
		incidents       incidentFlags
		tzName, endText string
		retryFor        time.Duration
	)
	fs.StringVar(&u, "url", "http://127.0.0.1:8080", "URL of the wnms server")
	fs.StringVar(&keyID, "key-id", "", "id of the API key to log in with (an ADMINISTRATOR or SUPERUSER key)")
	fs.StringVar(&keyV, "key-value", "", "value of that API key")
	sf.register(fs, "")
	fs.IntVar(&days, "days", 7, "days of history to backfill before now (or --end)")
	fs.Var(&incidents, "incident", "KIND@AGO, repeatable: radius-down, radius-reject, wrong-psk, dhcp-exhaustion, slow-dhcp, ap-down, one-bad-ap, interference, coverage-hole or co-channel-interference, AGO (such as 3h) before the end of the backfill")
	fs.BoolVar(&live, "live", false, "after the backfill, keep sending in real time until interrupted")
	fs.StringVar(&tzName, "timezone", "UTC", "IANA time zone of new sites; their day (busy 9-18, quiet at night and weekends) is in it")
	fs.StringVar(&endText, "end", "", "end of the backfill, RFC 3339 (default now); fixes the window, so that runs repeat exactly")
	fs.IntVar(&batch, "batch", 5000, "records per ingest call (1-10000)")
	fs.DurationVar(&retryFor, "retry-for", 5*time.Minute, "how long to wait for a server that answered once and then stopped answering, before giving up")
	if err := cmd.parse(args, getenv, 0); err != nil {
		return err
	}
	if keyID == "" || keyV == "" {
		return usagef("simulate: --key-id and --key-value (or WNMS_KEY_ID and WNMS_KEY_VALUE) are required")
	}
	tz, err := loadZone("timezone", tzName)
	if err != nil {
		return err
	}
	var end time.Time
	if endText != "" {
		if end, err = time.Parse(time.RFC3339, endText); err != nil {
			return usagef("--end %q: expected an RFC 3339 time such as 2026-11-18T16:00:00Z", endText)
		}
		if live && time.Since(end).Abs() > time.Minute {
			return usagef("--end and --live: live sending goes on from now, so the backfill must end now")
		}
	}
	if retryFor < 0 {
		return usagef("--retry-for must not be negative")
	}
	cfg := simulate.Config{Sizes: sf.sizes, Days: days, Seed: sf.seed, End: end, TZ: tz, Incidents: incidents,
		Live: live, Batch: batch,
		Logf: func(format string, args ...any) { fmt.Fprintf(stderr, "wnms simulate: "+format+"\n", args...) }}
	if live {
		cfg.OnRound = func(r simulate.LiveRound) {
			fmt.Fprintf(stderr, "wnms simulate: live to %s: %d events, %d samples, %d radio samples, %d AP reports taken in %s\n",
				r.Until.Format(time.TimeOnly), r.Events, r.Samples, r.Radios, r.APs, r.Took.Round(time.Millisecond))
		}
	}
	if err := cfg.Check(); err != nil {
		return usagef("%v", err)
	}
	if isTerminal(stderr) {
		cfg.Progress = stderr
	}
	a := &simulate.API{URL: u, KeyID: keyID, KeyValue: keyV, HTTP: &http.Client{Timeout: 2 * time.Minute}, RetryFor: retryFor}
	a.OnRetry = func(err error, wait time.Duration) {
		fmt.Fprintf(stderr, "wnms simulate: %v; trying again in %s\n", err, wait)
	}
	var sum simulate.Summary
	err = simulate.Run(ctx, a, cfg, &sum)
	switch {
	case errors.Is(err, simulate.ErrNotWnms), errors.Is(err, simulate.ErrKeyRefused), errors.Is(err, simulate.ErrUnreachable):
		return usageError{err.Error()}
	case sum.Sites > 0:
		b, _ := json.Marshal(sum)
		fmt.Fprintf(stdout, "%s\n", b)
	}
	return err
}

// isTerminal says whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
