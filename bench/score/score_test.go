package main

import (
	"encoding/json"
	"testing"

	"github.com/wnms/wnms/internal/simulate"
)

const t0 = int64(1_763_000_000_000) - int64(1_763_000_000_000)%slotMs // a slot start

func truth(kind string, site, from int64) Truth {
	return Truth{Kind: kind, SiteID: site, FromMs: from, ToMs: from + 3*slotMs,
		Scope: simulate.Scope{Type: "site", ID: "1", Name: "Sim Site 1"},
		Cause: simulate.Cause{Stage: "authentication", FailureCode: 2, SubFailureCode: 203}}
}

func TestDetect(t *testing.T) {
	in := truth("radius-down", 1, t0+5*60_000) // 5 minutes into a slot
	for _, tc := range []struct {
		name  string
		flags Flags
		found bool
		delay int
	}{
		{"none", Flags{}, false, 0},
		{"other site", Flags{2: {t0}}, false, 0},
		{"the slot holding the start", Flags{1: {t0}}, true, 0},
		{"the slot before", Flags{1: {t0 - slotMs}}, false, 0},
		{"one slot late", Flags{1: {t0 + slotMs}}, true, 1},
		// The window ends 5 minutes into slot 3: slots 4 and 5 are the
		// two after its last slot.
		{"2 slots after the window's last", Flags{1: {t0 + 5*slotMs}}, true, 5},
		{"3 slots after the window's last", Flags{1: {t0 + 6*slotMs}}, false, 0},
		{"the first of several", Flags{1: {t0 - 4*slotMs, t0 + 2*slotMs, t0 + 3*slotMs}}, true, 2},
	} {
		found, delay := Detect(in, tc.flags)
		if found != tc.found || delay != tc.delay {
			t.Errorf("%s: found %v delay %d, want %v %d", tc.name, found, delay, tc.found, tc.delay)
		}
	}
}

func served(t *testing.T, js string) []Served {
	t.Helper()
	var out []Served
	if err := json.Unmarshal([]byte(js), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMatchCauseScope(t *testing.T) {
	in := truth("radius-down", 7, t0)
	in.Equivalent = []simulate.Scope{{Type: "ssid", ID: "corp", Name: "corp"}}
	list := served(t, `[
	  {"id": "a", "siteLocationId": 8, "from": `+itoa(t0)+`, "to": null, "cause": {"stage": "authentication", "reason": {"failureCode": 2, "subFailureCode": 203}}, "scope": {"type": "site", "id": 8}},
	  {"id": 2, "siteLocationId": 7, "from": `+itoa(t0-10*slotMs)+`, "to": `+itoa(t0-9*slotMs)+`, "cause": {"stage": "dhcp"}, "scope": {"type": "site", "id": 7}},
	  {"id": 3, "siteLocationId": 7, "from": `+itoa(t0+slotMs)+`, "to": `+itoa(t0+2*slotMs)+`, "cause": {"stage": "authentication", "reason": {"failureCode": 2, "subFailureCode": 204}}, "scope": {"type": "site", "id": "7"}},
	  {"id": 4, "siteLocationId": 7, "from": `+itoa(t0)+`, "to": `+itoa(t0+3*slotMs)+`, "cause": {"stage": "Authentication", "reason": {"failureCode": 2, "subFailureCode": 203}}, "scope": {"type": "ssid", "id": "corp", "name": "corp"}}
	]`)
	m := Match(in, list)
	if m == nil || m.ID != "4" {
		t.Fatalf("matched %+v, want incident 4 (the one overlapping most)", m)
	}
	if !CauseRight(in, *m) || !ScopeRight(in, *m) {
		t.Errorf("incident 4: cause right %v, scope right %v", CauseRight(in, *m), ScopeRight(in, *m))
	}
	in.Scope.ID = "7"
	if three := list[2]; CauseRight(in, three) || !ScopeRight(in, three) {
		t.Errorf("incident 3: a 204 is not a 203; its site scope (id \"7\") is right")
	}
	if Match(truth("x", 9, t0), list) != nil {
		t.Error("matched at a site without incidents")
	}
	// An open incident matches; a performance cause needs the stage only.
	perf := truth("interference", 8, t0+slotMs)
	perf.Cause = simulate.Cause{Stage: "performance"}
	perf.Scope = simulate.Scope{Type: "band", ID: "BAND_5_GHZ", Name: "5 GHz"}
	if m := Match(perf, list); m == nil || m.ID != "a" || CauseRight(perf, *m) || ScopeRight(perf, *m) {
		t.Errorf("open incident: %+v", m)
	}
	wrongID := served(t, `[{"siteLocationId": 8, "from": `+itoa(t0)+`, "cause": {"stage": "performance"}, "scope": {"type": "band", "id": "BAND_2_4_GHZ"}}]`)
	if ScopeRight(perf, wrongID[0]) {
		t.Error("the 2.4 GHz band taken for the 5 GHz band")
	}
	byName := served(t, `[{"siteLocationId": 8, "from": `+itoa(t0)+`, "cause": {"stage": "performance", "reason": {"text": "high retry"}}, "scope": {"type": "band", "name": "5 GHz"}}]`)
	if !CauseRight(perf, byName[0]) || !ScopeRight(perf, byName[0]) {
		t.Error("a performance incident with the band named but no id")
	}
}

func itoa(v int64) string { b, _ := json.Marshal(v); return string(b) }

func TestScore(t *testing.T) {
	a := truth("radius-down", 1, t0)
	b := truth("ap-down", 2, t0+96*slotMs)
	c := truth("ap-down", 1, t0+2*96*slotMs)
	runs := []Run{{
		Truths: []Truth{a, b, c},
		// a found at once and once more; b found 2 slots late; c missed;
		// a false alarm on a's day and one on a day with nothing.
		Flags:         Flags{1: {t0, t0 + slotMs, t0 + 40*slotMs, t0 + 4*96*slotMs}, 2: {t0 + 98*slotMs}},
		Quiet:         Flags{1: {t0}, 2: {t0 + slotMs, t0 + 2*slotMs}},
		QuietSiteDays: 10,
		Served: served(t, `[{"siteLocationId": 1, "from": `+itoa(t0)+`, "to": `+itoa(t0+slotMs)+`,
		  "cause": {"stage": "authentication", "reason": {"failureCode": 2, "subFailureCode": 203}}, "scope": {"type": "site", "id": "1"}}]`),
	}}
	rep := Score(runs, []string{"radius-down", "ap-down", "wrong-psk"}, true)
	if *rep.Precision != 3.0/5 || rep.Flagged != 5 || rep.QuietFlagged != 3 || rep.FalseAlarmsPerSiteDay != 0.3 {
		t.Errorf("totals: %+v", rep)
	}
	rd, ad, wp := rep.Kinds[0], rep.Kinds[1], rep.Kinds[2]
	if rd.Recall != 1 || *rd.Precision != 2.0/3 || *rd.DelayMean != 0 || *rd.CauseRight != 1 || *rd.ScopeRight != 1 {
		t.Errorf("radius-down: %+v", rd)
	}
	if ad.Incidents != 2 || ad.Recall != 0.5 || *ad.Precision != 1 || *ad.DelayMax != 2 || *ad.CauseRight != 0 {
		t.Errorf("ap-down: %+v", ad)
	}
	if wp.Incidents != 0 || wp.Precision != nil || wp.DelayMean != nil || wp.CauseRight != nil {
		t.Errorf("wrong-psk: %+v", wp)
	}
	if rep := Score(runs, []string{"radius-down"}, false); rep.Kinds[0].CauseRight != nil || rep.IncidentsServed {
		t.Errorf("without incidents served: %+v", rep.Kinds[0])
	}
}
