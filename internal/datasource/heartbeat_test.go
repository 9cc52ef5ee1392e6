package datasource

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// beats counts the heartbeat writes the bridge asks for.
type beats struct {
	mu    sync.Mutex
	calls [][]int64
	fail  bool
}

func (h *beats) HeartbeatAPs(_ context.Context, _ int64, boxIDs []int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, slices.Clone(boxIDs))
	if h.fail {
		return errors.New("store down")
	}
	return nil
}

// Records of one AP from many packets at once write its heartbeat once
// per HeartbeatEvery; a write that failed is tried again by the next
// record; the APs remembered stay bounded.
func TestHeartbeatBounded(t *testing.T) {
	h := &beats{}
	b := &Bridge{Heartbeat: h, HeartbeatEvery: time.Hour}
	b.init()
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.heartbeat(t.Context(), 1, []int64{7, 8})
			}
		}()
	}
	wg.Wait()
	n := 0
	for _, c := range h.calls {
		n += len(c)
	}
	if n != 2 {
		t.Fatalf("6,400 records of 2 APs wrote %d heartbeats (%v), want 2", n, h.calls)
	}
	before := len(h.calls)
	h.fail = true
	b.heartbeat(t.Context(), 1, []int64{9})
	h.fail = false
	b.heartbeat(t.Context(), 1, []int64{9})
	if len(h.calls) != before+2 || !slices.Equal(h.calls[len(h.calls)-1], []int64{9}) {
		t.Errorf("a failed heartbeat was not tried again by the next record: %v", h.calls)
	}
	// Past maxBeats APs, those written longer than HeartbeatEvery ago are
	// forgotten.
	b.HeartbeatEvery = time.Nanosecond
	for i := range int64(maxBeats + 10) {
		b.dueBeats([]int64{1000 + i}, time.Now())
	}
	b.beatsMu.Lock()
	kept := len(b.beats)
	b.beatsMu.Unlock()
	if kept > maxBeats {
		t.Errorf("%d APs remembered, more than %d", kept, maxBeats)
	}
}
