package baseline

import (
	"context"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// MaxWindow is the longest fromtime–totime a baseline call covers.
const MaxWindow = 31 * 24 * time.Hour

// ParseBand reads frequencyband: 2.4GHz, 5GHz or ANY, in any case.
func ParseBand(v string) (string, bool) {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "", "ANY":
		return wnms.BandAny, true
	case "2.4GHZ", "2.4", wnms.Band24GHz:
		return wnms.Band24GHz, true
	case "5GHZ", "5", wnms.Band5GHz:
		return wnms.Band5GHz, true
	}
	return "", false
}

// LocatedAnomaly is an anomaly as the list answers it: with its location.
type LocatedAnomaly struct {
	LocationID wnms.LocationID `json:"locationId"`
	wnms.Anomaly
}

// Anomalies are the anomalies recorded between from and to (ms; from the
// start of the slot holding from, so that slot counts) at the locations
// the caller sees below under (a location path), newest first.
func (s *Service) Anomalies(ctx context.Context, c *wnms.Caller, under string, from, to int64) ([]LocatedAnomaly, error) {
	list, err := s.Store.Anomalies(ctx, c.CustomerID(), nil, wnms.SlotOf(from), to)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, a := range list {
		ids = append(ids, a.LocationID)
	}
	paths, err := s.Store.LocationPaths(ctx, ids)
	if err != nil {
		return nil, err
	}
	scope, err := c.ScopePaths(ctx)
	if err != nil {
		return nil, err
	}
	out := []LocatedAnomaly{}
	var aps []*wnms.AnomalyAP
	for _, a := range list {
		p, ok := paths[a.LocationID]
		if ok && wnms.UnderAny(p, []string{under}) && wnms.UnderAny(p, scope) {
			out = append(out, LocatedAnomaly{LocationID: wnms.LocalID(a.LocationID), Anomaly: a})
			if a.AP != nil {
				aps = append(aps, a.AP)
			}
		}
	}
	if err := s.nameAPs(ctx, c.CustomerID(), aps); err != nil {
		return nil, err
	}
	return out, nil
}
