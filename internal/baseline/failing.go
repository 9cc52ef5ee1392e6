package baseline

import (
	"context"
	"slices"
	"strings"

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
// MAC, so memory holds limit clients however many the slot has.
func (s *Service) FailingClients(ctx context.Context, customerID int64, l *wnms.Location, band, ssid string, at int64, limit int) (SlotFailures, error) {
	slot := SlotOf(at)
	out := SlotFailures{Timestamp: slot, Clients: []FailingClient{}}
	if err := s.Refresh(ctx, customerID, slot, slot, 0); err != nil {
		return out, err
	}
	obs, err := s.Store.ConnObs(ctx, customerID, l.ID.ID, band, ssid, slot, slot)
	if err != nil {
		return out, err
	}
	out.TotalCount = obs[slot].Failing
	if out.TotalCount == 0 {
		return out, nil
	}
	ancestors := map[int64][]int64{}
	byMAC := map[string]*[4]bool{}
	err = s.Store.SlotAttempts(ctx, customerID, slot, func(a ScopedAttempt) error {
		if !a.Failures[0] || (band != wnms.BandAny && a.Band != band) || (ssid != "" && a.SSID != ssid) {
			return nil
		}
		if _, ok := ancestors[a.LocationID]; !ok {
			if err := s.ancestorsOf(ctx, []int64{a.LocationID}, ancestors); err != nil {
				return err
			}
		}
		if !slices.Contains(ancestors[a.LocationID], l.ID.ID) {
			return nil
		}
		f := byMAC[a.MAC]
		if f == nil {
			if len(byMAC) >= limit {
				// Rows come by MAC: keep the first limit clients.
				return errEnough
			}
			f = &[4]bool{}
			byMAC[a.MAC] = f
		}
		for i := range f {
			f[i] = f[i] || a.Failures[i]
		}
		return nil
	})
	if err != nil && err != errEnough {
		return out, err
	}
	for mac, f := range byMAC {
		c := FailingClient{MacAddress: mac, FailureCategories: []string{}}
		for i := 1; i < len(f); i++ {
			if f[i] {
				c.FailureCategories = append(c.FailureCategories, categoryNames[i])
			}
		}
		out.Clients = append(out.Clients, c)
	}
	slices.SortFunc(out.Clients, func(a, b FailingClient) int { return strings.Compare(a.MacAddress, b.MacAddress) })
	return out, nil
}

type enough struct{}

func (enough) Error() string { return "enough" }

var errEnough error = enough{}
