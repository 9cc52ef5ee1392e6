package telemetry

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// clientUpdates turns what events or samples say of their clients into
// one update per client (by boxId), coalesced in record order. For a
// caller who sees the whole tree it returns them, for the store to record
// with the records (written behind, in the same commit's journal); for a
// caller scoped below the root it records them itself, at once, because
// what they may change depends on where each client is now, and returns
// nil. It writes into updates (each MAC's updates coalesced into its
// first): the caller gives it up.
func (s *Service) clientUpdates(ctx context.Context, c *wnms.Caller, updates []wnms.ClientUpdate) (map[int64]wnms.ClientUpdate, error) {
	// Each MAC's updates are coalesced into its first (updates is the
	// caller's, given up): a batch's updates are held once, not in a
	// second map beside the one answered.
	first := map[string]int{}
	for i, u := range updates {
		if j, ok := first[u.MacAddress]; ok {
			updates[j] = wnms.Coalesce(updates[j], u)
		} else {
			first[u.MacAddress] = i
		}
	}
	macs := make([]string, 0, len(first))
	for m := range first {
		macs = append(macs, m)
	}
	slices.Sort(macs)
	boxes, err := s.clientBoxIDs(ctx, c.CustomerID(), macs)
	if err != nil {
		return nil, err
	}
	byBox := make(map[int64]wnms.ClientUpdate, len(first))
	for m, i := range first {
		byBox[boxes[m]] = updates[i]
	}
	// A caller scoped below the root that moves a client from a location
	// it does not see gets the client without the name, username and IP that
	// records it could not write gave it: those stay out of its view.
	scope, err := c.ScopePaths(ctx)
	if err != nil {
		return nil, err
	}
	if slices.Contains(scope, wnms.RootPath) {
		return byBox, nil
	}
	// Which locations the clients come from the caller may see is asked
	// first, of where they are now (reading locations through the
	// store); the store then reads where they are again under the
	// customer's lock on its clients, which keeps every other write of
	// them out until the commit. A client found at a location not asked
	// about (another batch moved it meanwhile) sends the batch back to
	// ask, once; after that such a location counts as one the caller
	// does not see. One scoped batch of a customer at a time in this
	// process holds the store's lock: the others wait here, not holding
	// a connection.
	ids := make([]int64, 0, len(byBox))
	for b := range byBox {
		ids = append(ids, b)
	}
	before, err := s.Store.ClientLocations(ctx, c.CustomerID(), ids)
	if err != nil {
		return nil, err
	}
	seen := map[int64]error{}
	for b, loc := range before {
		if loc != byBox[b].LocationID {
			s.sees(ctx, c, loc, seen)
		}
	}
	mu, _ := s.scopedMu.LoadOrStore(c.CustomerID(), &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	for last := false; ; last = true {
		var unasked []int64
		err := s.Store.UpdateScopedClients(ctx, c.CustomerID(), byBox, func(where map[int64]int64) (map[int64]wnms.ClientUpdate, error) {
			var fresh map[int64]wnms.ClientUpdate
			fresh, unasked = movedIn(byBox, where, seen)
			if len(unasked) > 0 && !last {
				return nil, errAskAgain
			}
			return fresh, nil
		})
		if err != errAskAgain {
			return nil, err
		}
		for _, loc := range unasked {
			s.sees(ctx, c, loc, seen)
		}
	}
}

// errAskAgain sends a scoped batch back to ask about locations its
// clients were found at.
var errAskAgain = errors.New("telemetry: clients found where the batch did not ask about")

// movedIn returns the updates of the clients that come from a location
// the caller may not see, and the locations clients come from that seen
// (what the caller was told of locations: nil, it sees it) does not
// hold. Such a location counts as one the caller does not see: its
// client's update then takes the client's identity back, which at worst
// forgets a name the caller could have seen.
func movedIn(updates map[int64]wnms.ClientUpdate, where map[int64]int64, seen map[int64]error) (fresh map[int64]wnms.ClientUpdate, unasked []int64) {
	for b, loc := range where {
		if loc == updates[b].LocationID {
			continue
		}
		err, asked := seen[loc]
		if !asked && !slices.Contains(unasked, loc) {
			unasked = append(unasked, loc)
		}
		if !asked || err != nil {
			if fresh == nil {
				fresh = map[int64]wnms.ClientUpdate{}
			}
			fresh[b] = updates[b]
		}
	}
	return fresh, unasked
}

// IngestStats stores the client statistics samples of an ingest body for
// the caller's customer. Like events, a sample takes the location of the
// AP whose radio its BSSID names, which the caller must see.
func (s *Service) IngestStats(ctx context.Context, c *wnms.Caller, body []byte) (*Result, error) {
	recs, err := SplitRecords(body)
	if err != nil {
		return nil, err
	}
	return s.ingestSamples(ctx, c, len(recs), func(i int, now time.Time) (*wnms.Sample, error) {
		return ParseSample(recs[i], now)
	}, wnms.UnknownLocation)
}

// ingestSamples stores n samples, the i-th made by check; one at no
// known AP is placed at location at.
func (s *Service) ingestSamples(ctx context.Context, c *wnms.Caller, n int,
	check func(i int, now time.Time) (*wnms.Sample, error), at int64) (*Result, error) {
	return ingestClientRecords(ctx, s, c, n, check, clientRecords[*wnms.Sample]{
		bssid: func(x *wnms.Sample) string { return x.BSSID },
		place: func(x *wnms.Sample, ap *wnms.RadioAP) (int64, error) {
			x.PlaceAt(ap, at)
			return x.LocationID, nil
		},
		update: (*wnms.Sample).ClientUpdate,
		store: func(ctx context.Context, good []*wnms.Sample, clients map[int64]wnms.ClientUpdate) (int, error) {
			for _, x := range good {
				if !x.NoRadio {
					x.Busy = s.utils.busy(c.CustomerID(), x)
				}
			}
			n, err := s.Store.InsertClientStats(ctx, c.CustomerID(), good, clients)
			if err == nil {
				s.heardSamples(c.CustomerID(), good)
			}
			return n, err
		},
	})
}

// Clients answers q for the caller, at location at (nil: all it sees).
func (s *Service) Clients(ctx context.Context, c *wnms.Caller, at *wnms.Location, q wnms.ClientQuery) ([]wnms.Client, int, error) {
	locs, err := s.scopeLocations(ctx, c, at)
	if err != nil {
		return nil, 0, err
	}
	now := s.Now()
	q.CustomerID, q.Locations, q.ActiveSince = c.CustomerID(), locs, now.Add(-wnms.ClientActiveWindow).UnixMilli()
	clients, total, err := s.Store.Clients(ctx, q)
	if err != nil {
		return nil, 0, err
	}
	for i := range clients {
		clients[i].Derive(now)
	}
	return clients, total, nil
}

// Observer is an AP that heard a client.
type Observer struct {
	Type           string `json:"type"`
	BoxID          int64  `json:"boxId"`
	Name           string `json:"name"`
	MacAddress     string `json:"macaddress"`
	SignalStrength int    `json:"signalStrength"`
}

// Observers lists the APs that heard the client boxID in the last
// ActiveWindow, strongest first: the serving AP of each sample and the
// APs of its observedBy radios, each with the latest strength heard.
func (s *Service) Observers(ctx context.Context, c *wnms.Caller, boxID int64) ([]Observer, error) {
	byBox := wnms.Cond{Op: "=", Property: "boxid", Kind: wnms.FilterNumber, Values: []any{boxID}}
	clients, _, err := s.Clients(ctx, c, nil, wnms.ClientQuery{Filter: &byBox, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(clients) == 0 {
		return nil, wnms.NotFound("no client %d", boxID)
	}
	samples, err := s.Store.RecentSamples(ctx, c.CustomerID(), clients[0].MacAddress, s.Now().Add(-wnms.ClientActiveWindow).UnixMilli())
	if err != nil {
		return nil, err
	}
	var bssids []string
	for _, x := range samples {
		for _, o := range x.ObservedBy {
			if !slices.Contains(bssids, o.BSSID) {
				bssids = append(bssids, o.BSSID)
			}
		}
	}
	radios, err := s.Store.RadiosByBSSID(ctx, c.CustomerID(), bssids)
	if err != nil {
		return nil, err
	}
	signal := map[int64]int{} // AP boxId -> latest strength
	for _, x := range samples {
		if x.APBoxID != nil {
			signal[*x.APBoxID] = x.RSSI
		}
		for _, o := range x.ObservedBy {
			if r, ok := radios[o.BSSID]; ok {
				signal[r.BoxID] = o.RSSI
			}
		}
	}
	out := []Observer{}
	if len(signal) == 0 {
		return out, nil
	}
	ids := make([]any, 0, len(signal))
	for id := range signal {
		ids = append(ids, id)
	}
	in := wnms.Cond{Op: "=", Property: "boxid", Kind: wnms.FilterNumber, Values: ids}
	aps, _, err := s.ListAPs(ctx, c, wnms.APQuery{Filter: &in, Limit: len(ids), Ascending: true})
	if err != nil {
		return nil, err
	}
	for _, a := range aps {
		out = append(out, Observer{Type: "ap", BoxID: a.BoxID, Name: a.Name, MacAddress: a.MacAddress, SignalStrength: signal[a.BoxID]})
	}
	slices.SortFunc(out, func(a, b Observer) int {
		return cmp.Or(cmp.Compare(b.SignalStrength, a.SignalStrength), cmp.Compare(a.BoxID, b.BoxID))
	})
	return out, nil
}

// maxBoxCache bounds the boxId cache; past it the cache starts afresh.
// An entry is 16 bytes (the MAC's 48 bits, not its text, in a map per
// customer, and the boxId): about 30 bytes a client with the maps' own
// overhead (BenchmarkBoxIDCacheState), some 15 MB when full.
const maxBoxCache = 500_000

// clientBoxIDs gives each MAC its boxId. A client's boxId never changes,
// so the ids are kept in memory once known (on any replica alike), and
// only MACs not seen by this process yet reach the store.
func (s *Service) clientBoxIDs(ctx context.Context, customerID int64, macs []string) (map[string]int64, error) {
	out := make(map[string]int64, len(macs))
	var missing []string
	s.boxMu.Lock()
	for _, m := range macs {
		if k, ok := macKey(customerID, m); !ok {
			missing = append(missing, m)
		} else if id, ok := s.boxIDs.get(k); ok {
			out[m] = id
		} else {
			missing = append(missing, m)
		}
	}
	s.boxMu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	got, err := s.Store.ClientBoxIDs(ctx, customerID, missing)
	if err != nil {
		return nil, err
	}
	s.boxMu.Lock()
	defer s.boxMu.Unlock()
	s.boxIDs.reserve(len(got), maxBoxCache)
	for m, id := range got {
		out[m] = id
		if k, ok := macKey(customerID, m); ok {
			s.boxIDs.put(k, id, maxBoxCache)
		}
	}
	return out, nil
}

// boxKey is a MAC of a customer as the per-MAC caches look it up: the
// MAC's 48 bits rather than its text, so an entry holds no string; the
// caches (macMap) keep a map per customer keyed by the bits alone.
type boxKey struct {
	customer int64
	mac      uint64 // wnms.MACBits
}

// macKey is the cache key of the customer's MAC in ParseMAC's form; false
// for any other text (never cached).
func macKey(customer int64, mac string) (boxKey, bool) {
	bits, ok := wnms.MACBits(mac)
	return boxKey{customer, bits}, ok
}
