package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store/storetest"
)

// A change and its audit record commit together, and a webhook delivery
// outlives the server: a writer creates profiles while the server is
// killed (SIGKILL) and restarted; at the end every profile stored has its
// audit record and no record names a profile that is not stored, and the
// receiver has got the configChanged event of every one of them.
func TestAuditAndWebhooksSurviveKills(t *testing.T) {
	t.Parallel()
	const kills = 6
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			cfg := storetest.StoreConfig(t, b)
			dir := t.TempDir()
			args := []string{"--data", filepath.Join(dir, "data"), "--bootstrap-key-id", "kill-key",
				"--bootstrap-key-value", "kill-value-0123456789", "--webhook-allow-private"}
			if cfg.DatabaseURL != "" {
				args = append(args, "--database-url", cfg.DatabaseURL)
			}
			// The receiver acknowledges every delivery and remembers the
			// audit ids of the configuration changes it was told of.
			var mu sync.Mutex
			told := map[int64]bool{}
			rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var ev struct {
					Kind string
					Data struct{ AuditID int64 }
				}
				body, _ := io.ReadAll(r.Body)
				if json.Unmarshal(body, &ev) == nil && ev.Kind == "configChanged" {
					mu.Lock()
					told[ev.Data.AuditID] = true
					mu.Unlock()
				}
			}))
			defer rcv.Close()

			addr := freeTCPPort(t)
			server := startProc(t, addr, args...)
			cookie := session(t, addr, "kill-key", "kill-value-0123456789")
			base := "http://" + addr + "/new/webservice/V5"
			hook, _ := json.Marshal(map[string]any{"url": rcv.URL, "secret": "kill-test-secret-0123456789", "kinds": []string{"configChanged"}})
			if status, body := send(t, "PUT", base+"/webhooks", cookie, hook); status != 200 {
				t.Fatalf("webhook: %d %s", status, body)
			}

			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				client := &http.Client{Timeout: 10 * time.Second}
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					body := fmt.Sprintf(`{"type":"clientconntestprofile","templateName":"kill-%d","ssid":"corp","frequencyBand":"BAND_5_GHZ","securityMode":0,"securityType":0}`, i)
					req, _ := http.NewRequest("PUT", base+"/templates?locationid=0", bytes.NewReader([]byte(body)))
					req.Header.Set("Content-Type", "application/json")
					req.AddCookie(cookie)
					if resp, err := client.Do(req); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					} else {
						time.Sleep(20 * time.Millisecond) // down: try the next one
					}
				}
			}()
			r := rand.New(rand.NewPCG(3, 4))
			for range kills {
				time.Sleep(time.Duration(200+r.IntN(400)) * time.Millisecond)
				server.kill()
				server = startProc(t, addr, args...)
			}
			close(stop)
			<-done

			var profiles []struct{ TemplateID int64 }
			if status, body := getJSON(t, base+"/templates/CL_CONN_TEST_PROFILE?locationid=0&fetchSubTreeTemplates=true&minimalinforequired=false", cookie, &profiles); status != 200 {
				t.Fatalf("profiles: %d %s", status, body)
			}
			stored := map[string]bool{}
			for _, p := range profiles {
				stored[strconv.FormatInt(p.TemplateID, 10)] = true
			}
			audited := map[string]int64{}
			for off := 0; ; off += 1000 {
				var page struct {
					AuditRecords []struct {
						ID           int64
						Method       string
						ResourceType string
						ResourceID   string
						Status       int
					}
					TotalCount int
				}
				if status, body := getJSON(t, fmt.Sprintf("%s/auditlog?resourcetype=templates&limit=1000&offset=%d", base, off), cookie, &page); status != 200 {
					t.Fatalf("audit log: %d %s", status, body)
				}
				for _, rec := range page.AuditRecords {
					if rec.Method == "PUT" && rec.Status == 200 {
						audited[rec.ResourceID] = rec.ID
					}
				}
				if off+1000 >= page.TotalCount {
					break
				}
			}
			if len(stored) < 10 {
				t.Fatalf("only %d profiles were created", len(stored))
			}
			for id := range stored {
				if _, ok := audited[id]; !ok {
					t.Errorf("profile %s is stored without its audit record", id)
				}
			}
			for id := range audited {
				if !stored[id] {
					t.Errorf("an audit record names profile %s, which is not stored", id)
				}
			}
			// Deliveries claimed by a killed server wait out their lease.
			deadline := time.Now().Add(90 * time.Second)
			for {
				mu.Lock()
				missing := 0
				for _, aid := range audited {
					if !told[aid] {
						missing++
					}
				}
				mu.Unlock()
				if missing == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the receiver was never told of %d of %d changes", missing, len(audited))
				}
				time.Sleep(100 * time.Millisecond)
			}
			server.kill()
			t.Logf("%d profiles, each with its record and its event delivered, across %d kills", len(stored), kills)
		})
	}
}

// send makes a request with the session and a JSON body.
func send(t *testing.T, method, u string, cookie *http.Cookie, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
