package telemetry

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/wnms"
)

// IngestEvents stores the client events of an ingest body for the
// caller's customer. Each event takes the location of the AP whose radio
// its BSSID names (the unknown location when none does), which must be a
// location the caller sees. An eventId stored before makes the record a
// duplicate.
func (s *Service) IngestEvents(ctx context.Context, c *wnms.Caller, body []byte) (*Result, error) {
	recs, err := SplitRecords(body)
	if err != nil {
		return nil, err
	}
	res := &Result{Rejected: []Rejection{}}
	now := s.Now()
	parsed := make([]*Event, len(recs))
	var bssids []string
	for i, raw := range recs {
		e, err := ParseEvent(raw, now)
		if err != nil {
			res.reject(i, err)
			continue
		}
		parsed[i] = e
		if !slices.Contains(bssids, e.BSSID) {
			bssids = append(bssids, e.BSSID)
		}
	}
	radios, err := s.Store.RadiosByBSSID(ctx, c.CustomerID(), bssids)
	if err != nil {
		return nil, err
	}
	var fileIDs []string
	for _, e := range parsed {
		if e != nil && e.FileID != "" && !slices.Contains(fileIDs, e.FileID) {
			fileIDs = append(fileIDs, e.FileID)
		}
	}
	bundles, err := s.Store.LogBundles(ctx, c.CustomerID(), fileIDs)
	if err != nil {
		return nil, err
	}
	seen := map[int64]error{}
	var good []*Event
	var bodies [][]byte
	for i, e := range parsed {
		if e == nil {
			continue
		}
		if e.FileID != "" && !bundles[e.FileID] {
			res.reject(i, wnms.Invalid("fileId", "no log bundle %q: upload it with POST ingest/files first", e.FileID))
			continue
		}
		var ap *RadioAP
		if r, ok := radios[e.BSSID]; ok {
			ap = &r
		}
		b, err := e.Place(ap)
		if err != nil {
			return nil, err
		}
		if err := s.sees(ctx, c, e.LocationID, seen); err != nil {
			res.reject(i, err)
			continue
		}
		good = append(good, e)
		bodies = append(bodies, b)
	}
	if len(good) > 0 {
		// The clients first: their update is idempotent, so if storing the
		// events fails, the retry (all duplicates then) changes nothing.
		updates := make([]ClientUpdate, len(good))
		for i, e := range good {
			updates[i] = e.ClientUpdate()
		}
		if err := s.updateClients(ctx, c, updates); err != nil {
			return nil, err
		}
		n, err := s.Store.InsertClientEvents(ctx, c.CustomerID(), good, bodies)
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
func (s *Service) ClientEvents(ctx context.Context, c *wnms.Caller, at *wnms.Location, q EventQuery) ([]json.RawMessage, int, error) {
	locs, err := s.scopeLocations(ctx, c, at)
	if err != nil {
		return nil, 0, err
	}
	q.CustomerID, q.Locations = c.CustomerID(), locs
	return s.Store.ClientEvents(ctx, q)
}
