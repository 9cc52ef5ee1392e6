package datasource

import (
	"fmt"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/radius"
	"github.com/wnms/wnms/internal/syslog"
	"github.com/wnms/wnms/internal/wnms"
)

// Held RADIUS Successes are bounded, taken once, released when old, and
// a client's fifth accept lets its oldest go.
func TestAcceptsBounded(t *testing.T) {
	var a accepts
	e := &entry{customer: 1}
	other := &entry{customer: 2}
	t0 := time.Unix(1_700_000_000, 0)
	rec := func(mac string) radius.Observation { return success(mac, 0) }

	if out := a.hold(e, rec("02:00:00:00:00:01"), t0); out != nil {
		t.Fatalf("first hold let %v go", out)
	}
	if a.take(other, "02:00:00:00:00:01", time.Time{}, time.Time{}) != nil {
		t.Fatal("another customer's client took the accept")
	}
	if h := a.take(e, "02:00:00:00:00:01", time.Time{}, t0); h == nil || *h.rec.Event.MacAddress != "02:00:00:00:00:01" {
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
	// whatever the NASes send; what holdOrLetGo lets go waits for the next
	// release (at most maxHeld of it; past that it is counted, dropped).
	for i := range maxHeld + 10 {
		a.holdOrLetGo(e, rec(fmt.Sprintf("mac-%d", i)), t0.Add(10*time.Second), 1, nil)
	}
	// (The client above still had 4 held: 14 go.)
	if a.n != maxHeld || len(a.byKey) != maxHeld || len(a.due) != 14 {
		t.Fatalf("%d held (%d clients), %d let go; want the cap %d and 14", a.n, len(a.byKey), len(a.due), maxHeld)
	}
	got, dropped := a.expired(t0.Add(5 * time.Second))
	if len(got) != 14 || dropped != 0 || a.n != maxHeld {
		t.Fatalf("released %d (%d dropped), %d left; want the 14 let go", len(got), dropped, a.n)
	}
	for i := range maxHeld + 3 {
		a.holdOrLetGo(e, rec(fmt.Sprintf("more-%d", i)), t0.Add(10*time.Second), 1, nil)
	}
	got, dropped = a.expired(t0.Add(11 * time.Second))
	if len(got) != 2*maxHeld || dropped != 3 || len(a.byKey) != 0 || a.n != 0 {
		t.Fatalf("released %d, dropped %d, %d left; want %d, 3, 0", len(got), dropped, a.n, 2*maxHeld)
	}
	if len(a.order) > 2*maxHeld {
		t.Fatalf("order holds %d accepts", len(a.order))
	}
	a.hold(e, rec("late"), t0.Add(20*time.Second))
	if got, _ := a.expired(t0.Add(15 * time.Second)); len(got) != 0 {
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
		{"an accept from long before the association", []int{0}, 0, []take{{6000, 6050, -1}}},
		{"the association line received late", []int{1000}, 0, []take{{4000, 4050, 1000}}},
		{"a RADIUS MAC check just before the association", []int{0}, 0, []take{{100, 100, 0}}},
		{"no times take the newest", []int{0, 1000}, 0, []take{{none, none, 1000}, {none, none, 0}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var a accepts
			e := &entry{customer: 1}
			for _, sent := range c.sent {
				a.hold(e, success("02:00:00:00:00:01", ms(sent).UnixMilli()), ms(sent+c.late))
			}
			for i, tk := range c.takes {
				h := a.take(e, "02:00:00:00:00:01", at(tk.assoc), at(tk.auth))
				var got int64 = -1
				if h != nil {
					got = *h.rec.Event.AuthenticationTimestamp - t0.UnixMilli()
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
	a.hold(e, success("02:00:00:00:00:01", 0), t0)
	if a.take(e, "02:00:00:00:00:01", time.Time{}, time.Time{}) == nil || a.held() != 0 {
		t.Fatal("not taken")
	}
	for _, h := range a.order {
		if h.rec.Event != nil || h.e != nil {
			t.Fatalf("order still holds a taken accept's record: %v", h.rec)
		}
	}
}

// withAccepts merges each syslog Success with its own connection's
// accept, by the Success's receive times, and leaves out the 802.1X
// failures the proxy made first-hand.
func TestWithAccepts(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	b := &Bridge{}
	e := &entry{customer: 1, src: wnms.DataSource{Name: "lab", Syslog: true, RadiusSecret: "s"}}
	const mac = "02:00:00:00:00:01"
	for _, c := range []struct {
		sent    int
		latency int64
	}{{0, 11}, {10_000, 22}} {
		acc := success(mac, ms(c.sent).UnixMilli())
		acc.Event.AAALatency, acc.Event.Username, acc.Event.RadiusPrimaryIP = &c.latency, "carol", wnms.Ptr("10.0.0.9")
		acc.Event.EventID = wnms.Ptr(fmt.Sprintf("radius-%d", c.sent))
		b.accepts.hold(e, acc, ms(c.sent))
	}
	events := []syslog.ClientEvent{
		// The connection of the second accept.
		{MacAddress: mac, EventType: "Success", Timestamp: 1, AssocSeen: ms(9_900), AuthSeen: ms(10_050)},
		{MacAddress: mac, EventType: "Failure", Timestamp: 2, FailureCode: 2, SubFailureCode: 202},
		// A reconnection that skipped RADIUS, 20 s after the first accept:
		// not its connection's.
		{MacAddress: mac, EventType: "Success", Timestamp: 3, AssocSeen: ms(20_000), AuthSeen: ms(20_050)},
	}
	all := make([]radius.Observation, len(events))
	for i := range events {
		r := events[i].Record()
		all[i] = radius.Observation{Event: &r}
	}
	got, _ := b.withAccepts(e, events, all)
	if len(got) != 2 || *got[0].Event.Timestamp != 1 || *got[1].Event.Timestamp != 3 {
		t.Fatalf("records %v, want the two Successes", got)
	}
	if r := got[0].Event; wnms.Str(r.RadiusPrimaryIP) != "10.0.0.9" || r.Username != "carol" || wnms.Str(r.EventID) != "radius-10000" ||
		r.AAALatency == nil || *r.AAALatency != 22 || r.AuthenticationTimestamp == nil || *r.AuthenticationTimestamp != ms(10_000).UnixMilli() {
		t.Errorf("the Success did not take its connection's accept: %+v", r)
	}
	if got[1].Event.AAALatency != nil {
		t.Errorf("the reconnection without RADIUS took an older accept: %+v", got[1].Event)
	}
	if b.accepts.held() != 1 {
		t.Errorf("%d accepts held, want the first", b.accepts.held())
	}
}

// HoldSuccess takes the Successes of sources that send syslog, and only
// those.
func TestHoldSuccess(t *testing.T) {
	b := &Bridge{}
	b.init()
	b.table.Store(&table{byName: map[string]*entry{
		key(1, "ap"):     {customer: 1, src: wnms.DataSource{Name: "ap", Syslog: true}},
		key(1, "radius"): {customer: 1, src: wnms.DataSource{Name: "radius"}},
	}})
	accept := success("02:00:00:00:00:01", 1700000000000)
	failure := success("02:00:00:00:00:01", 0)
	failure.Event.EventType = wnms.Ptr(wnms.Failure)
	for _, c := range []struct {
		name string
		src  radius.Source
		rec  radius.Observation
		want bool
	}{
		{"a syslog source's Success", radius.Source{Group: 1, Name: "ap"}, accept, true},
		{"a source without syslog", radius.Source{Group: 1, Name: "radius"}, accept, false},
		{"an unknown source", radius.Source{Group: 2, Name: "ap"}, accept, false},
		{"a Failure", radius.Source{Group: 1, Name: "ap"}, failure, false},
	} {
		if got := b.HoldSuccess(c.src, c.rec, make(chan bool, 1)); got != c.want {
			t.Errorf("%s: held %v, want %v", c.name, got, c.want)
		}
	}
	if b.accepts.held() != 1 {
		t.Errorf("%d held, want 1", b.accepts.held())
	}
}

// success is a RADIUS Success of client mac whose accept the proxy had at
// authAt (ms; 0: not said).
func success(mac string, authAt int64) radius.Observation {
	r := &wnms.EventRecord{MacAddress: wnms.Ptr(mac), EventType: wnms.Ptr(wnms.Success)}
	if authAt != 0 {
		r.AuthenticationTimestamp = wnms.Ptr(authAt)
	}
	return radius.Observation{Event: r}
}
