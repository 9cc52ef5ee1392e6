// Command score measures how well wnms finds what goes wrong, against the
// simulator's ground truth (decisions §24, docs/bench-score.md).
//
// For each of -seeds seeds it builds the simulated network (-sites sites
// of -floors floors, -aps-per-floor APs, -clients clients) on a new store
// (SQLite in a temporary directory, or with -database-url a new
// PostgreSQL database beside the one named, dropped after), backfills
// -days days ending at -end with one incident of every kind the simulator
// knows, each on a weekday between 9:30 and 16:00 UTC of the last five
// days, the kinds spread over the sites and days by the seed, and, on
// another new store, the same network with no incident (the quiet run).
// Then it has the server evaluate its anomalies as its minute loop does
// (with the server's clock at -end) and asks it, through the public HTTP
// API only, over the scored window (the last five days, which have the
// three days of history a baseline needs before them):
//
//   - GET /V5/baselines/clientsconnectivity and /clientsperformance of
//     every floor (all SSIDs, band ANY): their anomalous data points;
//   - GET /V5/baselines/anomalies: the anomalies listed;
//   - GET /V5/incidents of each site: the incidents (decisions §24), when
//     the server serves them ("incidents: not served by this server
//     (404)" when not).
//
// A site-slot is flagged when a floor of the site has an anomalous slot
// (from the baselines, and separately from the anomalies list). The
// definitions, per kind:
//
//   - recall: the share of injected incidents found, an incident being
//     found when a flagged slot of its site overlaps its window [from, to)
//     stretched by 2 slots at its end (a detection up to 2 slots late);
//   - precision: of the flagged site-slots of the runs with incidents,
//     the share that belong to an incident in that sense (overall, and per
//     kind over the site-days holding an incident of the kind);
//   - false alarms per quiet site-day: flagged site-slots of the quiet runs
//     per site and scored day;
//   - detection delay: from the slot holding the incident's start to the
//     first flagged slot that finds it, in slots (mean and max);
//   - cause accuracy: the share of injected incidents whose served
//     incident (same site, overlapping the stretched window, the one
//     overlapping most) has the expected stage and, but for performance,
//     the expected failure and sub-failure codes;
//   - scope accuracy: the same with the expected scope (its type, and its
//     id or name; or a scope the simulator lists as equivalent).
//
// It prints a markdown table per source of flags and, with -json, the
// reports as JSON too, and how long each run took.
//
//	go run ./bench/score                    # 10 seeds on SQLite
//	go run ./bench/score -database-url "$URL"   # on PostgreSQL
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/wnms/wnms/bench/internal/benchserver"
	"github.com/wnms/wnms/internal/incident"
	"github.com/wnms/wnms/internal/simulate"
	"github.com/wnms/wnms/internal/wnms"
)

var (
	seeds    = flag.Int("seeds", 10, "seeds: each is a run with one incident of every kind and a quiet run")
	firstArg = flag.Uint64("first-seed", 1, "the first seed")
	dbURL    = flag.String("database-url", "", "PostgreSQL URL of a database beside which the runs make their own (dropped after); empty: SQLite in temporary directories")
	sites    = flag.Int("sites", 2, "simulated sites")
	floors   = flag.Int("floors", 2, "floors of each site")
	apsFloor = flag.Int("aps-per-floor", 6, "APs on each floor")
	clients  = flag.Int("clients", 300, "simulated clients")
	days     = flag.Int("days", 8, "days of backfill (the last five are scored)")
	endText  = flag.String("end", "2026-11-20T18:00:00Z", "end of the backfill (RFC 3339); a Friday evening puts five weekdays in the scored window")
	asJSON   = flag.Bool("json", false, "also print the reports as JSON")
	kindsArg = flag.String("kinds", "", "comma-separated incident kinds to inject (default: every kind the simulator knows)")
	why      = flag.Bool("why", false, "explain every incident's scope on stderr (the wrong ones are always explained)")
	// explainArg prints the data points of the floors of an incident's
	// site around it (explain.go): for the incidents missed or found late
	// ("missed"), or every one ("all").
	explainArg = flag.String("explain", "", "print the floors' data points around each incident missed or found late (missed) or every incident (all), to stderr")
)

// scoredDays is how many days, ending at -end, are scored.
const scoredDays = 5

func main() {
	flag.Parse()
	end, err := time.Parse(time.RFC3339, *endText)
	if err != nil {
		log.Fatalf("-end: %v", err)
	}
	end = time.UnixMilli(slotOf(end.UnixMilli()))
	if *days < scoredDays+3 {
		log.Fatalf("-days must be at least %d", scoredDays+3)
	}
	sz := simulate.Sizes{Sites: *sites, Floors: *floors, APsPerFloor: *apsFloor, Clients: *clients}
	if err := sz.Check(); err != nil {
		log.Fatal(err)
	}
	kinds := simulate.IncidentKinds
	if *kindsArg != "" {
		kinds = strings.Split(*kindsArg, ",")
		for _, k := range kinds {
			if !slices.Contains(simulate.IncidentKinds, k) {
				log.Fatalf("-kinds: %q is not one of %s", k, strings.Join(simulate.IncidentKinds, ", "))
			}
		}
	}
	ctx := context.Background()
	var base, list []Run
	served := true
	// Flagged site-slots of each baseline alone: [with incidents, quiet].
	byBaseline := map[string]*[2]int{"clientsconnectivity": {}, "clientsperformance": {}}
	for i := range *seeds {
		seed := *firstArg + uint64(i)
		incs := plan(seed, kinds, sz.Sites, end)
		t0 := time.Now()
		with, err := runOnce(ctx, seed, sz, end, incs)
		if err != nil {
			log.Fatalf("seed %d: %v", seed, err)
		}
		t1 := time.Now()
		quiet, err := runOnce(ctx, seed, sz, end, nil)
		if err != nil {
			log.Fatalf("seed %d, quiet: %v", seed, err)
		}
		served = served && with.served && quiet.served
		for k, n := range byBaseline {
			n[0] += with.byBaseline[k].Count()
			n[1] += quiet.byBaseline[k].Count()
		}
		siteDays := sz.Sites * scoredDays
		base = append(base, Run{Seed: seed, Truths: with.truths, Flags: with.fromBaselines, Quiet: quiet.fromBaselines,
			QuietSiteDays: siteDays, Served: with.incidents, QuietServed: quiet.incidents})
		list = append(list, Run{Seed: seed, Truths: with.truths, Flags: with.fromList, Quiet: quiet.fromList,
			QuietSiteDays: siteDays, Served: with.incidents, QuietServed: quiet.incidents})
		fmt.Fprintf(os.Stderr, "seed %d: run with incidents %s (%d events, %d samples), quiet run %s (%d events, %d samples)\n",
			seed, t1.Sub(t0).Round(time.Second), with.events, with.samples, time.Since(t1).Round(time.Second), quiet.events, quiet.samples)
	}
	if !served {
		fmt.Println("incidents: not served by this server (404)")
	}
	engine := "SQLite"
	if *dbURL != "" {
		engine = "PostgreSQL"
	}
	what := fmt.Sprintf("%s, %d seeds, %d sites × %d floors × %d APs, %d clients, %d days (last %d scored)",
		engine, *seeds, sz.Sites, sz.Floors, sz.APsPerFloor, sz.Clients, *days, scoredDays)
	rb, rl := Score(base, kinds, served), Score(list, kinds, served)
	fmt.Print(rb.Markdown("Anomalous slots from the baselines (" + what + ")"))
	fmt.Println()
	fmt.Print(rl.Markdown("Anomalous slots from GET /V5/baselines/anomalies (" + what + ")"))
	fmt.Printf("\nflagged site-slots by baseline: connectivity %d (quiet runs %d), performance %d (quiet runs %d)\n",
		byBaseline["clientsconnectivity"][0], byBaseline["clientsconnectivity"][1],
		byBaseline["clientsperformance"][0], byBaseline["clientsperformance"][1])
	if rb.Flagged != rl.Flagged || rb.QuietFlagged != rl.QuietFlagged {
		fmt.Printf("\nthe two differ: %d flagged site-slots from the baselines, %d listed (quiet runs: %d and %d)\n",
			rb.Flagged, rl.Flagged, rb.QuietFlagged, rl.QuietFlagged)
	}
	for _, r := range base {
		for _, t := range r.Truths {
			if found, _ := Detect(t, r.Flags); !found {
				fmt.Printf("missed (baselines): seed %d %s at %s, %s–%s\n", r.Seed, t.Kind, t.Site, t.From, t.To)
			}
		}
		// The false alarms, to look at with -explain's numbers.
		for site, slots := range r.Flags {
			for _, s := range slots {
				if !Belongs(site, s, r.Truths) {
					fmt.Printf("false alarm (baselines): seed %d site %d slot %s\n", r.Seed, site, msTime(s))
				}
			}
		}
		for site, slots := range r.Quiet {
			for _, s := range slots {
				fmt.Printf("false alarm (baselines, quiet run): seed %d site %d slot %s\n", r.Seed, site, msTime(s))
			}
		}
	}
	if *asJSON {
		b, _ := json.MarshalIndent(map[string]any{"setup": what, "baselines": rb, "anomalies": rl, "byBaseline": byBaseline}, "", "  ")
		fmt.Println(string(b))
	}
}

// plan draws the incidents of a seed: one of each kind, on the weekdays
// of the scored window, each on its own (site, day), between 9:30 and
// 16:00 UTC. Incident i goes to site i modulo the sites (as Place puts
// it), on a day drawn for it.
func plan(seed uint64, kinds []string, nSites int, end time.Time) []simulate.Incident {
	r := rand.New(rand.NewPCG(seed, 0x5c0e))
	var weekdays []time.Time
	for d := range scoredDays {
		day := time.Date(end.Year(), end.Month(), end.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -d)
		if wd := day.Weekday(); wd != time.Saturday && wd != time.Sunday && !day.Before(end.AddDate(0, 0, -scoredDays)) {
			weekdays = append(weekdays, day)
		}
	}
	used := map[[2]int]bool{}
	var out []simulate.Incident
	order := r.Perm(len(kinds))
	for i, k := range order {
		site := i % nSites
		var day int
		for tries := 0; ; tries++ {
			day = r.IntN(len(weekdays))
			if !used[[2]int{site, day}] || tries > 100 {
				break
			}
		}
		used[[2]int{site, day}] = true
		at := weekdays[day].Add(9*time.Hour + 30*time.Minute + time.Duration(r.IntN(6*60+30))*time.Minute)
		out = append(out, simulate.Incident{Kind: kinds[k], Ago: end.Sub(at)})
	}
	return out
}

// result is what one run gave.
type result struct {
	truths                  []Truth
	fromBaselines, fromList Flags
	byBaseline              map[string]Flags // the flags of each baseline alone
	incidents               []Served
	served                  bool
	events, samples         int64
}

// runOnce backfills one network on a new store, evaluates and reads it.
func runOnce(ctx context.Context, seed uint64, sz simulate.Sizes, end time.Time, incs []simulate.Incident) (*result, error) {
	u := *dbURL
	if u != "" {
		name := fmt.Sprintf("wnms_score_%d_%d", time.Now().UnixNano(), seed)
		var err error
		if u, err = benchserver.CreateDatabase(ctx, *dbURL, name); err != nil {
			return nil, err
		}
		defer dropDatabase(*dbURL, name)
	}
	st, closeStore, err := benchserver.OpenStore(ctx, u, "wnms-score")
	if err != nil {
		return nil, err
	}
	defer closeStore()
	srv, err := benchserver.Start(ctx, st)
	if err != nil {
		return nil, err
	}
	bl := srv.API.Baselines
	bl.Now = func() time.Time { return end }
	// The incident grouping reads anomalies recorded a margin before its
	// now: it runs a few minutes after the evaluation, as on a server.
	inc := srv.API.Incidents
	inc.Now = func() time.Time { return end.Add(10 * time.Minute) }
	keyID, keyValue, err := srv.Key(ctx)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: 5 * time.Minute}
	origin := strings.TrimSuffix(srv.Base, "/new/webservice")
	a := &simulate.API{URL: origin, KeyID: keyID, KeyValue: keyValue, HTTP: hc, RetryFor: time.Minute}
	cfg := simulate.Config{Sizes: sz, Days: *days, Seed: seed, End: end, TZ: time.UTC, Incidents: incs}
	var sum simulate.Summary
	if err := simulate.Run(ctx, a, cfg, &sum); err != nil {
		return nil, err
	}
	if sum.Rejected > 0 {
		return nil, fmt.Errorf("the server rejected %d records", sum.Rejected)
	}
	res := &result{truths: sum.Incidents, events: sum.Events, samples: sum.Stats, fromBaselines: Flags{}, fromList: Flags{},
		byBaseline: map[string]Flags{"clientsconnectivity": {}, "clientsperformance": {}}}

	// The network's floors, with their location ids (Setup finds them).
	n := simulate.NewNetwork(seed, sz, time.UTC)
	if err := simulate.Setup(ctx, a, n); err != nil {
		return nil, err
	}
	siteOf := map[int64]int64{}
	for _, s := range n.Sites {
		for _, f := range s.Floors {
			siteOf[f.LocID] = s.LocID
		}
	}

	// The evaluation, as the server's minute loop runs it, until it
	// records nothing more.
	from := end.AddDate(0, 0, -scoredDays)
	cookie, err := srv.Session(ctx, hc)
	if err != nil {
		return nil, err
	}
	window := fmt.Sprintf("fromtime=%d&totime=%d", from.UnixMilli(), end.UnixMilli()-1)
	listed := -1
	for range 50 {
		if err := bl.EvaluateCustomer(ctx, wnms.OnPremCustomer); err != nil {
			return nil, err
		}
		var anomalies []struct {
			LocationID json.RawMessage `json:"locationId"`
			Timestamp  int64           `json:"timestamp"`
		}
		if err := getJSON(hc, srv.Base+"/V5/baselines/anomalies?"+window, cookie, &anomalies); err != nil {
			return nil, err
		}
		if len(anomalies) == listed {
			// Every anomaly is in: the incidents are grouped from them,
			// a bounded batch a run, as the server's minute loop does.
			for range len(anomalies)/100 + 2 { // a run takes 500 at most
				if err := inc.Group(ctx, wnms.OnPremCustomer); err != nil {
					return nil, err
				}
			}
			for _, an := range anomalies {
				if site, ok := siteOf[locationID(an.LocationID)]; ok {
					res.fromList.Add(site, an.Timestamp)
				}
			}
			break
		}
		listed = len(anomalies)
	}

	for floor, site := range siteOf {
		for _, kind := range []string{"clientsconnectivity", "clientsperformance"} {
			var points []struct {
				Timestamp int64 `json:"timestamp"`
				Anomalous bool  `json:"anomalous"`
			}
			if err := getJSON(hc, fmt.Sprintf("%s/V5/baselines/%s?locationid=%d&%s", srv.Base, kind, floor, window), cookie, &points); err != nil {
				return nil, err
			}
			for _, p := range points {
				if p.Anomalous {
					res.fromBaselines.Add(site, p.Timestamp)
					res.byBaseline[kind].Add(site, p.Timestamp)
				}
			}
		}
	}

	for _, t := range res.truths {
		if explainWanted(t, res.fromBaselines) {
			for _, s := range n.Sites {
				if s.LocID == t.SiteID {
					var floors []int64
					for _, f := range s.Floors {
						floors = append(floors, f.LocID)
					}
					explain(os.Stderr, hc, srv.Base, cookie, t, floors)
				}
			}
		}
	}

	// The incidents of each site (one call per site keeps each answer
	// small).
	res.served = true
	for _, s := range n.Sites {
		var list []Served
		err = getJSON(hc, fmt.Sprintf("%s/V5/incidents?locationid=%d&%s", srv.Base, s.LocID, window), cookie, &list)
		var nf notFound
		switch {
		case errors.As(err, &nf):
			res.served = false
			return res, nil
		case err != nil:
			return nil, err
		}
		res.incidents = append(res.incidents, list...)
	}
	explainScopes(ctx, seed, inc, res)
	return res, nil
}

// explainScopes says on stderr, for each incident whose served scope is wrong
// (each incident with -why), what the served incident named, and each
// candidate scope of its counts: the value holding most affected clients
// in each dimension, its share of them and its lift.
func explainScopes(ctx context.Context, seed uint64, inc *incident.Service, res *result) {
	for _, t := range res.truths {
		m := Match(t, res.incidents)
		if m == nil || ScopeRight(t, *m) && !*why {
			continue
		}
		fmt.Fprintf(os.Stderr, "seed %d %s at %s %s: want %s %s, served %s %q (share %.2f), cause %s %q\n", seed, t.Kind, t.Site, t.From,
			t.Scope.Type, t.Scope.Name, m.Scope.Type, m.Scope.Name, m.Scope.Share, m.Cause.Stage, m.Cause.Reason.Text)
		to := m.end()
		if m.To == nil {
			to = m.From + 16*slotMs
		}
		counts, err := inc.Counts(ctx, wnms.OnPremCustomer, m.SiteLocationID, m.From, to, m.Kind)
		if err != nil {
			fmt.Fprintf(os.Stderr, "  counts: %v\n", err)
			continue
		}
		fmt.Fprintf(os.Stderr, "  %s %s–%s: %d affected of %d, usually %.1f %%\n", m.Kind, time.UnixMilli(m.From).UTC().Format("15:04"),
			time.UnixMilli(to).UTC().Format("15:04"), counts.Affected, counts.Attempted, 100*counts.Usual)
		for _, c := range incident.Candidates(counts) {
			fmt.Fprintf(os.Stderr, "  %-12s %-18s %3d of %3d  share %.2f  beyond the usual %.2f  lift %5.2f  fits %v\n",
				c.Type, c.Key, c.Affected, c.Attempted, c.Share, c.Excess, c.Lift, c.Fits)
		}
	}
}

// notFound is a 404 answer.
type notFound struct{ msg string }

func (e notFound) Error() string { return e.msg }

// getJSON reads u into v; a 404 is a notFound. An answer that is an
// object rather than a list is searched for its first list field (a paged
// answer).
func getJSON(hc *http.Client, u, cookie string, v any) error {
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Cookie", "JSESSIONID="+cookie)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil && resp.StatusCode == http.StatusOK {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return notFound{fmt.Sprintf("GET %s: 404", u)}
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("GET %s: %s %.300s", u, resp.Status, raw)
	}
	if len(raw) > 0 && raw[0] == '{' {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err == nil {
			for _, f := range obj {
				if len(f) > 0 && f[0] == '[' {
					raw = f
					break
				}
			}
		}
	}
	return json.Unmarshal(raw, v)
}

// locationID reads a locationId served as a number or as {type, id}.
func locationID(raw json.RawMessage) int64 {
	var id int64
	if json.Unmarshal(raw, &id) == nil {
		return id
	}
	var l struct {
		ID int64 `json:"id"`
	}
	json.Unmarshal(raw, &l)
	return l.ID
}

func dropDatabase(base, name string) {
	db, err := sql.Open("pgx", base)
	if err != nil {
		return
	}
	defer db.Close()
	// WITH (FORCE) cannot end another role's backend (an autovacuum worker
	// after a large load): try again for a while.
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			log.Printf("drop database %s: %v", name, err)
			return
		}
		time.Sleep(time.Second)
	}
}
