package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
	"slices"
)

// simEnd fixes the simulated window: a Wednesday 17:00 UTC, so the
// records, and so the baselines, are the same on every run.
const simEnd = "2026-11-18T17:00:00Z"

// simDays is the backfill of the incident test: the last day, which the
// test reads, has three days of history before it, the least a slot's
// baseline needs from the same time of day on earlier days.
const simDays = "4"

// simulateCLI runs `wnms simulate` in-process against the server at base
// and answers its exit code, its summary (the last line of stdout) and its
// stderr.
func simulateCLI(t *testing.T, base, keyID, keyValue string, args ...string) (int, map[string]any, string) {
	t.Helper()
	return simulateCLIInto(t, &syncBuf{}, base, keyID, keyValue, args...)
}

// simulateCLIInto is simulateCLI writing stderr into stderr as it runs, so
// a test can wait for a line.
func simulateCLIInto(t *testing.T, stderr *syncBuf, base, keyID, keyValue string, args ...string) (int, map[string]any, string) {
	t.Helper()
	var stdout syncBuf
	env := map[string]string{"WNMS_KEY_ID": keyID, "WNMS_KEY_VALUE": keyValue}
	err := run(context.Background(), append([]string{"simulate", "--url", base}, args...),
		func(k string) string { return env[k] }, &stdout, stderr)
	code := exitCode(err, stderr)
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var sum map[string]any
	if last := lines[len(lines)-1]; last != "" {
		if err := json.Unmarshal([]byte(last), &sum); err != nil {
			t.Fatalf("the last line of stdout is not the JSON summary: %q", last)
		}
	}
	return code, sum, stderr.String()
}

// point is the part of a baseline data point the tests read.
type point struct {
	Timestamp                 int64    `json:"timestamp"`
	Observation               float64  `json:"observation"`
	Baseline                  *float64 `json:"baseline"`
	Anomalous                 bool     `json:"anomalous"`
	NoOfSamplesForObservation int      `json:"noOfSamplesForObservation"`
	NoClientsAuthFailure      int      `json:"noClientsAuthFailure"`
	NoClientsHighRetryRate    int      `json:"noClientsHighRetryRate"`
}

// A simulated network driven through the API on each store: the
// radius-down incident three hours before the end shows up as anomalous
// connectivity at that site and time, failing on authentication, and
// nowhere else does anything like it; interference shows up as a
// performance anomaly the same way. A re-run is all duplicates.
func TestSimulateIncidentsShowInBaselines(t *testing.T) {
	t.Parallel() // the longest tests of the package share its time
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			cfg := storetest.StoreConfig(t, b)
			args := []string{"--data", cfg.DataDir}
			if cfg.DatabaseURL != "" {
				args = append(args, "--database-url", cfg.DatabaseURL)
			}
			env := map[string]string{"WNMS_BOOTSTRAP_KEY_ID": "sim-admin", "WNMS_BOOTSTRAP_KEY_VALUE": "sim-admin-value-0123456789"}
			l, _, _, _ := bootServe(t, env, args...)
			base := "http://" + l.API

			code, sum, stderr := simulateCLI(t, base, "sim-admin", "sim-admin-value-0123456789", "--end", simEnd, "--days", simDays,
				"--incident", "radius-down@3h", "--incident", "interference@5h")
			if code != 0 {
				t.Fatalf("simulate exited %d: %s", code, stderr)
			}
			if sum["sites"] != 2.0 || sum["floors"] != 4.0 || sum["aps"] != 24.0 || sum["clients"] != 300.0 ||
				sum["events"].(float64) < 10000 || sum["stats"].(float64) < 100000 || sum["duplicates"] != 0.0 || sum["rejected"] != 0.0 {
				t.Fatalf("summary: %v", sum)
			}
			incs := sum["incidents"].([]any)
			radius, inter := incs[0].(map[string]any), incs[1].(map[string]any)
			if radius["site"] != "Sim Site 1" || inter["site"] != "Sim Site 2" || radius["from"] != "2026-11-18T14:00:00Z" {
				t.Fatalf("incidents: %v", incs)
			}
			// Each incident's ground truth: its cause and scope as wnms names them.
			cause, scope := radius["cause"].(map[string]any), radius["scope"].(map[string]any)
			if cause["stage"] != "authentication" || cause["subFailureCode"] != 203.0 || cause["text"] != "RADIUS server unreachable" ||
				scope["type"] != "site" || scope["id"] != fmt.Sprint(radius["siteLocationId"]) || scope["name"] != "Sim Site 1" ||
				inter["scope"].(map[string]any)["type"] != "channel" || inter["scope"].(map[string]any)["id"] != "36" ||
				inter["cause"].(map[string]any)["stage"] != "performance" {
				t.Fatalf("ground truth: %v", incs)
			}
			c := apitest.Remote(t, base, "sim-admin", "sim-admin-value-0123456789")
			end, _ := time.Parse(time.RFC3339, simEnd)
			day := fmt.Sprintf("fromtime=%d&totime=%d", end.Add(-24*time.Hour).UnixMilli(), end.UnixMilli()-1)
			sites := map[string]int64{"Sim Site 1": int64(radius["siteLocationId"].(float64)), "Sim Site 2": int64(inter["siteLocationId"].(float64))}

			for _, tc := range []struct {
				kind     string
				inc      map[string]any
				strong   func(p point) bool // the incident's mark
				faintest float64            // nothing else comes near this
			}{
				{"clientsconnectivity", radius, func(p point) bool {
					return p.Observation >= 90 && p.NoClientsAuthFailure*10 >= p.NoOfSamplesForObservation*9
				}, 50},
				{"clientsperformance", inter, func(p point) bool {
					return p.Baseline != nil && p.Observation >= 2**p.Baseline && p.NoClientsHighRetryRate >= 10
				}, 18},
			} {
				from, _ := time.Parse(time.RFC3339, tc.inc["from"].(string))
				to, _ := time.Parse(time.RFC3339, tc.inc["to"].(string))
				for site, id := range sites {
					var points []point
					c.Expect(200, "GET", fmt.Sprintf("/V5/baselines/%s?locationid=%d&%s", tc.kind, id, day), nil).Decode(t, &points)
					if len(points) != 96 {
						t.Fatalf("%s %s: %d points", tc.kind, site, len(points))
					}
					hit := 0
					for _, p := range points {
						slot := time.UnixMilli(p.Timestamp)
						during := site == tc.inc["site"] && !slot.Before(from) && slot.Before(to)
						switch {
						case during && (!p.Anomalous || !tc.strong(p)):
							t.Errorf("%s %s %s, during the incident: %+v", tc.kind, site, slot.UTC().Format("15:04"), p)
						case during:
							hit++
						case p.Observation >= tc.faintest && p.NoOfSamplesForObservation >= 5:
							t.Errorf("%s %s %s, outside the incident, looks like it: %+v", tc.kind, site, slot.UTC().Format("15:04"), p)
						}
					}
					if site == tc.inc["site"] && hit != 3 {
						t.Errorf("%s %s: %d anomalous incident slots, want 3", tc.kind, site, hit)
					}
				}
			}

			// Everything the network is made of is there.
			var aps []map[string]any
			c.Expect(200, "GET", "/v2/devices/aps", nil).Decode(t, &aps)
			var clients []map[string]any
			r := c.Expect(200, "GET", "/V5/devices/clients?ssid=corp", nil)
			r.Decode(t, &clients)
			if len(aps) != 24 || aps[0]["vendorName"] != "wnms simulator" || len(clients) == 0 ||
				!strings.HasSuffix(clients[0]["username"].(string), "@corp.example") {
				t.Errorf("%d APs, %d corp clients: %v", len(aps), len(clients), clients[:min(1, len(clients))])
			}
			c.Expect(200, "GET", fmt.Sprintf("/V5/layouts?locationid=%d", sites["Sim Site 1"]+1), nil)

			// The same flags again: every record is a duplicate.
			code, again, stderr := simulateCLI(t, base, "sim-admin", "sim-admin-value-0123456789", "--end", simEnd, "--days", simDays,
				"--incident", "radius-down@3h", "--incident", "interference@5h")
			if code != 0 || again["events"] != 0.0 || again["stats"] != 0.0 || again["radioStats"] != 0.0 || sum["radioStats"].(float64) < 10000 ||
				again["duplicates"].(float64) != sum["events"].(float64)+sum["stats"].(float64)+sum["radioStats"].(float64) {
				t.Fatalf("re-run exited %d: %v (first %v) %s", code, again, sum, stderr)
			}
		})
	}
}

// Mistakes are refused with a clear message and exit status 2, before
// anything is sent.
func TestSimulateRefuses(t *testing.T) {
	env := map[string]string{"WNMS_BOOTSTRAP_KEY_ID": "sim-admin", "WNMS_BOOTSTRAP_KEY_VALUE": "sim-admin-value-0123456789"}
	l, _, _, _ := bootServe(t, env, "--data", t.TempDir())
	base := "http://" + l.API
	notWnms := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/openapi.json") {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"openapi":"3.0.0","info":{"title":"Some Other Controller"}}`)
			return
		}
		http.NotFound(w, r)
	}))
	defer notWnms.Close()
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	nobody := "http://" + freeTCPPort(t) // closed again: nothing listens there
	for _, tc := range []struct {
		name, url, key string
		args           []string
		want           string
	}{
		{"another API", notWnms.URL, "sim-admin", nil, "not a wnms server"},
		{"a web server", plain.URL, "sim-admin", nil, "not a wnms server"},
		// A wrong --url fails at once rather than being waited for as a
		// server that went away (--retry-for).
		{"nothing listens", nobody, "sim-admin", nil, "no server answers at " + nobody},
		{"no such host", "http://nowhere.invalid:8080", "sim-admin", nil, "no server answers at http://nowhere.invalid:8080"},
		{"bad key", base, "nobody", nil, "the server refused the API key"},
		{"negative clients", base, "sim-admin", []string{"--clients", "-5"}, "--clients must be 1 to 100000"},
		{"absurd sites", base, "sim-admin", []string{"--sites", "100000"}, "--sites must be 1 to 100"},
		{"absurd days", base, "sim-admin", []string{"--days", "400"}, "--days must be 0 to 30"},
		{"unknown incident", base, "sim-admin", []string{"--incident", "meteor@1h"}, "the kind must be one of"},
		{"incident before the backfill", base, "sim-admin", []string{"--days", "1", "--incident", "ap-down@30h"}, "starts before the backfill"},
		{"bad end", base, "sim-admin", []string{"--end", "yesterday"}, "expected an RFC 3339 time"},
		{"bad zone", base, "sim-admin", []string{"--timezone", "Mars/Olympus"}, "expected an IANA time zone"},
		{"end with live", base, "sim-admin", []string{"--end", simEnd, "--live"}, "the backfill must end now"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, sum, stderr := simulateCLI(t, tc.url, tc.key, "sim-admin-value-0123456789", append(tc.args, "--retry-for", "2s")...)
			if code != 2 || !strings.Contains(stderr, tc.want) || sum != nil || strings.Contains(stderr, "trying again") {
				t.Errorf("exit %d, summary %v, stderr %q; want 2 and %q, at once", code, sum, stderr, tc.want)
			}
		})
	}
	// Nothing was made by the refused runs.
	c := apitest.Remote(t, base, "sim-admin", "sim-admin-value-0123456789")
	var tree struct{ Locations map[string]any }
	c.Expect(200, "GET", "/V2/locations/tree", nil).Decode(t, &tree)
	if len(tree.Locations) != 2 {
		t.Errorf("locations after refused runs: %v", tree.Locations)
	}
	// Without a key at all.
	var stdout, stderr syncBuf
	err := run(context.Background(), []string{"simulate", "--url", base}, func(string) string { return "" }, &stdout, &stderr)
	if exitCode(err, &stderr) != 2 || !strings.Contains(stderr.String(), "--key-id and --key-value") {
		t.Errorf("no key: %v", err)
	}
}

// A server killed in the middle of a backfill and started again: the
// simulator waits, resumes, and the store ends up with every record
// exactly once.
func TestSimulateResumesAfterServerRestart(t *testing.T) {
	dir := t.TempDir()
	addr := freeTCPPort(t)
	keyArgs := []string{"--data", dir, "--bootstrap-key-id", "sim-admin", "--bootstrap-key-value", "sim-admin-value-0123456789"}
	srv := startProc(t, addr, keyArgs...)
	base := "http://" + addr

	var wg sync.WaitGroup
	var code int
	var sum map[string]any
	var stderr string
	live := &syncBuf{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		code, sum, stderr = simulateCLIInto(t, live, base, "sim-admin", "sim-admin-value-0123456789", "--end", simEnd,
			"--days", "1", "--batch", "500", "--retry-for", "1m")
	}()
	// Kill the server once the backfill is under way.
	c := apitest.Remote(t, base, "sim-admin", "sim-admin-value-0123456789")
	deadline := time.Now().Add(time.Minute)
	for {
		var clients []map[string]any
		if r := c.Do("GET", "/V5/devices/clients", nil); r.Status == 200 {
			r.Decode(t, &clients)
		}
		if len(clients) > 50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the backfill did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	srv.kill()
	// The server stays away until the simulator has noticed and is
	// retrying.
	for deadline := time.Now().Add(time.Minute); !strings.Contains(live.String(), "trying again"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the simulator never retried:\n%s", live.String())
		}
	}
	startProc(t, addr, keyArgs...)
	wg.Wait()
	if code != 0 || !strings.Contains(stderr, "trying again") {
		t.Fatalf("simulate exited %d across the restart: %s", code, stderr)
	}

	// A re-run finds every record stored; the store holds each once.
	code, again, stderr := simulateCLI(t, base, "sim-admin", "sim-admin-value-0123456789", "--end", simEnd, "--days", "1")
	if code != 0 || again["events"] != 0.0 || again["stats"] != 0.0 || again["radioStats"] != 0.0 {
		t.Fatalf("re-run: exit %d %v %s", code, again, stderr)
	}
	want := again["duplicates"].(float64)
	stored := sum["events"].(float64) + sum["stats"].(float64) + sum["radioStats"].(float64)
	if got := stored + sum["duplicates"].(float64); got != want {
		t.Errorf("first run stored %v and found %v duplicates; the re-run found %v", stored, sum["duplicates"], want)
	}
	// The roams the server found are events of its own, not sent.
	var events, stats, radios int64
	if err := storetest.TelemetryDB(t, store.Config{DataDir: dir}).QueryRowContext(context.Background(),
		`SELECT (SELECT count(*) FROM client_events WHERE event_id NOT LIKE 'roam-%'), (SELECT count(*) FROM client_stats),
			(SELECT count(*) FROM radio_stats)`).Scan(&events, &stats, &radios); err != nil {
		t.Fatal(err)
	}
	if float64(events+stats+radios) != want {
		t.Errorf("the store holds %d events, %d samples and %d radio samples; %v records were sent", events, stats, radios, want)
	}
}

// `serve --demo` turns an empty store into a live simulated network and
// says how to look at it; it refuses a store with data of its own.
func TestServeDemo(t *testing.T) {
	t.Parallel() // the longest tests of the package share its time
	top := t.TempDir()
	dir := filepath.Join(top, "wnms-demo")
	l, stdout, stderr, stop := bootServe(t, nil, "--data", dir, "--demo")
	// -race slows the server's SQLite a lot, and the package's kill and
	// restart tests run beside it on two cores: be patient (this guards
	// against a hang, it measures nothing).
	deadline := time.Now().Add(12 * time.Minute)
	for !strings.Contains(stdout.String(), "live from now on") {
		if time.Now().After(deadline) {
			t.Fatalf("the demo did not finish its backfill:\n%s", stdout.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	out := stdout.String()
	var key struct{ KeyID, KeyValue string }
	if i := strings.Index(out, `{"keyId"`); i < 0 {
		t.Fatalf("no key printed:\n%s", out)
	} else if err := json.Unmarshal([]byte(out[i:i+strings.Index(out[i:], "}")+1]), &key); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "/V5/baselines/clientsconnectivity?locationid=") || !strings.Contains(out, filepath.Join(dir, "demo-key.json")) ||
		!strings.Contains(out, "console: http://"+l.API+"/") {
		t.Errorf("the demo does not say what to open:\n%s", out)
	}
	c := apitest.Remote(t, "http://"+l.API, key.KeyID, key.KeyValue)
	var aps []map[string]any
	c.Expect(200, "GET", "/v2/devices/aps", nil).Decode(t, &aps)
	r := c.Expect(200, "GET", "/V5/devices/clients", nil)
	// Some guests do not come by in a week.
	if n, _ := strconv.Atoi(r.Header.Get("X-Total-Count")); len(aps) != 24 || n < 250 || n > 300 {
		t.Errorf("%d APs, %s clients", len(aps), r.Header.Get("X-Total-Count"))
	}
	// The outage (three hours ago, in the early afternoon at the sites,
	// as the demo says) is in the history, failing on RADIUS.
	now := time.Now()
	m := regexp.MustCompile(`RADIUS outage at Sim Site 1 \d+h\d\dm ago \((\S+), \w{3} \d\d:\d\d there\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the demo does not say when its outage was:\n%s", out)
	}
	outageAt, perr := time.Parse(time.RFC3339, m[1])
	// (the demo said so before now, after the backfill, and the
	// backfill took less than the 12 minutes waited)
	if perr != nil || outageAt.After(now.Add(-3*time.Hour)) || outageAt.Before(now.Add(-3*time.Hour-13*time.Minute)) {
		t.Fatalf("the outage at %s (%v): not 3 hours ago", m[1], perr)
	}
	var points []point
	c.Expect(200, "GET", fmt.Sprintf("/V5/baselines/clientsconnectivity?locationid=1&fromtime=%d&totime=%d",
		outageAt.UnixMilli(), outageAt.Add(45*time.Minute).UnixMilli()), nil).Decode(t, &points)
	failed := 0
	for _, p := range points {
		failed += p.NoClientsAuthFailure
	}
	if failed < 3 {
		t.Errorf("no RADIUS outage at %s: %+v", outageAt, points)
	}
	// The evaluation looked back over the history: the outage is listed
	// at a floor of Sim Site 1 (locations 2 and 3).
	var anomalies []struct {
		LocationID struct{ ID int64 } `json:"locationId"`
		Kind       string             `json:"kind"`
		Timestamp  int64              `json:"timestamp"`
	}
	c.Expect(200, "GET", fmt.Sprintf("/V5/baselines/anomalies?fromtime=%d&totime=%d", now.Add(-8*24*time.Hour).UnixMilli(), now.UnixMilli()), nil).Decode(t, &anomalies)
	outage := 0
	for _, a := range anomalies {
		at := time.UnixMilli(a.Timestamp)
		if a.Kind == "clientsconnectivity" && (a.LocationID.ID == 2 || a.LocationID.ID == 3) &&
			at.After(outageAt.Add(-30*time.Minute)) && at.Before(outageAt.Add(time.Hour)) {
			outage++
		}
	}
	if outage == 0 {
		t.Errorf("the outage is not among the anomalies: %+v", anomalies)
	}
	// The README's demo section, as a newcomer runs it.
	if missingTool(t, "bash", "curl", "jq") == "" {
		readmeDemo(t, l, top, stderr.String)
	}
	// The console, in Chromium, on the demo's data.
	t.Run("console", func(t *testing.T) { testConsole(t, "http://"+l.API, key.KeyID, key.KeyValue) })
	// Nothing else of the demo's week is anomalous: its background of
	// wrong passwords and flaky drivers raises no alarm.
	for _, a := range anomalies {
		at := time.UnixMilli(a.Timestamp)
		if !(a.LocationID.ID == 2 || a.LocationID.ID == 3) || at.Before(outageAt.Add(-30*time.Minute)) || at.After(outageAt.Add(time.Hour)) {
			t.Errorf("an anomaly outside the outage: %+v", a)
		}
	}
	// The outage is one incident that names its cause, at Sim Site 1 (its
	// scope that site, or the corp SSID or RADIUS server that hold exactly
	// the same clients there). The grouping runs every minute, a margin
	// behind the evaluation.
	var incidents struct {
		Incidents []wnms.Incident `json:"incidents"`
	}
	for deadline := time.Now().Add(6 * time.Minute); ; time.Sleep(2 * time.Second) {
		c.Expect(200, "GET", fmt.Sprintf("/V5/incidents?fromtime=%d&totime=%d", now.Add(-7*24*time.Hour).UnixMilli(), time.Now().UnixMilli()), nil).Decode(t, &incidents)
		if slices.ContainsFunc(incidents.Incidents, func(in wnms.Incident) bool {
			return in.Cause != nil && in.Cause.Reason.Text == "RADIUS server unreachable"
		}) || time.Now().After(deadline) {
			break
		}
	}
	if n := len(incidents.Incidents); n != 1 {
		t.Errorf("%d incidents, want the outage alone: %+v", n, incidents.Incidents)
	} else if in := incidents.Incidents[0]; in.Cause == nil || in.Cause.Stage != "authentication" ||
		in.Cause.Reason.Text != "RADIUS server unreachable" || !slices.Contains([]string{"site", "ssid", "radiusServer"}, in.Scope.Type) ||
		len(in.Floors) == 0 || slices.ContainsFunc(in.Floors, func(f int64) bool { return f != 2 && f != 3 }) {
		t.Errorf("the outage's incident: %+v cause %+v scope %+v", in, in.Cause, in.Scope)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// A started demo comes back on restart and brings its history up
	// to date; a store with other data is refused.
	l, stdout, _, stop = bootServe(t, nil, "--data", dir, "--demo")
	for deadline := time.Now().Add(3 * time.Minute); !strings.Contains(stdout.String(), "brought up to date"); {
		if time.Now().After(deadline) {
			t.Fatalf("the demo did not resume:\n%s", stdout.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The key of the first start still works (a restart once replaced it
	// without a word).
	if r := do(t, "POST", "http://"+l.API+"/new/webservice/login/key/test/600", nil, "application/json",
		jsonBody(map[string]string{"type": "apikeycredentials", "keyId": key.KeyID, "keyValue": key.KeyValue})); r.status != 200 {
		t.Errorf("the first demo key after a restart: %d", r.status)
	}
	stop()
	other := t.TempDir()
	l2, _, _, stop2 := bootServe(t, map[string]string{"WNMS_BOOTSTRAP_KEY_ID": "k", "WNMS_BOOTSTRAP_KEY_VALUE": "value-0123456789abcdef"}, "--data", other)
	admin := apitest.Remote(t, "http://"+l2.API, "k", "value-0123456789abcdef")
	admin.Expect(200, "PUT", "/V2/locations", map[string]any{"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
		"location": map[string]any{"type": "folderlocation", "name": "HQ"}})
	stop2()
	var so, se syncBuf
	err := runServe(context.Background(), []string{"--data", other, "--demo", "--listen", "127.0.0.1:0", "--analytics-listen", "127.0.0.1:0",
		"--snmp-agent-listen", "off", "--metrics-listen", "off"}, func(string) string { return "" }, &so, &se, nil)
	if err == nil || !strings.Contains(err.Error(), `the location "HQ"`) {
		t.Errorf("--demo on a store with data: %v", err)
	}
}
