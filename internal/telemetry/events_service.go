package telemetry

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/wnms"
)

// IngestEvents stores the client events of an ingest body for the
// caller's customer. Each event takes the location of the AP whose radio
// its BSSID names (the unknown location when none does), which must be a
// location the caller sees. A Failure's fileId must name a log bundle of
// the customer. An eventId stored before makes the record a duplicate.
func (s *Service) IngestEvents(ctx context.Context, c *wnms.Caller, body []byte) (*Result, error) {
	recs, err := SplitRecords(body)
	if err != nil {
		return nil, err
	}
	return s.ingestEvents(ctx, c, len(recs), func(i int, now time.Time) (*Event, error) {
		return ParseEvent(recs[i], now)
	}, wnms.UnknownLocation)
}

// ingestEvents stores n events, the i-th made by check; one at no known
// AP is placed at location at.
func (s *Service) ingestEvents(ctx context.Context, c *wnms.Caller, n int,
	check func(i int, now time.Time) (*Event, error), at int64) (*Result, error) {
	return ingestClientRecords(ctx, s, c, n, check, clientRecords[*Event]{
		bssid: func(e *Event) string { return e.BSSID },
		prepare: func(ctx context.Context, parsed []*Event) (func(*Event) error, error) {
			var fileIDs []string
			named := map[string]bool{}
			for _, e := range parsed {
				if e != nil && e.FileID != "" && !named[e.FileID] {
					named[e.FileID] = true
					fileIDs = append(fileIDs, e.FileID)
				}
			}
			bundles, err := s.Store.LogBundles(ctx, c.CustomerID(), fileIDs)
			return func(e *Event) error {
				if e.FileID != "" && !bundles[e.FileID] {
					return wnms.Invalid("fileId", "no log bundle %q: upload it with POST ingest/files first", e.FileID)
				}
				return nil
			}, err
		},
		place: func(e *Event, ap *wnms.RadioAP) (int64, error) {
			b, err := e.PlaceAt(ap, at)
			e.stored = b
			return e.LocationID, err
		},
		update: (*Event).ClientUpdate,
		store: func(ctx context.Context, good []*Event, clients map[int64]wnms.ClientUpdate) (int, error) {
			roams, moved, err := s.findRoams(ctx, c.CustomerID(), good)
			if err != nil {
				return 0, err
			}
			events, bodies := make([]*wnms.ClientEvent, len(good)), make([][]byte, len(good))
			for i, e := range good {
				events[i], bodies[i] = &e.ClientEvent, e.stored
			}
			derived := make([]wnms.DerivedEvent, len(roams))
			for i, r := range roams {
				derived[i] = wnms.DerivedEvent{Event: &r.ClientEvent, Body: r.stored}
			}
			n, err := s.Store.InsertClientEvents(ctx, c.CustomerID(), events, bodies, clients, derived...)
			if err != nil {
				return 0, err
			}
			s.heardEvents(c.CustomerID(), moved)
			return n, nil
		},
	})
}

// clientRecords is how one kind of client record (events, samples) goes
// through ingestClientRecords.
type clientRecords[R comparable] struct {
	bssid func(R) string
	// prepare (optional) looks at every parsed record (nil: refused)
	// before any is placed, and returns a check of each.
	prepare func(ctx context.Context, parsed []R) (func(R) error, error)
	// place gives the record the location and AP of its BSSID's AP (ap,
	// nil when no known AP has it) and returns the location.
	place  func(r R, ap *wnms.RadioAP) (int64, error)
	update func(R) wnms.ClientUpdate
	// store writes the accepted records, with what they say of their
	// clients (nil: recorded already), and returns how many were new.
	store func(ctx context.Context, good []R, clients map[int64]wnms.ClientUpdate) (int, error)
}

// ingestClientRecords is the ingest of n client records: each record is
// made and checked on its own by check (and refused on its own), placed
// at its BSSID's AP, refused when that location is not one the caller
// sees; then the records are stored with what they say of their clients.
func ingestClientRecords[R comparable](ctx context.Context, s *Service, c *wnms.Caller, n int,
	check func(i int, now time.Time) (R, error), k clientRecords[R]) (*Result, error) {
	res := &Result{Rejected: []Rejection{}}
	now := s.Now()
	var none R
	parsed := make([]R, n)
	var bssids []string
	named := map[string]bool{}
	for i := range n {
		r, err := check(i, now)
		if err != nil {
			res.reject(i, err)
			continue
		}
		parsed[i] = r
		if b := k.bssid(r); b != "" && !named[b] {
			named[b] = true
			bssids = append(bssids, b)
		}
	}
	radios, err := s.Store.RadiosByBSSID(ctx, c.CustomerID(), bssids)
	if err != nil {
		return nil, err
	}
	valid := func(R) error { return nil }
	if k.prepare != nil {
		if valid, err = k.prepare(ctx, parsed); err != nil {
			return nil, err
		}
	}
	seen := map[int64]error{}
	var good []R
	var updates []wnms.ClientUpdate
	for i, r := range parsed {
		if r == none {
			continue
		}
		if err := valid(r); err != nil {
			res.reject(i, err)
			continue
		}
		var ap *wnms.RadioAP
		if x, ok := radios[k.bssid(r)]; ok {
			ap = &x
		}
		loc, err := k.place(r, ap)
		if err != nil {
			return nil, err
		}
		if err := s.sees(ctx, c, loc, seen); err != nil {
			res.reject(i, err)
			continue
		}
		good = append(good, r)
		updates = append(updates, k.update(r))
	}
	if len(good) > 0 {
		// A scoped caller's client updates are written here, before the
		// records: they are idempotent, so if storing the records fails,
		// the retry (all duplicates then) changes nothing.
		clients, err := s.clientUpdates(ctx, c, updates)
		if err != nil {
			return nil, err
		}
		n, err := k.store(ctx, good, clients)
		if err != nil {
			return nil, err
		}
		res.Accepted, res.Duplicates = n, len(good)-n
	}
	return res, nil
}

// sees checks that the caller sees location id, remembering verdicts.
func (s *Service) sees(ctx context.Context, c *wnms.Caller, id int64, seen map[int64]error) error {
	if err, ok := seen[id]; ok {
		return err
	}
	_, err := access.LocationFor(ctx, s.Store, c, id)
	if err != nil && wnms.ErrorCode(err) != wnms.InternalError {
		err = wnms.Errorf(wnms.LocationAccessDenied, "the event's AP is at location %d, outside your locations", id)
	}
	seen[id] = err
	return err
}

// scopeLocations returns the location ids a read may return events of:
// those at or below at (a location the caller may see, checked by the
// caller), else at or below the caller's locations; nil means any (a
// caller who sees the whole tree, asking for all of it).
func (s *Service) scopeLocations(ctx context.Context, c *wnms.Caller, at *wnms.Location) ([]int64, error) {
	paths, err := c.ScopePaths(ctx)
	if err != nil {
		return nil, err
	}
	if at != nil {
		paths = []string{at.Path}
	} else if slices.Contains(paths, wnms.RootPath) {
		return nil, nil
	}
	return s.Store.SubtreeLocations(ctx, c.CustomerID(), paths)
}

// ClientEvents answers q for the caller, at location at (nil: all it
// sees).
func (s *Service) ClientEvents(ctx context.Context, c *wnms.Caller, at *wnms.Location, q wnms.EventQuery) ([]json.RawMessage, int, error) {
	locs, err := s.scopeLocations(ctx, c, at)
	if err != nil {
		return nil, 0, err
	}
	q.CustomerID, q.Locations = c.CustomerID(), locs
	return s.Store.ClientEvents(ctx, q)
}
