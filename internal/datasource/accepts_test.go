package datasource

import (
	"fmt"
	"testing"
	"time"
)

// Held RADIUS Successes are bounded, taken once, released when old, and
// a newer accept of a client lets the older one go.
func TestAcceptsBounded(t *testing.T) {
	var a accepts
	e := &entry{customer: 1}
	other := &entry{customer: 2}
	t0 := time.Unix(1_700_000_000, 0)
	rec := func(mac string) map[string]any { return map[string]any{"macAddress": mac} }

	if out := a.hold(e, rec("02:00:00:00:00:01"), t0); out != nil {
		t.Fatalf("first hold let %v go", out)
	}
	if a.take(other, "02:00:00:00:00:01") != nil {
		t.Fatal("another customer's client took the accept")
	}
	if h := a.take(e, "02:00:00:00:00:01"); h == nil || h.rec["macAddress"] != "02:00:00:00:00:01" {
		t.Fatalf("take: %v", h)
	}
	if a.take(e, "02:00:00:00:00:01") != nil {
		t.Fatal("taken twice")
	}

	a.hold(e, rec("02:00:00:00:00:02"), t0)
	if out := a.hold(e, rec("02:00:00:00:00:02"), t0.Add(time.Second)); out == nil || !out.at.Equal(t0) {
		t.Fatalf("a newer accept of the client kept the older: %v", out)
	}

	// The cap: past maxHeld the oldest goes, so memory stays bounded
	// whatever the NASes send.
	for i := range maxHeld + 10 {
		a.hold(e, rec(fmt.Sprintf("mac-%d", i)), t0.Add(2*time.Second))
	}
	if n := len(a.byKey); n != maxHeld {
		t.Fatalf("%d held, want the cap %d", n, maxHeld)
	}
	got := a.expired(t0.Add(3 * time.Second))
	if len(got) != maxHeld || len(a.byKey) != 0 {
		t.Fatalf("expired %d, %d left", len(got), len(a.byKey))
	}
	if len(a.order) > 2*maxHeld {
		t.Fatalf("order holds %d keys", len(a.order))
	}
	a.hold(e, rec("late"), t0.Add(10*time.Second))
	if got := a.expired(t0.Add(5 * time.Second)); len(got) != 0 {
		t.Fatalf("released a young accept: %v", got)
	}
}
