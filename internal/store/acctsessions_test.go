package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/store/storetest"
)

// The counters of an accounting session are kept until its Stop, or until
// it has gone AcctSessionIdle without an update; counters of any size come
// back as stored.
func TestAcctSessionCounters(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := storetest.OpenStore(t, b)
		now := time.Now()
		st.Now = func() time.Time { return now }
		type counters struct {
			in, out uint64
			ok      bool
		}
		get := func(key string) counters {
			t.Helper()
			in, out, ok, err := st.AcctCounters(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			return counters{in, out, ok}
		}
		if got := get("never"); got.ok {
			t.Fatalf("a session never stored: %+v", got)
		}
		for _, c := range []counters{{0, 0, true}, {1000, 5000, true}, {1<<32 + 7, 1 << 40, true}, {1<<64 - 1, 1 << 63, true}} {
			if err := st.SetAcctCounters(ctx, "s1", c.in, c.out); err != nil {
				t.Fatal(err)
			}
			if got := get("s1"); got != c {
				t.Errorf("stored %+v, read %+v", c, got)
			}
		}
		if err := st.EndAcctSession(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		if got := get("s1"); got.ok {
			t.Errorf("after its Stop: %+v", got)
		}

		// Two sessions, one updated an hour before the idle time runs out.
		if err := st.SetAcctCounters(ctx, "idle", 1, 2); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Hour)
		if err := st.SetAcctCounters(ctx, "live", 3, 4); err != nil {
			t.Fatal(err)
		}
		now = now.Add(store.AcctSessionIdle)
		if err := st.PurgeExpired(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if got := get("idle"); got.ok {
			t.Errorf("a session idle for a day and an hour is kept: %+v", got)
		}
		if got := get("live"); got != (counters{3, 4, true}) {
			t.Errorf("a session updated a day ago: %+v", got)
		}
	})
}
