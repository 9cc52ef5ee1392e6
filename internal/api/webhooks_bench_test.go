package api_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/wnms/wnms/internal/apitest"
)

// BenchmarkWebhookDelivery raises AP events at 1,000 a second for 10 s
// (32 raisers, so that the rate holds while each raise waits for the
// store's round trips) to 10 webhooks, each an HTTP receiver that answers at
// once, and nothing else: no event-stream clients, no dead receiver. It
// reports, per engine, the p50 and p99 of the delay from an event's
// creation (its timestamp) to its arrival at a receiver, and deliveries/s:
// the deliveries received over the time from the first event raised to the
// last delivery received. On PostgreSQL it also reports the rows written
// (inserted or updated) per delivery, in the deliveries' table and in the
// webhooks' table, from the server's table statistics.
//
//	go test -run X -bench WebhookDelivery -benchtime 1x ./internal/api
func BenchmarkWebhookDelivery(b *testing.B) {
	const (
		rate     = 1000
		seconds  = 10
		webhooks = 10
		raisersN = 32
	)
	for _, backend := range apitest.Backends(b) {
		b.Run(string(backend), func(b *testing.B) {
			e := apitest.New(b, backend)
			allowLocalReceivers(e)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go e.API.Hub.Run(ctx)
			<-e.API.Hub.Ready()
			go e.API.Webhooks.Run(ctx)

			var mu sync.Mutex
			delays := make([]time.Duration, 0, rate*seconds*webhooks)
			var last time.Time
			for range webhooks {
				rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					var ev struct {
						Kind      string
						Timestamp int64
					}
					json.NewDecoder(r.Body).Decode(&ev)
					now := time.Now()
					if ev.Kind != "apDown" && ev.Kind != "apUp" {
						return
					}
					mu.Lock()
					delays = append(delays, now.Sub(time.UnixMilli(ev.Timestamp)))
					last = now
					mu.Unlock()
				}))
				defer func() { rcv.CloseClientConnections(); rcv.Close() }()
				e.Admin.Expect(http.StatusOK, "PUT", "/V5/webhooks", map[string]any{"url": rcv.URL, "secret": hookSecret,
					"kinds": []string{"apDown", "apUp"}})
			}
			b.ResetTimer()
			start := time.Now()
			total := rate * seconds
			raised := raiseAPChanges(ctx, e.API.Hub, start, rate, total, raisersN)
			deadline := time.Now().Add(90 * time.Second)
			for {
				mu.Lock()
				n := len(delays)
				mu.Unlock()
				if n >= total*webhooks || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			b.StopTimer()
			mu.Lock()
			defer mu.Unlock()
			p50, p99 := percentiles(delays)
			rate := float64(len(delays)) / last.Sub(start).Seconds()
			b.ReportMetric(float64(total)/raised.Seconds(), "events/s")
			b.ReportMetric(float64(len(delays))/float64(total*webhooks), "share")
			b.ReportMetric(float64(p50.Milliseconds()), "p50-ms")
			b.ReportMetric(float64(p99.Milliseconds()), "p99-ms")
			b.ReportMetric(rate, "deliveries/s")
			if backend == apitest.Postgres {
				deliveries, hooks := pgRowWrites(b, e.Config.DatabaseURL)
				b.ReportMetric(deliveries/float64(len(delays)), "delivery-rows-written/delivery")
				b.ReportMetric(hooks/float64(len(delays)), "webhook-rows-written/delivery")
				b.Logf("rows written per delivery: %.3f of webhook_deliveries, %.3f of webhooks", deliveries/float64(len(delays)),
					hooks/float64(len(delays)))
			}
			b.Logf("%s: %d events in %s; %d of %d delivered, p50 %s p99 %s, %.0f deliveries/s", backend, total, raised.Round(time.Millisecond),
				len(delays), total*webhooks, p50, p99, rate)
		})
	}
}

// pgRowWrites reads how many rows of webhook_deliveries and of webhooks
// were inserted or updated in the database at url, from its table
// statistics (flushed when a server's transactions end, at most a second
// later: it waits for them to stop changing).
func pgRowWrites(b *testing.B, url string) (deliveries, hooks float64) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	read := func() (d, h float64) {
		db.Exec(`SELECT pg_stat_clear_snapshot()`)
		if err := db.QueryRow(`SELECT
			coalesce(sum(n_tup_ins + n_tup_upd) FILTER (WHERE relname = 'webhook_deliveries'), 0),
			coalesce(sum(n_tup_ins + n_tup_upd) FILTER (WHERE relname = 'webhooks'), 0)
			FROM pg_stat_user_tables`).Scan(&d, &h); err != nil {
			b.Fatal(err)
		}
		return d, h
	}
	deliveries, hooks = read()
	for range 20 {
		time.Sleep(500 * time.Millisecond)
		d, h := read()
		if d == deliveries && h == hooks {
			break
		}
		deliveries, hooks = d, h
	}
	return deliveries, hooks
}
