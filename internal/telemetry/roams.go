package telemetry

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// Roams are found at ingest, whatever brought the records (the HTTP
// ingest, RADIUS, syslog, a poller): a client that joins a radio (a
// Success, or an Intermediate Associated) other than the one it was last
// on, of the same SSID, within wnms.RoamWindowMs of leaving that radio
// (a Disassociated event) or of last being heard on it (any event or
// sample with radio metrics), has roamed. The roam is stored as an
// Intermediate event of category Roaming in the same transaction as the
// records, at the radio joined, with the radio left, the time between
// (to authorized: a Success's authentication, else the event's time),
// whether it used a fast transition (as the joining record says), the
// signal before (the last heard on the first radio) and after (the
// joining record's), and whether it was slow or suboptimal. Its eventId
// is made from the client and the time joined, so a retried batch stores
// it once.
//
// Where each client was last heard is kept in memory (bounded by
// maxRadioCache), from what this process ingested; a client it does not
// know is looked up in the store's client state.

// maxRadioCache bounds the clients whose last radio is kept; past it the
// cache starts afresh (a roam of a client forgotten that way is found
// from the store's client state instead).
const maxRadioCache = 200_000

// lastRadio is where a client was last heard, and whether it left.
type lastRadio struct {
	bssid, ssid string
	ts          int64 // last heard, or left
	rssi        *int
}

// radioCache is the last radio of each client this process saw.
type radioCache struct {
	mu sync.Mutex
	m  map[boxKey]lastRadio
}

func (r *radioCache) get(k boxKey) (lastRadio, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[k]
	return v, ok
}

// put records heard unless the client was heard later already.
func (r *radioCache) put(k boxKey, heard lastRadio) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, ok := r.m[k]; ok && cur.ts > heard.ts {
		return
	}
	if r.m == nil || len(r.m) >= maxRadioCache {
		r.m = make(map[boxKey]lastRadio)
	}
	r.m[k] = heard
}

// joins reports whether the event puts its client on a radio.
func joins(e *Event) bool {
	if e.BSSID == "" {
		return false
	}
	return e.Type == wnms.Success || (e.Type == wnms.Intermediate && code(e.Code) == wnms.CategoryAssociation && code(e.SubCode) == wnms.TypeAssociated)
}

// hears reports whether the event says where its client is: not a
// Failure (a client that failed to join a radio stays where it was), not
// a roam (derived), and with a radio.
func hears(e *Event) bool {
	return e.BSSID != "" && e.Type != wnms.Failure && !(e.Type == wnms.Intermediate && code(e.Code) == wnms.CategoryRoaming)
}

func leaves(e *Event) bool {
	return e.Type == wnms.Intermediate && code(e.Code) == wnms.CategoryAssociation && code(e.SubCode) == wnms.TypeDisassociated
}

func code(c *int) int {
	if c == nil {
		return 0
	}
	return *c
}

// findRoams returns the roams the events show (checked and placed like
// any event), in the order of the clients' MACs and times. Events older
// than what is known of their client find none.
func (s *Service) findRoams(ctx context.Context, customer int64, events []*Event) ([]*Event, error) {
	var cands []*Event
	for _, e := range events {
		if hears(e) || leaves(e) {
			cands = append(cands, e)
		}
	}
	if len(cands) == 0 {
		return nil, nil
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
		if v, ok := s.radios.get(boxKey{customer, e.MacAddress}); ok {
			last[e.MacAddress] = v
		} else if joins(e) && !slices.Contains(unknown, e.MacAddress) {
			unknown = append(unknown, e.MacAddress)
		}
	}
	if len(unknown) > 0 {
		stored, err := s.Store.ClientRadios(ctx, customer, unknown)
		if err != nil {
			return nil, err
		}
		for _, c := range stored {
			last[c.MacAddress] = lastRadio{bssid: c.BSSID, ssid: c.SSID, ts: c.LastSeen, rssi: c.RSSI}
		}
	}
	var roams []*Event
	for _, e := range cands {
		prev, known := last[e.MacAddress]
		if known && e.Timestamp < prev.ts {
			continue // late: what is known of the client is newer
		}
		if known && joins(e) && prev.bssid != "" && prev.bssid != e.BSSID && sameSSID(prev.ssid, e.SSID) &&
			e.Timestamp-prev.ts <= wnms.RoamWindowMs {
			if r, err := roamOf(e, prev); err == nil {
				roams = append(roams, r)
			} else {
				s.Log.Warn("roam not recorded", "mac", e.MacAddress, "err", err)
			}
		}
		if next, ok := after(prev, known, e); ok {
			last[e.MacAddress] = next
		}
	}
	return roams, nil
}

// after is where the client is known to be after event e, given where
// it was (prev, if known): left its radio at the event's time, or heard
// on the event's radio (keeping the signal last heard there when the
// event gives none); ok false when the event says nothing of it.
func after(prev lastRadio, known bool, e *Event) (lastRadio, bool) {
	switch {
	case leaves(e):
		if !known || prev.bssid != e.BSSID {
			return prev, false
		}
		prev.ts = max(prev.ts, e.Timestamp)
		return prev, true
	case hears(e):
		rssi := e.RSSI
		if rssi == nil && known && prev.bssid == e.BSSID {
			rssi = prev.rssi
		}
		return lastRadio{bssid: e.BSSID, ssid: e.SSID, ts: e.Timestamp, rssi: rssi}, true
	}
	return prev, false
}

// sameSSID: a record that names no SSID (RADIUS may not say) matches any.
func sameSSID(a, b string) bool { return a == "" || b == "" || a == b }

// roamOf makes the roam event of a client that joined e's radio after
// prev.
func roamOf(e *Event, prev lastRadio) (*Event, error) {
	authorized := e.Timestamp
	if e.AuthenticatedAt != nil && *e.AuthenticatedAt >= prev.ts {
		authorized = *e.AuthenticatedAt
	}
	latency := max(authorized-prev.ts, 0)
	ft := e.FastTransition
	// checkEvent derives whether the roam was slow or suboptimal.
	d := wnms.RoamDetail{FromBSSID: &prev.bssid, RoamLatencyMs: &latency, FastTransition: &ft, RSSIBefore: prev.rssi,
		RSSIAfter: e.RSSI}
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
		EventDetail:  wnms.EventDetail{RSSI: e.RSSI, RoamDetail: d},
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

// heard records where the stored events' and samples' clients were last
// heard, once they are stored.
func (s *Service) heardEvents(customer int64, events []*Event) {
	for _, e := range events {
		k := boxKey{customer, e.MacAddress}
		prev, known := s.radios.get(k)
		if next, ok := after(prev, known, e); ok {
			s.radios.put(k, next)
		}
	}
}

func (s *Service) heardSamples(customer int64, samples []*wnms.Sample) {
	for _, x := range samples {
		if x.NoRadio || x.BSSID == "" {
			continue
		}
		rssi := x.RSSI
		s.radios.put(boxKey{customer, x.MacAddress}, lastRadio{bssid: x.BSSID, ssid: x.SSID, ts: x.Timestamp, rssi: &rssi})
	}
}
