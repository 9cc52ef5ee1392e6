package telemetry_test

import (
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// Traffic a data source attributes to an AP is its heartbeat: an AP
// announced down comes up, once whatever the replicas racing, and one up
// stays up; lastSeen never goes back; the record is not changed; APs of
// another customer and APs not named are left alone.
func TestAPHeartbeatFromTraffic(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			cfg := apitest.StoreConfig(t, b)
			e1 := apitest.NewAt(t, b, cfg)
			e2 := apitest.NewAt(t, b, cfg)
			clock := apitest.NewClock(time.Now())
			e1.UseClock(clock)
			e2.UseClock(clock)
			var mu sync.Mutex
			ups := map[string]int{}
			for _, e := range []*apitest.Env{e1, e2} {
				e.API.Telemetry.OnAPChange = func(ap wnms.AP, up bool) {
					if up {
						mu.Lock()
						ups[ap.Name]++
						mu.Unlock()
					}
				}
			}
			e1.Admin.Expect(200, "POST", "/V5/ingest/aps", body(apRecord(1, -1, ""), apRecord(2, -1, "")))
			_, stranger := e1.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
			stranger.Expect(200, "POST", "/V5/ingest/aps", body(apRecord(3, -1, "")))
			list := func(c *apitest.Client) map[string]wnms.AP {
				t.Helper()
				var aps []wnms.AP
				c.Expect(200, "GET", "/v2/devices/aps", nil).Decode(t, &aps)
				out := map[string]wnms.AP{}
				for _, a := range aps {
					out[a.Name] = a
				}
				return out
			}
			before, theirs := list(e1.Admin), list(stranger)["AP 003"]
			mu.Lock()
			clear(ups)
			mu.Unlock()
			clock.Advance(telemetry.DefaultAPTimeout + time.Second)
			e1.API.Telemetry.CheckAPs(t.Context())

			// AP 001 is heard from, through both replicas at once; the
			// other customer's box id is named too, by customer 1.
			box1 := before["AP 001"].BoxID
			var wg sync.WaitGroup
			for _, e := range []*apitest.Env{e1, e2, e1, e2} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := e.API.Telemetry.HeartbeatAPs(t.Context(), 1, []int64{box1, theirs.BoxID}); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			now := clock.Now().UnixMilli()
			after := list(e1.Admin)
			if a := after["AP 001"]; !a.ActiveStatus || a.LastSeen != now || a.UpSince != now || a.Name != "AP 001" ||
				len(a.Radios) != 1 || a.IPAddress != before["AP 001"].IPAddress {
				t.Errorf("AP 001 after its traffic: %+v", a)
			}
			if a := after["AP 002"]; a.ActiveStatus || a.LastSeen != before["AP 002"].LastSeen {
				t.Errorf("AP 002, silent: %+v", a)
			}
			if a := list(stranger)["AP 003"]; a.LastSeen != theirs.LastSeen {
				t.Errorf("another customer's AP was touched: %+v", a)
			}
			mu.Lock()
			if ups["AP 001"] != 1 || len(ups) != 1 {
				t.Errorf("announced up: %v", ups)
			}
			mu.Unlock()

			// Up, it stays up: a later heartbeat moves lastSeen on and
			// keeps upSince; an earlier one (a replica's clock behind)
			// changes nothing.
			clock.Advance(time.Minute)
			if err := e2.API.Telemetry.HeartbeatAPs(t.Context(), 1, []int64{box1}); err != nil {
				t.Fatal(err)
			}
			clock.Advance(-30 * time.Second)
			if err := e1.API.Telemetry.HeartbeatAPs(t.Context(), 1, []int64{box1}); err != nil {
				t.Fatal(err)
			}
			if a := list(e1.Admin)["AP 001"]; a.LastSeen != now+time.Minute.Milliseconds() || a.UpSince != now {
				t.Errorf("AP 001 after two more heartbeats: lastSeen %d upSince %d, want %d %d", a.LastSeen, a.UpSince,
					now+time.Minute.Milliseconds(), now)
			}
			mu.Lock()
			if ups["AP 001"] != 1 {
				t.Errorf("announced up again: %v", ups)
			}
			mu.Unlock()
		})
	}
}
