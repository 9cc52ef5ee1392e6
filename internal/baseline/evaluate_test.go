package baseline_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// One definition everywhere, through HTTP on each store: the evaluation
// records connectivity and performance anomalies alike, with their
// clients, lists and announces them; late data of a slot long closed
// (five hours, beyond the four the evaluation once looked back) gets its
// anomaly recorded and announced; imported history of three days ago is
// recorded without being announced; and EvaluatedThrough covers them.
func TestEvaluationCoversEveryKindAndLateData(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		now := time.Date(2026, 11, 20, 12, 0, 30, 0, time.UTC)
		clock := apitest.NewClock(now)
		e.UseClock(clock)
		e.API.Baselines.Now = clock.Now
		floor := e.NewLocation(t, e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1).ID.ID, wnms.FloorLocation, "Floor 1", 1)
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", raw([]string{fmt.Sprintf(`{"macaddress":"00:11:74:00:0a:00","name":"AP 1",
			"locationId":{"type":"locallocationid","id":%d},"radios":[{"macaddress":%q,"channel":36,"ssid":"corp"}]}`, floor.ID.ID, bssid)}))
		var mu sync.Mutex
		var announced []string
		e.API.Baselines.OnAnomaly = func(a wnms.Anomaly, _ string) {
			mu.Lock()
			announced = append(announced, fmt.Sprintf("%s %s", a.Kind, time.UnixMilli(a.Slot).UTC().Format("02 15:04")))
			mu.Unlock()
		}
		evaluate := func() {
			t.Helper()
			if err := e.API.Baselines.EvaluateUntilDone(context.Background(), 1, 5); err != nil {
				t.Fatal(err)
			}
		}
		// A slot with three quiet days before it (10 clients, none failing
		// or in trouble) and then n of 10 failing and n of 10 at 5 Mbps.
		slotWith := func(name string, slot time.Time, n int) {
			var events, stats []string
			for d := 3; d >= 0; d-- {
				at, failing := slot.AddDate(0, 0, -d), 0
				if d == 0 {
					failing = n
				}
				events = append(events, attempts(fmt.Sprintf("%s%d", name, d), at, 10, failing)...)
				for i := 0; i < 10; i++ {
					rate := 300.0
					if i < failing {
						rate = 5
					}
					stats = append(stats, sample(fmt.Sprintf("aa:bb:cc:00:00:%02x", i), at.Add(time.Duration(i)*time.Second), rate, 1, -50))
				}
			}
			e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", raw(events))
			e.Admin.Expect(200, "POST", "/V5/ingest/clientstats", raw(stats))
		}
		list := func() []string {
			t.Helper()
			var got []map[string]any
			e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/baselines/anomalies?fromtime=%d&totime=%d",
				now.Add(-4*24*time.Hour).UnixMilli(), now.UnixMilli()), nil).Decode(t, &got)
			var out []string
			for _, a := range got {
				out = append(out, fmt.Sprintf("%s %s %v", a["kind"], time.UnixMilli(int64(a["timestamp"].(float64))).UTC().Format("02 15:04"), a["observation"]))
			}
			return out
		}

		// The last closed slot, 11:45: 9 of 10 failing and in trouble.
		slotWith("now", time.Date(2026, 11, 20, 11, 45, 0, 0, time.UTC), 9)
		evaluate()
		want := []string{"clientsconnectivity 20 11:45 90", "clientsperformance 20 11:45 90"}
		if got := list(); !slices.Equal(got, want) {
			t.Fatalf("anomalies %q, want %q", got, want)
		}
		stored, err := e.API.Baselines.Store.Anomalies(context.Background(), 1, nil, 0, now.UnixMilli())
		if err != nil || len(stored) != 2 || stored[0].Affected != 9 || stored[0].Attempting != 10 || stored[1].Affected != 9 ||
			stored[1].Attempting != 10 || stored[0].Threshold != 100*4.0/10 || stored[1].Threshold != 40 {
			// 5 of 10 is the least count improbable at the 5 % floor rate
			// (P(X ≥ 4) = 0.00103 is not below α): the bar is 4 of 10.
			t.Fatalf("stored %+v %v", stored, err)
		}
		if through, err := e.API.Baselines.EvaluatedThrough(context.Background(), 1); err != nil || through != time.Date(2026, 11, 20, 11, 45, 0, 0, time.UTC).UnixMilli() {
			t.Fatalf("evaluated through %d %v", through, err)
		}

		// Late data: 07:00 today arrives now, with its history; and an
		// import of 17 November 10:00. A quiet slot with one failure
		// among them is no anomaly.
		slotWith("late", time.Date(2026, 11, 20, 7, 0, 0, 0, time.UTC), 10)
		slotWith("old", time.Date(2026, 11, 17, 10, 0, 0, 0, time.UTC), 8)
		slotWith("blip", time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC), 1)
		clock.Advance(15 * time.Minute)
		evaluate()
		want = []string{"clientsconnectivity 20 11:45 90", "clientsperformance 20 11:45 90", "clientsconnectivity 20 07:00 100",
			"clientsperformance 20 07:00 100", "clientsconnectivity 17 10:00 80", "clientsperformance 17 10:00 80"}
		if got := list(); !slices.Equal(got, want) {
			t.Fatalf("anomalies %q, want %q", got, want)
		}
		mu.Lock()
		got := strings.Join(announced, ", ")
		mu.Unlock()
		if wantAnnounced := "clientsconnectivity 20 11:45, clientsperformance 20 11:45, clientsconnectivity 20 07:00, clientsperformance 20 07:00"; got != wantAnnounced {
			t.Fatalf("announced %s, want %s", got, wantAnnounced)
		}
		if through, err := e.API.Baselines.EvaluatedThrough(context.Background(), 1); err != nil || through != time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC).UnixMilli() {
			t.Fatalf("evaluated through %d %v", through, err)
		}
		// Nothing changed: nothing is evaluated or announced again.
		evaluate()
		mu.Lock()
		n := len(announced)
		mu.Unlock()
		if n != 4 || len(list()) != 6 {
			t.Fatalf("announced %d, listed %d after a run with nothing new", n, len(list()))
		}
	})
}
