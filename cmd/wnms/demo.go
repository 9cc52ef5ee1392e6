package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/baseline"
	"github.com/wnms/wnms/internal/simulate"
	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/tz"
	"github.com/wnms/wnms/internal/wnms"
)

// The demo (`wnms serve --demo`) is `wnms simulate` run in-process against
// the server's own API: the default network, open at weekends too, 7 days
// of history with a radius-down incident 3 hours ago on the first start
// (in the early afternoon at the sites: demoIncident), then live.
const (
	demoUser        = "demo-simulator"
	demoSeed        = 1
	demoDays        = 7
	demoIncidentAgo = 3 * time.Hour
	// demoSentSetting keeps how far the demo has sent, so a restart
	// resumes from there instead of drawing the past again.
	demoSentSetting = "demo_sent_until"
)

var demoSizes = simulate.Sizes{Sites: 2, Floors: 2, APsPerFloor: 6, Clients: 300}

// demoNetwork is the demo's network (its names and MACs do not depend on
// the time zone).
func demoNetwork() *simulate.Network {
	return simulate.NewNetwork(demoSeed, demoSizes, time.UTC)
}

// checkDemoStore refuses a store that holds anything the demo did not
// make: a location other than its sites and floors, an AP or a client
// that is not one of its own.
func checkDemoStore(ctx context.Context, st *store.Store) error {
	n := demoNetwork()
	sites, floors := map[string]bool{}, map[string]bool{}
	for _, s := range n.Sites {
		sites[s.Name] = true
		for _, f := range s.Floors {
			floors[f.Name] = true
		}
	}
	locs, err := st.Locations(ctx, wnms.OnPremCustomer)
	if err != nil {
		return err
	}
	simFolders := map[int64]bool{}
	for _, l := range locs {
		if l.Type == wnms.FolderLocation && l.ParentID != nil && l.ParentID.ID == wnms.RootLocation && sites[l.Name] {
			simFolders[l.ID.ID] = true
		}
	}
	for _, l := range locs {
		switch {
		case l.ID.ID == wnms.RootLocation || l.ID.ID == wnms.UnknownLocation || simFolders[l.ID.ID]:
		case l.Type == wnms.FloorLocation && l.ParentID != nil && simFolders[l.ParentID.ID] && floors[l.Name]:
		default:
			return fmt.Errorf("--demo runs only on an empty store or on its own demo data, and this one has the location %q (id %d); use another --data or --database-url", l.Name, l.ID.ID)
		}
	}
	known := map[string]bool{}
	for _, ap := range n.APs() {
		known[ap.MAC] = true
	}
	for off := 0; ; off += 1000 {
		aps, _, err := st.APs(ctx, wnms.APQuery{CustomerID: wnms.OnPremCustomer, Limit: 1000, Offset: off})
		if err != nil {
			return err
		}
		for _, ap := range aps {
			if !known[ap.MacAddress] {
				return fmt.Errorf("--demo runs only on an empty store or on its own demo data, and this one has the AP %s (%s); use another --data or --database-url", ap.Name, ap.MacAddress)
			}
		}
		if len(aps) < 1000 {
			break
		}
	}
	for _, c := range n.Clients {
		known[c.MAC] = true
	}
	for off := 0; ; off += 1000 {
		cs, _, err := st.Clients(ctx, wnms.ClientQuery{CustomerID: wnms.OnPremCustomer, Limit: 1000, Offset: off})
		if err != nil {
			return err
		}
		for _, c := range cs {
			if !known[c.MacAddress] {
				return fmt.Errorf("--demo runs only on an empty store or on its own demo data, and this one has the client %s; use another --data or --database-url", c.MacAddress)
			}
		}
		if len(cs) < 1000 {
			break
		}
	}
	return nil
}

// demoIncident is when the demo's outage happens, and the time zone its
// sites get, on the first start: demoIncidentAgo before now, in a zone
// where that is the early afternoon (11:00 to 15:00; a well-known city
// preferred), so that the outage hits a busy site. The demo's sites are
// open every day (simulate.Config.OpenWeekends): at a weekend too the
// outage is within the last day, on the overview's first screen.
func demoIncident(now time.Time) (time.Time, *time.Location) {
	preferred := []string{"Europe/London", "Europe/Berlin", "Europe/Helsinki", "Asia/Dubai", "Asia/Karachi",
		"Asia/Dhaka", "Asia/Bangkok", "Asia/Shanghai", "Asia/Tokyo", "Australia/Sydney", "Pacific/Noumea",
		"Pacific/Auckland", "Pacific/Honolulu", "America/Anchorage", "America/Los_Angeles", "America/Denver",
		"America/Chicago", "America/New_York", "America/Halifax", "America/Sao_Paulo", "Atlantic/South_Georgia",
		"Atlantic/Azores"}
	at := now.Add(-demoIncidentAgo)
	for _, id := range append(preferred, tz.IDs()...) {
		if z, err := wnms.LoadLocation(id); err == nil {
			if h := at.In(z).Hour(); h >= 11 && h < 15 {
				return at, z
			}
		}
	}
	return at, time.UTC
}

// demoKey returns the demo's API key (its user is an ADMINISTRATOR at the
// root), kept in <data>/demo-key.json (mode 0600). A restarted demo keeps
// the key it had, so what a user copied still works; only when the file is
// gone or names a key the store no longer has is a new key made, and the
// earlier keys of the demo user revoked.
func demoKey(ctx context.Context, st *store.Store, a *auth.Service, dataDir string) (keyID, value, path string, err error) {
	u, err := auth.EnsureAPIUser(ctx, st, demoUser, string(wnms.Administrator), wnms.OnPremCustomer)
	if err != nil {
		return "", "", "", err
	}
	keys, err := st.APIKeys(ctx, wnms.OnPremCustomer)
	if err != nil {
		return "", "", "", err
	}
	path = filepath.Join(dataDir, "demo-key.json")
	var kept struct{ KeyID, KeyValue string }
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &kept) == nil && kept.KeyValue != "" {
		for _, k := range keys {
			if k.UserID == u.UserID && k.KeyID == kept.KeyID {
				return kept.KeyID, kept.KeyValue, path, nil
			}
		}
	}
	for _, k := range keys {
		if k.UserID == u.UserID {
			if err := st.DeleteAPIKey(ctx, wnms.OnPremCustomer, k.KeyID); err != nil {
				return "", "", "", err
			}
		}
	}
	k, value, err := a.NewKey(ctx, u)
	if err != nil {
		return "", "", "", err
	}
	b, _ := json.MarshalIndent(map[string]string{"keyId": k.KeyID, "keyValue": value}, "", "  ")
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", "", "", err
	}
	os.Remove(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", "", "", err
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		return "", "", "", err
	}
	return k.KeyID, value, path, f.Close()
}

// runDemo builds and runs the demo network against the API at base
// (http[s]://host:port) until ctx ends. Once the first history is in, it
// runs the anomaly evaluation until the history is evaluated, so that the
// incident is listed among the anomalies at once.
func runDemo(ctx context.Context, st *store.Store, a *auth.Service, bl *baseline.Service, base, dataDir string, stdout io.Writer, log *slog.Logger) error {
	keyID, value, path, err := demoKey(ctx, st, a, dataDir)
	if err != nil {
		return fmt.Errorf("demo key: %w", err)
	}
	now := time.Now()
	incidentAt, zone := demoIncident(now)
	cfg := simulate.Config{Sizes: demoSizes, Days: demoDays, Seed: demoSeed, Live: true, TZ: zone, OpenWeekends: true,
		Logf: func(format string, args ...any) { log.Warn("demo: " + fmt.Sprintf(format, args...)) }}
	resumed := false
	if v, ok, err := st.Setting(ctx, demoSentSetting); err != nil {
		return err
	} else if ok {
		// A restart: go on from where the last run stopped, without a new
		// incident (one would mix with the history already sent).
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			cfg.Start, resumed = time.UnixMilli(ms), true
		}
	}
	if !resumed {
		cfg.Incidents = []simulate.Incident{{Kind: simulate.RadiusDown, Ago: now.Sub(incidentAt)}}
	}
	hc := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // our own listener, on loopback
	api := &simulate.API{URL: base, KeyID: keyID, KeyValue: value, HTTP: hc, RetryFor: time.Minute}
	fmt.Fprintf(stdout, `wnms: demo: a simulated network of %d sites, %d APs and %d clients is being built through the API.
wnms: demo: log in with the demo key (an ADMINISTRATOR; also in %s):
{"keyId": %q, "keyValue": %q}
`, demoSizes.Sites, demoSizes.Sites*demoSizes.Floors*demoSizes.APsPerFloor, demoSizes.Clients, path, keyID, value)
	log.Info("demo starting", "key_id", keyID, "resumed", resumed, "timezone", cfg.TZ.String())
	var once sync.Once
	cfg.OnSent = func(until time.Time) {
		if err := st.PutSetting(context.WithoutCancel(ctx), demoSentSetting, strconv.FormatInt(until.UnixMilli(), 10)); err != nil {
			log.Warn("demo: recording progress failed", "err", err)
		}
		once.Do(func() {
			site := int64(0)
			if locs, err := st.Locations(ctx, wnms.OnPremCustomer); err == nil {
				if i := slices.IndexFunc(locs, func(l *wnms.Location) bool { return l.Name == "Sim Site 1" }); i >= 0 {
					site = locs[i].ID.ID
				}
			}
			what := fmt.Sprintf("7 days of history are in, with a RADIUS outage at Sim Site 1 %s ago (%s, %s there)",
				fmtAgo(now.Sub(incidentAt)), incidentAt.UTC().Format(time.RFC3339), incidentAt.In(zone).Format("Mon 15:04"))
			if resumed {
				what = "the history is brought up to date"
			} else {
				// Every slot of the history is new to the evaluation: a few
				// runs (each looks at four days of slots) evaluate them all.
				if err := bl.EvaluateUntilDone(ctx, wnms.OnPremCustomer, 10); err != nil {
					log.Warn("demo: evaluating the history for anomalies failed", "err", err)
				}
			}
			fmt.Fprintf(stdout, `wnms: demo: %[3]s; live from now on.
wnms: demo: the console: %[1]s/ (sign in with the demo key above). Or the API:
  %[1]s/new/webservice/V5/devices/manageddevices
  %[1]s/new/webservice/V5/devices/clients
  %[1]s/new/webservice/V5/baselines/clientsconnectivity?locationid=%[2]d
`, base, site, what)
		})
	}
	var sum simulate.Summary
	err = simulate.Run(ctx, api, cfg, &sum)
	b, _ := json.Marshal(sum)
	log.Info("demo stopped", "summary", string(b))
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// fmtAgo is a duration in hours and minutes: "3h00m".
func fmtAgo(d time.Duration) string {
	m := int(d.Round(time.Minute).Minutes())
	return fmt.Sprintf("%dh%02dm", m/60, m%60)
}
