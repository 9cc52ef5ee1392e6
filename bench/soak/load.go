package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	rad "layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc2869"
)

// callRec is an HTTP call that did not answer 200.
type callRec struct {
	Kind       string
	Start, End time.Time
	Status     int // 0: no answer (connection refused or cut)
	Err        string
}

// recorder keeps what the load's HTTP calls got.
type recorder struct {
	mu      sync.Mutex
	ok      map[string]int
	bad     []callRec
	lat     map[string][]timed // of the calls answered 200
	skipped map[string]int     // paced calls not made: too many in flight
}

func (c *recorder) add(kind string, start, end time.Time, status int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ok == nil {
		c.ok, c.lat, c.skipped = map[string]int{}, map[string][]timed{}, map[string]int{}
	}
	if status == 200 && err == nil {
		c.ok[kind]++
		c.lat[kind] = append(c.lat[kind], timed{At: start, Took: end.Sub(start)})
		return
	}
	e := ""
	if err != nil {
		e = err.Error()
	}
	c.bad = append(c.bad, callRec{Kind: kind, Start: start, End: end, Status: status, Err: e})
}

func (c *recorder) skip(kind string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.skipped == nil {
		c.skipped = map[string]int{}
	}
	c.skipped[kind]++
}

// ackBook is what the server acknowledged: the keys the checks look for
// in the store.
type ackBook struct {
	mu              sync.Mutex
	batches         map[string]bool // event ids of acknowledged batches
	batchCount      int
	unacked         int // batches given up (never acknowledged)
	refused         int // batches answered 4xx
	recordsRejected int // records of acknowledged batches the server rejected
	firstRejection  string
	acctEvents      map[string]bool // "MAC|ts" of answered Starts and Stops
	acctSamples     map[string]bool // "MAC|ts" of answered Interim-Updates and Stops
	accepts         map[string]int  // accepted authentications by client MAC
	authAsked       map[string]int  // authentications sent, by client MAC
	acceptedAt      map[string]time.Time
	acctSent        int // accounting packets sent (each once, resent until answered)
	acctGiven       int // of them never answered
	authSent        int
	authAccept      int
	authReject      int
	authNone        int // no answer
	syslogSent      int
	syslogErr       int
	streamRecv      int
	streamConns     int
}

func (a *ackBook) init() {
	a.batches, a.acctEvents, a.acctSamples = map[string]bool{}, map[string]bool{}, map[string]bool{}
	a.accepts, a.authAsked, a.acceptedAt = map[string]int{}, map[string]int{}, map[string]time.Time{}
}

// call makes an HTTP call of the load with the session and records it.
func (r *run) call(ctx context.Context, kind, method, path string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base()+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Cookie", "JSESSIONID="+r.session())
	start := time.Now()
	resp, err := r.client.Do(req)
	status := 0
	var got []byte
	if err == nil {
		got, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		status = resp.StatusCode
	}
	if ctx.Err() != nil && status == 0 {
		return 0, nil, ctx.Err() // the run ended: not the server's doing
	}
	r.rec.add(kind, start, time.Now(), status, err)
	if status == http.StatusUnauthorized {
		r.login()
	}
	return status, got, err
}

// paced calls f rate times a second, each in a goroutine of its own
// (open loop: a slow answer does not slow the pace), with at most limit
// in flight; a call due when limit are is skipped and counted.
func (r *run) paced(ctx context.Context, wg *sync.WaitGroup, kind string, rate float64, limit int, f func(context.Context)) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		sem := make(chan struct{}, limit)
		period := time.Duration(float64(time.Second) / rate)
		next := time.Now().Add(time.Duration(mrand.Int64N(int64(period))))
		var calls sync.WaitGroup
		defer calls.Wait()
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(next)):
			}
			next = next.Add(period)
			select {
			case sem <- struct{}{}:
			default:
				r.rec.skip(kind)
				continue
			}
			calls.Add(1)
			go func() {
				defer func() { <-sem; calls.Done() }()
				f(ctx)
			}()
		}
	}()
}

// ingestLoop posts a batch of 1,000 events (times -scale) every 2 s, each
// resent every half second until the server acknowledges it (200), for
// up to 5 minutes, as a real client does when the server dies under it.
// It goes on resending the batches in flight after ctx ends; done
// counts them.
func (r *run) ingestLoop(ctx context.Context, done *sync.WaitGroup) {
	size := max(1, int(1000**scale))
	done.Add(1)
	go func() {
		defer done.Done()
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for b := 0; ; b++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			done.Add(1)
			go func() {
				defer done.Done()
				body, ids := r.batch(b, size)
				deadline := time.Now().Add(5 * time.Minute)
				for {
					status, got, _ := r.call(context.Background(), "ingest", "POST", "/V5/ingest/clientevents", body)
					switch {
					case status == 200:
						// Each record not rejected is stored (accepted, or a
						// duplicate of one stored before: a resent batch).
						var ans struct {
							Rejected []struct {
								Index   int
								Message string
							}
						}
						json.Unmarshal(got, &ans)
						rejected := map[int]bool{}
						for _, x := range ans.Rejected {
							rejected[x.Index] = true
						}
						r.acked.mu.Lock()
						for i, id := range ids {
							if !rejected[i] {
								r.acked.batches[id] = true
							}
						}
						r.acked.batchCount++
						r.acked.recordsRejected += len(ans.Rejected)
						if len(ans.Rejected) > 0 && r.acked.firstRejection == "" {
							r.acked.firstRejection = ans.Rejected[0].Message
						}
						r.acked.mu.Unlock()
						return
					case status >= 400 && status < 500 && status != 401 && status != 408 && status != 429:
						r.acked.mu.Lock()
						r.acked.refused++
						r.acked.mu.Unlock()
						return
					}
					if time.Now().After(deadline) {
						r.acked.mu.Lock()
						r.acked.unacked++
						r.acked.mu.Unlock()
						return
					}
					time.Sleep(500 * time.Millisecond)
				}
			}()
		}
	}()
}

// batch is batch b's events: size events of the -clients MACs at the
// soak's APs, in the last second (so in the slot being filled), every
// 25th a failure; and their event ids.
func (r *run) batch(b, size int) ([]byte, []string) {
	var buf bytes.Buffer
	ids := make([]string, size)
	now := time.Now().UnixMilli()
	buf.WriteByte('[')
	for k := range size {
		if k > 0 {
			buf.WriteByte(',')
		}
		n := b*size + k
		c := n % *clients
		ids[k] = fmt.Sprintf("soak-%d-%d", b, k)
		fmt.Fprintf(&buf, `{"eventId":%q,"macAddress":"02:B0:%02X:%02X:%02X:%02X","bssid":%q,"channel":%d,"ssid":"corp","timestamp":%d,`,
			ids[k], c>>24&255, c>>16&255, c>>8&255, c&255, r.bssids[n%len(r.bssids)], 1+35*(n%len(r.bssids)%2), now-int64(size-k))
		if n%25 == 0 {
			code := 1 + n/25%3
			fmt.Fprintf(&buf, `"eventType":"Failure","failureCode":%d,"subFailureCode":%d}`, code, code*100+1)
		} else {
			buf.WriteString(`"eventType":"Success","dhcpLatency":1,"aaaLatency":1,"dnsLatency":0}`)
		}
	}
	buf.WriteByte(']')
	return buf.Bytes(), ids
}

// reads are the console's and integrations' reads: ~20/s in all.
func (r *run) reads(ctx context.Context, wg *sync.WaitGroup) {
	r.paced(ctx, wg, "users", 10**scale, 32, func(ctx context.Context) {
		r.call(ctx, "users", "GET", "/V5/users/current", nil)
	})
	r.paced(ctx, wg, "events", 6**scale, 32, func(ctx context.Context) {
		c := mrand.IntN(*clients)
		r.call(ctx, "events", "GET", fmt.Sprintf("/V5/devices/clientevents/02:B0:%02X:%02X:%02X:%02X/0/50", c>>24&255, c>>16&255, c>>8&255, c&255), nil)
	})
	r.paced(ctx, wg, "baseline", 4**scale, 32, func(ctx context.Context) {
		slot := time.Now().Truncate(15 * time.Minute).UnixMilli()
		r.call(ctx, "baseline", "GET", fmt.Sprintf("/V5/baselines/clientsconnectivity?fromtime=%d&totime=%d", slot, slot+15*60*1000-1), nil)
	})
}

// stream keeps an event stream open, reconnecting (with Last-Event-ID)
// when it breaks.
func (r *run) stream(ctx context.Context, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := &http.Client{} // no timeout: the stream stays open
		last := ""
		for ctx.Err() == nil {
			req, _ := http.NewRequestWithContext(ctx, "GET", r.base()+"/V5/events/stream", nil)
			req.Header.Set("Cookie", "JSESSIONID="+r.session())
			if last != "" {
				req.Header.Set("Last-Event-ID", last)
			}
			start := time.Now()
			resp, err := c.Do(req)
			if err == nil && resp.StatusCode == 200 {
				r.acked.mu.Lock()
				r.acked.streamConns++
				r.acked.mu.Unlock()
				sc := bufio.NewScanner(resp.Body)
				sc.Buffer(make([]byte, 1<<16), 1<<22)
				for sc.Scan() {
					l := sc.Text()
					switch {
					case strings.HasPrefix(l, "id:"):
						last = strings.TrimSpace(strings.TrimPrefix(l, "id:"))
					case strings.HasPrefix(l, "data:"):
						r.acked.mu.Lock()
						r.acked.streamRecv++
						r.acked.mu.Unlock()
					}
				}
				resp.Body.Close()
			} else if ctx.Err() == nil {
				status := 0
				if err == nil {
					status = resp.StatusCode
					resp.Body.Close()
				}
				r.rec.add("stream", start, time.Now(), status, err)
				if status == 401 {
					r.login()
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
}

// macSeq numbers the clients of the RADIUS authentications, the
// accounting sessions and the syslog connections, a sequence per kind
// (its MAC prefix). With -population 0 each connection is a client of its
// own; else the kind's clients are -population MACs taken in turn, so a
// client comes back every population/rate seconds, as a site's clients
// do. The prefixes keep the kinds' rows apart in the store, and an
// accounting session's records are told apart by client and time.
var macSeq sync.Map // prefix byte → *atomic.Uint32

func nextMAC(prefix byte) string {
	v, _ := macSeq.LoadOrStore(prefix, new(atomic.Uint32))
	n := v.(*atomic.Uint32).Add(1)
	if *population > 0 {
		n = (n-1)%uint32(*population) + 1
	}
	return fmt.Sprintf("02:%02X:%02X:%02X:%02X:%02X", prefix, n>>24&255, n>>16&255, n>>8&255, n&255)
}

// populationPass is how long the load takes to go round population
// clients (0: none, every client new) at scale: the slower of the RADIUS
// authentications (authLoad) and the syslog connections (syslogLoad, six
// lines each). A server started afresh has heard every client once by
// then.
func populationPass(population int, scale float64) time.Duration {
	if population <= 0 {
		return 0
	}
	auths := float64(max(1, int(20*scale+0.5)))          // a second
	conns := float64(max(1, int(10*scale+0.5))) * 10 / 6 // a second
	return time.Duration(float64(population) / min(auths, conns) * float64(time.Second)).Round(time.Second)
}

// auth runs radclient every second with 20 (times -scale) PAP requests
// at once, each of a new client, through wnms's RADIUS proxy to
// FreeRADIUS, and books the accepts.
func (r *run) authLoad(ctx context.Context, wg *sync.WaitGroup) {
	n := max(1, int(20**scale+0.5))
	r.paced(ctx, wg, "radclient", 1, 4, func(ctx context.Context) {
		var b strings.Builder
		macs := make([]string, n)
		for i := range n {
			macs[i] = nextMAC(0xAA)
			fmt.Fprintf(&b, "User-Name = alice\nUser-Password = alice-pw\nCalling-Station-Id = %s\n"+
				"Called-Station-Id = %s:corp\nNAS-Identifier = soak-ap-0\nNAS-IP-Address = 127.0.0.1\nMessage-Authenticator = 0x00\n\n",
				strings.ReplaceAll(macs[i], ":", "-"), strings.ReplaceAll(r.bssids[0], ":", "-"))
		}
		f, err := os.CreateTemp(r.tmp, "radclient")
		if err != nil {
			logf("radclient: %v", err)
			return
		}
		defer os.Remove(f.Name())
		f.WriteString(b.String())
		f.Close()
		// One try, 3 s: a NAS's wait. exec.Command, not CommandContext:
		// the last ones finish after the load ends.
		out, _ := exec.Command("radclient", "-x", "-f", f.Name(), "-p", strconv.Itoa(n), "-r", "1", "-t", "3",
			r.auth, "auth", nasSecret).CombinedOutput()
		acc, rej, none := parseRadclient(out)
		r.acked.mu.Lock()
		defer r.acked.mu.Unlock()
		r.acked.authSent += n
		for _, m := range macs {
			r.acked.authAsked[m]++
		}
		for _, m := range acc {
			r.acked.accepts[m]++
			r.acked.acceptedAt[m] = time.Now()
		}
		r.acked.authAccept += len(acc)
		r.acked.authReject += rej
		r.acked.authNone += none
	})
}

// parseRadclient reads radclient -x's output: the MACs whose request got
// an Access-Accept, how many got another answer, and how many none.
func parseRadclient(out []byte) (accepted []string, other, none int) {
	byID := map[string]string{}
	var last string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) > 3 && f[0] == "Sent" && f[2] == "Id":
			last = f[3]
		case len(f) == 3 && f[0] == "Calling-Station-Id" && last != "":
			byID[last] = strings.ToUpper(strings.ReplaceAll(strings.Trim(f[2], `"`), "-", ":"))
			last = ""
		case len(f) > 3 && f[0] == "Received" && f[2] == "Id":
			if mac, ok := byID[f[3]]; ok {
				if f[1] == "Access-Accept" {
					accepted = append(accepted, mac)
				} else {
					other++
				}
				delete(byID, f[3])
			}
		}
	}
	return accepted, other, len(byID)
}

// accounting starts accounting sessions at 10 packets a second (times
// -scale): each a new client's Start, Interim-Update a second later and
// Stop a second after that, every packet resent every 2 s until
// answered (for up to 2 minutes), as a NAS does.
func (r *run) accounting(ctx context.Context, wg *sync.WaitGroup) {
	r.paced(ctx, wg, "accounting", 10**scale/3, 64, func(context.Context) {
		mac := nextMAC(0xAC)
		t0 := time.Now().Unix()
		sid := randomHex(8)
		for i, status := range []rfc2866.AcctStatusType{rfc2866.AcctStatusType_Value_Start, rfc2866.AcctStatusType_Value_InterimUpdate, rfc2866.AcctStatusType_Value_Stop} {
			time.Sleep(time.Until(time.Unix(t0+int64(i), 0)))
			p := rad.New(rad.CodeAccountingRequest, []byte(nasSecret))
			rfc2866.AcctStatusType_Set(p, status)
			rfc2866.AcctSessionID_SetString(p, sid)
			rfc2865.CallingStationID_SetString(p, strings.ReplaceAll(mac, ":", "-"))
			rfc2865.CalledStationID_SetString(p, strings.ReplaceAll(r.bssids[1], ":", "-")+":corp")
			rfc2865.NASIdentifier_SetString(p, "soak-ap-0")
			rfc2866.AcctInputOctets_Set(p, rfc2866.AcctInputOctets(i*10_000))
			rfc2866.AcctOutputOctets_Set(p, rfc2866.AcctOutputOctets(i*40_000))
			rfc2869.EventTimestamp_Set(p, time.Unix(t0+int64(i), 0))
			ectx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			resp, err := (&rad.Client{Retry: 2 * time.Second}).Exchange(ectx, p, r.acct)
			cancel()
			key := fmt.Sprintf("%s|%d", mac, (t0+int64(i))*1000)
			r.acked.mu.Lock()
			r.acked.acctSent++
			answered := err == nil && resp.Code == rad.CodeAccountingResponse
			if answered {
				if i != 1 {
					r.acked.acctEvents[key] = true
				}
				if i != 0 {
					r.acked.acctSamples[key] = true
				}
			} else {
				r.acked.acctGiven++
			}
			r.acked.mu.Unlock()
			if !answered {
				return // a NAS gives the session up
			}
		}
	})
}

// syslogLoad sends 100 lines a second (times -scale) over UDP from
// 127.0.0.2 (the APs' source): hostapd's and dnsmasq's lines of client
// connections.
func (r *run) syslogLoad(ctx context.Context, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		to, err := net.ResolveUDPAddr("udp", r.syslog)
		if err != nil {
			logf("syslog: %v", err)
			return
		}
		c, err := net.DialUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)}, to)
		if err != nil {
			logf("syslog: %v", err)
			return
		}
		defer c.Close()
		lines := []string{
			"<30>%s ap hostapd: wlan0: STA %s IEEE 802.11: associated (aid 1)",
			"<29>%s ap hostapd: wlan0: AP-STA-CONNECTED %s",
			"<30>%s ap hostapd: wlan0: STA %s WPA: pairwise key handshake completed (RSN)",
			"<30>%s ap dnsmasq-dhcp[1403]: DHCPDISCOVER(br-lan) %s ",
			"<30>%s ap dnsmasq-dhcp[1403]: DHCPACK(br-lan) 10.66.0.5 %s phone",
			"<30>%s ap hostapd: wlan0: AP-STA-DISCONNECTED %s",
		}
		perTick := max(1, int(10**scale+0.5)) // every 100 ms
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		mac := ""
		for n := 0; ; {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for range perTick {
				if n%len(lines) == 0 {
					mac = nextMAC(0x5C)
				}
				_, err := fmt.Fprintf(c, lines[n%len(lines)], time.Now().Format(time.Stamp), strings.ToLower(mac))
				r.acked.mu.Lock()
				r.acked.syslogSent++
				if err != nil {
					r.acked.syslogErr++ // the server is down: ICMP port unreachable
				}
				r.acked.mu.Unlock()
				n++
			}
		}
	}()
}

// simulator runs `wnms simulate --live` (no backfill) until ctx ends.
func (r *run) simulator(ctx context.Context, wg *sync.WaitGroup) {
	if *simClients <= 0 {
		return
	}
	out, err := os.Create(filepath.Join(r.tmp, "simulate.log"))
	if err != nil {
		logf("simulate: %v", err)
		return
	}
	cmd := exec.Command(r.bin, "simulate", "--url", "http://"+r.api, "--key-id", r.keyID, "--key-value", r.keyVal,
		"--clients", strconv.Itoa(*simClients), "--days", "0", "--live", "--retry-for", "10m")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		logf("simulate: %v", err)
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case <-ctx.Done():
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-exited
			}
		case err := <-exited:
			r.fault("the simulator exited: %v (see %s)", err, out.Name())
		}
		out.Close()
	}()
}

// junkBurst sends at once what a broken or hostile client might: 8 MiB
// bodies, bad JSON, and garbage datagrams to the RADIUS and syslog
// ports. Every HTTP answer should be a 4xx, or a 200 that rejects every
// record (an NDJSON line that is not JSON, a record with a field of the
// wrong type: ingest stores the valid records of a body and rejects the
// others one by one).
func (r *run) junkBurst() {
	n := 8 << 20 / 2
	big := make([]byte, 0, 8<<20+2)
	big = append(big, '[')
	for i := range n {
		if i > 0 {
			big = append(big, ',')
		}
		big = append(big, '1')
	}
	big = append(big, ']')
	var wg sync.WaitGroup
	var statuses sync.Map
	count := func(s int, answer []byte) {
		key := strconv.Itoa(s)
		if s == http.StatusOK {
			var a struct {
				Accepted *int `json:"accepted"`
			}
			if json.Unmarshal(answer, &a) != nil || a.Accepted == nil || *a.Accepted != 0 {
				key = "200 ACCEPTING RECORDS"
			} else {
				key = "200 rejecting every record"
			}
		}
		v, _ := statuses.LoadOrStore(key, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, answer, _ := r.call(context.Background(), "junk", "POST", "/V5/ingest/clientevents", big)
			count(s, answer)
		}()
	}
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := []string{`[{"eventId":"x",`, `{not json`, `[{"macAddress":42}]`, "\x00\xff\xfe"}[i%4]
			s, answer, _ := r.call(context.Background(), "junk", "POST", "/V5/ingest/clientevents", []byte(body))
			count(s, answer)
		}()
	}
	garbage := 0
	for _, to := range []string{r.auth, r.acct, r.syslog} {
		c, err := net.Dial("udp", to)
		if err != nil {
			continue
		}
		for range 300 {
			b := make([]byte, 1+mrand.IntN(4096))
			rand.Read(b)
			if _, err := c.Write(b); err == nil {
				garbage++
			}
		}
		c.Close()
	}
	wg.Wait()
	var got []string
	statuses.Range(func(k, v any) bool {
		got = append(got, fmt.Sprintf("%d×%s", v.(*atomic.Int64).Load(), k))
		return true
	})
	sort.Strings(got)
	r.fault("junk: 4 bodies of 8 MiB and 20 of bad JSON answered %v; %d garbage datagrams to the RADIUS and syslog ports", got, garbage)
}
