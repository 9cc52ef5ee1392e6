package baseline_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/baseline"
	"github.com/wnms/wnms/internal/wnms"
)

// crowdedSlot ingests n events and n samples of three clients into the
// slot at t (Success and Failure, two bands) and returns the slot.
func crowdedSlot(t *testing.T, e *apitest.Env, at time.Time, n int) int64 {
	t.Helper()
	var evs, stats []string
	for i := 0; i < n; i++ {
		mac := fmt.Sprintf("aa:bb:cc:00:0f:%02x", i%3)
		ts := at.UnixMilli() + int64(i)
		ch := 1 + (i%2)*35
		if i%4 == 0 {
			evs = append(evs, fmt.Sprintf(`{"eventId":"c%d","macAddress":%q,"bssid":"00:11:74:00:0f:01","channel":%d,"ssid":"corp","timestamp":%d,"eventType":"Failure","failureCode":%d,"subFailureCode":%d}`,
				i, mac, ch, ts, 1+i%3, 101+i%3*100))
		} else {
			evs = append(evs, fmt.Sprintf(`{"eventId":"c%d","macAddress":%q,"bssid":"00:11:74:00:0f:01","channel":%d,"ssid":"corp","timestamp":%d,"eventType":"Success"}`,
				i, mac, ch, ts))
		}
		band := "BAND_5_GHZ"
		if ch == 1 {
			band = "BAND_2_4_GHZ"
		}
		stats = append(stats, fmt.Sprintf(`{"macAddress":%q,"bssid":"00:11:74:00:0f:01","channel":%d,"ssid":"corp","timestamp":%d,"frequencyBand":%q,"rssi":%d,"dataRateMbps":%d,"retryRatePct":3,"bestNeighborRssi":-60}`,
			mac, ch, ts, band, -80+i%10, 5+i%30))
	}
	e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", raw(evs))
	e.Admin.Expect(200, "POST", "/V5/ingest/clientstats", raw(stats))
	return wnms.SlotOf(at.UnixMilli())
}

// A slot is read as per-client aggregates made in SQL: what the store
// hands the arithmetic grows with the slot's clients and places, not with
// its events or samples (a slot of 2 million events once held 1.6 GB).
func TestSlotReadsAggregateInTheStore(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		at := time.Now().Add(-2 * time.Hour).Truncate(15 * time.Minute).Add(time.Minute)
		slot := crowdedSlot(t, e, at, 600)
		ctx := context.Background()
		var attempts []wnms.ScopedAttempt
		var last string
		err := e.Store.SlotAttempts(ctx, wnms.OnPremCustomer, slot, func(a wnms.ScopedAttempt) error {
			if a.MAC < last {
				t.Errorf("rows not ordered by client: %s after %s", a.MAC, last)
			}
			last = a.MAC
			attempts = append(attempts, a)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// 3 clients × 2 bands, at one location and SSID.
		if len(attempts) != 6 {
			t.Errorf("%d attempt rows for 600 events, want 6 (one a client and place)", len(attempts))
		}
		var sums []wnms.ScopedSums
		last = ""
		err = e.Store.SlotSampleSums(ctx, wnms.OnPremCustomer, slot, func(x wnms.ScopedSums) error {
			if x.MAC < last {
				t.Errorf("rows not ordered by client: %s after %s", x.MAC, last)
			}
			last = x.MAC
			sums = append(sums, x)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range sums {
			n += s.N
		}
		if len(sums) != 6 || n != 600 {
			t.Errorf("%d sample rows summing %d samples, want 6 rows of 600", len(sums), n)
		}
		// The aggregates give what the samples one by one give.
		var want, got wnms.Performance
		var plain []wnms.SlotSample
		for i := 0; i < 600; i++ {
			best := -60.0
			plain = append(plain, wnms.SlotSample{MAC: fmt.Sprint(i % 3), DataRateMbps: float64(5 + i%30), RetryRatePct: 3,
				RSSI: float64(-80 + i%10), BestNeighborRSSI: &best})
		}
		want = baseline.ObservePerformance(plain)
		var cs []wnms.ClientSums
		for _, s := range sums {
			cs = append(cs, s.ClientSums)
		}
		got = baseline.ObservePerformanceSums(cs)
		if got != want {
			t.Errorf("from the store's sums %+v, from the samples %+v", got, want)
		}
	})
}

// countingStore counts the slot reads of a refresh and holds the first
// until every caller has looked for out-of-date slots.
type countingStore struct {
	baseline.Store
	callers      int
	lookups      atomic.Int64
	reads        atomic.Int64
	allLooked    chan struct{}
	allLookedOne sync.Once
}

func (c *countingStore) DirtySlots(ctx context.Context, customerID, from, to int64, limit int) ([]wnms.DirtySlot, error) {
	d, err := c.Store.DirtySlots(ctx, customerID, from, to, limit)
	if c.lookups.Add(1) == int64(c.callers) {
		c.allLookedOne.Do(func() { close(c.allLooked) })
	}
	return d, err
}

func (c *countingStore) SlotAttempts(ctx context.Context, customerID, slot int64, f func(wnms.ScopedAttempt) error) error {
	c.reads.Add(1)
	select {
	case <-c.allLooked:
	case <-time.After(20 * time.Second):
	}
	return c.Store.SlotAttempts(ctx, customerID, slot, f)
}

// Callers that find the same slot out of date at once share one
// recomputation instead of each reading the slot (six readers of a
// crowded slot once took six times the memory and 86–142 s each).
func TestConcurrentReadersShareARefresh(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	at := time.Now().Add(-2 * time.Hour).Truncate(15 * time.Minute).Add(time.Minute)
	slot := crowdedSlot(t, e, at, 40)
	const callers = 6
	cs := &countingStore{Store: e.API.Baselines.Store, callers: callers, allLooked: make(chan struct{})}
	svc := baseline.NewService(cs, nil)
	var wg sync.WaitGroup
	errs := make([]error, callers)
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = svc.Refresh(context.Background(), wnms.OnPremCustomer, slot, slot, 0)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Every caller saw the slot out of date before any recomputation
	// ended; one of them (two at most, if the last came in just as the
	// first finished) read it.
	if n := cs.reads.Load(); n > 2 || n == 0 {
		t.Errorf("%d callers read the slot, want them to share one read", n)
	}
	obs, err := e.Store.ConnObs(context.Background(), wnms.OnPremCustomer, wnms.RootLocation, wnms.BandAny, "", slot, slot)
	if err != nil || obs[slot].Attempting != 3 {
		t.Errorf("the shared refresh stored %+v, %v", obs[slot], err)
	}
}

// kindStore counts the reads of a slot's attempts and of its samples.
type kindStore struct {
	baseline.Store
	attempts, samples atomic.Int64
}

func (k *kindStore) SlotAttempts(ctx context.Context, customerID, slot int64, f func(wnms.ScopedAttempt) error) error {
	k.attempts.Add(1)
	return k.Store.SlotAttempts(ctx, customerID, slot, f)
}

func (k *kindStore) SlotSampleSums(ctx context.Context, customerID, slot int64, f func(wnms.ScopedSums) error) error {
	k.samples.Add(1)
	return k.Store.SlotSampleSums(ctx, customerID, slot, f)
}

// A read of the slot being filled counts what its answer needs: a
// connectivity read the slot's connection attempts, a performance read
// its samples, never both (the soak's connectivity reads once counted
// every sample of the slot too). Each kind's count is kept for the next
// read of the same kind while nothing new arrives, on both engines.
func TestLiveReadCountsItsKind(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		ctx := context.Background()
		now := time.Now()
		if now.Sub(now.Truncate(wnms.SlotDuration)) > wnms.SlotDuration-time.Minute {
			t.Skip("too close to the end of a slot: the reads would find another slot being filled")
		}
		slot := crowdedSlot(t, e, now.Add(-time.Second), 40)
		ks := &kindStore{Store: e.API.Baselines.Store}
		svc := baseline.NewService(ks, nil)
		root, err := e.Store.Location(ctx, wnms.RootLocation)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			read              string
			attempts, samples int64
		}{
			{"connectivity", 1, 0},
			{"connectivity", 1, 0}, // nothing new: the count of the first read
			{"performance", 1, 1},
			{"performance", 1, 1},
		} {
			var n int
			if c.read == "connectivity" {
				points, err := svc.Connectivity(ctx, wnms.OnPremCustomer, root, wnms.BandAny, "", slot, slot)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range points {
					n += p.NoOfSamplesForObservation
				}
			} else {
				points, err := svc.Performance(ctx, wnms.OnPremCustomer, root, wnms.BandAny, "", "", slot, slot)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range points {
					n += p.NoOfSamplesForObservation
				}
			}
			if n != 3 {
				t.Errorf("the %s read counted %d clients, want 3", c.read, n)
			}
			if a, s := ks.attempts.Load(), ks.samples.Load(); a != c.attempts || s != c.samples {
				t.Errorf("after a %s read: the slot's attempts read %d times and its samples %d, want %d and %d",
					c.read, a, s, c.attempts, c.samples)
			}
		}
	})
}
