package poller_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/poller"
	"github.com/wnms/wnms/internal/wnms"
)

// recording is a real OpenWrt 22.03 AP's node exporter output (its
// source and licence: ../promwifi/testdata/README.md): one 2.4 GHz
// access point interface on channel 1 with two stations.
const recording = "../promwifi/testdata/openwrt-22.03-x86-wifi-wifi_stations.txt"

// A Prometheus poller of a real AP's exposition registers the AP at its
// location with its radio, and stores the radio's and the clients'
// samples, readable through the API; an exporter that stops answering
// raises sourceDown after two failed polls, and sourceUp when it answers
// again; a poller removed from the configuration stops.
func TestPrometheusPoller(t *testing.T) {
	text, err := os.ReadFile(recording)
	if err != nil {
		t.Fatal(err)
	}
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		var failing atomic.Bool
		exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if failing.Load() {
				http.Error(w, "down", http.StatusServiceUnavailable)
				return
			}
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			w.Write(text)
		}))
		defer exporter.Close()
		m := runPollers(t, e, 200*time.Millisecond, []any{map[string]any{"name": "lobby", "kind": "prometheus", "url": exporter.URL + "/metrics",
			"locationId": map[string]any{"type": "locallocationid", "id": site.ID.ID}}})

		const apMAC, client = "18:D6:C7:0B:CF:E3", "5C:C5:D4:04:5E:A7"
		var aps []struct {
			BoxID      int64
			Name       string
			MacAddress string
			LocationID wnms.LocationID
			Radios     []struct {
				MacAddress string
				Channel    int
				SSID       string
			}
		}
		waitFor(t, "the AP registered", func() bool {
			e.Admin.Expect(200, "GET", "/v2/devices/aps", nil).Decode(t, &aps)
			return len(aps) == 1
		})
		if a := aps[0]; a.MacAddress != apMAC || a.Name != "lobby" || a.LocationID.ID != site.ID.ID || len(a.Radios) != 1 ||
			a.Radios[0].Channel != 1 || a.Radios[0].SSID != "OpenWrt" {
			t.Fatalf("the AP: %+v", a)
		}
		var stats struct {
			Radios []struct {
				BSSID   string
				Samples []struct {
					Channel  *int
					Clients  *int
					NoiseDBm *float64
				}
			}
		}
		waitFor(t, "the radio's samples", func() bool {
			e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/devices/manageddevices/%d/radiostatistics", aps[0].BoxID), nil).Decode(t, &stats)
			return len(stats.Radios) == 1 && len(stats.Radios[0].Samples) > 0
		})
		if s := stats.Radios[0].Samples[0]; *s.Channel != 1 || *s.Clients != 2 || s.NoiseDBm != nil {
			t.Errorf("the radio's sample: channel %v clients %v noise %v (the exporter's 0 is not known)", *s.Channel, *s.Clients, s.NoiseDBm)
		}
		var trend struct{ Samples []struct{ Value float64 } }
		waitFor(t, "the client's signal", func() bool {
			r := e.Admin.Do("GET", "/V5/devices/clients/statistics/trend?type=clientrssi&macaddress="+url.QueryEscape(client), nil)
			if r.Status == 404 { // its client state is written behind the samples
				return false
			}
			r.Decode(t, &trend)
			return len(trend.Samples) == 1
		})
		if trend.Samples[0].Value != -46 {
			t.Errorf("the client's RSSI: %v, want -46", trend.Samples[0].Value)
		}
		e.Admin.Expect(200, "GET", "/V5/devices/clients/statistics/trend?type=clientdatarate&macaddress="+url.QueryEscape(client), nil).Decode(t, &trend)
		if len(trend.Samples) != 1 || trend.Samples[0].Value != 72200 {
			t.Errorf("the client's rate: %+v, want 72,200 kbps (the AP's transmit rate)", trend.Samples)
		}

		// Down after two failed polls, up again after one good one.
		after, err := e.Store.LastEventID(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		failing.Store(true)
		waitFor(t, "sourceDown", func() bool { return hasEvent(t, e, after, wnms.EventSourceDown) })
		var status struct {
			Pollers []struct {
				Name, State string
				LastError   *string
				LastPoll    *int64
				Radios      int
				Clients     int
			}
		}
		waitFor(t, "the status down", func() bool {
			e.Admin.Expect(200, "GET", "/V5/datasources/status", nil).Decode(t, &status)
			return len(status.Pollers) == 1 && status.Pollers[0].State == "down"
		})
		if p := status.Pollers[0]; p.Name != "lobby" || p.LastError == nil || !strings.Contains(*p.LastError, "503") ||
			p.LastPoll == nil || p.Radios != 1 || p.Clients != 2 {
			t.Errorf("status while down: %+v", p)
		}
		failing.Store(false)
		waitFor(t, "sourceUp", func() bool { return hasEvent(t, e, after, wnms.EventSourceUp) })
		waitFor(t, "the status up", func() bool {
			e.Admin.Expect(200, "GET", "/V5/datasources/status", nil).Decode(t, &status)
			return len(status.Pollers) == 1 && status.Pollers[0].State == "up" && status.Pollers[0].LastError == nil
		})

		// Removed, it stops.
		e.Admin.Expect(200, "PUT", "/V5/datasources", map[string]any{
			"radius": map[string]any{"upstreams": []any{}, "accountingUpstreams": []any{}}, "sources": []any{}, "pollers": []any{}})
		// Its loop gives up the lease as it ends: after that nothing polls.
		waitFor(t, "the poller stopped", func() bool {
			states, err := e.Store.PollerStates(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			_, leased := states["lobby"]
			return len(m.Status()) == 0 && !leased
		})
	})
}

func hasEvent(t *testing.T, e *apitest.Env, after int64, kind string) bool {
	t.Helper()
	evs, err := e.Store.EventsAfter(context.Background(), after, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Kind == kind && strings.Contains(string(ev.Data), `"name":"lobby"`) {
			return true
		}
	}
	return false
}

// waitFor polls cond every 50 ms for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runPollers stores pollers as the customer's (no RADIUS, no sources) and
// runs a manager of them, each polled every interval, until the test ends.
func runPollers(t *testing.T, e *apitest.Env, interval time.Duration, pollers []any) *poller.Manager {
	t.Helper()
	e.Admin.Expect(200, "PUT", "/V5/datasources", map[string]any{
		"radius": map[string]any{"upstreams": []any{}, "accountingUpstreams": []any{}}, "sources": []any{}, "pollers": pollers})
	m := &poller.Manager{Store: e.Store, Ingest: e.API.Telemetry, Notify: e.API.Hub, Holder: "test",
		Log: slog.New(slog.DiscardHandler)}
	poller.SetInterval(m, interval)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.Run(ctx, 100*time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-done })
	return m
}
