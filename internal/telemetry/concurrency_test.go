package telemetry_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
)

// Concurrent ingests that touch the same clients and APs, in different
// orders, all succeed: the store takes shared rows in one order, so
// PostgreSQL never has to break a deadlock by failing one of them.
func TestConcurrentIngest(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		// Deadlocks are PostgreSQL's (SQLite has one writer): there every
		// batch holds 3,000 shared clients in its own order. SQLite, which
		// under the race detector takes thirty seconds over that, only has
		// to store every batch, and proves it with a third.
		const senders, rounds = 4, 3
		clients := 3000
		if b == apitest.SQLite {
			clients = 1000
		}
		now := time.Now().UnixMilli()
		var wg sync.WaitGroup
		errs := make(chan string, senders*rounds*3)
		for s := 0; s < senders; s++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := 0; r < rounds; r++ {
					var evs, stats, aps []string
					for i := 0; i < clients; i++ {
						c := (i*7 + s*31 + r*13) % clients // each sender its own order
						evs = append(evs, fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:%02x:%02x","bssid":"00:11:74:00:00:%02x","channel":6,"timestamp":%d,"eventType":"Success"}`,
							c/256, c%256, c%50, now-int64(s*1000+r*100+i)))
						stats = append(stats, fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:%02x:%02x","bssid":"00:11:74:00:00:%02x","channel":6,"timestamp":%d,"rssi":-50,"dataRateMbps":54}`,
							c/256, c%256, c%50, now-int64(s*1000+r*100+i)))
					}
					for i := 0; i < 50; i++ {
						a := (i*3 + s*17) % 50
						aps = append(aps, fmt.Sprintf(`{"macaddress":"00:11:74:aa:00:%02x","radios":[{"macaddress":"00:11:74:00:00:%02x","channel":6}]}`, a, a))
					}
					for _, req := range []struct {
						path string
						recs []string
					}{{"/V5/ingest/aps", aps}, {"/V5/ingest/clientevents", evs}, {"/V5/ingest/clientstats", stats}} {
						if r := e.Admin.Do("POST", req.path, body(req.recs...)); r.Status != 200 {
							errs <- fmt.Sprintf("%s: %d %s", req.path, r.Status, r.Body)
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		var p struct {
			TotalCount int `json:"totalCount"`
		}
		e.Admin.Expect(200, "GET", "/V5/devices/clients/0/1", nil).Decode(t, &p)
		if p.TotalCount != clients {
			t.Errorf("%d clients, want %d", p.TotalCount, clients)
		}
	})
}

// Many senders at once take turns: at most IngestTurns batches are read
// and written at a time, the rest wait their turn with their bodies
// unread, and every batch is stored once. Fifty senders of 10,000-record
// batches on SQLite once got a quarter of one sender's rate between them,
// each batch taking up to 137 s, all fifty parsed and fighting for the
// writer at once.
func TestIngestTakesTurns(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		e.API.Telemetry.IngestTurns = 2
		const senders, perBatch = 12, 200
		now := time.Now().UnixMilli()
		var wg sync.WaitGroup
		results := make([]ingestResult, senders)
		for s := 0; s < senders; s++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var evs []string
				for i := 0; i < perBatch; i++ {
					evs = append(evs, fmt.Sprintf(`{"eventId":"turn-%d-%d","macAddress":"aa:bb:cc:01:%02x:%02x","bssid":"00:11:74:00:00:01","channel":6,"timestamp":%d,"eventType":"Success"}`,
						s, i, s, i%256, now-int64(s*perBatch+i)))
				}
				e.Admin.WithT(t).Expect(200, "POST", "/V5/ingest/clientevents", body(evs...)).Decode(t, &results[s])
			}()
		}
		wg.Wait()
		for s, r := range results {
			if r.Accepted != perBatch || r.Duplicates != 0 || len(r.Rejected) != 0 {
				t.Errorf("sender %d: %+v", s, r)
			}
		}
		if peak := e.API.Telemetry.PeakIngestInFlight(); peak < 1 || peak > 2 {
			t.Errorf("%d batches were worked on at once, want at most 2", peak)
		}
		var events int
		err := e.TelemetryDB().QueryRowContext(t.Context(), `SELECT count(*) FROM client_events`).Scan(&events)
		if err != nil || events != senders*perBatch {
			t.Errorf("%d events stored, want %d (%v)", events, senders*perBatch, err)
		}
	})
}
