package telemetry

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/every"
	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/wnms"
)

// DefaultAPTimeout is how long an AP may stay silent before it counts as
// down.
const DefaultAPTimeout = 5 * time.Minute

// Service ingests telemetry and answers its reads. Set its fields before
// it serves.
type Service struct {
	Store Store
	Now   func() time.Time
	Log   *slog.Logger
	// APTimeout turns an AP silent for that long inactive (activeStatus
	// false) and announces it down.
	APTimeout time.Duration
	// Retention is how long events and samples are kept (Purge).
	Retention time.Duration
	// Secret keys the MAC hash of exports (tohashmac); the server secret.
	Secret []byte
	// OnAPChange is where an AP's liveness change is announced: down when
	// it has been silent for APTimeout, up when a heartbeat comes from an
	// AP that was down or new. It runs outside any request and must not
	// block (the SNMP trap sender queues its traps).
	OnAPChange func(ap wnms.AP, up bool)

	ingested, purged, droppedDays *metrics.CounterVec

	boxMu  sync.Mutex
	boxIDs macMap[int64] // client boxIds known to this process

	radios radioCache // where clients were last heard: see roams.go
	utils  utilCache  // radios' last utilisation: see radios.go

	scopedMu sync.Map // customer id → *sync.Mutex: scoped client updates, one at a time

	// IngestTurns is how many ingest batches are worked on at once (0:
	// DefaultIngestTurns); the others wait their turn in arrival order.
	IngestTurns  int
	turnsOnce    sync.Once
	turns        chan struct{}
	inFlight     atomic.Int64
	peakInFlight atomic.Int64
}

// NewService returns a Service with the default AP timeout and the clock.
func NewService(st Store, log *slog.Logger) *Service {
	return &Service{Store: st, Now: time.Now, Log: log, APTimeout: DefaultAPTimeout, Retention: DefaultRetention}
}

// IngestAPs stores the AP records of an ingest body for the caller's
// customer: each record is checked on its own (and refused on its own),
// the good ones are committed together before the answer.
func (s *Service) IngestAPs(ctx context.Context, c *wnms.Caller, body []byte) (*Result, error) {
	recs, err := SplitRecords(body)
	if err != nil {
		return nil, err
	}
	return s.ingestAPs(ctx, c, len(recs), func(i int) (*wnms.AP, error) { return ParseAP(recs[i]) }, false)
}

// IngestSourceAPs stores the AP records a data source (a poller) made,
// for the caller (the source), through the same checks and writes as an
// HTTP ingest: a heartbeat of each AP, with its inventory. An AP known
// already stays where it is (its record's location is ignored: it may
// have been placed on a floor since); a new one is placed at location at,
// the source's.
func (s *Service) IngestSourceAPs(ctx context.Context, c *wnms.Caller, recs []APInput, at int64) (*Result, error) {
	res, err := s.ingestAPs(ctx, c, len(recs), func(i int) (*wnms.AP, error) {
		a, err := checkAP(&recs[i])
		if a != nil {
			a.LocationID = wnms.LocalID(at)
		}
		return a, err
	}, true)
	if err != nil {
		return nil, err
	}
	s.count(KindAPs, res)
	return res, nil
}

// ingestAPs stores n AP records, the i-th made by check; with keepPlace,
// an AP known already keeps its location.
func (s *Service) ingestAPs(ctx context.Context, c *wnms.Caller, n int, check func(i int) (*wnms.AP, error), keepPlace bool) (*Result, error) {
	res := &Result{Rejected: []Rejection{}}
	parsed := make([]*wnms.AP, n)
	locs := map[int64]error{}
	var macs, bssids []string
	for i := range n {
		a, err := check(i)
		if err == nil {
			err = s.mayPlaceAP(ctx, c, a, locs)
		}
		if err != nil {
			res.reject(i, err)
			continue
		}
		parsed[i] = a
		macs = append(macs, a.MacAddress)
		for _, r := range a.Radios {
			bssids = append(bssids, r.MacAddress)
		}
	}
	known, err := s.Store.APsByMAC(ctx, c.CustomerID(), macs)
	if err != nil {
		return nil, err
	}
	if keepPlace {
		for _, a := range parsed {
			if a == nil {
				continue
			}
			if cur, ok := known[a.MacAddress]; ok {
				a.LocationID = wnms.LocalID(cur.LocationID)
			}
		}
	}
	owners, err := s.Store.RadiosByBSSID(ctx, c.CustomerID(), bssids)
	if err != nil {
		return nil, err
	}
	aps := make([]*wnms.AP, 0, n)
	claimed := map[string]string{} // BSSID -> the AP MAC of this batch that claims it
	for i, a := range parsed {
		if a == nil {
			continue
		}
		if err := s.mayWriteAP(ctx, c, a, known, owners, claimed, locs); err != nil {
			res.reject(i, err)
			continue
		}
		for _, r := range a.Radios {
			claimed[r.MacAddress] = a.MacAddress
		}
		aps = append(aps, a)
	}
	if len(aps) > 0 {
		now := s.Now().UnixMilli()
		up, err := s.Store.UpsertAPs(ctx, c.CustomerID(), aps, now)
		if err != nil {
			return nil, wnms.AtField(err, "locationId")
		}
		if err := s.Store.InsertAPStats(ctx, c.CustomerID(), aps, now); err != nil {
			return nil, err
		}
		for _, a := range up {
			s.announce(a, true)
		}
	}
	res.Accepted = len(aps)
	return res, nil
}

// mayPlaceAP checks an AP record's location against the caller's scope;
// locs remembers the verdict on each location of the request.
func (s *Service) mayPlaceAP(ctx context.Context, c *wnms.Caller, a *wnms.AP, locs map[int64]error) error {
	id := a.LocationID.ID
	verdict, ok := locs[id]
	if !ok {
		_, verdict = access.LocationFor(ctx, s.Store, c, id)
		if wnms.ErrorCode(verdict) == wnms.ResourceNotFound {
			verdict = wnms.Invalid("locationId", "no location %d", id)
		}
		locs[id] = verdict
	}
	return verdict
}

// mayWriteAP checks what an AP record may change. An AP known at a
// location outside the caller's scope may not be re-homed, renamed or
// stripped by it (LOCATION_ACCESS_DENIED); a BSSID that belongs to another
// AP, or that another record of the batch claims, may not be claimed,
// whoever the caller (CONFLICT): otherwise later events of that BSSID
// would land where the claimant put them.
func (s *Service) mayWriteAP(ctx context.Context, c *wnms.Caller, a *wnms.AP, known, owners map[string]wnms.RadioAP,
	claimed map[string]string, locs map[int64]error) error {
	if cur, ok := known[a.MacAddress]; ok {
		verdict, seen := locs[cur.LocationID]
		if !seen {
			_, verdict = access.LocationFor(ctx, s.Store, c, cur.LocationID)
			locs[cur.LocationID] = verdict
		}
		if verdict != nil {
			return wnms.Errorf(wnms.LocationAccessDenied, "AP %s is at a location outside yours", a.MacAddress)
		}
	}
	for _, r := range a.Radios {
		if o, ok := owners[r.MacAddress]; ok && o.BoxID != known[a.MacAddress].BoxID {
			return wnms.Errorf(wnms.Conflict, "BSSID %s belongs to another AP", r.MacAddress)
		}
		if other, ok := claimed[r.MacAddress]; ok && other != a.MacAddress {
			return wnms.Errorf(wnms.Conflict, "BSSID %s is claimed by another AP of this request", r.MacAddress)
		}
	}
	return nil
}

// HeartbeatAPs records that the customer's APs boxIDs were heard from
// now: a data source attributed traffic to them (decisions §21). It
// keeps them up as a heartbeat of POST /V5/ingest/aps does, without
// changing their records, and announces those that were down as up.
func (s *Service) HeartbeatAPs(ctx context.Context, customerID int64, boxIDs []int64) error {
	up, err := s.Store.TouchAPs(ctx, customerID, boxIDs, s.Now().UnixMilli())
	if err != nil {
		return err
	}
	for _, a := range up {
		s.announce(a, true)
	}
	return nil
}

// ListAPs answers q for the caller: only APs at locations it sees.
func (s *Service) ListAPs(ctx context.Context, c *wnms.Caller, q wnms.APQuery) ([]wnms.AP, int, error) {
	scope, err := c.ScopePaths(ctx)
	if err != nil {
		return nil, 0, err
	}
	q.CustomerID, q.Scope = c.CustomerID(), append([]string{}, scope...)
	now := s.Now()
	q.ActiveSince = now.Add(-s.APTimeout).UnixMilli()
	aps, total, err := s.Store.APs(ctx, q)
	if err != nil {
		return nil, 0, err
	}
	for i := range aps {
		aps[i].Derive(now, s.APTimeout)
	}
	return aps, total, nil
}

// WatchAPs announces APs that fall silent, until ctx ends: it looks every
// tenth of the timeout (at least every second, at most every 30 s).
func (s *Service) WatchAPs(ctx context.Context) {
	period := min(max(s.APTimeout/10, time.Second), 30*time.Second)
	every.Period(ctx, period, s.CheckAPs)
}

// CheckAPs announces, once, every AP silent for the timeout.
func (s *Service) CheckAPs(ctx context.Context) {
	down, err := s.Store.MarkAPsDown(ctx, s.Now().Add(-s.APTimeout).UnixMilli())
	if err != nil {
		if ctx.Err() == nil && s.Log != nil {
			s.Log.Error("AP liveness check failed", "err", err)
		}
		return
	}
	for _, a := range down {
		s.announce(a, false)
	}
}

func (s *Service) announce(a wnms.AP, up bool) {
	a.Derive(s.Now(), s.APTimeout)
	if s.Log != nil {
		state := "down"
		if up {
			state = "up"
		}
		s.Log.Info("AP "+state, "box_id", a.BoxID, "mac", a.MacAddress, "name", a.Name, "customer_id", a.CustomerID)
	}
	if s.OnAPChange != nil {
		s.OnAPChange(a, up)
	}
}
