package wnms_test

import (
	"testing"

	"github.com/wnms/wnms/internal/wnms"
)

// What a Success counts as: its time to connect and slow phase, or
// untimed when its timestamps do not give one.
func TestSuccessOutcome(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name              string
		assoc, auth, netw *int64
		outcome           int
		ttc               int64
	}{
		{"all three", p(1000), p(1300), p(1500), wnms.OutcomeSlowAuth, 500},
		{"DHCP longer", p(1000), p(1100), p(1500), wnms.OutcomeSlowDHCP, 500},
		{"equal phases: authentication", p(1000), p(1250), p(1500), wnms.OutcomeSlowAuth, 500},
		{"no DHCP", p(1000), p(3000), nil, wnms.OutcomeSlowAuth, 2000},
		{"no authentication timestamp", p(1000), nil, p(1800), wnms.OutcomeSlowDHCP, 800},
		{"open network, instant", p(1000), p(1000), p(1000), wnms.OutcomeSlowAuth, 0},
		{"no association", nil, p(1300), p(1500), wnms.OutcomeUntimed, 0},
		{"association only", p(1000), nil, nil, wnms.OutcomeUntimed, 0},
		{"authentication before association", p(1000), p(900), p(1500), wnms.OutcomeUntimed, 0},
		{"network before authentication", p(1000), p(1300), p(1200), wnms.OutcomeUntimed, 0},
		{"over a minute", p(1000), p(2000), p(91000), wnms.OutcomeSlowDHCP, 90000},
	} {
		o, ttc := wnms.SuccessOutcome(tc.assoc, tc.auth, tc.netw)
		if o != tc.outcome || ttc != tc.ttc {
			t.Errorf("%s: outcome %d, %d ms; want %d, %d ms", tc.name, o, ttc, tc.outcome, tc.ttc)
		}
	}
}

// Where a Failure failed: 3/303 is DNS, the other network failures DHCP.
func TestFailureOutcome(t *testing.T) {
	for _, tc := range []struct{ code, sub, want int }{
		{1, 101, wnms.OutcomeAssociation}, {2, 203, wnms.OutcomeAuthentication}, {3, 301, wnms.OutcomeDHCP},
		{3, 302, wnms.OutcomeDHCP}, {3, 303, wnms.OutcomeDNS}, {3, 304, wnms.OutcomeDHCP}, {3, 305, wnms.OutcomeDHCP},
	} {
		e := &wnms.ClientEvent{Type: wnms.Failure, Code: &tc.code, SubCode: &tc.sub}
		if o, _, ok := wnms.AttemptOutcome(e); !ok || o != tc.want {
			t.Errorf("%d/%d: %d %v, want %d", tc.code, tc.sub, o, ok, tc.want)
		}
	}
	if _, _, ok := wnms.AttemptOutcome(&wnms.ClientEvent{Type: "Intermediate"}); ok {
		t.Error("an Intermediate event counted as an attempt")
	}
}
