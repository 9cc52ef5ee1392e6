package poller_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// hostapdRecording is an exposition of OpenWrt's hostapd_stations and
// wifi collectors (its making: ../promwifi/testdata/README.md): a 2.4 and
// a 5 GHz access point interface, the 5 GHz one with three stations.
const hostapdRecording = "../promwifi/testdata/openwrt-hostapd-assembled.txt"

// Two APs polled through their exporters: a client that the first AP
// heard just before it associated to the second has roamed, and the roam
// is stored (from, to, signal before and after; no latency, which a
// scrape cannot tell) and counted by the roaming service level.
func TestPrometheusPollerFindsRoams(t *testing.T) {
	text, err := os.ReadFile(hostapdRecording)
	if err != nil {
		t.Fatal(err)
	}
	const roamer = "02:5E:10:AA:00:01"
	// The first AP as recorded; the second the same device with other
	// BSSIDs and other clients.
	apA := string(text)
	apB := strings.NewReplacer("02:c0:ff:ee", "02:c0:ff:ef", "02:5e:10:aa", "02:5e:10:bb", "02:5E:10:AA", "02:5E:10:BB").Replace(apA)
	// After the roam: the client is gone from the first AP, and has just
	// associated to the second (0 s ago, after the first last heard it).
	afterA := strings.NewReplacer("02:5e:10:aa:00:01", "02:5e:10:cc:00:01", "02:5E:10:AA:00:01", "02:5E:10:CC:00:01").Replace(apA)
	afterB := strings.NewReplacer("02:5e:10:bb:00:01", "02:5e:10:aa:00:01", "02:5E:10:BB:00:01", "02:5E:10:AA:00:01", "} 5412\n", "} 0\n").Replace(apB)
	if afterB == apB || !strings.Contains(afterB, `station="02:5e:10:aa:00:01",bssid="02:c0:ff:ef:01:01",encryption="sae-mixed"} 0`+"\n") {
		t.Fatal("the recording changed: the roam's exposition is not made")
	}
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		var roamed atomic.Bool
		serve := func(before, after string) *httptest.Server {
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain; version=0.0.4")
				if roamed.Load() {
					w.Write([]byte(after))
				} else {
					w.Write([]byte(before))
				}
			}))
			t.Cleanup(s.Close)
			return s
		}
		a, bb := serve(apA, afterA), serve(apB, afterB)
		var pollers []any
		for name, s := range map[string]*httptest.Server{"east": a, "west": bb} {
			pollers = append(pollers, map[string]any{"name": name, "kind": "prometheus", "url": s.URL + "/metrics",
				"locationId": map[string]any{"type": "locallocationid", "id": site.ID.ID}})
		}
		runPollers(t, e, 300*time.Millisecond, pollers)

		type event struct {
			EventType      string `json:"eventType"`
			CategoryCode   *int   `json:"categoryCode"`
			BSSID          string `json:"bssid"`
			FromBSSID      string `json:"fromBssid"`
			RoamLatencyMs  *int64 `json:"roamLatencyMs"`
			RSSIBefore     *int   `json:"rssiBefore"`
			RSSIAfter      *int   `json:"rssiAfter"`
			SlowRoam       *bool  `json:"slowRoam"`
			SuboptimalRoam *bool  `json:"suboptimalRoam"`
		}
		var page struct {
			ClientEvents []event `json:"clientEvents"`
		}
		var trend struct{ Samples []struct{ Value float64 } }
		waitFor(t, "the client's signal at the first AP", func() bool {
			r := e.Admin.Do("GET", "/V5/devices/clients/statistics/trend?type=clientrssi&macaddress="+roamer, nil)
			if r.Status == 404 {
				return false
			}
			r.Decode(t, &trend)
			return len(trend.Samples) > 0
		})
		roamed.Store(true)
		var roam *event
		waitFor(t, "the roam", func() bool {
			e.Admin.Expect(200, "GET", "/V5/devices/clientevents/"+roamer+"/0/100?clienteventtype=Intermediate", nil).Decode(t, &page)
			for i, ev := range page.ClientEvents {
				if ev.CategoryCode != nil && *ev.CategoryCode == wnms.CategoryRoaming {
					roam = &page.ClientEvents[i]
				}
			}
			return roam != nil
		})
		if roam.FromBSSID != "02:C0:FF:EE:01:01" || roam.BSSID != "02:C0:FF:EF:01:01" || roam.RoamLatencyMs != nil ||
			roam.RSSIBefore == nil || *roam.RSSIBefore > -50 || *roam.RSSIBefore < -56 || roam.RSSIAfter == nil ||
			roam.SlowRoam != nil || roam.SuboptimalRoam == nil || *roam.SuboptimalRoam {
			t.Errorf("the roam: %+v", *roam)
		}
		// Found once, however often the second AP is polled after it.
		time.Sleep(time.Second)
		e.Admin.Expect(200, "GET", "/V5/devices/clientevents/"+roamer+"/0/100?clienteventtype=Intermediate", nil).Decode(t, &page)
		n := 0
		for _, ev := range page.ClientEvents {
			if ev.CategoryCode != nil && *ev.CategoryCode == wnms.CategoryRoaming {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d roams stored, want 1", n)
		}
		var levels struct {
			Metrics []struct {
				Metric string
				Count  int64
			}
		}
		waitFor(t, "the roaming service level", func() bool {
			e.Admin.Expect(200, "GET", "/V5/servicelevels?locationid="+strconv.FormatInt(site.ID.ID, 10), nil).Decode(t, &levels)
			for _, m := range levels.Metrics {
				if m.Metric == "roaming" && m.Count == 1 {
					return true
				}
			}
			return false
		})
	})
}

// An AP whose exporter has the dawn collector: its radios' channel
// utilisation, as DAWN reports it, is stored with their samples and read
// back per radio.
func TestPrometheusPollerUtilisation(t *testing.T) {
	text, err := os.ReadFile("../promwifi/testdata/openwrt-dawn-assembled.txt")
	if err != nil {
		t.Fatal(err)
	}
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			w.Write(text)
		}))
		defer exporter.Close()
		runPollers(t, e, 200*time.Millisecond, []any{map[string]any{"name": "dawn-ap", "kind": "prometheus", "url": exporter.URL + "/metrics",
			"locationId": map[string]any{"type": "locallocationid", "id": site.ID.ID}}})

		var aps []struct{ BoxID int64 }
		waitFor(t, "the AP registered", func() bool {
			e.Admin.Expect(200, "GET", "/v2/devices/aps", nil).Decode(t, &aps)
			return len(aps) == 1
		})
		var stats struct {
			Radios []struct {
				BSSID   string
				Samples []struct{ UtilizationPct *float64 }
			}
		}
		waitFor(t, "both radios' samples", func() bool {
			e.Admin.Expect(200, "GET", "/V5/devices/manageddevices/"+strconv.FormatInt(aps[0].BoxID, 10)+"/radiostatistics", nil).Decode(t, &stats)
			return len(stats.Radios) == 2 && len(stats.Radios[0].Samples) > 0 && len(stats.Radios[1].Samples) > 0
		})
		want := map[string]float64{"02:C0:FF:EE:00:01": 59.6, "02:C0:FF:EE:01:01": 23.5}
		for _, r := range stats.Radios {
			u := r.Samples[0].UtilizationPct
			if u == nil || *u < want[r.BSSID]-0.1 || *u > want[r.BSSID]+0.1 {
				t.Errorf("radio %s: utilisation %v, want %.1f %%", r.BSSID, u, want[r.BSSID])
			}
		}
	})
}
