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

// TestSlotSamplesByAP: a client's samples of a slot are summed per AP as
// well as per place, kept by ingest as from scratch (a batch of which
// some samples were stored before takes the recompute path); each row
// comes with the same client's row at the same place and AP
// wnms.ChangeSpan before; and a sample marks its slot and the slot that
// compares with it out of date; on both engines.
func TestSlotSamplesByAP(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := storetest.OpenStore(t, b)
		ms := wnms.SlotDuration.Milliseconds()
		first := st.Now().Truncate(wnms.SlotDuration).UnixMilli() - 6*ms
		later := first + wnms.ChangeSpan.Milliseconds()
		ap7, ap8 := int64(7), int64(8)
		sample := func(mac string, ts int64, ap *int64, channel, rssi int, retry float64) *wnms.Sample {
			return &wnms.Sample{MacAddress: mac, Timestamp: ts, LocationID: 2, BSSID: "00:11:74:00:00:01", SSID: "corp", Channel: channel,
				RSSI: rssi, DataRateMbps: 100, RetryRatePct: retry, APBoxID: ap}
		}
		batch := []*wnms.Sample{
			sample("02:00:00:00:00:01", first+1000, &ap7, 36, -60, 4),
			sample("02:00:00:00:00:01", first+301000, &ap7, 36, -62, 6),
			sample("02:00:00:00:00:01", first+601000, &ap8, 36, -70, 5),
			sample("02:00:00:00:00:02", first+1000, nil, 36, -50, 1),
			sample("02:00:00:00:00:01", later+1000, &ap7, 36, -77, 30),
			sample("02:00:00:00:00:02", later+1000, nil, 36, -51, 1),
		}
		if n, err := st.InsertClientStats(ctx, 1, batch[:4], nil); err != nil || n != 4 {
			t.Fatalf("%d stored, %v", n, err)
		}
		dirty, err := st.DirtySlots(ctx, 1, 0, 1<<50, 100)
		if err != nil {
			t.Fatal(err)
		}
		var marked []int64
		for _, d := range dirty {
			marked = append(marked, d.Slot)
		}
		if !reflect.DeepEqual(marked, []int64{later, first}) {
			t.Errorf("marked %v, want the slot %d and the slot %d that compares with it", marked, first, later)
		}
		// Some of them again, with the rest: the recompute path.
		if n, err := st.InsertClientStats(ctx, 1, batch[2:], nil); err != nil || n != 2 {
			t.Fatalf("%d stored, %v", n, err)
		}
		want := []wnms.ScopedSums{
			{LocationID: 2, Band: wnms.Band5GHz, SSID: "corp", APBoxID: 7, ClientSums: wnms.ClientSums{MAC: "02:00:00:00:00:01", N: 1, Rate: 100,
				Retry: 30, RSSI: -77, WeakAll: true},
				Before: wnms.ClientSums{MAC: "02:00:00:00:00:01", N: 2, Retry: 10, RSSI: -122}},
			{LocationID: 2, Band: wnms.Band5GHz, SSID: "corp", ClientSums: wnms.ClientSums{MAC: "02:00:00:00:00:02", N: 1, Rate: 100,
				Retry: 1, RSSI: -51}, Before: wnms.ClientSums{MAC: "02:00:00:00:00:02"}},
		}
		for _, slot := range []int64{first, later} {
			_, sums := slotRows(t, st, 1, slot)
			if err := st.RebuildSlotClients(ctx, 1, slot); err != nil {
				t.Fatal(err)
			}
			_, fromScratch := slotRows(t, st, 1, slot)
			if !reflect.DeepEqual(sums, fromScratch) {
				t.Errorf("slot %s:\n kept %+v\nfrom scratch %+v", time.UnixMilli(slot).UTC(), sums, fromScratch)
			}
			if slot == first && len(sums) != 3 {
				t.Errorf("first slot: %+v, want client 1 at AP 7 and at AP 8, client 2 at no AP", sums)
			}
			if slot == later && !reflect.DeepEqual(sums, want) {
				t.Errorf("later slot:\n got %+v\nwant %+v", sums, want)
			}
		}
	})
}

// TestAPMigrationKeepsSamples: migration 0146 makes slot_perf_clients
// again from the stored samples, by AP (0 for samples at no known AP,
// none for samples without radio metrics), and marks the slots of the
// last 15 days out of date so that every AP radio gets its history; on
// both engines.
func TestAPMigrationKeepsSamples(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st, cfg := openMigratedTo(t, b, 145)
		slot := time.Now().Truncate(wnms.SlotDuration).UnixMilli() - 4*wnms.SlotDuration.Milliseconds()
		if err := st.EnsurePartitions(ctx, slot, slot); err != nil {
			t.Fatal(err)
		}
		db := storetest.TelemetryDB(t, cfg)
		for i, s := range []struct {
			mac  string
			ap   any
			rssi any
		}{{"AA:00:00:00:00:01", 7, -60}, {"AA:00:00:00:00:01", 7, -62}, {"AA:00:00:00:00:01", 8, -70}, {"AA:00:00:00:00:02", nil, -50},
			{"AA:00:00:00:00:02", nil, nil}} {
			if _, err := db.ExecContext(ctx, `INSERT INTO client_stats (customer_id, mac, ts, location_id, ap_box_id, bssid, ssid, channel, rssi,
				data_rate, retry_pct) VALUES (1, $1, $2, 2, $3, '00:11:74:00:00:01', 'corp', 36, $4, 100, 1)`,
				s.mac, slot+int64(i)*1000, s.ap, s.rssi); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		rows, err := db.QueryContext(ctx, `SELECT mac, ap_box_id, samples, rssi_sum FROM slot_perf_clients WHERE slot = $1
			ORDER BY mac, ap_box_id`, slot)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var mac string
			var ap, n, rssi int64
			if err := rows.Scan(&mac, &ap, &n, &rssi); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s AP %d: %d samples, %d", mac, ap, n, rssi))
		}
		rows.Close()
		want := []string{"AA:00:00:00:00:01 AP 7: 2 samples, -122", "AA:00:00:00:00:01 AP 8: 1 samples, -70", "AA:00:00:00:00:02 AP 0: 1 samples, -50"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("slot_perf_clients after the migration:\n got %q\nwant %q", got, want)
		}
		dirty, err := st.DirtySlots(ctx, 1, 0, 1<<50, 10)
		if err != nil || len(dirty) != 1 || dirty[0].Slot != slot {
			t.Errorf("marked %+v (%v), want the slot %d", dirty, err, slot)
		}
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM perf_ap_obs`).Scan(&n); err != nil || n != 0 {
			t.Errorf("perf_ap_obs: %d rows, %v", n, err)
		}
		if err := db.QueryRowContext(ctx, `SELECT count(ap_box_id) FROM anomalies`).Scan(&n); err != nil || n != 0 {
			t.Errorf("anomalies' AP: %d, %v", n, err)
		}
	})
}
