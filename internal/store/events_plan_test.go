package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// TestConnectionLogsUseTheirIndex: a client's Success (or Failure) events
// at 802.11ac APs come from the partial index client_events_connlog, on
// both engines.
func TestConnectionLogsUseTheirIndex(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		st := storetest.OpenStore(t, b)
		plan, err := st.EventPlanForTest(context.Background(), wnms.EventQuery{CustomerID: 1, MAC: "AA:BB:CC:DD:EE:FF",
			From: -1, To: -1, Limit: 100, Types: []string{wnms.Success}, Dot11ACOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "client_events_connlog") {
			t.Fatalf("plan without client_events_connlog:\n%s", plan)
		}
	})
}

// TestSlotQueriesUseTheTimeIndex: a baseline refresh reads one slot's
// events and samples through the ts indexes, not by walking all of a
// customer's rows.
func TestSlotQueriesUseTheTimeIndex(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		st := storetest.OpenStore(t, b)
		events, samples, err := st.SlotQueryPlansForTest(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(events, "client_events_ts") || !strings.Contains(samples, "client_stats_ts") {
			t.Fatalf("plans:\n%s\n%s", events, samples)
		}
	})
}
