package radius

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rad "layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc2869"
)

// BenchmarkProxyLatency measures what the proxy adds to a PAP
// authentication against FreeRADIUS at 500 authentications/s: b.N
// requests straight to FreeRADIUS, then b.N through the proxy, paced at
// 2 ms, with p50 and p99 of each and of the difference. Run it with a
// fixed count, e.g. -bench ProxyLatency -benchtime 5000x.
func BenchmarkProxyLatency(b *testing.B) {
	fr := startFreeRADIUSWith(b, "-l", "stdout")
	_, addr, _ := startProxy(b, Config{Sources: []SourceConfig{localSource()},
		Upstreams: []Upstream{{Address: fr.Auth, Secret: upstreamSecret, TimeoutMs: 3000}}}, ProxyOptions{})
	// FreeRADIUS starts threads as load comes: warm it up first, through
	// the proxy (which warms that path too).
	paced(b, addr, sourceSecret, 1000)
	b.ResetTimer()
	direct := paced(b, fr.Auth, upstreamSecret, b.N)
	proxied := paced(b, addr, sourceSecret, b.N)
	b.ReportMetric(0, "ns/op")
	for _, q := range []struct {
		name string
		p    float64
	}{{"p50", 0.50}, {"p99", 0.99}} {
		d, p := quantile(direct, q.p), quantile(proxied, q.p)
		b.ReportMetric(float64(d.Microseconds()), "direct-"+q.name+"-µs")
		b.ReportMetric(float64(p.Microseconds()), "proxy-"+q.name+"-µs")
		b.ReportMetric(float64((p - d).Microseconds()), "added-"+q.name+"-µs")
	}
}

// paced sends n PAP requests to addr at 500/s from one socket and
// returns their round trips; a request unanswered in 3 s fails the
// benchmark.
func paced(b *testing.B, addr, secret string, n int) []time.Duration {
	to, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		b.Fatal(err)
	}
	pc := listen(b)
	var mu sync.Mutex
	sent := map[byte]time.Time{}
	var rtts []time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for len(rtts) < n {
			pc.SetReadDeadline(time.Now().Add(3 * time.Second))
			l, _, err := pc.ReadFromUDP(buf)
			if err != nil || l < 20 {
				return
			}
			now := time.Now()
			mu.Lock()
			if at, ok := sent[buf[1]]; ok {
				rtts = append(rtts, now.Sub(at))
				delete(sent, buf[1])
			}
			mu.Unlock()
		}
	}()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for i := range n {
		<-tick.C
		p := rad.New(rad.CodeAccessRequest, []byte(secret))
		p.Identifier = byte(i)
		rfc2865.UserName_SetString(p, "alice")
		rfc2865.UserPassword_SetString(p, "alice-pw")
		rfc2865.CallingStationID_SetString(p, "02-00-00-00-00-01")
		wire, err := encodeAccessRequest(p, []byte(secret))
		if err != nil {
			b.Fatal(err)
		}
		mu.Lock()
		sent[p.Identifier] = time.Now()
		mu.Unlock()
		pc.WriteToUDP(wire, to)
	}
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(rtts) != n {
		b.Fatalf("%s: %d of %d answered", addr, len(rtts), n)
	}
	return rtts
}

func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

// slowSink commits after a fixed delay, as a store's group commit would.
type slowSink struct{ delay time.Duration }

func (s slowSink) Emit(context.Context, Source, []Observation) error {
	time.Sleep(s.delay)
	return nil
}

// BenchmarkAccounting measures accounting packets answered per second,
// each answer after its record was committed, from 64 NAS sockets with
// one packet in flight each: the Sink commits at once, or after 2 ms.
func BenchmarkAccounting(b *testing.B) {
	for _, delay := range []time.Duration{0, 2 * time.Millisecond} {
		b.Run("commit="+delay.String(), func(b *testing.B) {
			s, err := NewSettings(Config{Sources: []SourceConfig{localSource()}})
			if err != nil {
				b.Fatal(err)
			}
			a := NewAccounting(s, slowSink{delay}, AccountingOptions{})
			pc := listen(b)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go a.Serve(ctx, pc)
			to := pc.LocalAddr().(*net.UDPAddr)
			const nas = 64
			var next, retries atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for w := range nas {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := listen(b)
					buf := make([]byte, 4096)
					for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
						p := rad.New(rad.CodeAccountingRequest, []byte(sourceSecret))
						rfc2866.AcctStatusType_Set(p, rfc2866.AcctStatusType_Value_InterimUpdate)
						rfc2866.AcctSessionID_SetString(p, fmt.Sprintf("s-%d", w))
						rfc2865.CallingStationID_SetString(p, fmt.Sprintf("02-00-00-00-%02X-%02X", w, i%256))
						rfc2866.AcctInputOctets_Set(p, rfc2866.AcctInputOctets(i))
						rfc2866.AcctOutputOctets_Set(p, rfc2866.AcctOutputOctets(i))
						rfc2869.EventTimestamp_Set(p, time.Unix(1764000000+i, 0))
						wire, _ := p.Encode()
						for {
							c.WriteToUDP(wire, to)
							c.SetReadDeadline(time.Now().Add(time.Second))
							if _, _, err := c.ReadFromUDP(buf); err == nil {
								break
							}
							retries.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "packets/s")
			b.ReportMetric(float64(retries.Load()), "retries")
			for _, r := range DropReasons() {
				if n := a.Counters().Dropped(r); n > 0 {
					b.Logf("dropped %s: %d", r, n)
				}
			}
			b.Logf("requests %d responses %d", a.Counters().AccountingRequests.Load(), a.Counters().AccountingResponses.Load())
		})
	}
}
