package poller

import (
	"strconv"
	"strings"
	"sync"

	"github.com/wnms/wnms/internal/wnms"
)

// Roams of polled APs. An exporter sends no events, so the server cannot
// find roams in them as it does in an AP's event stream; but each scrape
// says, of every station, how long ago its AP last heard it (inactive)
// and how long it has been associated (connected). A client newly
// associated to one radio that a scrape of another radio of the same SSID
// had last heard at most RoamWindow before that association has roamed:
// its true last hearing there was no earlier than the scrape says, so the
// gap was no longer. A client whose last known hearing is further back
// may have roamed too (it went on being heard between the scrapes), or
// may have been off the network: no roam is recorded for it. So every
// roam recorded is one, and the share found grows as the poll interval
// shrinks: a client heard up to its roam is found when its old AP was
// polled within RoamWindow before it joined the new one, every roam of
// such clients at an interval of RoamWindow or less.
//
// The roam's latency is not known (a scrape tells seconds of association,
// not when the client was authorized), so a polled roam has none and is
// never slow; its signal before is the old radio's last reading, after the
// new one's.

// RoamWindow is the longest gap between a client's last hearing on one
// radio and its association to another that is a roam (the server's rule
// for records, docs/api.md §26).
const RoamWindow = 10_000 // ms

// maxTracked bounds the clients the tracker remembers; when full it
// starts afresh, as the ingest's own memory of clients does.
const maxTracked = 200_000

// roamTracker remembers where each client of the polled APs was last
// heard, across the pollers of this process.
type roamTracker struct {
	mu    sync.Mutex
	heard map[roamKey]hearing
}

type roamKey struct {
	customer int64
	mac      string
}

// hearing is where and when a client was last heard: at is 0 when the
// scrape did not say (no inactive time, no association time).
type hearing struct {
	bssid, ssid string
	at          int64 // ms
	rssi        *int
}

// polled is a station as one scrape saw it, at now (ms).
type polled struct {
	mac, bssid, ssid string
	channel          int
	rssi             *int
	inactiveMs       *uint64
	connectedSeconds *uint64
}

// observe takes a scrape of one AP (its stations, at now) and answers
// the roams it shows.
func (t *roamTracker) observe(customer, now int64, stations []polled) []wnms.EventRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.heard == nil || len(t.heard)+len(stations) > maxTracked {
		t.heard = make(map[roamKey]hearing, len(stations))
	}
	var roams []wnms.EventRecord
	for _, s := range stations {
		k := roamKey{customer, s.mac}
		h := hearing{bssid: s.bssid, ssid: s.ssid, rssi: s.rssi}
		joined := int64(-1)
		if s.connectedSeconds != nil && *s.connectedSeconds < uint64(now/1000) {
			// The association began at most this long ago (the exporter
			// truncates to seconds): the latest time it may have begun.
			joined = now - int64(*s.connectedSeconds)*1000
			h.at = joined
		}
		if s.inactiveMs != nil && *s.inactiveMs < uint64(now) {
			h.at = max(h.at, now-int64(*s.inactiveMs))
		}
		prev, known := t.heard[k]
		if known && joined >= 0 && prev.bssid != s.bssid && prev.at > 0 && prev.at <= joined &&
			joined-prev.at <= RoamWindow && (prev.ssid == "" || s.ssid == "" || prev.ssid == s.ssid) {
			roams = append(roams, roamRecord(s, prev, joined))
		}
		if !known || h.at >= prev.at {
			t.heard[k] = h
		}
	}
	return roams
}

// roamRecord is the roam of s, last heard as prev, into its radio at
// joined (ms): an Intermediate event of category Roaming, whose eventId
// is the server's own for a roam of that client and time, so that a roam
// found twice is stored once.
func roamRecord(s polled, prev hearing, joined int64) wnms.EventRecord {
	id := "roam-" + strings.ReplaceAll(s.mac, ":", "") + "-" + strconv.FormatInt(joined, 10)
	rec := wnms.EventRecord{EventID: &id, MacAddress: wnms.Ptr(s.mac), EventType: wnms.Ptr(wnms.Intermediate),
		BSSID: wnms.Ptr(s.bssid), Channel: s.channel, SSID: s.ssid, Timestamp: &joined,
		CategoryCode: wnms.Ptr(wnms.CategoryRoaming), TypeCode: wnms.Ptr(wnms.TypeRoam)}
	rec.FromBSSID = wnms.Ptr(prev.bssid)
	rec.RSSIBefore, rec.RSSIAfter = prev.rssi, s.rssi
	return rec
}
