package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/ubus/ubustest"
	"github.com/wnms/wnms/internal/wnms"
)

// A real wnms serve polls two OpenWrt APs over ubus (recorded replies of
// a real one, served by ubustest with rpcd's and uhttpd's behaviour) and
// follows their hostapd events: the AP, its radio's samples, the
// client's signal, a client's roam between the two APs and the service
// levels they give are read back through the API. On each engine.
func TestPollersEndToEnd(t *testing.T) {
	t.Parallel()
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			cfg := storetest.StoreConfig(t, b)
			ap1 := ubustest.New(t, ubustest.Config{})
			ap2 := ubustest.New(t, ubustest.Config{})
			status := strings.NewReplacer(`"bssid": "c8:75:f4:74:c6:92"`, `"bssid": "c8:75:f4:74:d0:01"`,
				`"channel": 1,`, `"channel": 6,`, `"freq": 2412,`, `"freq": 2437,`).Replace(string(ubustest.File("rax3000m/hostapd_get_status.json")))
			ap2.SetReply("hostapd.phy0-ap0", "get_status", []byte(status))
			ap2.SetReply("iwinfo", "assoclist", []byte(`{"results":[]}`))

			args := []string{"--data", filepath.Join(t.TempDir(), "data"), "--bootstrap-key-id", "poll-key",
				"--bootstrap-key-value", "poll-value-0123456789"}
			if cfg.DatabaseURL != "" {
				args = append(args, "--database-url", cfg.DatabaseURL)
			}
			addr := freeTCPPort(t)
			startProc(t, addr, args...)
			ck := session(t, addr, "poll-key", "poll-value-0123456789")
			base := "http://" + addr + "/new/webservice"
			get := func(path string, out any) int {
				t.Helper()
				r := do(t, "GET", base+path, ck, "", nil)
				if r.status == 200 && out != nil {
					if err := json.Unmarshal([]byte(r.body), out); err != nil {
						t.Fatalf("%s: %v %s", path, err, r.body)
					}
				}
				return r.status
			}
			wait := func(what string, cond func() bool) {
				t.Helper()
				deadline := time.Now().Add(60 * time.Second)
				for !cond() {
					if time.Now().After(deadline) {
						t.Fatalf("%s: not within 60 s", what)
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
			r := do(t, "PUT", base+"/V2/locations", ck, "application/json", jsonBody(map[string]any{
				"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
				"location":       map[string]any{"type": "floorlocation", "name": "Radio floor", "timezoneId": "UTC"}}))
			var made struct {
				ID struct{ ID int64 } `json:"id"`
			}
			if r.status != 200 || json.Unmarshal([]byte(r.body), &made) != nil {
				t.Fatalf("floor: %d %s", r.status, r.body)
			}
			var pollers []any
			for i, ap := range []*ubustest.Server{ap1, ap2} {
				pollers = append(pollers, map[string]any{"name": fmt.Sprintf("ap-%d", i+1), "kind": "ubus", "url": ap.URL,
					"username": ubustest.Username, "password": ubustest.Password, "intervalSeconds": 5,
					"locationId": map[string]any{"type": "locallocationid", "id": made.ID.ID}})
			}
			if r := do(t, "PUT", base+"/V5/datasources", ck, "application/json", jsonBody(map[string]any{
				"radius": map[string]any{"upstreams": []any{}}, "sources": []any{}, "pollers": pollers})); r.status != 200 {
				t.Fatalf("data sources: %d %s", r.status, r.body)
			}

			var aps []struct {
				BoxID      int64
				Name       string
				MacAddress string
			}
			wait("the APs", func() bool {
				get("/v2/devices/aps?sortcolumn=devicename&sortascending=true", &aps)
				return len(aps) == 2
			})
			if aps[0].Name != "ap-1" || aps[0].MacAddress != "C8:75:F4:74:C6:92" {
				t.Fatalf("APs: %+v", aps)
			}
			var stats struct {
				Radios []struct {
					Samples []struct {
						Channel        *int
						UtilizationPct *float64
						NoiseDBm       *float64
					}
				}
			}
			wait("the radio's samples", func() bool {
				get(fmt.Sprintf("/V5/devices/manageddevices/%d/radiostatistics", aps[0].BoxID), &stats)
				return len(stats.Radios) == 1 && len(stats.Radios[0].Samples) > 0
			})
			if s := stats.Radios[0].Samples[0]; *s.Channel != 1 || s.UtilizationPct == nil || *s.NoiseDBm != -83 {
				t.Errorf("the radio's sample: %+v", s)
			}
			var trend struct{ Samples []struct{ Value float64 } }
			wait("the client's signal", func() bool {
				return get("/V5/devices/clients/statistics/trend?type=clientrssi&macaddress="+url.QueryEscape("22:D3:75:23:7C:55"), &trend) == 200 &&
					len(trend.Samples) > 0
			})
			if trend.Samples[0].Value != -20 {
				t.Errorf("the client's RSSI: %v", trend.Samples)
			}

			// A client joins ap-1, leaves it and joins ap-2 with a fast
			// transition: a roam.
			for _, ap := range []*ubustest.Server{ap1, ap2} {
				wait("the event stream", func() bool { return ap.Subscribers("hostapd.phy0-ap0") > 0 })
			}
			const roamer = "02:00:00:00:55:01"
			ap1.Publish("hostapd.phy0-ap0", "assoc", map[string]any{"address": roamer, "target": "c8:75:f4:74:c6:92", "signal": -70})
			ap1.Publish("hostapd.phy0-ap0", "sta-authorized", map[string]any{"address": roamer, "ifname": "phy0-ap0", "auth-alg": "sae"})
			var page struct {
				ClientEvents []map[string]any `json:"clientEvents"`
			}
			events := func(typ string) []map[string]any {
				get("/V5/devices/clientevents/"+roamer+"/0/100?clienteventtype="+typ, &page)
				return page.ClientEvents
			}
			wait("the Success at ap-1", func() bool { return len(events("Success")) == 1 })
			ap1.Publish("hostapd.phy0-ap0", "disassoc", map[string]any{"address": roamer, "ifname": "phy0-ap0"})
			wait("the leave", func() bool { return len(events("Intermediate")) == 1 })
			ap2.Publish("hostapd.phy0-ap0", "assoc", map[string]any{"address": roamer, "target": "c8:75:f4:74:d0:01", "signal": -58})
			ap2.Publish("hostapd.phy0-ap0", "sta-authorized", map[string]any{"address": roamer, "ifname": "phy0-ap0", "auth-alg": "ft"})
			var roam map[string]any
			wait("the roam", func() bool {
				for _, ev := range events("Intermediate") {
					if ev["categoryCode"] == float64(wnms.CategoryRoaming) {
						roam = ev
						return true
					}
				}
				return false
			})
			if roam["fromBssid"] != "C8:75:F4:74:C6:92" || roam["bssid"] != "C8:75:F4:74:D0:01" || roam["fastTransition"] != true ||
				roam["rssiBefore"] != float64(-70) || roam["rssiAfter"] != float64(-58) {
				t.Errorf("the roam: %v", roam)
			}

			// The service levels count the samples and the roam.
			var levels struct {
				Metrics []struct {
					Metric string
					Count  int64
					Value  *float64
				}
			}
			byName := map[string]int64{}
			wait("the service levels", func() bool {
				get(fmt.Sprintf("/V5/servicelevels?locationid=%d", made.ID.ID), &levels)
				for _, m := range levels.Metrics {
					byName[m.Metric] = m.Count
				}
				return byName["coverage"] > 0 && byName["capacity"] > 0 && byName["roaming"] == 1 && byName["successfulConnects"] == 2
			})
			var st struct {
				Pollers []struct{ Name, State string }
			}
			get("/V5/datasources/status", &st)
			if len(st.Pollers) != 2 || st.Pollers[0].State != "up" || st.Pollers[1].State != "up" {
				t.Errorf("status: %+v", st.Pollers)
			}
		})
	}
}
