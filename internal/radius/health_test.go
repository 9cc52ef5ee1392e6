package radius

import (
	"strings"
	"testing"
	"time"
)

// An upstream's changes are raised once each: down when it stops
// answering (also when it never answered), up when it answers again, not
// when it answers for the first time; each group (customer) and kind on
// its own.
func TestHealthChanges(t *testing.T) {
	var got []string
	h := &Health{OnChange: func(s UpstreamStatus) {
		state := "down"
		if s.Up {
			state = "up"
		}
		got = append(got, s.Address+"/"+s.Kind+" "+state)
	}}
	a := &upstream{text: "a:1812", group: 1}
	b := &upstream{text: "b:1812", group: 1}
	other := &upstream{text: "a:1812", group: 2}
	now := time.Now()
	for _, step := range []struct {
		u        *upstream
		kind     string
		answered bool
	}{
		{a, UpstreamAuth, true}, {a, UpstreamAuth, true}, // first answer: nothing
		{a, UpstreamAuth, false}, {a, UpstreamAuth, false}, // down once
		{a, UpstreamAuth, true},        // up again
		{b, UpstreamAuth, false},       // never answered: down
		{a, UpstreamAccounting, false}, // the same address as accounting
		{other, UpstreamAuth, true},    // another customer's
	} {
		h.observe(step.u, step.kind, step.answered, now)
	}
	if s := strings.Join(got, "; "); s != "a:1812/auth down; a:1812/auth up; b:1812/auth down; a:1812/accounting down" {
		t.Errorf("changes: %s", s)
	}
	st := h.Status(1)
	if len(st) != 3 || len(h.Status(2)) != 1 {
		t.Fatalf("status: %+v", st)
	}
	for _, s := range st {
		if s.Address == "a:1812" && s.Kind == UpstreamAuth && (!s.Up || s.Answered != 3 || s.Failed != 2 || s.LastAnswer.IsZero()) {
			t.Errorf("a: %+v", s)
		}
	}
	var nilHealth *Health
	nilHealth.observe(a, UpstreamAuth, false, now) // follows nothing
}
