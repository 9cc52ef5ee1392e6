package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// TestReserveAttemptLeavesTheCallsRecord: reserving a login attempt is the
// call's bookkeeping, not its change: a caller already known (a user
// changing its own password) keeps its audit record for the transaction
// of the change, and no record is written with the reservation.
func TestReserveAttemptLeavesTheCallsRecord(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		st := storetest.OpenStore(t, b)
		e := wnms.NewAuditEntry(wnms.AuditRecord{Method: "POST", Path: "/V5/users/ownpassword", ResourceType: "users", Status: 200})
		e.SetActor(wnms.OnPremCustomer, wnms.AuditActor{UserID: 1, LoginID: "admin", Via: "http"})
		ctx := wnms.WithAudit(context.Background(), e)
		if _, _, ok, err := st.ReserveAttempt(ctx, []string{"addr:192.0.2.1"}, 0, 20); err != nil || !ok {
			t.Fatalf("reserve: ok %v, %v", ok, err)
		}
		if _, ok := e.Claim(); !ok {
			t.Error("the reservation's transaction took the call's audit record")
		}
		var n int
		if err := st.QueryRowForTest(context.Background(), `SELECT count(*) FROM audit_log`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d audit records written with the reservation", n)
		}
	})
}

// TestReserveAttempt: an attempt is recorded in every bucket or in none;
// a full bucket answers the time its oldest attempt in the window was
// made (the latest such time of all full buckets), and attempts given
// back or out of the window no longer count. A limit of 0 refuses every
// attempt; a bucket named twice takes two. (That concurrent attempts
// never pass the limit together is TestConcurrentFailuresHitThrottle's,
// in internal/api.)
func TestReserveAttempt(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		st := storetest.OpenStore(t, b)
		ctx := context.Background()
		now := time.UnixMilli(1_000_000)
		st.Now = func() time.Time { return now }
		count := func(bucket string) int {
			var n int
			if err := st.QueryRowForTest(ctx, `SELECT count(*) FROM login_attempts WHERE bucket = $1`, bucket).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		type step struct {
			at      int64 // the clock, ms
			buckets []string
			since   int64
			ok      bool
			retryAt int64
			release bool // give the attempts back
		}
		steps := []step{
			{at: 1_000, buckets: []string{"key:k", "addr:a"}, since: 0, ok: true},
			{at: 2_000, buckets: []string{"addr:a"}, since: 0, ok: true},
			{at: 3_000, buckets: []string{"addr:b", "key:k"}, since: 0, ok: true, release: true},
			{at: 4_000, buckets: []string{"addr:b"}, since: 0, ok: true},
			{at: 5_000, buckets: []string{"addr:b"}, since: 0, ok: true},
			// addr:a and addr:b are full at 2; key:k holds 1 (one given back).
			{at: 6_000, buckets: []string{"key:k", "addr:a"}, since: 0, ok: false, retryAt: 1_000},
			{at: 6_000, buckets: []string{"addr:a", "addr:b"}, since: 0, ok: false, retryAt: 4_000},
			{at: 6_000, buckets: []string{"key:k"}, since: 0, ok: true},
			// The window moves past addr:a's first attempt.
			{at: 7_000, buckets: []string{"addr:a"}, since: 1_500, ok: true},
			{at: 7_000, buckets: []string{"addr:a"}, since: 1_500, ok: false, retryAt: 2_000},
		}
		want := map[string]int{}
		for i, s := range steps {
			now = time.UnixMilli(s.at)
			ids, retryAt, ok, err := st.ReserveAttempt(ctx, s.buckets, s.since, 2)
			if err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if ok != s.ok || retryAt != s.retryAt {
				t.Errorf("step %d: ok %v retryAt %d, want %v %d", i, ok, retryAt, s.ok, s.retryAt)
			}
			if !ok {
				if len(ids) != 0 {
					t.Errorf("step %d: refused, yet ids %v", i, ids)
				}
				continue
			}
			if len(ids) != len(s.buckets) {
				t.Errorf("step %d: ids %v for buckets %v", i, ids, s.buckets)
			}
			if s.release {
				if err := st.ReleaseAttempts(ctx, ids); err != nil {
					t.Fatal(err)
				}
				continue
			}
			for _, b := range s.buckets {
				want[b]++
			}
		}
		for b, n := range want {
			if got := count(b); got != n {
				t.Errorf("bucket %s holds %d attempts, want %d", b, got, n)
			}
		}
		if ids, retryAt, ok, err := st.ReserveAttempt(ctx, []string{"addr:z"}, 0, 0); err != nil || ok || retryAt != 0 || ids != nil {
			t.Errorf("limit 0: ids %v retryAt %d ok %v, %v; want refused at 0", ids, retryAt, ok, err)
		}
		twice := []string{"addr:d", "addr:d"}
		if ids, _, ok, err := st.ReserveAttempt(ctx, twice, 0, 2); err != nil || !ok || len(ids) != 2 {
			t.Errorf("a bucket named twice: ids %v ok %v, %v; want two attempts", ids, ok, err)
		}
		if _, retryAt, ok, err := st.ReserveAttempt(ctx, twice, 0, 2); err != nil || ok || retryAt != now.UnixMilli() {
			t.Errorf("a bucket named twice, full: retryAt %d ok %v, %v; want refused at %d", retryAt, ok, err, now.UnixMilli())
		}
		if n := count("addr:z") + count("addr:d"); n != 2 {
			t.Errorf("%d attempts in addr:z and addr:d, want 2", n)
		}
	})
}
