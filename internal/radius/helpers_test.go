package radius

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/radius/radiustest"
)

// memSink keeps what it is given; fail makes Emit fail while it is set.
type memSink struct {
	mu   sync.Mutex
	recs map[string][]map[string]any
	fail bool
}

func newMemSink() *memSink { return &memSink{recs: map[string][]map[string]any{}} }

func (s *memSink) Emit(_ context.Context, _ Source, obs []Observation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return errSinkDown
	}
	for _, o := range obs {
		kind, m := asMap(o)
		s.recs[kind] = append(s.recs[kind], m)
	}
	return nil
}

// The kinds of observation, as memSink files them.
const (
	KindClientEvents = "clientevents"
	KindClientStats  = "clientstats"
)

// asMap is an observation as the ingest format's JSON object, without
// the fields not sent, with "nasIdentifier" and "nasIpAddress" when
// known: what the tests look for, field by field.
func asMap(o Observation) (kind string, m map[string]any) {
	var rec any = o.Event
	kind = KindClientEvents
	if o.Sample != nil {
		rec, kind = o.Sample, KindClientStats
	}
	b, err := json.Marshal(rec)
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	for k, v := range m {
		if v == nil || v == "" {
			delete(m, k)
		}
	}
	if o.NASIdentifier != "" {
		m["nasIdentifier"] = o.NASIdentifier
	}
	if o.NASIPAddress != "" {
		m["nasIpAddress"] = o.NASIPAddress
	}
	return kind, m
}

const errSinkDown = wireError("sink down")

func (s *memSink) setFail(v bool) {
	s.mu.Lock()
	s.fail = v
	s.mu.Unlock()
}

func (s *memSink) get(kind string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.recs[kind]...)
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitRecord waits for a record of kind that match accepts, and returns it.
func (s *memSink) waitRecord(t *testing.T, kind string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	var got map[string]any
	waitFor(t, kind+" record", func() bool {
		for _, r := range s.get(kind) {
			if match(r) {
				got = r
				return true
			}
		}
		return false
	})
	return got
}

func failure(code int) func(map[string]any) bool {
	return func(r map[string]any) bool {
		return r["eventType"] == "Failure" && r["subFailureCode"] == float64(code)
	}
}

func isType(typ string) func(map[string]any) bool {
	return func(r map[string]any) bool { return r["eventType"] == typ }
}

// listen opens a UDP socket on a free port of 127.0.0.1.
func listen(t testing.TB) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

const sourceSecret = "source-secret"

func localSource() SourceConfig {
	return SourceConfig{Name: "lab", CIDR: netip.MustParsePrefix("127.0.0.0/8"), RadiusSecret: sourceSecret}
}

// startProxy serves a proxy with cfg on a free port until the test ends.
func startProxy(t testing.TB, cfg Config, opts ProxyOptions) (*Proxy, string, *memSink) {
	t.Helper()
	sink := newMemSink()
	p, addr := startProxyWith(t, cfg, opts, sink)
	return p, addr, sink
}

// startProxyWith serves a proxy with cfg, giving its records to sink,
// until the test ends.
func startProxyWith(t testing.TB, cfg Config, opts ProxyOptions, sink Sink) (*Proxy, string) {
	t.Helper()
	s, err := NewSettings(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := NewProxy(s, sink, opts)
	pc := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, pc) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return p, pc.LocalAddr().String()
}

// startAccounting serves an accounting server with cfg until the test
// ends.
func startAccounting(t *testing.T, cfg Config) (*Accounting, string, *memSink) {
	t.Helper()
	s, err := NewSettings(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sink := newMemSink()
	a := NewAccounting(s, sink, AccountingOptions{})
	pc := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, pc) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return a, pc.LocalAddr().String(), sink
}

func needTool(t testing.TB, names ...string) { radiustest.NeedTool(t, names...) }
