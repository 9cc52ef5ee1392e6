//go:build wnmsbench

package servicelevel_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/servicelevel"
	"github.com/wnms/wnms/internal/wnms"
)

// BenchmarkServiceLevels reads the service levels of a site-day: a site
// of 2 floors with 20 APs each, two radios an AP (5 GHz "corp", 2.4 GHz
// "guest"), and WNMS_BENCH_SL_EVENTS (1,000,000) connection attempts
// spread over the day through the store's ingest path (batches of 10,000),
// 5 % of them failures, Successes with the simulator's phase times and
// one in twenty slow. It reports the ingest rate, what the service
// level upkeep alone costs per batch, the table's rows, and per grouping
// the read's p50 and p99 (ms) over its iterations.
//
//	go test -tags wnmsbench -run '^$' -bench BenchmarkServiceLevels -benchtime 50x ./internal/servicelevel/
func BenchmarkServiceLevels(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("WNMS_BENCH_SL_EVENTS")); err == nil && v > 0 {
		n = v
	}
	for _, be := range apitest.Backends(b) {
		b.Run(string(be), func(b *testing.B) { benchSite(b, be, n) })
	}
}

func benchSite(b *testing.B, be apitest.Backend, n int) {
	ctx := context.Background()
	e := apitest.New(b, be)
	day := time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC)
	clock := apitest.NewClock(day.Add(30 * time.Hour))
	e.UseClock(clock)
	e.API.Baselines.Now = clock.Now
	site := e.NewLocation(b, 0, wnms.FolderLocation, "Site", 1)
	type radio struct {
		box, loc int64
		ch       int
		ssid     string
	}
	var radios []radio
	for fl := range 2 {
		floor := e.NewLocation(b, site.ID.ID, wnms.FloorLocation, fmt.Sprintf("Floor %d", fl+1), 1)
		var recs []string
		for a := range 20 {
			recs = append(recs, fmt.Sprintf(`{"macaddress":"00:11:74:%02d:%02d:00","name":"AP %d-%d","locationId":{"type":"locallocationid","id":%d},
				"radios":[{"macaddress":"00:11:74:%02d:%02d:01","channel":36,"ssid":"corp"},{"macaddress":"00:11:74:%02d:%02d:02","channel":6,"ssid":"guest"}]}`,
				fl, a, fl+1, a+1, floor.ID.ID, fl, a, fl, a))
		}
		if r := e.Admin.Expect(200, "POST", "/V5/ingest/aps", raw(recs)); !strings.Contains(string(r.Body), `"rejected":[]`) {
			b.Fatalf("APs: %s", r.Body)
		}
		var bssids []string
		for a := range 20 {
			bssids = append(bssids, fmt.Sprintf("00:11:74:%02d:%02d:01", fl, a), fmt.Sprintf("00:11:74:%02d:%02d:02", fl, a))
		}
		m, err := e.Store.RadiosByBSSID(ctx, 1, bssids)
		if err != nil || len(m) != len(bssids) {
			b.Fatalf("radios: %v %d", err, len(m))
		}
		for i, bs := range bssids {
			ch, ssid := 36, "corp"
			if i%2 == 1 {
				ch, ssid = 6, "guest"
			}
			radios = append(radios, radio{box: m[bs].BoxID, loc: m[bs].LocationID, ch: ch, ssid: ssid})
		}
	}

	r := rand.New(rand.NewPCG(1, 2))
	const batch = 10_000
	var ingest, upkeep time.Duration
	step := int64(24*time.Hour/time.Millisecond) / int64(n)
	for start := 0; start < n; start += batch {
		events := make([]*wnms.ClientEvent, 0, batch)
		bodies := make([][]byte, 0, batch)
		for i := start; i < min(start+batch, n); i++ {
			rd := radios[r.IntN(len(radios))]
			ts := day.UnixMilli() + int64(i)*step
			box := rd.box
			ev := &wnms.ClientEvent{EventID: "e" + strconv.Itoa(i), MacAddress: fmt.Sprintf("aa:bb:%02x:%02x:%02x:%02x", i>>24&255, i>>16&255, i>>8&255, i&255),
				Timestamp: ts, SSID: rd.ssid, Channel: rd.ch, Protocol: "A", LocationID: rd.loc, APBoxID: &box, Dot11AC: true}
			assoc := ts - 5000
			if r.IntN(20) == 0 {
				code := 1 + r.IntN(3)
				sub := code*100 + 1 + r.IntN(3)
				ev.Type, ev.Code, ev.SubCode = wnms.Failure, &code, &sub
				ev.AssociatedAt = &assoc
				bodies = append(bodies, fmt.Appendf(nil, `{"channel":%d,"associationTimestamp":%d}`, rd.ch, assoc))
			} else {
				auth := assoc
				if rd.ssid == "corp" {
					auth += 40 + int64(r.IntN(300))
				}
				netw := auth + 20 + int64(r.IntN(200))
				if r.IntN(20) == 0 {
					netw += 2000 + int64(r.IntN(4000)) // slow
				}
				ev.Type = wnms.Success
				ev.AssociatedAt, ev.AuthenticatedAt, ev.NetworkAt = &assoc, &auth, &netw
				bodies = append(bodies, fmt.Appendf(nil, `{"channel":%d,"associationTimestamp":%d,"authenticationTimestamp":%d,"networkTimestamp":%d}`,
					rd.ch, assoc, auth, netw))
			}
			events = append(events, ev)
		}
		t0 := time.Now()
		if _, err := e.Store.InsertClientEvents(ctx, 1, events, bodies, nil); err != nil {
			b.Fatal(err)
		}
		ingest += time.Since(t0)
		if start/batch%10 == 0 { // the upkeep alone, on one batch in ten, into another customer's counts
			t0 = time.Now()
			if err := e.Store.KeepServiceLevelsForBench(ctx, 99, events); err != nil {
				b.Fatal(err)
			}
			upkeep += time.Since(t0)
		}
	}
	batches := (n + batch - 1) / batch
	hours, slow, err := e.Store.ServiceLevelRowsForBench(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %d attempts ingested in %v (%.0f/s, %.1f ms a batch of %d); the upkeep alone %.2f ms a batch; rows: %d of service_level_hours, %d of service_level_slow (both customers)",
		be, n, ingest.Round(time.Millisecond), float64(n)/ingest.Seconds(), float64(ingest.Milliseconds())/float64(batches), batch,
		float64(upkeep.Microseconds())/1000/float64((batches+9)/10), hours, slow)

	svc := e.API.ServiceLevels
	for _, g := range []string{"none", "floor", "ap", "ssid", "band"} {
		b.Run(g, func(b *testing.B) {
			b.ReportAllocs()
			var times []time.Duration
			var got *servicelevel.Levels
			for b.Loop() {
				t0 := time.Now()
				got, err = svc.Levels(ctx, 1, site, day.UnixMilli(), day.UnixMilli()+24*3600_000-1, g)
				times = append(times, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
			}
			if got.Metrics[0].Count != int64(n) {
				b.Fatalf("counted %d attempts of %d", got.Metrics[0].Count, n)
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
