package poller_test

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/ubus/ubustest"
	"github.com/wnms/wnms/internal/wnms"
)

// A ubus poller of an OpenWrt AP (recorded replies of a real one, served
// by ubustest with rpcd's and uhttpd's behaviour) registers the AP with
// its radio, stores the radio's utilisation, noise and power and the
// client's signal, SNR and rate; follows the AP's events (a join is a
// Success, a leave a Disassociated event) and through them finds a fast
// roam between two APs; logs in again when rpcd drops its session, and
// follows a rebooted AP's new interface list.
func TestUbusPoller(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		ap1 := ubustest.New(t, ubustest.Config{})
		ap2 := ubustest.New(t, ubustest.Config{})
		// The second AP: another BSSID, the same SSID, channel 6.
		status := strings.NewReplacer(`"bssid": "c8:75:f4:74:c6:92"`, `"bssid": "c8:75:f4:74:d0:01"`,
			`"channel": 1,`, `"channel": 6,`, `"freq": 2412,`, `"freq": 2437,`).Replace(string(ubustest.File("rax3000m/hostapd_get_status.json")))
		if !strings.Contains(status, "d0:01") || !strings.Contains(status, `"channel": 6`) {
			t.Fatalf("the second AP's status was not made: %s", status)
		}
		ap2.SetReply("hostapd.phy0-ap0", "get_status", []byte(status))
		pollers := []any{}
		for i, ap := range []*ubustest.Server{ap1, ap2} {
			pollers = append(pollers, map[string]any{"name": fmt.Sprintf("ap-%d", i+1), "kind": "ubus", "url": ap.URL,
				"username": ubustest.Username, "password": ubustest.Password,
				"locationId": map[string]any{"type": "locallocationid", "id": site.ID.ID}})
		}
		runPollers(t, e, 200*time.Millisecond, pollers)

		const bssid1, bssid2, client = "C8:75:F4:74:C6:92", "C8:75:F4:74:D0:01", "22:D3:75:23:7C:55"
		var aps []struct {
			BoxID      int64
			Name       string
			MacAddress string
			Model      string
			Radios     []struct {
				MacAddress string
				Channel    int
			}
		}
		waitFor(t, "both APs registered", func() bool {
			e.Admin.Expect(200, "GET", "/v2/devices/aps?sortcolumn=devicename&sortascending=true", nil).Decode(t, &aps)
			return len(aps) == 2
		})
		if a := aps[0]; a.Name != "ap-1" || a.MacAddress != bssid1 || a.Model != "MediaTek MT7981" || len(a.Radios) != 1 || a.Radios[0].Channel != 1 {
			t.Fatalf("the first AP: %+v", a)
		}
		var stats struct {
			Radios []struct {
				Samples []struct {
					UtilizationPct *float64
					NoiseDBm       *float64
					TxPowerDBm     *int
					Clients        *int
				}
			}
		}
		waitFor(t, "the radio's samples", func() bool {
			e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/devices/manageddevices/%d/radiostatistics", aps[0].BoxID), nil).Decode(t, &stats)
			return len(stats.Radios) == 1 && len(stats.Radios[0].Samples) > 0
		})
		// The recorded get_status: airtime busy 12,986 of 119,966 ms.
		if s := stats.Radios[0].Samples[0]; s.UtilizationPct == nil || math.Abs(*s.UtilizationPct-100*12986.0/119966) > 0.01 ||
			*s.NoiseDBm != -83 || *s.TxPowerDBm != 20 || *s.Clients != 1 {
			t.Errorf("the radio's sample: %+v", s)
		}
		for _, tc := range []struct {
			typ  string
			want float64
		}{{"clientrssi", -20}, {"clientsnr", 63}, {"clientdatarate", 229400}} {
			var trend struct{ Samples []struct{ Value float64 } }
			waitFor(t, tc.typ, func() bool {
				r := e.Admin.Do("GET", "/V5/devices/clients/statistics/trend?type="+tc.typ+"&macaddress="+url.QueryEscape(client), nil)
				if r.Status == 404 {
					return false
				}
				r.Decode(t, &trend)
				return len(trend.Samples) > 0
			})
			if got := trend.Samples[0].Value; got != tc.want {
				t.Errorf("%s: %v, want %v", tc.typ, got, tc.want)
			}
		}

		// Events: the client leaves ap-1 and joins ap-2 with a fast
		// transition 150 ms later.
		wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer wcancel()
		for _, ap := range []*ubustest.Server{ap1, ap2} {
			if err := ap.WaitSubscribers(wctx, "hostapd.phy0-ap0", 1); err != nil {
				t.Fatalf("no subscriber: %v", err)
			}
		}
		const roamer = "02:00:00:00:77:01"
		ap1.Publish("hostapd.phy0-ap0", "assoc", map[string]any{"address": strings.ToLower(roamer), "target": strings.ToLower(bssid1), "signal": -71, "freq": 2412})
		ap1.Publish("hostapd.phy0-ap0", "sta-authorized", map[string]any{"address": strings.ToLower(roamer), "ifname": "phy0-ap0", "auth-alg": "sae"})
		waitFor(t, "the Success on ap-1", func() bool { return len(events(t, e, roamer, "Success")) == 1 })
		ap1.Publish("hostapd.phy0-ap0", "disassoc", map[string]any{"address": strings.ToLower(roamer), "ifname": "phy0-ap0"})
		waitFor(t, "the Disassociated on ap-1", func() bool { return len(events(t, e, roamer, "Intermediate")) == 1 })
		ap2.Publish("hostapd.phy0-ap0", "assoc", map[string]any{"address": strings.ToLower(roamer), "target": strings.ToLower(bssid2), "signal": -55, "freq": 2437})
		time.Sleep(150 * time.Millisecond) // the roam's latency, measured by the server's clock
		ap2.Publish("hostapd.phy0-ap0", "sta-authorized", map[string]any{"address": strings.ToLower(roamer), "ifname": "phy0-ap0", "auth-alg": "ft"})
		var roam map[string]any
		waitFor(t, "the roam", func() bool {
			for _, ev := range events(t, e, roamer, "Intermediate") {
				if ev["categoryCode"] == float64(wnms.CategoryRoaming) {
					roam = ev
					return true
				}
			}
			return false
		})
		if roam["fromBssid"] != bssid1 || roam["bssid"] != bssid2 || roam["fastTransition"] != true || roam["rssiBefore"] != float64(-71) ||
			roam["rssiAfter"] != float64(-55) || roam["suboptimalRoam"] != false || roam["associatedAPName"] != "ap-2" {
			t.Errorf("the roam: %v", roam)
		}
		if l := roam["roamLatencyMs"].(float64); l < 150 || l > 5000 {
			t.Errorf("the roam's latency: %v ms", l)
		}

		// rpcd drops the session: the poller logs in again and goes on.
		logins := ap1.Requests("session", "login")
		ap1.ExpireSessions()
		waitFor(t, "a new login", func() bool { return ap1.Requests("session", "login") > logins })
		polls := ap1.Requests("hostapd.phy0-ap0", "get_status")
		waitFor(t, "polls after the login", func() bool { return ap1.Requests("hostapd.phy0-ap0", "get_status") > polls+1 })

		// A reboot renames the interface: the poller and the event stream
		// follow it.
		ap1.Reboot("phy1-ap0")
		if err := ap1.WaitSubscribers(wctx, "hostapd.phy1-ap0", 1); err != nil {
			t.Fatalf("no subscriber after the reboot: %v", err)
		}
		waitFor(t, "polls of the new interface", func() bool { return ap1.Requests("hostapd.phy1-ap0", "get_status") > 0 })
		var st struct {
			Pollers []struct {
				Name, State string
				LastError   *string
			}
		}
		e.Admin.Expect(200, "GET", "/V5/datasources/status", nil).Decode(t, &st)
		for _, p := range st.Pollers {
			if p.State != "up" {
				t.Errorf("poller %s is %s", p.Name, p.State)
			}
		}

		// An AP that answers garbage is down after two polls, and up again
		// once it answers; the other AP stays up meanwhile.
		after, err := e.Store.LastEventID(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ap2.SetGarbage([]byte("<html>502 Bad Gateway</html>"))
		waitFor(t, "the garbled AP down", func() bool {
			e.Admin.Expect(200, "GET", "/V5/datasources/status", nil).Decode(t, &st)
			return st.Pollers[1].State == "down"
		})
		if st.Pollers[0].State != "up" || st.Pollers[1].LastError == nil {
			t.Errorf("status with ap-2 garbled: %+v", st.Pollers)
		}
		ap2.SetGarbage(nil)
		waitFor(t, "the AP up again", func() bool {
			e.Admin.Expect(200, "GET", "/V5/datasources/status", nil).Decode(t, &st)
			return st.Pollers[1].State == "up"
		})
		var kinds []string
		waitFor(t, "ap-2's down and up", func() bool { // the events are stored behind the state
			evs, err := e.Store.EventsAfter(context.Background(), after, 100)
			if err != nil {
				t.Fatal(err)
			}
			kinds = nil
			for _, ev := range evs {
				if strings.Contains(string(ev.Data), `"name":"ap-2"`) {
					kinds = append(kinds, ev.Kind)
				}
			}
			return len(kinds) >= 2
		})
		if strings.Join(kinds, ",") != wnms.EventSourceDown+","+wnms.EventSourceUp {
			t.Errorf("ap-2's events: %v", kinds)
		}
	})
}

// events lists a client's events of one type, as the API answers them.
func events(t *testing.T, e *apitest.Env, mac, typ string) []map[string]any {
	t.Helper()
	var page struct{ ClientEvents []map[string]any }
	e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/devices/clientevents/%s/0/100?clienteventtype=%s", mac, typ), nil).Decode(t, &page)
	return page.ClientEvents
}
