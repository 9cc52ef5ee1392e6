package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/store/storetest"
)

const bulkTable = `CREATE TABLE bulk_probe (
	customer_id BIGINT NOT NULL,
	event_id    TEXT NOT NULL,
	at          BIGINT NOT NULL,
	ok          BOOLEAN NOT NULL,
	note        TEXT,
	PRIMARY KEY (customer_id, event_id))`

var bulkCols = []string{"customer_id", "event_id", "at", "ok", "note"}

func bulkRows(from, to int) [][]any {
	rows := make([][]any, 0, to-from)
	for i := from; i < to; i++ {
		var note any
		if i%3 != 0 {
			note = fmt.Sprintf("note %d\twith\ttabs, \"quotes\", \\ and ünïcode\n", i)
		}
		rows = append(rows, []any{int64(1), fmt.Sprintf("e%06d", i), int64(1_700_000_000_000 + i), i%2 == 0, note})
	}
	return rows
}

func openBulk(t testing.TB, b storetest.Backend) *store.Store {
	st := storetest.OpenStore(t, b)
	if err := st.ExecForTest(context.Background(), bulkTable); err != nil {
		t.Fatal(err)
	}
	return st
}

func countRows(t testing.TB, st *store.Store) (n int, notes int) {
	t.Helper()
	if err := st.QueryRowForTest(context.Background(), `SELECT count(*), count(note) FROM bulk_probe`).Scan(&n, &notes); err != nil {
		t.Fatal(err)
	}
	return n, notes
}

func TestBulkInsert(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := openBulk(t, b)
		// More rows than one SQLite statement takes, so the chunking runs.
		got, err := st.BulkInsertForTest(ctx, "bulk_probe", bulkCols, "(customer_id, event_id)", bulkRows(0, 20_000))
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != 20_000 {
			t.Fatalf("stored %d rows, want 20000", got[0])
		}
		if n, notes := countRows(t, st); n != 20_000 || notes != 13_333 {
			t.Fatalf("table holds %d rows, %d notes; want 20000, 13333", n, notes)
		}
		var note string
		var ok bool
		if err := st.QueryRowForTest(ctx, `SELECT note, ok FROM bulk_probe WHERE event_id = 'e000004'`).Scan(&note, &ok); err != nil {
			t.Fatal(err)
		}
		if note != "note 4\twith\ttabs, \"quotes\", \\ and ünïcode\n" || !ok {
			t.Errorf("row e000004 came back as %q %v", note, ok)
		}

		// A retried batch overlapping what is stored, with a repeat inside
		// the batch itself: only the new rows count.
		retry := append(bulkRows(19_990, 20_010), bulkRows(20_005, 20_006)...)
		got, err = st.BulkInsertForTest(ctx, "bulk_probe", bulkCols, "(customer_id, event_id)", retry)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != 10 {
			t.Errorf("retried batch stored %d rows, want 10", got[0])
		}

		// A bad row fails the transaction: nothing of it, nor of the good
		// batch before it, is stored.
		bad := bulkRows(30_000, 30_010)
		bad[7][1] = nil // event_id NOT NULL
		if _, err := st.BulkInsertForTest(ctx, "bulk_probe", bulkCols, "(customer_id, event_id)", bulkRows(40_000, 40_100), bad); err == nil {
			t.Fatal("a batch with a NULL key was stored")
		}
		if n, _ := countRows(t, st); n != 20_010 {
			t.Errorf("after the failed batch the table holds %d rows, want 20010", n)
		}

		// Without a conflict target a duplicate fails the batch.
		if _, err := st.BulkInsertForTest(ctx, "bulk_probe", bulkCols, "", bulkRows(0, 1)); err == nil ||
			!strings.Contains(strings.ToLower(err.Error()), "unique") && !strings.Contains(err.Error(), "duplicate") {
			t.Errorf("a duplicate without a conflict target: %v", err)
		}
		// A row of the wrong width is refused before anything is sent.
		if _, err := st.BulkInsertForTest(ctx, "bulk_probe", bulkCols, "", [][]any{{int64(1)}}); err == nil {
			t.Error("a short row was accepted")
		}
	})
}

// TestBulkUpsert upserts through the bulk path: on PostgreSQL by way of a
// temporary table each connection keeps, which must hold only the batch
// at hand, whether it is the transaction's first batch of the table or
// its second, and whichever transaction of the connection it is.
func TestBulkUpsert(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := openBulk(t, b)
		const upsert = "ON CONFLICT (customer_id, event_id) DO UPDATE SET note = excluded.note"
		second := bulkRows(5, 15)
		for _, r := range second {
			r[4] = "second"
		}
		// Two overlapping batches in one transaction: had the first stayed
		// in the temporary table, the second would upsert its rows 5-9
		// twice, which PostgreSQL refuses.
		got, err := st.BulkInsertForTest(ctx, "bulk_probe", bulkCols, upsert, bulkRows(0, 10), second)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != "[10 10]" {
			t.Errorf("the batches stored %v rows, want [10 10]", got)
		}
		// Transactions after it (on the pool's connections, some of which
		// have the table already) see none of its rows.
		for i := range 4 {
			got, err := st.BulkInsertForTest(ctx, "bulk_probe", bulkCols, upsert, bulkRows(100+i*10, 105+i*10))
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != 5 {
				t.Errorf("transaction %d stored %d rows, want 5", i+2, got[0])
			}
		}
		var seconds int
		if err := st.QueryRowForTest(ctx, `SELECT count(*) FROM bulk_probe WHERE note = 'second'`).Scan(&seconds); err != nil {
			t.Fatal(err)
		}
		if n, _ := countRows(t, st); n != 35 || seconds != 10 {
			t.Errorf("table holds %d rows, %d of the second batch; want 35, 10", n, seconds)
		}
	})
}

// BenchmarkBulkInsert measures rows per second through the bulk path, in
// batches of 10,000 (the ingest call's limit).
func BenchmarkBulkInsert(b *testing.B) {
	for _, backend := range storetest.Backends(b) {
		b.Run(string(backend), func(b *testing.B) {
			st := openBulk(b, backend)
			ctx := context.Background()
			const batch = 10_000
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := st.BulkInsertForTest(ctx, "bulk_probe", bulkCols, "(customer_id, event_id)",
					bulkRows(i*batch, (i+1)*batch)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
