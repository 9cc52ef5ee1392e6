package poller_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/poller"
	"github.com/wnms/wnms/internal/wnms"
)

// A poller polls every interval however long its polls take: the next
// poll is due an interval after the last one began, not after it ended
// (a 30 s poller of an AP that takes a second to answer polls every
// 30 s, not every 31 s).
func TestPollsKeepTheInterval(t *testing.T) {
	const interval, takes = 300 * time.Millisecond, 200 * time.Millisecond
	d := &slowDriver{takes: takes}
	m := &poller.Manager{Store: leaseStore{}, Ingest: &countingIngester{}, Holder: "test", Log: slog.New(slog.DiscardHandler),
		NewDriver: func(wnms.Poller) (poller.Driver, error) { return d, nil }}
	poller.SetInterval(m, interval)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.Run(ctx, time.Hour) }()
	defer func() { cancel(); <-done }()

	const polls = 6
	var starts []time.Time
	waitFor(t, "six polls", func() bool {
		starts = d.started()
		return len(starts) >= polls
	})
	mean := starts[polls-1].Sub(starts[0]) / (polls - 1)
	// Polls an interval after the last ended would be 500 ms apart.
	if mean < interval-20*time.Millisecond || mean > interval+takes/2 {
		t.Errorf("polls %v apart on average, want %v", mean, interval)
	}
}

// Pollers started together spread their first polls over their interval
// (a restart of a server polling 500 APs would otherwise poll them all in
// the same second, and their records reach ingest as one burst); a
// poller added alone later polls at once.
func TestFirstPollsSpread(t *testing.T) {
	const interval = time.Second
	st := &manyStore{n: 5}
	drivers := map[string]*slowDriver{}
	var mu sync.Mutex
	m := &poller.Manager{Store: st, Ingest: &countingIngester{}, Holder: "test", Log: slog.New(slog.DiscardHandler),
		NewDriver: func(p wnms.Poller) (poller.Driver, error) {
			mu.Lock()
			defer mu.Unlock()
			d := &slowDriver{}
			drivers[p.Name] = d
			return d, nil
		}}
	poller.SetInterval(m, interval)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.Run(ctx, time.Hour) }()
	defer func() { cancel(); <-done }()
	firsts := func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		var out []time.Time
		for _, d := range drivers {
			if at := d.started(); len(at) > 0 {
				out = append(out, at[0])
			}
		}
		slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
		return out
	}
	var at []time.Time
	waitFor(t, "the five first polls", func() bool { at = firsts(); return len(at) == 5 })
	// Due at 0, 200, 400, 600 and 800 ms: without the spread, all at 0.
	if span := at[4].Sub(at[0]); span < interval*2/5 {
		t.Errorf("the first polls of five pollers started together span %v, want them spread over %v", span, interval)
	}
	st.set(6)
	added := time.Now()
	if err := m.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the added poller's first poll", func() bool { return len(firsts()) == 6 })
	mu.Lock()
	first := drivers["ap5"].started()[0]
	mu.Unlock()
	if d := first.Sub(added); d > interval/2 {
		t.Errorf("a poller added alone first polled %v after it was added, want at once", d)
	}
}

// manyStore has n pollers, ap0 to ap(n-1), whose leases it always grants.
type manyStore struct {
	leaseStore
	mu sync.Mutex
	n  int
}

func (s *manyStore) set(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n = n
}

func (s *manyStore) AllDataSources(context.Context) (map[int64]*wnms.DataSources, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := wnms.EmptyDataSources()
	for i := range s.n {
		d.Pollers = append(d.Pollers, wnms.Poller{Name: fmt.Sprintf("ap%d", i), Kind: wnms.PollerUbus,
			URL: fmt.Sprintf("http://192.0.2.%d/ubus", i+1), LocationID: wnms.LocalID(1)})
	}
	return map[int64]*wnms.DataSources{1: d}, nil
}

// slowDriver takes its time to see one radio.
type slowDriver struct {
	takes time.Duration
	mu    sync.Mutex
	at    []time.Time
}

func (d *slowDriver) Poll(ctx context.Context) (*poller.Observation, error) {
	d.mu.Lock()
	d.at = append(d.at, time.Now())
	d.mu.Unlock()
	select {
	case <-time.After(d.takes): // the AP's answer
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &poller.Observation{Radios: []poller.Radio{{BSSID: "02:00:00:00:00:01", SSID: "x", Channel: 1}}}, nil
}

func (d *slowDriver) started() []time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Time(nil), d.at...)
}

// leaseStore has one poller, whose lease it always grants.
type leaseStore struct{}

func (leaseStore) AllDataSources(context.Context) (map[int64]*wnms.DataSources, error) {
	d := wnms.EmptyDataSources()
	d.Pollers = []wnms.Poller{{Name: "ap", Kind: wnms.PollerUbus, URL: "http://192.0.2.1/ubus", LocationID: wnms.LocalID(1)}}
	return map[int64]*wnms.DataSources{1: d}, nil
}

func (leaseStore) LocationPaths(_ context.Context, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	for _, id := range ids {
		out[id] = "/1"
	}
	return out, nil
}

func (leaseStore) ClaimPoller(context.Context, int64, string, string, int64, int64, wnms.PollerState) (bool, error) {
	return true, nil
}

func (leaseStore) ReleasePoller(context.Context, int64, string, string) error { return nil }
