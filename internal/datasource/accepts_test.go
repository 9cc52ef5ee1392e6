package datasource

import (
	"fmt"
	"testing"
	"time"
)

// Held RADIUS Successes are bounded, taken once, released when old, and
// a client's fifth accept lets its oldest go.
func TestAcceptsBounded(t *testing.T) {
	var a accepts
	e := &entry{customer: 1}
	other := &entry{customer: 2}
	t0 := time.Unix(1_700_000_000, 0)
	rec := func(mac string) map[string]any { return map[string]any{"macAddress": mac} }

	if out := a.hold(e, rec("02:00:00:00:00:01"), t0); out != nil {
		t.Fatalf("first hold let %v go", out)
	}
	if a.take(other, "02:00:00:00:00:01", time.Time{}) != nil {
		t.Fatal("another customer's client took the accept")
	}
	if h := a.take(e, "02:00:00:00:00:01", t0); h == nil || h.rec["macAddress"] != "02:00:00:00:00:01" {
		t.Fatalf("take: %v", h)
	}
	if a.take(e, "02:00:00:00:00:01", time.Time{}) != nil {
		t.Fatal("taken twice")
	}

	for i := range maxHeldPerClient {
		if out := a.hold(e, rec("02:00:00:00:00:02"), t0.Add(time.Duration(i)*time.Second)); out != nil {
			t.Fatalf("accept %d of a client let %v go", i+1, out)
		}
	}
	if out := a.hold(e, rec("02:00:00:00:00:02"), t0.Add(maxHeldPerClient*time.Second)); out == nil || !out.at.Equal(t0) {
		t.Fatalf("past maxHeldPerClient, the client's oldest accept stayed: %v went", out)
	}

	// The cap: past maxHeld the oldest goes, so memory stays bounded
	// whatever the NASes send.
	for i := range maxHeld + 10 {
		a.hold(e, rec(fmt.Sprintf("mac-%d", i)), t0.Add(10*time.Second))
	}
	if a.n != maxHeld || len(a.byKey) != maxHeld {
		t.Fatalf("%d held (%d clients), want the cap %d", a.n, len(a.byKey), maxHeld)
	}
	got := a.expired(t0.Add(11 * time.Second))
	if len(got) != maxHeld || len(a.byKey) != 0 || a.n != 0 {
		t.Fatalf("expired %d, %d left", len(got), a.n)
	}
	if len(a.order) > 2*maxHeld {
		t.Fatalf("order holds %d accepts", len(a.order))
	}
	a.hold(e, rec("late"), t0.Add(20*time.Second))
	if got := a.expired(t0.Add(15 * time.Second)); len(got) != 0 {
		t.Fatalf("released a young accept: %v", got)
	}
}

// Each syslog Success takes the accept of its own connection, by when
// wnms received its authentication line: of two connections a second
// apart, each gets its own accept whichever Success comes first, even
// when the first comes after the second accept was held.
func TestAcceptsTakeTheirConnection(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type take struct {
		seen time.Time // zero: a Success with no AuthSeen
		want int       // ms of the accept it takes; -1 none
	}
	for _, c := range []struct {
		name  string
		held  []int // ms each accept was held at
		takes []take
	}{
		{"in order", []int{0, 1000}, []take{{ms(50), 0}, {ms(1050), 1000}}},
		{"second Success first", []int{0, 1000}, []take{{ms(1050), 1000}, {ms(50), 0}}},
		{"a Success before any accept of its connection", []int{1000}, []take{{ms(50), -1}, {ms(1050), 1000}}},
		{"the accept held a little after the line", []int{200}, []take{{ms(0), 200}}},
		{"the accept held later than the slack", []int{0, 300}, []take{{ms(0), 0}, {ms(0), -1}, {ms(300), 300}}},
		{"no AuthSeen takes the newest", []int{0, 1000}, []take{{time.Time{}, 1000}, {time.Time{}, 0}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var a accepts
			e := &entry{customer: 1}
			for _, at := range c.held {
				a.hold(e, map[string]any{"macAddress": "02:00:00:00:00:01", "at": at}, ms(at))
			}
			for i, tk := range c.takes {
				h := a.take(e, "02:00:00:00:00:01", tk.seen)
				switch {
				case tk.want < 0 && h != nil:
					t.Errorf("take %d took the accept of %v ms, want none", i, h.rec["at"])
				case tk.want >= 0 && (h == nil || h.rec["at"] != tk.want):
					t.Errorf("take %d: %v, want the accept of %d ms", i, h, tk.want)
				}
			}
		})
	}
}
