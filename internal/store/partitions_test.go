package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

const day = 24 * time.Hour

// dayOf is t's UTC day as YYYY-MM-DD.
func dayOf(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// events makes n Success events of one client at ts, ts+1, ...
func events(mac string, ts time.Time, n int) ([]*wnms.ClientEvent, [][]byte) {
	var evs []*wnms.ClientEvent
	var bodies [][]byte
	for i := range n {
		evs = append(evs, &wnms.ClientEvent{EventID: fmt.Sprintf("%s-%d-%d", mac, ts.UnixMilli(), i), MacAddress: mac,
			BSSID: "00:11:74:00:00:01", Timestamp: ts.UnixMilli() + int64(i), Type: wnms.Success, SSID: "corp",
			Channel: 36, Protocol: "A", LocationID: wnms.UnknownLocation})
		bodies = append(bodies, []byte(`{}`))
	}
	return evs, bodies
}

// On PostgreSQL, telemetry lives in day partitions: the days ahead exist
// from the start, a batch of an older day makes its own, retention drops
// whole past days and keeps the rest, and a replica that wrote into a day
// another replica dropped makes it again instead of failing. On SQLite
// nothing is partitioned and maintenance does nothing.
func TestDayPartitions(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		cfg := storetest.StoreConfig(t, b)
		st := storetest.OpenStoreAt(t, cfg)
		now := time.Now().UTC()
		if b == storetest.SQLite {
			if st.Partitioned("client_events") {
				t.Fatal("SQLite reports partitions")
			}
			if dropped, err := st.MaintainPartitions(ctx, now.UnixMilli(), now.UnixMilli()); err != nil || dropped != nil {
				t.Fatalf("maintenance on SQLite: %v %v", dropped, err)
			}
			return
		}
		days, err := st.PartitionDaysForTest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"client_events", "client_stats", "ap_stats", "conn_obs", "perf_obs"} {
			for d := -1; d <= store.PartitionsAhead; d++ {
				if want := dayOf(now.Add(time.Duration(d) * day)); !slices.Contains(days[table], want) {
					t.Errorf("%s has no partition of %s: %v", table, want, days[table])
				}
			}
		}

		// A batch ten days old, one of today.
		old := now.Add(-10 * day)
		evs, bodies := events("AA:00:00:00:00:01", old, 3)
		if n, err := st.InsertClientEvents(ctx, 1, evs, bodies, nil); err != nil || n != 3 {
			t.Fatalf("old events: %d, %v", n, err)
		}
		evs, bodies = events("AA:00:00:00:00:02", now, 2)
		if n, err := st.InsertClientEvents(ctx, 1, evs, bodies, nil); err != nil || n != 2 {
			t.Fatalf("new events: %d, %v", n, err)
		}
		// The same records again are duplicates, across partitions too.
		if n, err := st.InsertClientEvents(ctx, 1, evs, bodies, nil); err != nil || n != 0 {
			t.Fatalf("retried events: %d stored, %v", n, err)
		}
		days, _ = st.PartitionDaysForTest(ctx)
		if !slices.Contains(days["client_events"], dayOf(old)) || !slices.Contains(days["perf_obs"], dayOf(old)) {
			t.Fatalf("no partitions of %s: %v", dayOf(old), days["client_events"])
		}

		// A second replica writes into the old day (and knows its
		// partitions), then the first drops every day older than five.
		replica := storetest.OpenStoreAt(t, cfg)
		evs, bodies = events("AA:00:00:00:00:03", old, 1)
		if n, err := replica.InsertClientEvents(ctx, 1, evs, bodies, nil); err != nil || n != 1 {
			t.Fatalf("replica's old event: %d, %v", n, err)
		}
		dropped, err := st.MaintainPartitions(ctx, now.UnixMilli(), now.Add(-5*day).UnixMilli())
		if err != nil {
			t.Fatal(err)
		}
		var droppedTables []string
		for _, d := range dropped {
			if dayOf(d.Day) == dayOf(old) {
				droppedTables = append(droppedTables, d.Table)
			}
		}
		slices.Sort(droppedTables)
		if !slices.Equal(droppedTables, []string{"ap_stats", "client_events", "client_stats", "conn_obs", "perf_obs", "radio_stats", "slot_conn_clients", "slot_perf_clients"}) {
			t.Fatalf("dropped %v", dropped)
		}
		var ev int
		if err := storetest.TelemetryDB(t, cfg).QueryRowContext(ctx, `SELECT count(*) FROM client_events`).Scan(&ev); err != nil || ev != 2 {
			t.Fatalf("%d events after the drop (%v), want today's 2", ev, err)
		}
		days, _ = st.PartitionDaysForTest(ctx)
		if slices.Contains(days["client_events"], dayOf(old)) || !slices.Contains(days["client_events"], dayOf(now)) {
			t.Fatalf("partitions after the drop: %v", days["client_events"])
		}

		// The replica still believes the old day's partitions exist.
		evs, bodies = events("AA:00:00:00:00:04", old, 1)
		if n, err := replica.InsertClientEvents(ctx, 1, evs, bodies, nil); err != nil || n != 1 {
			t.Fatalf("replica's write into a dropped day: %d, %v", n, err)
		}
	})
}

// The migration to day partitions moves every existing row of the five
// tables into the partition of its day, keeps the id sequences going and
// loses nothing.
func TestDayPartitionMigrationKeepsRows(t *testing.T) {
	b := storetest.Postgres
	if !slices.Contains(storetest.Backends(t), b) {
		t.Skip("PostgreSQL is not configured")
	}
	ctx := context.Background()
	st, _ := openMigratedTo(t, b, 115)
	now := time.Now().UnixMilli()
	for i, ts := range []int64{now - 40*int64(day/time.Millisecond), now - 3*int64(day/time.Millisecond), now} {
		for _, q := range []string{
			`INSERT INTO client_events (customer_id, event_id, mac, ts, event_type, location_id, dot11ac, ssid, protocol, body)
				VALUES (1, 'e` + fmt.Sprint(i) + `', 'AA:00:00:00:00:01', $1, 'Success', -1, true, 'corp', 'A', '{}')`,
			`INSERT INTO client_stats (customer_id, mac, ts, location_id, bssid, ssid, channel, rssi, data_rate, retry_pct)
				VALUES (1, 'AA:00:00:00:00:01', $1, -1, '00:11:74:00:00:01', 'corp', 36, -50, 100, 1)`,
			`INSERT INTO ap_stats (customer_id, box_id, ts, interval_ms, clients) VALUES (1, 1, $1, 0, 3)`,
			`INSERT INTO conn_obs VALUES (1, -1, 'ANY', '', $1, 5, 1, 0, 1, 0)`,
			`INSERT INTO perf_obs VALUES (1, -1, 'ANY', '', $1, 5, 1, 0, 1, 0, 0)`,
		} {
			if err := st.ExecForTest(ctx, q, ts); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	days, err := st.PartitionDaysForTest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	forty := dayOf(time.UnixMilli(now).Add(-40 * day))
	for table, list := range days {
		if !slices.Contains(list, forty) {
			t.Errorf("%s: no partition of %s: %v", table, forty, list)
		}
	}
	for _, table := range []string{"client_events", "client_stats", "ap_stats", "conn_obs", "perf_obs"} {
		var n int
		if err := st.QueryRowForTest(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil || n != 3 {
			t.Errorf("%s holds %d rows after the migration (%v), want 3", table, n, err)
		}
	}
	// New rows take new ids.
	evs, bodies := events("AA:00:00:00:00:09", time.UnixMilli(now), 1)
	if n, err := st.InsertClientEvents(ctx, 1, evs, bodies, nil); err != nil || n != 1 {
		t.Fatalf("insert after the migration: %d, %v", n, err)
	}
	var ids int
	if err := st.QueryRowForTest(ctx, `SELECT count(DISTINCT id) FROM client_events`).Scan(&ids); err != nil || ids != 4 {
		t.Errorf("%d distinct ids (%v), want 4", ids, err)
	}
}

// openMigratedTo opens a new store of backend b migrated up to migration
// n and no further, closed when the test ends, and returns its config.
func openMigratedTo(t *testing.T, b storetest.Backend, n int) (*store.Store, store.Config) {
	t.Helper()
	cfg := storetest.EmptyStoreConfig(t, b)
	st, err := store.OpenNoMigrate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.MigrateToForTest(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	return st, cfg
}
