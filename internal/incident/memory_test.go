package incident_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// TestDescribeMemoryBounded: an incident's cause, scope and evidence are
// counted by the database, so grouping an incident over a slot of 50,000
// events of 2,000 clients allocates about what one over 1,000 events of the
// same clients does, on both engines.
func TestDescribeMemoryBounded(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		ctx := context.Background()
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		floor := e.NewLocation(t, site.ID.ID, wnms.FloorLocation, "Floor", 1)
		now := time.Now()
		ms := wnms.SlotDuration.Milliseconds()
		small := now.Add(-6 * time.Hour).Truncate(wnms.SlotDuration)
		large := now.Add(-3 * time.Hour).Truncate(wnms.SlotDuration)
		e.API.Incidents.EvaluatedThrough = func(context.Context, int64) (int64, error) { return now.UnixMilli(), nil }
		next := 0
		// fill ingests n events of 2,000 clients into the slot at slot:
		// every other one a Failure 2/203, two bands, two SSIDs.
		fill := func(slot time.Time, n int) {
			for n > 0 {
				k := min(n, 5000)
				events, bodies := make([]*wnms.ClientEvent, k), make([][]byte, k)
				for i := range events {
					c := next % 2000
					ev := &wnms.ClientEvent{EventID: fmt.Sprintf("m%d", next), MacAddress: fmt.Sprintf("aa:bb:cc:00:%02x:%02x", c/256, c%256),
						Timestamp: slot.UnixMilli() + int64(next)%ms, Type: wnms.Success, LocationID: floor.ID.ID,
						SSID: []string{"corp", "guest"}[c%2], Channel: []int{6, 36}[next%2], Protocol: "A"}
					if c%2 == 0 {
						code, sub := 2, 203
						ev.Type, ev.Code, ev.SubCode = wnms.Failure, &code, &sub
					}
					events[i], bodies[i] = ev, fmt.Appendf(nil, `{"channel":%d}`, ev.Channel)
					next++
				}
				if _, err := e.Store.InsertClientEvents(ctx, wnms.OnPremCustomer, events, bodies, nil); err != nil {
					t.Fatal(err)
				}
				n -= k
			}
		}
		raised := int64(0)
		// group records an anomaly of the slot (raised later than any
		// before, so that it is read) and answers the bytes one grouping
		// allocated and how long it took.
		group := func(slot time.Time) (uint64, time.Duration) {
			raised++
			if _, err := e.Store.RecordAnomaly(ctx, wnms.Anomaly{CustomerID: 1, LocationID: floor.ID.ID, Kind: "clientsconnectivity",
				Slot: slot.UnixMilli(), Observation: 50, Threshold: 10, RaisedAt: now.Add(-time.Hour).UnixMilli() + raised}); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			if err := e.API.Incidents.Group(ctx, 1); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			return after.TotalAlloc - before.TotalAlloc, took
		}
		fill(small, 1_000)
		fill(large, 50_000)
		few, fewTook := group(small)
		many, manyTook := group(large)
		t.Logf("grouping an incident over 1,000 events allocated %d KB in %s, over 50,000 events %d KB in %s",
			few>>10, fewTook, many>>10, manyTook)
		if many > few+few/2+256<<10 {
			t.Errorf("grouping over 50,000 events allocated %d KB, over 1,000 events %d KB: it grows with the events", many>>10, few>>10)
		}
		var page struct {
			Incidents []wnms.Incident `json:"incidents"`
		}
		e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/incidents?fromtime=%d", small.UnixMilli()), nil).Decode(t, &page)
		if len(page.Incidents) != 2 || page.Incidents[0].Cause == nil || page.Incidents[0].Cause.Share != 1 ||
			page.Incidents[0].Scope.Type != wnms.ScopeSSID || page.Incidents[0].Scope.ID != "corp" {
			t.Errorf("incidents %+v", page.Incidents)
		}
	})
}
