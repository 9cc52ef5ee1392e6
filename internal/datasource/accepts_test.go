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
	if a.take(other, "02:00:00:00:00:01", time.Time{}, time.Time{}) != nil {
		t.Fatal("another customer's client took the accept")
	}
	if h := a.take(e, "02:00:00:00:00:01", time.Time{}, t0); h == nil || h.rec["macAddress"] != "02:00:00:00:00:01" {
		t.Fatalf("take: %v", h)
	}
	if a.take(e, "02:00:00:00:00:01", time.Time{}, time.Time{}) != nil {
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
// wnms received its association and authentication lines and when the
// proxy had each accept: of two connections a second apart, each gets its
// own whichever Success comes first, even when the first comes after the
// second accept was held; an accept from before a connection's
// association is not its own.
func TestAcceptsTakeTheirConnection(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	none := -1_000_000
	type take struct {
		assoc, auth int // ms of the Success's lines; none: zero time
		want        int // ms of the accept it takes; -1 none
	}
	at := func(n int) time.Time {
		if n == none {
			return time.Time{}
		}
		return ms(n)
	}
	for _, c := range []struct {
		name  string
		sent  []int // ms the proxy had each accept
		late  int   // ms after that the bridge held it
		takes []take
	}{
		{"in order", []int{20, 1020}, 0, []take{{0, 50, 20}, {1000, 1050, 1020}}},
		{"second Success first", []int{20, 1020}, 0, []take{{1000, 1050, 1020}, {0, 50, 20}}},
		{"held late by the bridge", []int{20, 1020}, 900, []take{{0, 50, 20}, {1000, 1050, 1020}}},
		{"a Success before any accept of its connection", []int{1020}, 0, []take{{0, 50, -1}, {1000, 1050, 1020}}},
		{"the accept a little after the line", []int{200}, 0, []take{{0, 0, 200}}},
		{"the accept later than the slack", []int{0, 300}, 0, []take{{0, 0, 0}, {0, 0, -1}, {300, 300, 300}}},
		{"an accept from before the association", []int{0}, 0, []take{{5000, 5050, -1}}},
		{"a RADIUS MAC check just before the association", []int{0}, 0, []take{{100, 100, 0}}},
		{"no times take the newest", []int{0, 1000}, 0, []take{{none, none, 1000}, {none, none, 0}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var a accepts
			e := &entry{customer: 1}
			for _, sent := range c.sent {
				a.hold(e, map[string]any{"macAddress": "02:00:00:00:00:01", "authenticationTimestamp": float64(ms(sent).UnixMilli())},
					ms(sent+c.late))
			}
			for i, tk := range c.takes {
				h := a.take(e, "02:00:00:00:00:01", at(tk.assoc), at(tk.auth))
				var got int64 = -1
				if h != nil {
					got = int64(h.rec["authenticationTimestamp"].(float64)) - t0.UnixMilli()
				}
				if got != int64(tk.want) {
					t.Errorf("take %d took the accept of %d ms, want %d", i, got, tk.want)
				}
			}
		})
	}
}

// A released accept keeps nothing through order, which may name it a
// while longer.
func TestAcceptsKeepNothingReleased(t *testing.T) {
	var a accepts
	e := &entry{customer: 1}
	t0 := time.Unix(1_700_000_000, 0)
	a.hold(e, map[string]any{"macAddress": "02:00:00:00:00:01"}, t0)
	if a.take(e, "02:00:00:00:00:01", time.Time{}, time.Time{}) == nil || a.held() != 0 {
		t.Fatal("not taken")
	}
	for _, h := range a.order {
		if h.rec != nil || h.e != nil {
			t.Fatalf("order still holds a taken accept's record: %v", h.rec)
		}
	}
}
