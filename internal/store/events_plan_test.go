package store_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
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

// TestSlotQueriesUseTheirIndexes: a slot's clients (the baseline
// refresh's attempts and sample sums, and its failing clients) come from
// the primary keys of slot_conn_clients and slot_perf_clients in client
// order, so that no engine sorts or groups the slot (SQLite once did, in
// memory: 3.9 GB for six readers of a slot of 2,000,000 events); the
// statements that recompute one client's rows of a slot read its events
// and samples through the client's indexes, not the slot's.
func TestSlotQueriesUseTheirIndexes(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		st := storetest.OpenStore(t, b)
		attempts, failing, samples, recompute, err := st.SlotQueryPlansForTest(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ plan, index string }{
			{attempts, "slot_conn_clients_pkey"}, {failing, "slot_conn_clients_pkey"}, {samples, "slot_perf_clients_pkey"},
		} {
			index := c.index
			if b == storetest.SQLite {
				index = "USING PRIMARY KEY (slot=? AND customer_id=?)"
			}
			if !strings.Contains(c.plan, index) {
				t.Errorf("plan without %s:\n%s", index, c.plan)
			}
			if strings.Contains(c.plan, "TEMP B-TREE") || strings.Contains(c.plan, "Sort") {
				t.Errorf("plan that sorts the slot:\n%s", c.plan)
			}
		}
		for _, indexes := range [][]string{{"client_events_mac"}, {"client_stats_mac", "client_stats_rate"}} {
			if !slices.ContainsFunc(indexes, func(index string) bool { return strings.Contains(recompute, index) }) {
				t.Errorf("recomputing a client's rows without %s:\n%s", strings.Join(indexes, " or "), recompute)
			}
		}
	})
}

// TestSQLiteReadersSortInFiles: on SQLite a reader's sort or temporary
// table that outgrows its page cache goes to a temporary file, not to
// memory (a read that sorted a slot of 2,000,000 events took 1.1 GB);
// the writer keeps its statement journals in memory.
func TestSQLiteReadersSortInFiles(t *testing.T) {
	st := storetest.OpenStore(t, storetest.SQLite)
	reader, writer, err := st.TempStoresForTest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if reader != 1 || writer != 2 {
		t.Fatalf("temp_store: reader %d, writer %d; want 1 (file) and 2 (memory)", reader, writer)
	}
}

// TestClientLocationsLookUpEachClient: where a batch's clients were is
// read with one lookup of the primary key a client, not by walking every
// client of the customer (which SQLite chose, through the customer's
// last-seen index, when the keys were an IN list).
func TestClientLocationsLookUpEachClient(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := storetest.OpenStore(t, b)
		// Clients of two customers, and the statistics of a table that
		// holds them (PostgreSQL plans an empty table otherwise).
		for customer := int64(1); customer <= 2; customer++ {
			updates := map[int64]wnms.ClientUpdate{}
			for i := range int64(1000) {
				updates[customer*10_000+i] = wnms.ClientUpdate{MacAddress: fmt.Sprintf("02:00:00:%02X:%02X:%02X", customer, i>>8, i&255),
					Timestamp: 1_700_000_000_000 + i, LocationID: 1}
			}
			if err := st.UpdateClients(ctx, customer, updates); err != nil {
				t.Fatal(err)
			}
		}
		if b == storetest.Postgres {
			if err := st.ExecForTest(ctx, `ANALYZE clients`); err != nil {
				t.Fatal(err)
			}
		}
		plan, err := st.ClientLocationsPlanForTest(ctx, []int64{10_001, 10_002, 10_003})
		if err != nil {
			t.Fatal(err)
		}
		want := "clients_pkey"
		if b == storetest.SQLite {
			want = "USING INDEX sqlite_autoindex_clients_1 (box_id=?)"
		}
		if !strings.Contains(plan, want) || strings.Contains(plan, "clients_last_seen") {
			t.Fatalf("plan without %s:\n%s", want, plan)
		}
	})
}

// TestEventReadsUseAnIndex: every read of client events is answered
// through the index that docs/bench-indexes.md names for it, never by
// reading the whole table (or a whole day partition), on both engines,
// over a store that holds events of several days, types and clients with
// the planner's statistics of them. The slot's reads are
// TestSlotQueriesUseTheirIndexes'.
func TestEventReadsUseAnIndex(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := storetest.OpenStore(t, b)
		now := st.Now().UnixMilli()
		var evs []*wnms.ClientEvent
		var bodies [][]byte
		for i := range 6000 {
			typ := []string{wnms.Success, wnms.Success, wnms.Failure, "Intermediate"}[i%4]
			evs = append(evs, &wnms.ClientEvent{EventID: fmt.Sprintf("e%d", i), MacAddress: fmt.Sprintf("02:00:00:00:%02X:%02X", i%300/256, i%300%256),
				Timestamp: now - int64(i)*60_000, Type: typ, SSID: "corp", Channel: 36, Protocol: "A", LocationID: int64(1 + i%3), Dot11AC: i%2 == 0})
			bodies = append(bodies, []byte(`{}`))
		}
		if _, err := st.InsertClientEvents(ctx, 1, evs, bodies, nil); err != nil {
			t.Fatal(err)
		}
		plans, err := st.EventReadPlansForTest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			"event page": "client_events_mac", "event count": "client_events_mac",
			"connection logs Success": "client_events_connlog", "connection logs Failure": "client_events_connlog",
			"stored event ids": "client_events_event_id",
			// A window of time: on SQLite the time index; on PostgreSQL the
			// window's day partitions, and in each an index (BRIN on time,
			// or the slot's index of the attempts).
			"associations": "client_events_", "daily clients": "client_events_", "distinct clients": "client_events_",
		}
		if b == storetest.SQLite {
			want["purge"] = "client_events_ts"
			want["associations"] = "client_events_ts"
		}
		if len(plans) != len(want) {
			t.Errorf("%d plans, want %d", len(plans), len(want))
		}
		for name, plan := range plans {
			t.Logf("%s:\n%s", name, plan)
			full := strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "SCAN client_events\n") ||
				strings.HasSuffix(plan, "SCAN client_events")
			if !strings.Contains(plan, want[name]) || full {
				t.Errorf("%s: plan without %s, or reading the whole table:\n%s", name, want[name], plan)
			}
		}
	})
}

// TestEventIndexesHoldWhatTheirReadsNeed: ingest writes an entry in every
// index of client_events for every event, so each holds only what a read
// needs (docs/bench-indexes.md): the connection-log index only connection
// attempts (Success and Failure events, the only ones its reads ask for);
// no slot index (a baseline slot reads the per-client rows ingest keeps
// in slot_conn_clients, never the slot's events); on PostgreSQL no primary key (no read looked events up
// by it) and a BRIN index on time inside the day partitions instead of a
// B-tree; on SQLite the B-tree on time, through which retention finds the
// oldest events. The unique eventId index and the client's index stay.
func TestEventIndexesHoldWhatTheirReadsNeed(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		indexes, err := storetest.OpenStore(t, b).EventIndexesForTest(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"client_events_event_id", "client_events_mac", "client_events_ts", "client_events_connlog"}
		var names []string
		for name := range indexes {
			names = append(names, name)
		}
		slices.Sort(names)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("indexes %v, want %v", names, want)
		}
		attempts := regexp.MustCompile(`event_type IN \('Success', 'Failure'\)|event_type = ANY \(ARRAY\['Success'::text, 'Failure'::text\]\)`)
		for _, name := range []string{"client_events_connlog"} {
			if !attempts.MatchString(indexes[name]) {
				t.Errorf("%s holds more than connection attempts: %s", name, indexes[name])
			}
		}
		brin := strings.Contains(indexes["client_events_ts"], "USING brin")
		if brin != (b == storetest.Postgres) {
			t.Errorf("client_events_ts: %s", indexes["client_events_ts"])
		}
	})
}
