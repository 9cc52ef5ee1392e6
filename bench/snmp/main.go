// Command snmp measures the SNMP agent of wnms and what it costs the HTTP
// API:
//
//  1. GET latency, one request at a time: SNMPv2c, and SNMPv3 authPriv
//     (SHA-256, AES) through gosnmp's client;
//  2. the HTTP API alone: wrk on users/current for -duration;
//  3. the same wrk run while -rate SNMPv2c GETs a second hit the agent,
//     with the rate reached and its latency.
//
// The server (API and agent) runs in this process on loopback ports over
// SQLite in a temporary directory; wrk runs as its own process.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wnms/wnms/bench/internal/stats"

	"github.com/gosnmp/gosnmp"

	"github.com/wnms/wnms/bench/internal/benchserver"
	"github.com/wnms/wnms/internal/snmp"
	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/wnms"
)

var (
	rate     = flag.Int("rate", 5000, "SNMP GETs a second during the combined run")
	duration = flag.Duration("duration", 10*time.Second, "length of each wrk run")
	samples  = flag.Int("samples", 2000, "GETs for the one-at-a-time latency")
	conns    = flag.Int("connections", 16, "wrk connections")
)

const engineHex = "0x80003a8c0462656e6368"

func main() {
	flag.Parse()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "wnms-snmp-bench-")
	check(err)
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, store.Config{DataDir: dir, Serving: true})
	check(err)
	defer st.Close()
	srv, err := benchserver.Start(ctx, st)
	check(err)
	secret, log := srv.Secret, srv.Log

	_, err = st.UpdateSNMPPolicy(ctx, wnms.OnPremCustomer, func(*wnms.SNMPPolicy) (*wnms.SNMPPolicy, error) {
		p := wnms.DefaultSNMPPolicy()
		p.SNMPSettings.GetEnabled = true
		p.SNMPSettings.VersionOneTwoSettings = wnms.SNMPv12Settings{EnableGets: true, CommunityString: "bench"}
		p.SNMPSettings.VersionThreeSettings = wnms.SNMPv3Settings{EnableGets: true, UserName: "bench",
			AuthenticationProtocol: wnms.AuthSHA256, AuthenticationPassword: "bench-auth",
			PrivacyProtocol: wnms.PrivAES, PrivacyPassword: "bench-priv", EngineID: engineHex}
		return p, nil
	})
	check(err)
	agentConn, err := net.ListenPacket("udp", "127.0.0.1:0")
	check(err)
	agent := &snmp.Agent{
		Policy: func(ctx context.Context) (*wnms.SNMPPolicy, error) { return st.SNMPPolicy(ctx, wnms.OnPremCustomer) },
		Counts: func(ctx context.Context) (wnms.SNMPCounts, error) {
			return st.SNMPCounts(ctx, time.Now().Add(-5*time.Minute).UnixMilli())
		},
		Engine: snmp.NewEngine(1, secret), DataDir: dir, Description: "wnms bench", Log: log,
	}
	go agent.Serve(ctx, agentConn, 10*time.Second)
	time.Sleep(100 * time.Millisecond)
	agentAddr := agentConn.LocalAddr().(*net.UDPAddr)

	// 1. Latency, one GET at a time.
	get := mustEncode(&gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "bench", PDUType: gosnmp.GetRequest, RequestID: 1,
		Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.2.1.1.5.0", Type: gosnmp.Null}}})
	c, err := net.DialUDP("udp", nil, agentAddr)
	check(err)
	buf := make([]byte, 65535)
	var v2 []time.Duration
	for i := 0; i < *samples; i++ {
		t0 := time.Now()
		_, err := c.Write(get)
		check(err)
		c.SetReadDeadline(time.Now().Add(time.Second))
		_, err = c.Read(buf)
		check(err)
		v2 = append(v2, time.Since(t0))
	}
	c.Close()
	fmt.Printf("GET sysName.0, one at a time, SNMPv2c: p50 %s p99 %s\n", stats.MS(stats.Pct(v2, 50)), stats.MS(stats.Pct(v2, 99)))

	v3 := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(agentAddr.Port), Version: gosnmp.Version3, Timeout: time.Second,
		SecurityModel: gosnmp.UserSecurityModel, MsgFlags: gosnmp.AuthPriv, MaxOids: 60,
		SecurityParameters: &gosnmp.UsmSecurityParameters{UserName: "bench", AuthenticationProtocol: gosnmp.SHA256,
			AuthenticationPassphrase: "bench-auth", PrivacyProtocol: gosnmp.AES, PrivacyPassphrase: "bench-priv"}}
	check(v3.Connect())
	var v3d []time.Duration
	for i := 0; i < *samples; i++ {
		t0 := time.Now()
		_, err := v3.Get([]string{".1.3.6.1.2.1.1.5.0"})
		check(err)
		v3d = append(v3d, time.Since(t0))
	}
	v3.Conn.Close()
	fmt.Printf("GET sysName.0, one at a time, SNMPv3 authPriv SHA-256/AES (gosnmp client): p50 %s p99 %s\n",
		stats.MS(stats.Pct(v3d, 50)), stats.MS(stats.Pct(v3d, 99)))

	// 2. and 3. The HTTP API alone, then beside the SNMP load.
	cookie, err := srv.Session(ctx, http.DefaultClient)
	check(err)
	url := srv.Base + "/V5/users/current"
	alone := wrk(url, cookie)
	fmt.Printf("HTTP users/current alone: %.0f req/s\n", alone)

	stop := make(chan struct{})
	var sent, answered atomic.Int64
	var latMu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	const workers = 8
	per := time.Duration(float64(time.Second) * workers / float64(*rate))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialUDP("udp", nil, agentAddr)
			check(err)
			defer c.Close()
			buf := make([]byte, 65535)
			next := time.Now()
			var mine []time.Duration
			for {
				select {
				case <-stop:
					latMu.Lock()
					lat = append(lat, mine...)
					latMu.Unlock()
					return
				default:
				}
				if d := time.Until(next); d > 0 {
					time.Sleep(d)
				}
				next = next.Add(per)
				t0 := time.Now()
				sent.Add(1)
				if _, err := c.Write(get); err != nil {
					continue
				}
				c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
				if _, err := c.Read(buf); err == nil {
					answered.Add(1)
					mine = append(mine, time.Since(t0))
				}
			}
		}()
	}
	time.Sleep(time.Second)
	n0, t0 := answered.Load(), time.Now()
	both := wrk(url, cookie)
	reached := float64(answered.Load()-n0) / time.Since(t0).Seconds()
	close(stop)
	wg.Wait()
	fmt.Printf("HTTP users/current beside %d SNMP GETs/s: %.0f req/s (%.2f of alone)\n", *rate, both, both/alone)
	fmt.Printf("SNMP during that run: %.0f GETs/s answered (%d sent, %d answered), p50 %s p99 %s\n",
		reached, sent.Load(), answered.Load(), stats.MS(stats.Pct(lat, 50)), stats.MS(stats.Pct(lat, 99)))
}

func mustEncode(p *gosnmp.SnmpPacket) []byte {
	b, err := p.MarshalMsg()
	check(err)
	return b
}

var reqPerSec = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)

// wrk runs wrk on url with the session and returns its requests a second.
func wrk(url, cookie string) float64 {
	out, err := exec.Command("wrk", "-t1", "-c"+strconv.Itoa(*conns), "-d"+duration.String(),
		"-H", "Cookie: JSESSIONID="+cookie, url).CombinedOutput()
	if err != nil {
		check(fmt.Errorf("wrk (apt install wrk): %v %s", err, out))
	}
	m := reqPerSec.FindSubmatch(out)
	if m == nil {
		check(fmt.Errorf("wrk printed no rate: %s", out))
	}
	f, _ := strconv.ParseFloat(string(m[1]), 64)
	return f
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "snmp bench:", err)
		os.Exit(1)
	}
}
