package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// slotRows reads what a slot's baseline refresh reads: its attempts and
// sample sums, client by client.
func slotRows(t *testing.T, st *store.Store, customerID, slot int64) ([]wnms.ScopedAttempt, []wnms.ScopedSums) {
	t.Helper()
	ctx := context.Background()
	var attempts []wnms.ScopedAttempt
	if err := st.SlotAttempts(ctx, customerID, slot, func(a wnms.ScopedAttempt) error {
		attempts = append(attempts, a)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var sums []wnms.ScopedSums
	if err := st.SlotSampleSums(ctx, customerID, slot, func(x wnms.ScopedSums) error {
		sums = append(sums, x)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return attempts, sums
}

// TestSlotClientsKeptAsFromScratch: the clients' rows of each baseline
// slot that ingest keeps up to date batch by batch are the rows made from
// scratch from the stored events and samples, on both engines, over
// random batches that mix the slot being filled with late records of
// older slots, resent batches, batches that repeat some records (with the
// same content or other content under the same eventId and timestamp, of
// which the stored one counts), records repeated within a batch, samples
// without radio metrics, and (on PostgreSQL, where ingests run side by
// side) batches written by several goroutines at once.
func TestSlotClientsKeptAsFromScratch(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
				ctx := context.Background()
				st := storetest.OpenStore(t, b)
				r := rand.New(rand.NewPCG(seed, 99))
				ms := wnms.SlotDuration.Milliseconds()
				current := st.Now().Truncate(wnms.SlotDuration).UnixMilli()
				slots := []int64{current, current - ms, current - 5*ms, current - 30*ms} // the slot being filled and late ones
				slotOf := func() int64 {
					if r.IntN(4) == 0 {
						return slots[1+r.IntN(3)]
					}
					return slots[0]
				}
				mac := func() string { return fmt.Sprintf("02:00:00:00:00:%02X", r.IntN(30)) }
				newEvent := func(i int) (*wnms.ClientEvent, []byte) {
					e := &wnms.ClientEvent{EventID: fmt.Sprintf("s%d-e%d", seed, i), MacAddress: mac(), Timestamp: slotOf() + r.Int64N(ms),
						SSID: []string{"corp", "guest"}[r.IntN(2)], Channel: []int{0, 6, 36}[r.IntN(3)], Protocol: "A",
						LocationID: int64(1 + r.IntN(3))}
					switch x := r.IntN(10); {
					case x < 5:
						e.Type = wnms.Success
					case x < 9:
						e.Type = wnms.Failure
						code := r.IntN(5) // 0 and 4: no category
						e.Code = &code
					default:
						e.Type = wnms.Intermediate
					}
					return e, fmt.Appendf(nil, `{"channel":%d}`, e.Channel)
				}
				newSample := func() *wnms.Sample {
					x := &wnms.Sample{MacAddress: mac(), Timestamp: slotOf() + r.Int64N(ms)/1000*1000, LocationID: int64(1 + r.IntN(3)),
						BSSID: "00:11:74:00:00:01", SSID: []string{"corp", "guest"}[r.IntN(2)], Channel: []int{0, 6, 36}[r.IntN(3)],
						RSSI: -90 + r.IntN(50), DataRateMbps: float64(r.IntN(400)) / 4, RetryRatePct: float64(r.IntN(160)) / 4}
					if r.IntN(2) == 0 {
						n := -90 + r.IntN(60)
						x.BestNeighbor = &n
					}
					x.NoRadio = r.IntN(10) == 0
					return x
				}

				type batch struct {
					events  []*wnms.ClientEvent
					bodies  [][]byte
					samples []*wnms.Sample
				}
				var sent []batch
				next := 0
				var batches []batch
				for range 40 {
					var bt batch
					switch k := r.IntN(10); {
					case k < 2 && len(sent) > 0: // a resent batch
						bt = sent[r.IntN(len(sent))]
					case k < 4 && len(sent) > 0: // some records again, some new
						old := sent[r.IntN(len(sent))]
						for i, e := range old.events {
							if r.IntN(2) == 0 {
								again := *e
								if r.IntN(3) == 0 { // the same key, other content: the stored one counts
									again.Type = wnms.Failure
									code := 1 + r.IntN(3)
									again.Code = &code
									again.LocationID = 3
								}
								bt.events, bt.bodies = append(bt.events, &again), append(bt.bodies, old.bodies[i])
							}
						}
						for _, x := range old.samples {
							if r.IntN(2) == 0 {
								again := *x
								again.DataRateMbps += 100
								bt.samples = append(bt.samples, &again)
							}
						}
						fallthrough
					default:
						for range 1 + r.IntN(30) {
							e, body := newEvent(next)
							next++
							bt.events, bt.bodies = append(bt.events, e), append(bt.bodies, body)
							if r.IntN(15) == 0 { // repeated within the batch
								bt.events, bt.bodies = append(bt.events, e), append(bt.bodies, body)
							}
						}
						for range r.IntN(30) {
							x := newSample()
							bt.samples = append(bt.samples, x)
							if r.IntN(15) == 0 {
								bt.samples = append(bt.samples, x)
							}
						}
					}
					sent = append(sent, bt)
					batches = append(batches, bt)
				}

				write := func(bt batch) error {
					if _, err := st.InsertClientEvents(ctx, 1, bt.events, bt.bodies, nil); err != nil {
						return err
					}
					_, err := st.InsertClientStats(ctx, 1, bt.samples, nil)
					return err
				}
				writers := 1
				if b == storetest.Postgres {
					writers = 4
				}
				var wg sync.WaitGroup
				errs := make(chan error, len(batches))
				work := make(chan batch)
				for range writers {
					wg.Go(func() {
						for bt := range work {
							if err := write(bt); err != nil {
								errs <- err
							}
						}
					})
				}
				for _, bt := range batches {
					work <- bt
				}
				close(work)
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatal(err)
				}

				for _, slot := range slots {
					attempts, sums := slotRows(t, st, 1, slot)
					if err := st.RebuildSlotClients(ctx, 1, slot); err != nil {
						t.Fatal(err)
					}
					wantAttempts, wantSums := slotRows(t, st, 1, slot)
					if len(wantAttempts) == 0 || len(wantSums) == 0 {
						t.Fatalf("slot %s: %d attempts and %d sums from scratch: the test makes too few", time.UnixMilli(slot).UTC(),
							len(wantAttempts), len(wantSums))
					}
					if !reflect.DeepEqual(attempts, wantAttempts) {
						t.Errorf("slot %s attempts:\n got %v\nwant %v", time.UnixMilli(slot).UTC(), attempts, wantAttempts)
					}
					if !reflect.DeepEqual(sums, wantSums) {
						t.Errorf("slot %s sample sums:\n got %v\nwant %v", time.UnixMilli(slot).UTC(), sums, wantSums)
					}
				}
			})
		}
	})
}
