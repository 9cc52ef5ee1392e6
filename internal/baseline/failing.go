package baseline

import (
	"context"

	"github.com/wnms/wnms/internal/wnms"
)

// FailingClient is a client with at least one Failure in a slot, in the
// scope a connectivity observation counts.
type FailingClient struct {
	MacAddress string `json:"macAddress"`
	// FailureCategories are the categories of its failures in the slot
	// (Association, Authentication, Network), in that order.
	FailureCategories []string `json:"failureCategories"`
}

// SlotFailures answers GET /baselines/clientsconnectivity/failingclients.
type SlotFailures struct {
	Timestamp int64 `json:"timestamp"`
	// TotalCount is the slot's failing clients in the scope (the
	// observation's absoluteObservation); Clients lists the first of them
	// by MAC, at most the limit asked.
	TotalCount int             `json:"totalCount"`
	Clients    []FailingClient `json:"clients"`
}

var categoryNames = [4]string{"", "Association", "Authentication", "Network"}

// FailingClients lists the clients that failed in the slot holding at, in
// the scope of l (its subtree), band and ssid, as the connectivity
// observation of that slot counts them: at most limit of them, first by
// MAC. The store reads them a page at a time from an index (no sort of
// the slot), so memory holds limit clients however many events the slot
// has.
func (s *Service) FailingClients(ctx context.Context, customerID int64, l *wnms.Location, band, ssid string, at int64, limit int) (SlotFailures, error) {
	slot := wnms.SlotOf(at)
	out := SlotFailures{Timestamp: slot, Clients: []FailingClient{}}
	obs, err := s.connObs(ctx, customerID, l, band, ssid, slot, slot)
	if err != nil {
		return out, err
	}
	out.TotalCount = obs[slot].Failing
	if out.TotalCount == 0 {
		return out, nil
	}
	locations, err := s.Store.SubtreeLocations(ctx, customerID, []string{l.Path})
	if err != nil {
		return out, err
	}
	failing, err := s.Store.SlotFailingClients(ctx, customerID, slot, locations, band, ssid, limit)
	if err != nil {
		return out, err
	}
	for _, a := range failing {
		c := FailingClient{MacAddress: a.MAC, FailureCategories: []string{}}
		for i := 1; i < len(a.Failures); i++ {
			if a.Failures[i] {
				c.FailureCategories = append(c.FailureCategories, categoryNames[i])
			}
		}
		out.Clients = append(out.Clients, c)
	}
	return out, nil
}
