package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// A read finds the slots of acknowledged batches while a flush of their
// marks is under way, without waiting for it (a read of the clients table
// waits for it instead: their rows are only there once it commits): the flush here waits for a
// lock another connection holds on baseline_dirty (PostgreSQL) or on the
// telemetry database's writer (SQLite) for as long as the test wants.
func TestDirtySlotsDuringAFlush(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		cfg := storetest.StoreConfig(t, b)
		st := storetest.OpenStoreAt(t, cfg)
		st.HoldDerivedForTest()
		at := time.Now().Add(-time.Hour)
		slot := wnms.SlotOf(at.UnixMilli())
		evs, bodies := events("AA:00:00:00:00:0C", at, 2)
		u := wnms.ClientUpdate{MacAddress: "AA:00:00:00:00:0C", Timestamp: evs[1].Timestamp, EventType: "Success",
			BSSID: "00:11:74:00:00:01", SSID: "corp", Channel: 36, Protocol: "A", LocationID: 1}
		if _, err := st.InsertClientEvents(ctx, 1, evs, bodies, map[int64]wnms.ClientUpdate{12: u}); err != nil {
			t.Fatal(err)
		}
		// Hold what the flush needs.
		db := storetest.TelemetryDB(t, cfg)
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		hold := `BEGIN IMMEDIATE`
		if b == storetest.Postgres {
			hold = `BEGIN; LOCK TABLE baseline_dirty IN EXCLUSIVE MODE`
		}
		if _, err := conn.ExecContext(ctx, hold); err != nil {
			t.Fatal(err)
		}
		flushed := make(chan error, 1)
		go func() { flushed <- st.FlushDerived(ctx) }()
		time.Sleep(200 * time.Millisecond) // the flush has taken the marks and waits

		type answer struct {
			dirty []wnms.DirtySlot
			err   error
		}
		read := make(chan answer, 1)
		go func() {
			d, err := st.DirtySlots(ctx, 1, slot, slot, 10)
			read <- answer{d, err}
		}()
		var dirty []wnms.DirtySlot
		select {
		case a := <-read:
			if a.err != nil {
				t.Fatalf("a read during the flush: %v", a.err)
			}
			dirty = a.dirty
		case <-time.After(5 * time.Second):
			conn.ExecContext(ctx, `ROLLBACK`)
			<-flushed
			t.Fatal("a read during the flush waited for it")
		}
		if len(dirty) != 1 || dirty[0].Slot != slot {
			t.Errorf("during the flush: %v, want the slot %d", dirty, slot)
		}
		// A read of the clients table must see the acknowledged batch: it
		// waits for the flush under way instead of reading around it.
		type clients struct {
			n   int
			err error
		}
		listed := make(chan clients, 1)
		go func() {
			_, n, err := st.Clients(ctx, wnms.ClientQuery{CustomerID: 1, Limit: 10})
			listed <- clients{n, err}
		}()
		select {
		case c := <-listed:
			t.Fatalf("a client read during the flush did not wait for it: %d clients, %v", c.n, c.err)
		case <-time.After(300 * time.Millisecond):
		}
		select {
		case err := <-flushed:
			t.Fatalf("the flush ended while its lock was held: %v", err)
		default:
		}
		if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
			t.Fatal(err)
		}
		if err := <-flushed; err != nil {
			t.Fatal(err)
		}
		select {
		case c := <-listed:
			if c.err != nil || c.n != 1 {
				t.Errorf("a client read across the flush: %d clients, %v; want 1", c.n, c.err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a client read still waits after the flush")
		}
		if dirty, err := st.DirtySlots(ctx, 1, slot, slot, 10); err != nil || len(dirty) != 1 || dirty[0].Version <= 0 {
			t.Errorf("after the flush: %v %v, want the slot's stored mark", dirty, err)
		}
	})
}
