package datasource

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/radius"
	"github.com/wnms/wnms/internal/wnms"
)

// Traffic a source attributes to an AP is the AP's heartbeat (decisions
// §21): place writes the heartbeats of the APs its stored records were
// placed at, and each release those of the APs where RADIUS accepts were
// held (holding must not wait on the store), at most one write per AP
// per HeartbeatEvery.

// heardAt is where a held RADIUS accept was seen: its AP's heartbeat is
// written by the next release (holding must not wait on the store).
type heardAt struct {
	e                   *entry
	bssid, nasID, nasIP string
}

// maxHeard bounds the places of held accepts waiting for their AP's
// heartbeat; past it (65,536 APs heard within a second) the rest wait
// for their next packet.
const maxHeard = 1 << 16

// heardAccept notes where the held accept o of source e was seen, for
// the next release to write its AP's heartbeat.
func (b *Bridge) heardAccept(e *entry, o radius.Observation) {
	at := heardAt{e: e, bssid: wnms.Str(o.Event.BSSID), nasID: o.NASIdentifier, nasIP: o.NASIPAddress}
	b.heardMu.Lock()
	defer b.heardMu.Unlock()
	if b.heard == nil {
		b.heard = map[heardAt]struct{}{}
	}
	if len(b.heard) < maxHeard {
		b.heard[at] = struct{}{}
	}
}

// maxBeats bounds the APs whose last heartbeat the bridge remembers; past
// it those older than HeartbeatEvery, which it no longer needs, are
// forgotten.
const maxBeats = 1 << 16

// dueBeats returns those of boxIDs whose heartbeat is due at now, and
// marks them written.
func (b *Bridge) dueBeats(boxIDs []int64, now time.Time) []int64 {
	every := cmp.Or(b.HeartbeatEvery, DefaultHeartbeatEvery)
	b.beatsMu.Lock()
	defer b.beatsMu.Unlock()
	if b.beats == nil {
		b.beats = map[int64]time.Time{}
	}
	if len(b.beats) >= maxBeats {
		for id, at := range b.beats {
			if now.Sub(at) >= every {
				delete(b.beats, id)
			}
		}
	}
	var due []int64
	for _, id := range boxIDs {
		if at, ok := b.beats[id]; ok && now.Sub(at) < every {
			continue
		}
		b.beats[id] = now
		due = append(due, id)
	}
	return due
}

// forgetBeats lets the next record of boxIDs write their heartbeat again
// (this one was not written).
func (b *Bridge) forgetBeats(boxIDs []int64) {
	b.beatsMu.Lock()
	defer b.beatsMu.Unlock()
	for _, id := range boxIDs {
		delete(b.beats, id)
	}
}

// heartbeat writes the due heartbeats of the customer's APs boxIDs.
// A failure is logged: the next record tries again.
func (b *Bridge) heartbeat(ctx context.Context, customer int64, boxIDs []int64) {
	if b.Heartbeat == nil || len(boxIDs) == 0 {
		return
	}
	due := b.dueBeats(boxIDs, time.Now())
	if len(due) == 0 {
		return
	}
	if err := b.Heartbeat.HeartbeatAPs(ctx, customer, due); err != nil {
		b.forgetBeats(due)
		if ctx.Err() == nil {
			b.Log.Warn("data source: AP heartbeats not written", "aps", len(due), "err", err)
		}
	}
}

// heartbeatHeld writes the heartbeats of the APs where accepts were held
// since the last call: an AP at or below the source's location, matched
// as place matches a record.
func (b *Bridge) heartbeatHeld(ctx context.Context) {
	b.heardMu.Lock()
	heard := b.heard
	b.heard = nil
	b.heardMu.Unlock()
	if b.Heartbeat == nil || len(heard) == 0 {
		return
	}
	bySource := map[*entry][]heardAt{}
	for h := range heard {
		bySource[h.e] = append(bySource[h.e], h)
	}
	for e, hs := range bySource {
		var bssids, names, ips []string
		for _, h := range hs {
			for _, v := range []struct {
				l *[]string
				v string
			}{{&bssids, h.bssid}, {&names, h.nasID}, {&ips, h.nasIP}} {
				if v.v != "" && !slices.Contains(*v.l, v.v) {
					*v.l = append(*v.l, v.v)
				}
			}
		}
		aps, err := b.Store.APsForSources(ctx, e.customer, bssids, names, ips)
		if err != nil || len(aps) == 0 {
			continue
		}
		ids := []int64{e.src.LocationID.ID}
		for _, ap := range aps {
			ids = append(ids, ap.LocationID)
		}
		paths, err := b.Store.LocationPaths(ctx, ids)
		if err != nil {
			continue
		}
		var boxes []int64
		for _, h := range hs {
			var found *wnms.SourceAP
			for _, match := range []func(*wnms.SourceAP) bool{
				func(ap *wnms.SourceAP) bool {
					return h.bssid != "" && slices.ContainsFunc(ap.Radios, func(r wnms.SourceRadio) bool { return r.BSSID == h.bssid })
				},
				func(ap *wnms.SourceAP) bool { return h.nasID != "" && ap.Name == h.nasID },
				func(ap *wnms.SourceAP) bool { return h.nasIP != "" && ap.IPAddress == h.nasIP },
			} {
				for i := range aps {
					if match(&aps[i]) {
						found = &aps[i]
						break
					}
				}
				if found != nil {
					break
				}
			}
			within := found != nil && paths[found.LocationID] != "" &&
				strings.HasPrefix(paths[found.LocationID], paths[e.src.LocationID.ID])
			if within && !slices.Contains(boxes, found.BoxID) {
				boxes = append(boxes, found.BoxID)
			}
		}
		b.heartbeat(ctx, e.customer, boxes)
	}
}

func boxOf(ap *wnms.SourceAP) int64 {
	if ap == nil {
		return 0
	}
	return ap.BoxID
}
