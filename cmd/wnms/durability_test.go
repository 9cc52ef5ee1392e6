package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store/storetest"
)

// Nothing acknowledged is ever lost, and nothing is stored twice: two
// senders ingest client events while the server is killed (SIGKILL) and
// restarted twenty times, each resending what was not acknowledged when
// its connection broke. At the end every event sent is stored exactly
// once, on each engine.
func TestIngestSurvivesKills(t *testing.T) {
	t.Parallel()
	const (
		kills   = 20
		senders = 2
		batch   = 200
		macs    = 8
	)
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			cfg := storetest.StoreConfig(t, b)
			dir := t.TempDir()
			args := []string{"--data", filepath.Join(dir, "data"), "--bootstrap-key-id", "dur-key",
				"--bootstrap-key-value", "dur-value-0123456789"}
			if cfg.DatabaseURL != "" {
				args = append(args, "--database-url", cfg.DatabaseURL)
			}
			addr := freeTCPPort(t)
			now := time.Now()
			var (
				mu     sync.Mutex
				server *proc
				sent   int // events in acknowledged batches
				next   int // the next event number
			)
			// makeBatch is the next batch of events, each with its own
			// eventId, spread over the last two days and eight clients.
			makeBatch := func() []byte {
				mu.Lock()
				defer mu.Unlock()
				var buf bytes.Buffer
				for range batch {
					n := next
					next++
					fmt.Fprintf(&buf, `{"eventId":"dur-%d","macAddress":"aa:bb:cc:00:00:%02x","bssid":"00:11:74:00:00:01","channel":36,"ssid":"corp","timestamp":%d,"eventType":"Success"}`+"\n",
						n, n%macs, now.Add(-time.Duration(n)*time.Minute%(48*time.Hour)).UnixMilli())
				}
				return buf.Bytes()
			}
			current := func() *proc {
				mu.Lock()
				defer mu.Unlock()
				return server
			}
			server = startProc(t, addr, args...)
			cookie := session(t, addr, "dur-key", "dur-value-0123456789")

			stop := make(chan struct{})
			var wg sync.WaitGroup
			for range senders {
				wg.Add(1)
				go func() {
					defer wg.Done()
					client := &http.Client{Timeout: 30 * time.Second}
					body := makeBatch()
					for {
						req, _ := http.NewRequest("POST", "http://"+addr+"/new/webservice/V5/ingest/clientevents", bytes.NewReader(body))
						req.Header.Set("Content-Type", "application/x-ndjson")
						req.AddCookie(cookie)
						resp, err := client.Do(req)
						if err == nil {
							var res struct{ Accepted, Duplicates int }
							json.NewDecoder(resp.Body).Decode(&res)
							resp.Body.Close()
							if resp.StatusCode == 200 && res.Accepted+res.Duplicates == batch {
								mu.Lock()
								sent += batch
								mu.Unlock()
								select {
								case <-stop:
									return
								default:
								}
								body = makeBatch()
								continue
							}
						}
						// Not acknowledged: the server is down or on its way
						// down; the same batch goes again once it is back.
						time.Sleep(50 * time.Millisecond)
					}
				}()
			}
			r := rand.New(rand.NewPCG(1, 2))
			for k := range kills {
				time.Sleep(time.Duration(100+r.IntN(400)) * time.Millisecond)
				current().kill()
				p := startProc(t, addr, args...)
				mu.Lock()
				server = p
				mu.Unlock()
				if k == kills-1 {
					close(stop)
				}
			}
			wg.Wait()

			mu.Lock()
			want := sent
			mu.Unlock()
			if want == 0 {
				t.Fatal("no batch was acknowledged")
			}
			stored := 0
			newest := map[string]int64{}
			for m := range macs {
				var page struct {
					TotalCount   int
					ClientEvents []struct{ Timestamp int64 }
				}
				status, body := getJSON(t, "http://"+addr+fmt.Sprintf("/new/webservice/V5/devices/clientevents/aa:bb:cc:00:00:%02x/0/1", m), cookie, &page)
				if status != 200 || len(page.ClientEvents) != 1 {
					t.Fatalf("event page: %d %s", status, body)
				}
				stored += page.TotalCount
				newest[fmt.Sprintf("AA:BB:CC:00:00:%02X", m)] = page.ClientEvents[0].Timestamp
			}
			// The clients' state, written behind the events and journalled
			// with them, is the newest stored event of each: none lost to a
			// kill between an acknowledgement and its flush.
			var clients []struct {
				MacAddress string
				LastSeen   int64
			}
			if status, body := getJSON(t, "http://"+addr+"/new/webservice/V5/devices/clients", cookie, &clients); status != 200 {
				t.Fatalf("clients: %d %s", status, body)
			}
			seen := map[string]int64{}
			for _, c := range clients {
				seen[c.MacAddress] = c.LastSeen
			}
			if !maps.Equal(seen, newest) {
				t.Errorf("clients last seen %v, want the newest stored event of each %v", seen, newest)
			}
			if stored != want {
				t.Errorf("%d events stored after %d kills, want the %d acknowledged, each once", stored, kills, want)
			}
			t.Logf("%d events acknowledged and stored once across %d kills", want, kills)
		})
	}
}

// getJSON GETs u with the session and decodes the answer into v.
func getJSON(t *testing.T, u string, cookie *http.Cookie, v any) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(body, v); err != nil && resp.StatusCode == 200 {
		t.Fatalf("%s: %v", u, err)
	}
	return resp.StatusCode, string(body)
}
