package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/radius/radiustest"
	"github.com/wnms/wnms/internal/store/storetest"
)

// An accounting session outlives the server (decisions §21): radclient
// sends a Start and an Interim-Update to a `wnms serve` process, which is
// stopped (SIGTERM) before the next update and killed (SIGKILL) before the
// one after; each update after a restart is answered and stored with the
// bytes since the previous one, and so is the Stop. On each engine.
func TestAccountingSessionSurvivesRestarts(t *testing.T) {
	t.Parallel()
	radiustest.NeedTool(t, "radclient")
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			cfg := storetest.StoreConfig(t, b)
			acctAddr := "127.0.0.1:" + strconv.Itoa(radiustest.FreePort(t))
			args := []string{"--data", filepath.Join(t.TempDir(), "data"), "--bootstrap-key-id", "acct-key",
				"--bootstrap-key-value", "acct-value-0123456789", "--radius-acct-listen", acctAddr}
			if cfg.DatabaseURL != "" {
				args = append(args, "--database-url", cfg.DatabaseURL)
			}
			addr := freeTCPPort(t)
			server := startProc(t, addr, args...)
			ck := session(t, addr, "acct-key", "acct-value-0123456789")
			base := "http://" + addr + "/new/webservice"
			r := do(t, "PUT", base+"/V2/locations", ck, "application/json", jsonBody(map[string]any{
				"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
				"location":       map[string]any{"type": "floorlocation", "name": "Acct floor", "timezoneId": "UTC"}}))
			var made struct {
				ID struct{ ID int64 } `json:"id"`
			}
			if r.status != 200 || json.Unmarshal([]byte(r.body), &made) != nil {
				t.Fatalf("floor: %d %s", r.status, r.body)
			}
			const secret = "nas-secret-acct"
			if r := do(t, "PUT", base+"/V5/datasources", ck, "application/json", jsonBody(map[string]any{
				"radius": map[string]any{"upstreams": []any{}},
				"sources": []any{map[string]any{"name": "nas", "cidr": "127.0.0.1/32", "radiusSecret": secret,
					"locationId": map[string]any{"type": "locallocationid", "id": made.ID.ID}}},
			})); r.status != 200 {
				t.Fatalf("data sources: %d %s", r.status, r.body)
			}

			// One packet every 10 minutes of the last hour, each in its own
			// 5-minute traffic bucket.
			start := time.Now().Add(-55 * time.Minute).Truncate(5 * time.Minute)
			n := 0
			acct := func(status string, in, out int) {
				t.Helper()
				at := start.Add(time.Duration(n) * 10 * time.Minute)
				n++
				attrs := []string{"Acct-Status-Type = " + status, "Acct-Session-Id = restart-1", "User-Name = alice",
					"Calling-Station-Id = 02-00-00-00-0a-01", "Called-Station-Id = AA-BB-CC-DD-EE-FF:corp",
					"NAS-IP-Address = 127.0.0.1", "Event-Timestamp = " + strconv.FormatInt(at.Unix(), 10)}
				if status != "Start" {
					attrs = append(attrs, fmt.Sprintf("Acct-Input-Octets = %d", in), fmt.Sprintf("Acct-Output-Octets = %d", out))
				}
				// radclient tries once for 2 s: a refused packet gets no answer.
				if said, ok := radiustest.Radclient(t, acctAddr, "acct", secret, attrs...); !ok || !strings.Contains(said, "Accounting-Response") {
					t.Fatalf("accounting %s %d/%d not answered:\n%s\nserver log:\n%s", status, in, out, said, radiustest.Tail(server.stderr.String(), 20))
				}
			}
			acct("Start", 0, 0)
			acct("Interim-Update", 1000, 5000)
			server.cmd.Process.Signal(syscall.SIGTERM)
			<-server.done
			server = startProc(t, addr, args...)
			acct("Interim-Update", 3000, 12000)
			server.kill()
			server = startProc(t, addr, args...)
			acct("Interim-Update", 3500, 12900)
			acct("Stop", 4000, 13000)

			// Each bucket holds one sample: its bytes in and out, in kB.
			want := []float64{6, 9, 1.4, 0.6}
			var got []float64
			deadline := time.Now().Add(20 * time.Second)
			for {
				r := do(t, "GET", base+"/V5/devices/clients/statistics/trend?type=clienttraffic&macaddress=02:00:00:00:0a:01", ck, "", nil)
				var tr struct {
					Samples []struct {
						Time  int64
						Value float64
					} `json:"samples"`
				}
				json.Unmarshal([]byte(r.body), &tr)
				got = got[:0]
				for _, s := range tr.Samples {
					got = append(got, s.Value)
				}
				if slices.Equal(got, want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("traffic %v, want %v (%d %s)", got, want, r.status, r.body)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}
