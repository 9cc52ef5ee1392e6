package baseline_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// TestSlotReadMemoryBounded: reading the connectivity baseline of a slot
// that is out of date (as the slot being filled always is) allocates what
// the slot's clients need, not what its events hold: a slot of 50,000
// events of 100 clients is read with about the bytes a slot of 1,000
// events of the same clients takes, on both engines. (The read once
// recomputed the slot from its events: +47 MB for 50,000 of them.)
func TestSlotReadMemoryBounded(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		ctx := context.Background()
		floor := e.NewLocation(t, 0, wnms.FloorLocation, "Floor", 1)
		now := time.Now()
		small := now.Add(-3 * time.Hour).Truncate(wnms.SlotDuration)
		large := now.Add(-2 * time.Hour).Truncate(wnms.SlotDuration)
		ms := wnms.SlotDuration.Milliseconds()
		next := 0
		// fill ingests n events of 100 clients into the slot at slot: every
		// tenth a Failure, two bands.
		fill := func(slot time.Time, n int) {
			for n > 0 {
				k := min(n, 5000)
				events, bodies := make([]*wnms.ClientEvent, k), make([][]byte, k)
				for i := range events {
					c := next % 100
					ev := &wnms.ClientEvent{EventID: fmt.Sprintf("m%d", next), MacAddress: fmt.Sprintf("aa:bb:cc:00:01:%02x", c),
						Timestamp: slot.UnixMilli() + int64(next)%ms, Type: wnms.Success, LocationID: floor.ID.ID, SSID: "corp",
						Channel: []int{6, 36}[next%2], Protocol: "A"}
					if next%10 == 0 {
						code := 1 + next%3
						ev.Type, ev.Code = wnms.Failure, &code
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
		// read answers the bytes the least of three reads of the slot
		// allocated, each after one more event (so that the slot is out of
		// date and the read brings it up to date).
		read := func(slot time.Time) uint64 {
			least := uint64(0)
			for range 3 {
				fill(slot, 1)
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/clientsconnectivity?locationid=%d&fromtime=%d&totime=%d",
					floor.ID.ID, slot.UnixMilli(), slot.UnixMilli()+1), nil)
				runtime.ReadMemStats(&after)
				if n := after.TotalAlloc - before.TotalAlloc; least == 0 || n < least {
					least = n
				}
			}
			return least
		}
		fill(small, 1_000)
		fill(large, 50_000)
		few, many := read(small), read(large)
		t.Logf("a read of a slot of 1,000 events allocated %d KB, of 50,000 events %d KB", few>>10, many>>10)
		if many > few+few/2+256<<10 {
			t.Errorf("a read of a slot of 50,000 events allocated %d KB, one of 1,000 events %d KB: it grows with the events", many>>10, few>>10)
		}
	})
}
