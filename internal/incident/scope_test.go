package incident_test

import (
	"testing"

	"github.com/wnms/wnms/internal/incident"
	"github.com/wnms/wnms/internal/wnms"
)

// tally is one dimension's top value: key, affected of attempted.
func tally(key string, affected, attempted int) []wnms.Tally {
	return []wnms.Tally{{Key: key, Affected: affected, Attempted: attempted}}
}

// The scope an incident's counts give, on the counts of incidents of the
// simulator's scoring (bench/score, seeds named): each dimension's value
// with the most affected clients, over the site's clients.
func TestScope(t *testing.T) {
	for _, c := range []struct {
		name   string
		counts wnms.IncidentCounts
		typ    string // "site": no scope narrower than the site fits
		key    string
	}{
		{
			// Seed 1, interference on 5 GHz channel 36 at Sim Site 2: every
			// client on the channel is troubled; the band and the staff
			// SSID hold 86 % of the troubled clients but are only 3.5 and
			// 3 times as troubled as the rest of the site (the band's
			// other channels are fine), so without a channel the scope was
			// the site.
			name: "interference: the channel, not the band",
			counts: wnms.IncidentCounts{Affected: 36, Attempted: 124, APs: tally("23", 13, 19), Channels: tally("36", 29, 29),
				SSIDs: tally("corp", 31, 84), Bands: tally(wnms.Band5GHz, 31, 79), Locs: tally("6", 25, 65)},
			typ: wnms.ScopeChannel, key: "36",
		},
		{
			// Seed 2, interference at Sim Site 1: the band fits as well
			// (97 %, lift 19), the channel is narrower.
			name: "interference: the channel, narrower than a band that fits",
			counts: wnms.IncidentCounts{Affected: 40, Attempted: 127, APs: tally("11", 13, 16), Channels: tally("36", 33, 34),
				SSIDs: tally("corp", 39, 98), Bands: tally(wnms.Band5GHz, 39, 85), Locs: tally("2", 21, 65)},
			typ: wnms.ScopeChannel, key: "36",
		},
		{
			// Seed 7, interference at Sim Site 1: the channel holds 26 of the
			// 33 troubled clients (79 %), the others are the few a site
			// always has (low RSSI, sticky: 5 % of its clients usually);
			// of the clients troubled beyond that, it holds 91 %. Counted
			// on all troubled clients, the staff SSID was the scope (94 %,
			// lift 4.9).
			name: "interference: the channel, beyond the usual trouble",
			counts: wnms.IncidentCounts{Affected: 33, Attempted: 116, Usual: 0.05, APs: tally("11", 9, 12), Channels: tally("36", 26, 26),
				SSIDs: tally("corp", 31, 88), Bands: tally(wnms.Band5GHz, 29, 73), Locs: tally("2", 18, 60)},
			typ: wnms.ScopeChannel, key: "36",
		},
		{
			// Seed 1, ap-down at Sim Site 1.
			name: "ap-down: the AP",
			counts: wnms.IncidentCounts{Affected: 6, Attempted: 16, APs: tally("1", 6, 6), SSIDs: tally("corp", 4, 14),
				Bands: tally(wnms.Band24GHz, 3, 4), Radius: tally("10.0.0.11", 4, 11), Locs: tally("2", 6, 10)},
			typ: wnms.ScopeAP, key: "1",
		},
		{
			// Seed 1, radius-reject at Sim Site 1: every corp client fails,
			// no other does.
			name: "RADIUS trouble: the 802.1X SSID",
			counts: wnms.IncidentCounts{Affected: 92, Attempted: 93, APs: tally("2", 13, 14), SSIDs: tally("corp", 92, 92),
				Bands: tally(wnms.Band5GHz, 75, 75), Radius: tally("10.0.0.11", 92, 92), Locs: tally("3", 47, 47)},
			typ: wnms.ScopeSSID, key: "corp",
		},
		{
			// Seed 1, dhcp-exhaustion at Sim Site 1: corp holds 79 % of the
			// failing clients (most clients are on corp), no lift.
			name: "DHCP exhaustion: the site",
			counts: wnms.IncidentCounts{Affected: 63, Attempted: 65, APs: tally("4", 10, 10), SSIDs: tally("corp", 50, 52),
				Bands: tally(wnms.Band5GHz, 43, 44), Radius: tally("10.0.0.11", 50, 51), Locs: tally("2", 34, 35)},
			typ: wnms.ScopeSite,
		},
		{
			// Seed 3, slow-dhcp at Sim Site 2: every client of the site that
			// connects again may give up waiting for DHCP, whatever its
			// SSID; the 802.1X clients connect most often (they roam), so
			// the RADIUS server they all reach held 94 % of the failing
			// clients with a lift of 5.4, and was the scope. A RADIUS
			// server has no part in a DHCP failure. (The reasons are the
			// cause's; the scope does not depend on their counts.)
			name: "slow DHCP: not the RADIUS server its 802.1X clients reached",
			counts: wnms.IncidentCounts{Affected: 36, Attempted: 75, Reasons: tally("3/301", 33, 0), APs: tally("18", 9, 11),
				SSIDs: tally("corp", 34, 62), Bands: tally(wnms.Band5GHz, 29, 53), Radius: tally("10.0.0.11", 34, 57),
				Locs: tally("5", 26, 42)},
			typ: wnms.ScopeSite,
		},
		{
			// Seed 5, slow-dhcp at Sim Site 1: the same, share 0.91, lift 4.6.
			name: "slow DHCP, a small incident: not the RADIUS server",
			counts: wnms.IncidentCounts{Affected: 11, Attempted: 19, Reasons: tally("3/301", 10, 0), APs: tally("11", 3, 6),
				SSIDs: tally("corp", 10, 16), Bands: tally(wnms.Band5GHz, 10, 17), Radius: tally("10.0.0.11", 10, 13),
				Locs: tally("3", 6, 13)},
			typ: wnms.ScopeSite,
		},
		{
			// A value that holds every affected client and every client of
			// the site is the site.
			name:   "a value every client has: the site",
			counts: wnms.IncidentCounts{Affected: 10, Attempted: 40, SSIDs: tally("corp", 10, 40), Locs: tally("2", 6, 20)},
			typ:    wnms.ScopeSite,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := incident.Scope(&c.counts)
			if !ok {
				got.Type = wnms.ScopeSite
			}
			if got.Type != c.typ || got.Key != c.key {
				t.Errorf("scope %s %q, want %s %q; candidates %+v", got.Type, got.Key, c.typ, c.key, incident.Candidates(&c.counts))
			}
		})
	}
}

// The AP an incident's anomalies name (the AP test of the performance
// baseline), and the reason most of them give.
func TestNamedAP(t *testing.T) {
	ap := func(box int64, reason string) wnms.Anomaly {
		return wnms.Anomaly{Kind: wnms.IncidentPerformance, AP: &wnms.AnomalyAP{BoxID: box, Reason: reason}}
	}
	plain := wnms.Anomaly{Kind: wnms.IncidentPerformance}
	for _, c := range []struct {
		name   string
		group  []wnms.Anomaly
		box    int64
		reason string
		ok     bool
	}{
		{"none names an AP", []wnms.Anomaly{plain, {Kind: wnms.IncidentConnectivity}}, 0, "", false},
		// A coverage hole: the slot the floor's share also flagged names
		// no AP; the others name the same one.
		{"one AP", []wnms.Anomaly{ap(7, wnms.APReasonLowRSSI), plain, ap(7, wnms.APReasonLowRSSI)}, 7, wnms.APReasonLowRSSI, true},
		{"most of them give the reason", []wnms.Anomaly{ap(7, wnms.APReasonLowRSSI), ap(7, wnms.APReasonHighRetry), ap(7, wnms.APReasonHighRetry)},
			7, wnms.APReasonHighRetry, true},
		{"a tie: the first", []wnms.Anomaly{ap(7, wnms.APReasonHighRetry), ap(7, wnms.APReasonLowRSSI)}, 7, wnms.APReasonHighRetry, true},
		// Interference on a channel several APs share: no AP is the scope.
		{"two APs", []wnms.Anomaly{ap(7, wnms.APReasonHighRetry), ap(9, wnms.APReasonHighRetry)}, 0, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			box, reason, ok := incident.NamedAP(c.group)
			if box != c.box || reason != c.reason || ok != c.ok {
				t.Errorf("%d %q %v, want %d %q %v", box, reason, ok, c.box, c.reason, c.ok)
			}
		})
	}
}
