package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/notify"
	"github.com/wnms/wnms/internal/wnms"
)

// BenchmarkAuditedWrites measures what the audit log costs writes: the
// same state-changing calls with the audit record written in each change's
// transaction and without. Each op is one call: a profile created (a row
// and its audit record, with a configChanged event), a profile edited (one
// row read and rewritten, its record listing the fields that changed), or
// the hotspot SSID policy replaced. With clients=8 the calls come from 8
// concurrent clients and the benchmark reports writes/s; with clients=1
// they come one after the other and it reports the median time of a call
// (p50-ms): the difference between audit=true and audit=false is what the
// record adds to a call.
//
//	go test -run X -bench AuditedWrites -benchtime 3000x ./internal/api
func BenchmarkAuditedWrites(b *testing.B) {
	for _, backend := range apitest.Backends(b) {
		for _, call := range []string{"profile", "edit", "hotspot"} {
			for _, clients := range []int{1, 8} {
				for _, audit := range []bool{false, true} {
					b.Run(fmt.Sprintf("%s/%s/clients=%d/audit=%v", backend, call, clients, audit), func(b *testing.B) {
						benchAuditedWrites(b, backend, call, clients, audit)
					})
				}
			}
		}
	}
}

func benchAuditedWrites(b *testing.B, backend apitest.Backend, call string, clients int, audit bool) {
	e := apitest.New(b, backend)
	if !audit {
		e.API.Router.Audit = nil
	}
	const profiles = 64 // edited in turn: on PostgreSQL an edit locks its row
	var ids []int64
	if call == "edit" {
		for i := range profiles {
			var t struct{ TemplateID int64 }
			e.Admin.Expect(http.StatusOK, "PUT", "/V5/templates?locationid=0", json.RawMessage(fmt.Sprintf(
				`{"type":"clientconntestprofile","templateName":"edit-%d","ssid":"corp","frequencyBand":"BAND_5_GHZ","securityMode":0,"securityType":0}`, i))).Decode(b, &t)
			ids = append(ids, t.TemplateID)
		}
	}
	cookie := e.Admin.Session()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	var mu sync.Mutex
	next := 0
	took := make([]time.Duration, 0, b.N)
	do := func() bool {
		mu.Lock()
		i := next
		next++
		mu.Unlock()
		method, path, body := "PUT", "/V5/configuration/global/hotspotssid",
			fmt.Sprintf(`{"policyType":"HOTSPOT_SSID_POLICY","ssids":["guest-%d"]}`, i)
		switch call {
		case "profile":
			path = "/V5/templates?locationid=0"
			body = fmt.Sprintf(`{"type":"clientconntestprofile","templateName":"bench-%d","ssid":"corp","frequencyBand":"BAND_5_GHZ","securityMode":0,"securityType":0}`, i)
		case "edit":
			method, path = "POST", "/V5/templates"
			body = fmt.Sprintf(`{"templateId":%d,"type":"clientconntestprofile","templateName":"edit-%d","createdAtLocationId":{"type":"locallocationid","id":0},"description":"edit %d","ssid":"corp","frequencyBand":"BAND_5_GHZ","securityMode":0,"securityType":0}`,
				ids[i%profiles], i%profiles, i)
		}
		req, _ := http.NewRequest(method, e.HTTP.URL+"/new/webservice"+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Cookie", httpkit.SessionCookie+"="+cookie)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Error(err)
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if resp.StatusCode != http.StatusOK {
			b.Errorf("status %d", resp.StatusCode)
			return false
		}
		mu.Lock()
		took = append(took, d)
		mu.Unlock()
		return true
	}
	b.ResetTimer()
	if clients == 1 {
		for range b.N {
			if !do() {
				return
			}
		}
	} else {
		b.SetParallelism(clients / runtime.GOMAXPROCS(0))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if !do() {
					return
				}
			}
		})
	}
	b.StopTimer()
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	if len(took) > 0 {
		b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}

// BenchmarkEventFanout raises events at a fixed rate (1,000 a second for
// 10 s by default) while 10 webhooks (HTTP receivers that answer at once)
// and 100 event-stream clients take them all, and reports the p50 and p99
// of the delay from an event's raising to its arrival at a receiver and at
// a stream client. Then a dead receiver (one that never answers) gets a
// backlog of 100,000 events, and the benchmark reports the heap before and
// after: the backlog lives in the store, not in memory.
//
//	go test -run X -bench EventFanout -benchtime 1x ./internal/api
func BenchmarkEventFanout(b *testing.B) {
	const (
		rate     = 1000
		seconds  = 10
		webhooks = 10
		streams  = 100
		backlog  = 100_000
		raisersN = 8
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
			var hookDelays, streamDelays []time.Duration
			record := func(list *[]time.Duration, ts int64) {
				d := time.Since(time.UnixMilli(ts))
				mu.Lock()
				*list = append(*list, d)
				mu.Unlock()
			}
			for range webhooks {
				rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					var ev struct{ Timestamp int64 }
					json.NewDecoder(r.Body).Decode(&ev)
					record(&hookDelays, ev.Timestamp)
				}))
				defer func() { rcv.CloseClientConnections(); rcv.Close() }()
				e.Admin.Expect(http.StatusOK, "PUT", "/V5/webhooks", map[string]any{"url": rcv.URL, "secret": hookSecret,
					"kinds": []string{"apDown", "apUp"}})
			}
			cookie := e.Admin.Session()
			var readers sync.WaitGroup
			for range streams {
				req, _ := http.NewRequestWithContext(ctx, "GET", e.HTTP.URL+"/new/webservice/V5/events/stream?kinds=apDown,apUp", nil)
				req.Header.Set("Cookie", httpkit.SessionCookie+"="+cookie)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				rd := bufio.NewReader(resp.Body)
				rd.ReadString('\n') // the opening comment: subscribed
				readers.Add(1)
				go func() {
					defer readers.Done()
					defer resp.Body.Close()
					for {
						line, err := rd.ReadSlice('\n')
						if err != nil {
							return
						}
						if bytes.HasPrefix(line, []byte("data: ")) {
							var ev struct{ Timestamp int64 }
							json.Unmarshal(line[6:], &ev)
							record(&streamDelays, ev.Timestamp)
						}
					}
				}()
			}
			b.ResetTimer()
			start := time.Now()
			total := rate * seconds
			// Events are raised from several places at once (the AP watch,
			// the evaluation, logins): eight raisers share the rate.
			raised := raiseAPChanges(ctx, e.API.Hub, start, rate, total, raisersN)
			deadline := time.Now().Add(2 * time.Minute)
			for {
				mu.Lock()
				h, s := len(hookDelays), len(streamDelays)
				mu.Unlock()
				if h >= total*webhooks && s >= total*streams || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			b.StopTimer()
			mu.Lock()
			hp50, hp99 := percentiles(hookDelays)
			sp50, sp99 := percentiles(streamDelays)
			b.ReportMetric(float64(total)/raised.Seconds(), "events/s")
			b.ReportMetric(float64(len(hookDelays))/float64(total*webhooks), "webhook-share")
			b.ReportMetric(float64(hp50.Milliseconds()), "webhook-p50-ms")
			b.ReportMetric(float64(hp99.Milliseconds()), "webhook-p99-ms")
			b.ReportMetric(float64(len(streamDelays))/float64(total*streams), "stream-share")
			b.ReportMetric(float64(sp50.Milliseconds()), "stream-p50-ms")
			b.ReportMetric(float64(sp99.Milliseconds()), "stream-p99-ms")
			b.Logf("%d events in %s; webhooks %d of %d, p50 %s p99 %s; streams %d of %d, p50 %s p99 %s", total, raised,
				len(hookDelays), total*webhooks, hp50, hp99, len(streamDelays), total*streams, sp50, sp99)
			mu.Unlock()

			// A dead receiver: its backlog grows in the store.
			release := make(chan struct{})
			dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-release:
				}
			}))
			defer func() { close(release); dead.CloseClientConnections(); dead.Close() }()
			e.Admin.Expect(http.StatusOK, "PUT", "/V5/webhooks", map[string]any{"url": dead.URL, "secret": hookSecret,
				"kinds": []string{"userLocked"}})
			heap := func() float64 {
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				return float64(m.HeapInuse) / (1 << 20)
			}
			before := heap()
			evs := make([]*wnms.Event, 0, 1000)
			for i := 0; i < backlog; i++ {
				evs = append(evs, &wnms.Event{Kind: wnms.EventUserLocked, CustomerID: 1, Data: []byte(`{"userId":1}`)})
				if len(evs) == cap(evs) {
					if err := e.Store.AppendEvents(ctx, evs); err != nil {
						b.Fatal(err)
					}
					e.API.Hub.Wake()
					evs = evs[:0]
				}
			}
			// Wait until the backlog is queued for the dead receiver.
			deadline = time.Now().Add(5 * time.Minute)
			for {
				_, n, err := e.Store.Deliveries(ctx, int64(webhooks+1), 0, 1)
				if err != nil {
					b.Fatal(err)
				}
				if n >= backlog || time.Now().After(deadline) {
					b.ReportMetric(float64(n), "backlog")
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			after := heap()
			b.ReportMetric(before, "heap-before-MiB")
			b.ReportMetric(after, "heap-with-backlog-MiB")
			b.Logf("dead receiver's backlog queued; heap %.1f MiB before, %.1f MiB after", before, after)
			cancel()
			e.HTTP.CloseClientConnections()
			readers.Wait()
		})
	}
}

// percentiles returns the p50 and p99 of ds.
func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], ds[len(ds)*99/100]
}

// raiseAPChanges raises total AP up/down events at rate per second from
// start, shared by n goroutines, and returns how long raising took.
func raiseAPChanges(ctx context.Context, hub *notify.Hub, start time.Time, rate, total, n int) time.Duration {
	var raisers sync.WaitGroup
	for r := range n {
		raisers.Add(1)
		go func() {
			defer raisers.Done()
			for i := r; i < total; i += n {
				if wait := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))); wait > 0 {
					time.Sleep(wait)
				}
				hub.APChange(ctx, notify.AP{CustomerID: 1, BoxID: int64(i%500 + 1), Name: "ap", MacAddress: "00:11:22:33:44:55"}, i%2 == 0)
			}
		}()
	}
	raisers.Wait()
	return time.Since(start)
}
