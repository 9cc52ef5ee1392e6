package telemetry

import (
	"github.com/wnms/wnms/internal/wnms"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestCoalesceGrouping: coalescing a client's updates in batches (as
// ingest does within a request, and the store's write-behind across
// requests), then applying each batch to the state, gives exactly the
// state of applying the updates one by one in arrival order, whatever the
// batches. Timestamps repeat and go backwards; fields come and go.
func TestCoalesceGrouping(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	pick := func(vals ...string) string { return vals[r.IntN(len(vals))] }
	update := func() wnms.ClientUpdate {
		u := wnms.ClientUpdate{MacAddress: "AA", Timestamp: int64(1 + r.IntN(6)), Name: pick("", "", "n1", "n2"),
			Username: pick("", "u1", "u2"), IP: pick("", "", "i1", "i2"), EventType: pick("", "Success", "Failure"), BSSID: pick("b1", "b2", "b3"),
			LocationID: int64(r.IntN(3))}
		if r.IntN(2) == 0 {
			rssi, rate := -40-r.IntN(3), float64(r.IntN(3))
			u.RSSI, u.DataRate = &rssi, &rate
		}
		return u
	}
	for trial := range 20000 {
		n := 1 + r.IntN(8)
		ups := make([]wnms.ClientUpdate, n)
		for i := range ups {
			ups[i] = update()
		}
		state := update() // what is stored before
		one := state
		for _, u := range ups {
			one = wnms.Coalesce(one, u)
		}
		grouped := state
		for i := 0; i < n; {
			j := i + 1 + r.IntN(n-i)
			batch := ups[i]
			for _, u := range ups[i+1 : j] {
				batch = wnms.Coalesce(batch, u)
			}
			grouped = wnms.Coalesce(grouped, batch)
			i = j
		}
		if !reflect.DeepEqual(one.Stamped(), grouped.Stamped()) {
			t.Fatalf("trial %d: from %+v, updates %+v:\none by one %+v\nin batches %+v", trial, state, ups, one, grouped)
		}
	}
}

// TestCoalesceOlderChangesNothing: an update older than the state leaves
// it as it is, even where the state has no name or signal.
func TestCoalesceOlderChangesNothing(t *testing.T) {
	rssi := -50
	cur := wnms.ClientUpdate{MacAddress: "AA", Timestamp: 10, BSSID: "b1"}
	got := wnms.Coalesce(cur, wnms.ClientUpdate{MacAddress: "AA", Timestamp: 9, Name: "old", BSSID: "b2", RSSI: &rssi})
	if got.Name != "" || got.BSSID != "b1" || got.RSSI != nil {
		t.Errorf("older update changed the state: %+v", got)
	}
	got = wnms.Coalesce(cur, wnms.ClientUpdate{MacAddress: "AA", Timestamp: 10, BSSID: "b2", Name: "same"})
	if got.Name != "same" || got.BSSID != "b2" || got.RSSI != nil {
		t.Errorf("update as old as the state: %+v", got)
	}
}
