package store_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// Storing a slot's observations marks it for the anomaly evaluation; a
// mark is cleared only at the version the evaluation looked at, so a slot
// stored again meanwhile is looked at again. An anomaly keeps its clients
// and is recorded once.
func TestAnomalyPendingSlots(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := storetest.OpenStore(t, b)
		const slot, later = 1_795_000_500_000, 1_795_000_500_000 + 900_000
		for _, s := range []struct{ slot, version int64 }{{slot, 7}, {later, 8}} {
			if err := st.ReplaceSlotObs(ctx, 1, s.slot, nil, nil, nil, s.version); err != nil {
				t.Fatal(err)
			}
		}
		got, err := st.PendingAnomalySlots(ctx, 1, later, 10)
		if diff := cmp.Diff([]wnms.DirtySlot{{Slot: later, Version: 8}, {Slot: slot, Version: 7}}, got); err != nil || diff != "" {
			t.Fatalf("pending (-want +got):\n%s %v", diff, err)
		}
		if got, _ := st.PendingAnomalySlots(ctx, 1, slot, 10); len(got) != 1 || got[0].Slot != slot {
			t.Fatalf("pending up to the first slot: %v", got)
		}
		if got, _ := st.PendingAnomalySlots(ctx, 2, later, 10); len(got) != 0 {
			t.Fatalf("another customer's: %v", got)
		}
		// The first slot is stored again (version 9) while being evaluated.
		if err := st.ReplaceSlotObs(ctx, 1, slot, nil, nil, nil, 9); err != nil {
			t.Fatal(err)
		}
		if err := st.ClearPendingAnomalySlots(ctx, 1, got); err != nil {
			t.Fatal(err)
		}
		got, err = st.PendingAnomalySlots(ctx, 1, later, 10)
		if diff := cmp.Diff([]wnms.DirtySlot{{Slot: slot, Version: 9}}, got); err != nil || diff != "" {
			t.Fatalf("pending after clearing (-want +got):\n%s %v", diff, err)
		}
		if ids, err := st.BaselineCustomers(ctx, later+1); err != nil || len(ids) != 1 || ids[0] != 1 {
			t.Fatalf("customers to evaluate: %v %v", ids, err)
		}

		a := wnms.Anomaly{CustomerID: 1, LocationID: 5, Kind: "clientsperformance", Slot: slot, Observation: 90, Baseline: 1,
			Threshold: 20, RaisedAt: 3, Affected: 9, Attempting: 10}
		for i, want := range []bool{true, false} {
			b := a
			b.Affected = 9 + i // a second record changes nothing
			if inserted, err := st.RecordAnomaly(ctx, b); err != nil || inserted != want {
				t.Fatalf("record %d: %v %v", i, inserted, err)
			}
		}
		list, err := st.Anomalies(ctx, 1, nil, 0, later)
		if diff := cmp.Diff([]wnms.Anomaly{a}, list); err != nil || diff != "" {
			t.Fatalf("anomalies (-want +got):\n%s %v", diff, err)
		}
	})
}
