package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// TestPurgeSkipsClientsBeingWritten: on PostgreSQL the retention purge of
// clients skips a row that a write holds locked instead of waiting for
// it (waiting, the purge and a write could deadlock), and takes it at
// its next pass.
func TestPurgeSkipsClientsBeingWritten(t *testing.T) {
	if !slices.Contains(storetest.Backends(t), storetest.Postgres) {
		t.Skip("PostgreSQL only: SQLite's one writer runs the purge and writes in turn")
	}
	ctx := context.Background()
	cfg := storetest.StoreConfig(t, storetest.Postgres)
	st := storetest.OpenStoreAt(t, cfg)
	old := time.Now().Add(-48 * time.Hour).UnixMilli()
	updates := map[int64]wnms.ClientUpdate{}
	for box := int64(1); box <= 3; box++ {
		updates[box] = wnms.ClientUpdate{MacAddress: fmt.Sprintf("AA:00:00:00:00:%02d", box), Timestamp: old, EventType: "Success",
			BSSID: "00:11:74:00:00:01", SSID: "corp", Channel: 36, Protocol: "A", LocationID: 1}
	}
	if err := st.UpdateClients(ctx, 1, updates); err != nil {
		t.Fatal(err)
	}
	// Another connection holds client 1's row, as a write in progress.
	db, err := sql.Open("pgx", cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT box_id FROM clients WHERE box_id = 1 FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	cutoff := time.Now().Add(-24 * time.Hour).UnixMilli()
	purge := func() int {
		t.Helper()
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		n, err := st.PurgeTelemetry(pctx, "clients", cutoff, 100)
		if err != nil {
			t.Fatalf("purge: %v", err)
		}
		return n
	}
	if n := purge(); n != 2 {
		t.Errorf("purge with client 1 held: %d rows, want 2", n)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n := purge(); n != 1 {
		t.Errorf("purge after client 1 was let go: %d rows, want 1", n)
	}
}
