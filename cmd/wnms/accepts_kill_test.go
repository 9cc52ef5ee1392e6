package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/radius/radiustest"
	"github.com/wnms/wnms/internal/store/storetest"
)

// Nothing the NAS received is lost (decisions §21): a NAS (radclient)
// authenticates clients through a real `wnms serve` against FreeRADIUS at
// a steady rate, from a source that also sends syslog (so every accept
// waits for a syslog Success that never comes) or from one that sends
// RADIUS alone. The server is stopped with SIGTERM and restarted twice,
// then killed (SIGKILL) and restarted three times. Every accept radclient
// got is stored, across SIGTERMs and kills alike (its Intermediate
// "RADIUS accept" event and, once its hold is over, its Success; or the
// Success itself): the server answers only once it is committed, and its
// --radius-store-wait is longer than radclient waits, so radclient never
// has an accept that is not; and no accept gives two Successes.
func TestRadiusAcceptsSurviveRestarts(t *testing.T) {
	t.Parallel()
	radiustest.NeedTool(t, "radclient")
	fr := radiustest.StartWith(t, "-l", "stdout")
	for _, b := range storetest.Backends(t) {
		for _, syslog := range []bool{true, false} {
			name := string(b) + "/syslog"
			if !syslog {
				name = string(b) + "/radius-only"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				r := runAcceptLoss(t, b, fr, acceptLoss{rate: 40, batch: 250 * time.Millisecond, macs: 64, hold: 3 * time.Second,
					terms: 2, kills: 3, radiusOnly: !syslog})
				if r.term.received == 0 || r.kill.received == 0 {
					t.Fatalf("radclient got no accept: %+v", r)
				}
				if r.term.lost != 0 {
					t.Errorf("%d of the %d accepts radclient got across %d SIGTERM restarts are not stored", r.term.lost, r.term.received, 2)
				}
				if r.kill.lost != 0 {
					t.Errorf("%d of the %d accepts radclient got across 3 kills are not stored", r.kill.lost, r.kill.received)
				}
				t.Logf("%+v", r)
			})
		}
	}
}

// BenchmarkRadiusAcceptLoss is the large measurement of
// TestRadiusAcceptsSurviveRestarts (docs/benchmarks.md, "Accepts across restarts"):
// radclient asks for 200 accepts a second through `wnms serve` (SQLite,
// and PostgreSQL with WNMS_TEST_DATABASE_URL) while the server is
// stopped with SIGTERM and restarted 5 times, then killed and restarted
// 20 times. It reports the accepts radclient got and those lost in each
// phase; run it once:
//
//	go test -run '^$' -bench RadiusAcceptLoss -benchtime 1x ./cmd/wnms/
func BenchmarkRadiusAcceptLoss(b *testing.B) {
	radiustest.NeedTool(b, "radclient")
	fr := radiustest.StartWith(b, "-l", "stdout")
	for _, backend := range storetest.Backends(b) {
		b.Run(string(backend), func(b *testing.B) {
			for range b.N {
				r := runAcceptLoss(b, backend, fr, acceptLoss{rate: 200, batch: 100 * time.Millisecond, macs: 1024, hold: 10 * time.Second, terms: 5, kills: 20})
				b.ReportMetric(float64(r.term.received), "term-received")
				b.ReportMetric(float64(r.term.lost), "term-lost")
				b.ReportMetric(float64(r.kill.received), "kill-received")
				b.ReportMetric(float64(r.kill.lost), "kill-lost")
				b.ReportMetric(float64(r.kill.lost)/20, "lost/kill")
				b.ReportMetric(float64(r.term.unanswered+r.kill.unanswered), "stored-unanswered")
				b.Logf("%+v", r)
			}
		})
	}
}

// acceptLoss is a run of runAcceptLoss.
type acceptLoss struct {
	rate         int           // accepts a second radclient asks for
	batch        time.Duration // how often a radclient starts with a batch's share of them
	macs         int           // clients the requests go round
	hold         time.Duration // --radius-accept-hold
	terms, kills int           // SIGTERM restarts, then SIGKILL restarts
	radiusOnly   bool          // the source sends no syslog: its accepts are stored as Successes at once
}

// acceptCount is what one phase of runAcceptLoss counted.
type acceptCount struct {
	received int // accepts radclient got
	stored   int // accepts stored (an Intermediate "RADIUS accept" event or a Success with the accept's eventId)
	lost     int // accepts radclient got that are not stored, client by client
	// unanswered are accepts stored that radclient did not get, client by
	// client: a server killed after it had the accept and before the
	// answer left, or an answer later than radclient's one second.
	unanswered int
}

type acceptLossResult struct {
	term, kill acceptCount
}

// runAcceptLoss runs o against a `wnms serve` on backend b with fr as
// its upstream and counts, for its SIGTERM phase and its SIGKILL phase,
// the accepts radclient got against those stored. It fails t when an
// accept gives two Successes, or a stored accept no Success in time.
func runAcceptLoss(t testing.TB, b storetest.Backend, fr *radiustest.FreeRADIUS, o acceptLoss) acceptLossResult {
	cfg := storetest.StoreConfig(t, b)
	dir := t.TempDir()
	radiusAddr := fmt.Sprintf("127.0.0.1:%d", radiustest.FreePort(t))
	args := []string{"--data", filepath.Join(dir, "data"), "--bootstrap-key-id", "acc-key",
		"--bootstrap-key-value", "acc-value-0123456789", "--radius-auth-listen", radiusAddr,
		"--radius-accept-hold", o.hold.String(), "--radius-store-wait", "5s"} // longer than radclient waits (3 s)
	if cfg.DatabaseURL != "" {
		args = append(args, "--database-url", cfg.DatabaseURL)
	}
	addr := freeTCPPort(t)
	server := startProc(t, addr, args...)
	ck := session(t, addr, "acc-key", "acc-value-0123456789")
	base := "http://" + addr + "/new/webservice"
	must := func(what, method, path string, body any) string {
		t.Helper()
		r := do(t, method, base+path, ck, "application/json", jsonBody(body))
		if r.status != 200 {
			t.Fatalf("%s: %d %s", what, r.status, r.body)
		}
		return r.body
	}
	var floor struct {
		ID struct{ ID int64 } `json:"id"`
	}
	json.Unmarshal([]byte(must("floor", "PUT", "/V2/locations", map[string]any{
		"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
		"location":       map[string]any{"type": "floorlocation", "name": "Lab floor", "timezoneId": "UTC"}})), &floor)
	must("AP", "POST", "/V5/ingest/aps", []any{map[string]any{"macaddress": "aa:bb:cc:dd:ee:00", "name": "lab-ap-1",
		"ipAddress": "127.0.0.1", "locationId": map[string]any{"type": "locallocationid", "id": floor.ID.ID},
		"radios": []any{map[string]any{"macaddress": "aa:bb:cc:dd:ee:ff", "channel": 36, "ssid": "corp"}}}})
	const nasSecret = "nas-secret-accepts"
	must("data sources", "PUT", "/V5/datasources", map[string]any{
		"radius": map[string]any{"upstreams": []any{map[string]any{"address": fr.Auth, "secret": radiustest.UpstreamSecret, "timeoutMs": 2000}}},
		"sources": []any{map[string]any{"name": "lab", "cidr": "127.0.0.1/32", "radiusSecret": nasSecret, "syslog": !o.radiusOnly,
			"locationId": map[string]any{"type": "locallocationid", "id": floor.ID.ID}}},
	})

	rnd := rand.New(rand.NewPCG(5, 6))
	phase := func(prefix int, restarts int, restart func()) map[string]int {
		received := map[string]int{}
		var mu sync.Mutex
		stop := make(chan struct{})
		done := make(chan struct{})
		stopped := false
		end := func() {
			if !stopped {
				stopped = true
				close(stop)
				<-done
			}
		}
		defer end() // also when a restart fails the test
		go func() {
			// A batch's requests every batch period, each batch a
			// radclient of its own: the pace holds while the server is
			// down and radclient waits for answers.
			defer close(done)
			var wg sync.WaitGroup
			defer wg.Wait()
			tick := time.NewTicker(o.batch)
			defer tick.Stop()
			// At most 3 s of batches wait for answers at once: on a
			// starved machine the pace drops instead of the radclients
			// piling up.
			inFlight := make(chan struct{}, max(1, int(3*time.Second/o.batch)))
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				select {
				case inFlight <- struct{}{}:
				default:
					continue
				}
				wg.Add(1)
				go func() {
					defer func() { <-inFlight; wg.Done() }()
					n := max(1, int(float64(o.rate)*o.batch.Seconds()))
					for mac, n := range radclientAccepts(t, radiusAddr, nasSecret, prefix, n, o.macs, dir) {
						mu.Lock()
						received[mac] += n
						mu.Unlock()
					}
				}()
			}
		}()
		for range restarts {
			time.Sleep(time.Duration(1000+rnd.IntN(1000)) * time.Millisecond) // load runs meanwhile
			restart()
		}
		// Load goes on until the last start has answered half a second's
		// accepts (a starved machine may take long to serve again).
		total := func() int {
			mu.Lock()
			defer mu.Unlock()
			n := 0
			for _, v := range received {
				n += v
			}
			return n
		}
		for before, deadline := total(), time.Now().Add(2*time.Minute); total() < before+o.rate/2; time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no accepts in 2 minutes after the last start\nserver log:\n%s", radiustest.Tail(server.stderr.String(), 30))
			}
		}
		end()
		return received
	}
	term := func() {
		server.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-server.done:
		case <-time.After(60 * time.Second):
			t.Fatalf("wnms did not stop on SIGTERM:\n%s", radiustest.Tail(server.stderr.String(), 20))
		}
		server = startProc(t, addr, args...)
	}
	kill := func() {
		server.kill()
		server = startProc(t, addr, args...)
	}
	termGot := phase(1, o.terms, term)
	killGot := phase(2, o.kills, kill)
	ck = session(t, addr, "acc-key", "acc-value-0123456789") // a long run outlives the first session

	// Every stored accept gets its one Success once its hold is over,
	// whether its server held it to the end or another start took it back.
	var res acceptLossResult
	deadline := time.Now().Add(o.hold + 60*time.Second)
	for _, ph := range []struct {
		got map[string]int
		c   *acceptCount
	}{{termGot, &res.term}, {killGot, &res.kill}} {
		for mac, n := range ph.got {
			ph.c.received += n
			var accepts map[string]bool
			for {
				var waiting int
				accepts, waiting = storedAccepts(t, base, ck, mac)
				if waiting == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: %d stored accepts have no Success\nserver log:\n%s", mac, waiting, radiustest.Tail(server.stderr.String(), 30))
				}
				time.Sleep(200 * time.Millisecond)
			}
			ph.c.stored += len(accepts)
			ph.c.lost += max(0, n-len(accepts))
			ph.c.unanswered += max(0, len(accepts)-n)
		}
	}
	server.kill()
	return res
}

// storedAccepts reads the client's events and returns the accepts stored
// (by the eventId of their Success) and how many of them have no Success
// yet. It fails t on an accept with two Successes.
func storedAccepts(t testing.TB, base string, ck *http.Cookie, mac string) (map[string]bool, int) {
	t.Helper()
	accepts := map[string]bool{}
	successes := map[string]int{}
	for off := 0; ; off += 500 {
		var page struct {
			TotalCount   int
			ClientEvents []struct {
				EventID      string
				EventType    string
				CategoryCode int
				TypeCode     int
			}
		}
		r := do(t, "GET", fmt.Sprintf("%s/V5/devices/clientevents/%s/%d/500", base, mac, off), ck, "", nil)
		if r.status != 200 || json.Unmarshal([]byte(r.body), &page) != nil {
			t.Fatalf("events of %s: %d %s", mac, r.status, r.body)
		}
		for _, e := range page.ClientEvents {
			switch {
			case e.EventType == "Intermediate" && e.CategoryCode == 2 && e.TypeCode == 11:
				accepts["radius-"+strings.TrimPrefix(e.EventID, "radius-accept-")] = true
			case e.EventType == "Success":
				accepts[e.EventID] = true
				successes[e.EventID]++
			}
		}
		if off+500 >= page.TotalCount {
			break
		}
	}
	waiting := 0
	for id := range accepts {
		switch successes[id] {
		case 0:
			waiting++
		case 1:
		default:
			t.Errorf("%s: the accept %s gave %d Successes", mac, id, successes[id])
		}
	}
	return accepts, waiting
}

// radclientAccepts sends n requests at once with client MACs
// 02:00:00:<prefix>:xx:xx among macs, each answered within 3 s (a NAS's
// usual wait) or given up, and returns the accepts radclient got, by
// client.
func radclientAccepts(t testing.TB, addr, secret string, prefix, n, macs int, dir string) map[string]int {
	var b strings.Builder
	for range n {
		m := rand.IntN(macs)
		fmt.Fprintf(&b, "User-Name = alice\nUser-Password = alice-pw\nCalling-Station-Id = 02-00-00-%02X-%02X-%02X\n"+
			"Called-Station-Id = AA-BB-CC-DD-EE-FF:corp\nNAS-Identifier = lab-ap-1\nNAS-IP-Address = 127.0.0.1\nMessage-Authenticator = 0x00\n\n",
			prefix, m>>8, m&0xff)
	}
	f, err := os.CreateTemp(dir, "requests")
	if err != nil {
		t.Error(err)
		return nil
	}
	defer os.Remove(f.Name())
	f.WriteString(b.String())
	f.Close()
	out, _ := exec.Command("radclient", "-x", "-f", f.Name(), "-p", strconv.Itoa(n), "-r", "1", "-t", "3", addr, "auth", secret).CombinedOutput()
	// -x shows each request's attributes after its "Sent" line and each
	// answer's "Received" line with the request's Id.
	got := map[string]int{}
	byID := map[string]string{}
	var last string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case len(f) > 3 && f[0] == "Sent" && f[2] == "Id":
			last = f[3]
		case len(f) == 3 && f[0] == "Calling-Station-Id" && last != "":
			byID[last] = strings.ReplaceAll(strings.Trim(f[2], `"`), "-", ":")
			last = ""
		case len(f) > 3 && f[0] == "Received" && f[2] == "Id":
			if mac, ok := byID[f[3]]; ok {
				if f[1] == "Access-Accept" {
					got[mac]++
				}
				delete(byID, f[3])
			}
		}
	}
	return got
}
