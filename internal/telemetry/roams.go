package telemetry

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unique"

	"github.com/wnms/wnms/internal/wnms"
)

// Roams are found at ingest, whatever brought the records (the HTTP
// ingest, RADIUS, syslog, a poller). A client that joins a radio other
// than the one it was on, of the same SSID, within wnms.RoamWindowMs of
// leaving that radio (a Disassociated or session-ended event) or of last
// being heard on it (a Success, an association event, a sample with radio
// metrics), has roamed. Joining is an association (Intermediate 1/1, or a
// reporter's own 1/2 "Roamed") or a Success; a roam is recorded at the
// Success that completes the join (within RoamCompleteMs of leaving), so
// that its latency runs from leaving to authorized (the Success's
// authentication, else its time); steps in between (802.1X, DHCP) do not
// move the client, and a Failure there ends the join (no roam). A Success
// with no association before it is a join of its own. The roam is stored
// as an Intermediate event of category Roaming in the same transaction as
// the records, at the radio joined,
// with the radio left, the latency, whether it used a fast transition (as
// the joining records say), the signal before (heard last on the first
// radio, or given by the Disassociated) and after (the joining records'),
// and whether it was slow or suboptimal. Its eventId is made from the
// client and the time of the Success, so a retried batch stores it once.
//
// Where each client was last heard is kept in memory (bounded by
// maxRadioCache), from what this process ingested; a client it does not
// know is looked up in the store's client state.

// RoamCompleteMs is how long after leaving the first radio a join's
// Success may come and still complete the roam.
const RoamCompleteMs = 60_000

// maxRadioCache bounds the clients whose last radio is kept; past it the
// cache starts afresh (a roam of a client forgotten that way is found
// from the store's client state instead).
const maxRadioCache = 200_000

// lastRadio is where a client was last heard, or when it left; from is
// the radio it left when it is joining this one (an association seen, its
// Success not yet).
type lastRadio struct {
	bssid, ssid string
	ts          int64 // last heard, or left
	rssi        *int
	ft          bool // the join so far used a fast transition
	from        *roamStart
}

// roamStart is the radio a joining client left: which, when, with what
// signal.
type roamStart struct {
	bssid string
	left  int64
	rssi  *int
}

// radioCache is the last radio of each client this process saw.
type radioCache struct {
	mu sync.Mutex
	m  macMap[radioEntry]
}

// radioEntry is a lastRadio as the cache keeps it, one per client heard:
// the BSSID and SSID as handles of the one copy the clients of a radio
// share, the signal in place rather than behind a pointer of its own (40
// bytes, where the lastRadio is 64 and its signal 8 more).
type radioEntry struct {
	bssid, ssid unique.Handle[string]
	ts          int64
	from        *roamStart
	rssi        int16
	hasRSSI, ft bool
}

func entryOf(r lastRadio) radioEntry {
	e := radioEntry{bssid: unique.Make(r.bssid), ssid: unique.Make(r.ssid), ts: r.ts, from: r.from, ft: r.ft}
	if r.rssi != nil {
		e.rssi, e.hasRSSI = int16(max(math.MinInt16, min(math.MaxInt16, *r.rssi))), true
	}
	return e
}

func (e radioEntry) radio() lastRadio {
	r := lastRadio{bssid: e.bssid.Value(), ssid: e.ssid.Value(), ts: e.ts, from: e.from, ft: e.ft}
	if e.hasRSSI {
		rssi := int(e.rssi)
		r.rssi = &rssi
	}
	return r
}

// get is the last radio of the customer's client mac, if known.
func (r *radioCache) get(customer int64, mac string) (lastRadio, bool) {
	k, ok := macKey(customer, mac)
	if !ok {
		return lastRadio{}, false
	}
	r.mu.Lock()
	e, ok := r.m.get(k)
	r.mu.Unlock()
	if !ok {
		return lastRadio{}, false
	}
	return e.radio(), true
}

// put records heard unless the client was heard later already.
func (r *radioCache) put(customer int64, mac string, heard lastRadio) {
	k, ok := macKey(customer, mac)
	if !ok {
		return
	}
	e := entryOf(heard) // outside the lock: unique has its own
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, ok := r.m.get(k); ok && cur.ts > heard.ts {
		return
	}
	r.m.put(k, e, maxRadioCache)
}

// How an event moves its client.
const (
	stays  = iota // says nothing of where the client is (a Failure, a roam, a step)
	heard         // heard on its radio
	joined        // associated to its radio (not yet authorized)
	done          // a Success: joined and authorized
	left          // left its radio
)

// moveOf says how event e moves its client. Steps of a connection
// (802.1X, DHCP: categories other than association) do not: a client
// joining a new radio is still where it was until its association or
// Success says otherwise.
func moveOf(e *Event) int {
	if e.BSSID == "" {
		return stays
	}
	switch {
	case e.Type == wnms.Success:
		return done
	case e.Type != wnms.Intermediate || code(e.Code) != wnms.CategoryAssociation:
		return stays
	}
	switch code(e.SubCode) {
	case wnms.TypeAssociated, wnms.TypeRoamed:
		return joined
	case wnms.TypeDisassociated, wnms.TypeSessionEnded:
		return left
	}
	return heard
}

func code(c *int) int {
	if c == nil {
		return 0
	}
	return *c
}

// findRoams returns the roams the events show, and where their clients
// are after them (to remember once the events are stored) (checked and placed like
// any event), in the order of the clients' MACs and times. Events older
// than what is known of their client find none.
func (s *Service) findRoams(ctx context.Context, customer int64, events []*Event) ([]*Event, map[string]lastRadio, error) {
	var cands []*Event
	for _, e := range events {
		if moveOf(e) != stays || e.Type == wnms.Failure && e.BSSID != "" {
			cands = append(cands, e)
		}
	}
	if len(cands) == 0 {
		return nil, nil, nil
	}
	slices.SortStableFunc(cands, func(a, b *Event) int {
		return cmp.Or(strings.Compare(a.MacAddress, b.MacAddress), cmp.Compare(a.Timestamp, b.Timestamp))
	})
	last := map[string]lastRadio{}
	var unknown []string
	for _, e := range cands {
		if _, ok := last[e.MacAddress]; ok {
			continue
		}
		if v, ok := s.radios.get(customer, e.MacAddress); ok {
			last[e.MacAddress] = v
		} else if m := moveOf(e); (m == joined || m == done) && !slices.Contains(unknown, e.MacAddress) {
			unknown = append(unknown, e.MacAddress)
		}
	}
	if len(unknown) > 0 {
		stored, err := s.Store.ClientRadios(ctx, customer, unknown)
		if err != nil {
			return nil, nil, err
		}
		for _, c := range stored {
			last[c.MacAddress] = lastRadio{bssid: c.BSSID, ssid: c.SSID, ts: c.LastSeen, rssi: c.RSSI}
		}
	}
	var roams []*Event
	moved := map[string]lastRadio{}
	for _, e := range cands {
		prev, known := last[e.MacAddress]
		if known && e.Timestamp < prev.ts {
			continue // late: what is known of the client is newer
		}
		next, from, ok := after(prev, known, e)
		if from != nil {
			if r, err := roamOf(e, *from, next); err == nil {
				roams = append(roams, r)
			} else {
				s.Log.Warn("roam not recorded", "mac", e.MacAddress, "err", err)
			}
		}
		if ok {
			last[e.MacAddress], moved[e.MacAddress] = next, next
		}
	}
	return roams, moved, nil
}

// after is where the client is known to be after event e, given where
// it was (prev, if known), and the radio it left when e completes a roam
// (from, nil otherwise); ok false when the event says nothing of where
// the client is.
func after(prev lastRadio, known bool, e *Event) (next lastRadio, from *roamStart, ok bool) {
	m := moveOf(e)
	here := lastRadio{bssid: e.BSSID, ssid: e.SSID, ts: e.Timestamp, rssi: e.RSSI, ft: e.FastTransition}
	same := known && prev.bssid == e.BSSID
	switch m {
	case stays:
		if e.Type == wnms.Failure && same && prev.from != nil {
			prev.from = nil // the join failed: a later Success is a connection of its own
			return prev, nil, true
		}
		return prev, nil, false
	case left:
		if !same {
			return prev, nil, false
		}
		prev.ts, prev.from = max(prev.ts, e.Timestamp), nil
		if e.RSSI != nil {
			prev.rssi = e.RSSI // its signal as it left
		}
		return prev, nil, true
	case heard:
		if same {
			here.from, here.ft = prev.from, prev.ft
			if here.rssi == nil {
				here.rssi = prev.rssi
			}
		}
		return here, nil, true
	}
	// A join (an association, or a Success).
	if same && prev.from != nil {
		// The Success (or another association) of a join under way.
		here.from, here.ft = prev.from, prev.ft || e.FastTransition
		if here.rssi == nil {
			here.rssi = prev.rssi
		}
		if m == done {
			from := here.from
			here.from = nil
			if e.Timestamp-from.left <= RoamCompleteMs {
				return here, from, true
			}
		}
		return here, nil, true
	}
	if same {
		if here.rssi == nil {
			here.rssi = prev.rssi
		}
		return here, nil, true
	}
	if known && prev.bssid != "" && sameSSID(prev.ssid, e.SSID) && e.Timestamp-prev.ts <= wnms.RoamWindowMs {
		start := &roamStart{bssid: prev.bssid, left: prev.ts, rssi: prev.rssi}
		if m == done {
			return here, start, true
		}
		here.from = start
	}
	return here, nil, true
}

// sameSSID: a record that names no SSID (RADIUS may not say) matches any.
func sameSSID(a, b string) bool { return a == "" || b == "" || a == b }

// roamOf makes the roam event of a client whose Success e completed its
// join of e's radio (now: where it is, with the join's signal and fast
// transition) after leaving from.
func roamOf(e *Event, from roamStart, now lastRadio) (*Event, error) {
	authorized := e.Timestamp
	if e.AuthenticatedAt != nil && *e.AuthenticatedAt >= from.left {
		authorized = *e.AuthenticatedAt
	}
	latency := max(authorized-from.left, 0)
	ft := now.ft
	// checkEvent derives whether the roam was slow or suboptimal.
	d := wnms.RoamDetail{FromBSSID: &from.bssid, RoamLatencyMs: &latency, FastTransition: &ft, RSSIBefore: from.rssi,
		RSSIAfter: now.rssi}
	sub := 0
	if ft {
		sub = 1
	}
	rec := wnms.EventRecord{
		EventID:      wnms.Ptr("roam-" + strings.ReplaceAll(e.MacAddress, ":", "") + "-" + strconv.FormatInt(e.Timestamp, 10)),
		MacAddress:   &e.MacAddress,
		EventType:    wnms.Ptr(wnms.Intermediate),
		BSSID:        &e.BSSID,
		Channel:      e.Channel,
		SSID:         e.SSID,
		Protocol:     e.Protocol,
		Timestamp:    &e.Timestamp,
		CategoryCode: wnms.Ptr(wnms.CategoryRoaming),
		TypeCode:     wnms.Ptr(wnms.TypeRoam),
		SubTypeCode:  sub,
		EventDetail:  wnms.EventDetail{RSSI: now.rssi, RoamDetail: d},
	}
	r, err := checkEvent(&rec, time.UnixMilli(e.Timestamp), true)
	if err != nil {
		return nil, err
	}
	var ap *wnms.RadioAP
	if e.APBoxID != nil {
		ap = &wnms.RadioAP{BoxID: *e.APBoxID, Name: e.APName, LocationID: e.LocationID, Dot11AC: e.Dot11AC}
	}
	r.stored, err = r.PlaceAt(ap, e.LocationID)
	return r, err
}

// heardEvents remembers where the stored events left their clients.
func (s *Service) heardEvents(customer int64, moved map[string]lastRadio) {
	for mac, v := range moved {
		s.radios.put(customer, mac, v)
	}
}

func (s *Service) heardSamples(customer int64, samples []*wnms.Sample) {
	for _, x := range samples {
		if x.NoRadio || x.BSSID == "" {
			continue
		}
		rssi := x.RSSI
		here := lastRadio{bssid: x.BSSID, ssid: x.SSID, ts: x.Timestamp, rssi: &rssi}
		if prev, ok := s.radios.get(customer, x.MacAddress); ok && prev.bssid == x.BSSID {
			here.from, here.ft = prev.from, prev.ft // a join under way stays under way
		}
		s.radios.put(customer, x.MacAddress, here)
	}
}
