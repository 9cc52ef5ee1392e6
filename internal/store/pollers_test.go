package store_test

import (
	"context"
	"testing"

	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// One server holds a poller's lease at a time: it renews it, another
// takes it once it has run out or been released, and the first then
// has it no more.
func TestPollerLeases(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		st := storetest.OpenStore(t, b)
		ctx := context.Background()
		for i, step := range []struct {
			customer   int64
			name, who  string
			now, until int64
			release    bool
			want       bool
		}{
			{1, "ap", "a", 1000, 2000, false, true},
			{1, "ap", "b", 1500, 2500, false, false}, // a holds it
			{1, "ap", "a", 1900, 3000, false, true},  // renewed
			{2, "ap", "b", 1900, 3000, false, true},  // another customer's poller of that name
			{1, "ap", "b", 2900, 4000, false, false},
			{1, "ap", "b", 3001, 4000, false, true}, // run out
			{1, "ap", "a", 3002, 5000, false, false},
			{1, "ap", "b", 0, 0, true, false},
			{1, "ap", "a", 3003, 5000, false, true}, // released
		} {
			if step.release {
				if err := st.ReleasePoller(ctx, step.customer, step.name, step.who); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := st.ClaimPoller(ctx, step.customer, step.name, step.who, step.now, step.until,
				wnms.PollerState{State: "up", LastPoll: step.now, Radios: 2, Stations: i})
			if err != nil || got != step.want {
				t.Errorf("step %d: %s claims %d/%s at %d: %v, %v; want %v", i, step.who, step.customer, step.name, step.now, got, err, step.want)
			}
		}
		// The holder's last claim recorded its state.
		states, err := st.PollerStates(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if s := states["ap"]; len(states) != 1 || s.Holder != "a" || s.Expires != 5000 || s.State != "up" || s.LastPoll != 3003 || s.Stations != 8 {
			t.Errorf("states: %+v", states)
		}
	})
}
