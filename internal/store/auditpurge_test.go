package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// The audit purge deletes every customer's records older than the cut
// and nothing newer; the event purge deletes the events older than the
// cut up to the first newer one in commit order (one committed after a
// newer event waits for the next purge) and keeps the rest.
func TestAuditAndEventPurges(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := storetest.OpenStore(t, b)
		const cut = int64(1_000_000)
		type rec struct {
			customer int64
			ts       int64
		}
		records := []rec{{1, cut - 5}, {1, cut + 5}, {2, cut - 1}, {7, cut - 9}, {7, cut}, {2, cut + 1}}
		for _, r := range records {
			if err := st.AppendAudit(ctx, &wnms.AuditRecord{CustomerID: r.customer, Timestamp: r.ts, Method: "PUT", Path: "/x",
				ChangedFields: []string{}}); err != nil {
				t.Fatal(err)
			}
		}
		n, err := st.PurgeAudit(ctx, cut)
		if err != nil || n != 3 {
			t.Fatalf("audit purge: %d %v, want 3", n, err)
		}
		for customer, want := range map[int64][]int64{1: {cut + 5}, 2: {cut + 1}, 7: {cut}} {
			got, total, err := st.AuditRecords(ctx, wnms.AuditQuery{CustomerID: customer, From: -1, To: -1, Limit: 10})
			if err != nil || total != len(want) || len(got) != len(want) || got[0].Timestamp != want[0] {
				t.Errorf("customer %d after the purge: %+v (%d, %v), want %v", customer, got, total, err, want)
			}
		}

		// Events in commit order: two old, a new one, an old one after it.
		var evs []*wnms.Event
		for _, ts := range []int64{cut - 10, cut - 5, cut + 3, cut - 1, cut + 4} {
			evs = append(evs, &wnms.Event{CustomerID: 1, Kind: "configChanged", Timestamp: ts, Data: json.RawMessage(`{}`)})
		}
		for _, e := range evs {
			if err := st.AppendEvents(ctx, []*wnms.Event{e}); err != nil {
				t.Fatal(err)
			}
		}
		left := func() []int64 {
			t.Helper()
			got, err := st.EventsAfter(ctx, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			var ts []int64
			for _, e := range got {
				ts = append(ts, e.Timestamp)
			}
			return ts
		}
		if n, err := st.PurgeEvents(ctx, cut); err != nil || n != 2 {
			t.Fatalf("event purge: %d %v, want 2", n, err)
		}
		if got := left(); len(got) != 3 || got[0] != cut+3 || got[1] != cut-1 || got[2] != cut+4 {
			t.Errorf("events after the purge: %v", got)
		}
		// Later, everything is old: all go.
		if n, err := st.PurgeEvents(ctx, cut+100); err != nil || n != 3 || len(left()) != 0 {
			t.Errorf("second purge: %d %v, left %v", n, err, left())
		}
		if n, err := st.PurgeEvents(ctx, cut+100); err != nil || n != 0 {
			t.Errorf("purge of nothing: %d %v", n, err)
		}
	})
}
