package store_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/baseline"
	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// TestSlotReadsMatchTheirEvents: a slot's attempts (client by client, per
// place) and a page of its failing clients in a scope are what the slot's
// events say, counted here one event at a time, on both engines. Events of
// the slots beside it, of another customer and Intermediate events do not
// count.
func TestSlotReadsMatchTheirEvents(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := storetest.OpenStore(t, b)
		slot := st.Now().Add(-time.Hour).Truncate(wnms.SlotDuration).UnixMilli()
		ms := wnms.SlotDuration.Milliseconds()
		r := rand.New(rand.NewPCG(5, 6))
		type place struct {
			loc        int64
			ssid, band string
		}
		want := map[string]map[place]*[4]bool{} // the slot's attempts, customer 1
		var evs []*wnms.ClientEvent
		var bodies [][]byte
		customers := make([]int64, 0, 600)
		for i := range 600 {
			customer, ts := int64(1), slot+r.Int64N(ms)
			switch i % 10 {
			case 0:
				ts = slot - 1 - r.Int64N(ms) // the slot before
			case 1:
				ts = slot + ms + r.Int64N(ms) // the slot after
			case 2:
				customer = 2
			}
			e := &wnms.ClientEvent{EventID: fmt.Sprintf("e%d", i), MacAddress: fmt.Sprintf("02:00:00:00:00:%02X", r.IntN(40)),
				Timestamp: ts, SSID: []string{"corp", "guest"}[r.IntN(2)], Channel: []int{0, 6, 36}[r.IntN(3)], Protocol: "A",
				LocationID: int64(1 + r.IntN(4))}
			switch x := r.IntN(10); {
			case x < 5:
				e.Type = wnms.Success
			case x < 9:
				e.Type = wnms.Failure
				code := 1 + r.IntN(3)
				e.Code = &code
			default:
				e.Type = wnms.Intermediate
				code := 1
				e.Code = &code
			}
			evs = append(evs, e)
			bodies = append(bodies, fmt.Appendf(nil, `{"channel":%d}`, e.Channel))
			customers = append(customers, customer)
			if customer != 1 || ts < slot || ts >= slot+ms || e.Type == wnms.Intermediate {
				continue
			}
			p := place{e.LocationID, e.SSID, wnms.BandOf(e.Channel)}
			if want[e.MacAddress] == nil {
				want[e.MacAddress] = map[place]*[4]bool{}
			}
			f := want[e.MacAddress][p]
			if f == nil {
				f = &[4]bool{}
				want[e.MacAddress][p] = f
			}
			if e.Type == wnms.Failure {
				f[0], f[*e.Code] = true, true
			}
		}
		for _, c := range []int64{1, 2} {
			var these []*wnms.ClientEvent
			var theirs [][]byte
			for i, e := range evs {
				if customers[i] == c {
					these, theirs = append(these, e), append(theirs, bodies[i])
				}
			}
			if _, err := st.InsertClientEvents(ctx, c, these, theirs, nil); err != nil {
				t.Fatal(err)
			}
		}

		// The attempts, every row of a client before the next client's.
		got := map[string]map[place]*[4]bool{}
		var order []string
		err := st.SlotAttempts(ctx, 1, slot, func(a wnms.ScopedAttempt) error {
			if len(order) == 0 || order[len(order)-1] != a.MAC {
				if got[a.MAC] != nil {
					return fmt.Errorf("client %s again after another", a.MAC)
				}
				order = append(order, a.MAC)
				got[a.MAC] = map[place]*[4]bool{}
			}
			p := place{a.LocationID, a.SSID, a.Band}
			if got[a.MAC][p] != nil {
				return fmt.Errorf("client %s twice at %+v", a.MAC, p)
			}
			f := a.Failures
			got[a.MAC][p] = &f
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("attempts: got %d clients, want %d", len(got), len(want))
			for mac, ps := range want {
				for p, f := range ps {
					if g := got[mac][p]; g == nil || *g != *f {
						t.Errorf("%s at %+v: got %v, want %v", mac, p, g, *f)
					}
				}
			}
		}

		// A page of failing clients in each scope.
		for _, sc := range []struct {
			locs       []int64
			band, ssid string
			limit      int
		}{
			{[]int64{1, 2, 3, 4}, wnms.BandAny, "", 1000},
			{[]int64{1, 2, 3, 4}, wnms.BandAny, "", 5},
			{[]int64{2}, wnms.BandAny, "", 1000},
			{[]int64{1, 3}, wnms.Band5GHz, "", 1000},
			{[]int64{1, 2, 3, 4}, wnms.Band24GHz, "guest", 3},
			{[]int64{4}, wnms.BandAny, "corp", 1000},
			{[]int64{99}, wnms.BandAny, "", 1000},
		} {
			var wantPage []wnms.ConnAttempt
			for mac, ps := range want {
				a := wnms.ConnAttempt{MAC: mac}
				for p, f := range ps {
					if f[0] && slices.Contains(sc.locs, p.loc) && (sc.band == wnms.BandAny || p.band == sc.band) && (sc.ssid == "" || p.ssid == sc.ssid) {
						for i := range f {
							a.Failures[i] = a.Failures[i] || f[i]
						}
					}
				}
				if a.Failures[0] {
					wantPage = append(wantPage, a)
				}
			}
			slices.SortFunc(wantPage, func(a, b wnms.ConnAttempt) int { return strings.Compare(a.MAC, b.MAC) })
			wantPage = wantPage[:min(sc.limit, len(wantPage))]
			page, err := st.SlotFailingClients(ctx, 1, slot, sc.locs, sc.band, sc.ssid, sc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) != len(wantPage) || (len(page) > 0 && !reflect.DeepEqual(page, wantPage)) {
				t.Errorf("failing clients at %v, %q, %q, limit %d:\n got %v\nwant %v", sc.locs, sc.band, sc.ssid, sc.limit, page, wantPage)
			}
		}
	})
}

// TestSlotRefreshTakesOneConnection: recomputing a slot's observations
// needs one connection at a time. With a pool of two and one of them
// taken, it still finishes: it once looked up each new location while the
// slot's rows held a connection, so that as many refreshes at once as the
// PostgreSQL pool had connections waited for each other for ever.
func TestSlotRefreshTakesOneConnection(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		cfg := storetest.StoreConfig(t, b)
		cfg.MaxConns = 2
		st := storetest.OpenStoreAt(t, cfg)
		slot := st.Now().Add(-time.Hour).Truncate(wnms.SlotDuration).UnixMilli()
		var evs []*wnms.ClientEvent
		var bodies [][]byte
		for i := range 4 {
			evs = append(evs, &wnms.ClientEvent{EventID: fmt.Sprintf("e%d", i), MacAddress: fmt.Sprintf("02:00:00:00:00:%02X", i),
				Timestamp: slot + int64(i), Type: wnms.Success, SSID: "corp", Channel: 36, Protocol: "A", LocationID: int64(100 + i%2)})
			bodies = append(bodies, []byte(`{"channel":36}`))
		}
		if _, err := st.InsertClientEvents(ctx, 1, evs, bodies, nil); err != nil {
			t.Fatal(err)
		}
		if err := st.FlushDerived(ctx); err != nil {
			t.Fatal(err)
		}
		release, err := st.HoldConnForTest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		svc := baseline.NewService(st, slog.New(slog.DiscardHandler))
		wait, cancel := context.WithTimeout(ctx, 30*time.Second) // a hang, not a speed
		defer cancel()
		if err := svc.Refresh(wait, 1, slot, slot, 0); err != nil {
			t.Fatalf("refresh with one free connection: %v", err)
		}
		obs, err := st.ConnObs(ctx, 1, 100, wnms.BandAny, "", slot, slot)
		if err != nil {
			t.Fatal(err)
		}
		if obs[slot].Attempting != 2 {
			t.Fatalf("observation at location 100: %+v", obs[slot])
		}
	})
}
