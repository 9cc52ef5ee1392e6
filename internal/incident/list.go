package incident

import (
	"context"

	"github.com/wnms/wnms/internal/wnms"
)

// Incident states a list selects.
const (
	StateOpen   = "open"
	StateClosed = "closed"
	StateAll    = "all"
)

// MaxWindow is the longest fromtime–totime the list covers.
const MaxWindow = 31 * 24 * 60 * 60 * 1000

// List is the customer's incidents that overlap [from, to] (ms) in state
// (open, closed or all), at sites the caller sees, that concern under (a
// location path: the site is at or below it, or one of the incident's
// floors is), newest first.
func (s *Service) List(ctx context.Context, c *wnms.Caller, under string, from, to int64, state string) ([]*wnms.Incident, error) {
	list, err := s.Store.Incidents(ctx, c.CustomerID(), from, to)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, in := range list {
		ids = append(ids, in.SiteLocationID)
		ids = append(ids, in.Floors...)
	}
	paths, err := s.Store.LocationPaths(ctx, ids)
	if err != nil {
		return nil, err
	}
	scope, err := c.ScopePaths(ctx)
	if err != nil {
		return nil, err
	}
	out := []*wnms.Incident{}
	for _, in := range list {
		if (state == StateOpen && in.To != nil) || (state == StateClosed && in.To == nil) {
			continue
		}
		site, ok := paths[in.SiteLocationID]
		if !ok || !wnms.UnderAny(site, scope) {
			continue
		}
		concerns := wnms.Under(site, under)
		for _, f := range in.Floors {
			if p, ok := paths[f]; ok && wnms.Under(p, under) {
				concerns = true
			}
		}
		if concerns {
			out = append(out, in)
		}
	}
	return out, nil
}

// Get is one of the customer's incidents at a site the caller sees
// (RESOURCE_NOT_FOUND otherwise, as for an id that does not exist).
func (s *Service) Get(ctx context.Context, c *wnms.Caller, id int64) (*wnms.Incident, error) {
	in, err := s.Store.Incident(ctx, c.CustomerID(), id)
	if err != nil {
		return nil, err
	}
	paths, err := s.Store.LocationPaths(ctx, []int64{in.SiteLocationID})
	if err != nil {
		return nil, err
	}
	scope, err := c.ScopePaths(ctx)
	if err != nil {
		return nil, err
	}
	if p, ok := paths[in.SiteLocationID]; !ok || !wnms.UnderAny(p, scope) {
		return nil, wnms.NotFound("no incident %d", id)
	}
	return in, nil
}

// Acknowledge marks an incident the caller sees acknowledged and returns it.
func (s *Service) Acknowledge(ctx context.Context, c *wnms.Caller, id int64) (*wnms.Incident, error) {
	if _, err := s.Get(ctx, c, id); err != nil {
		return nil, err
	}
	if err := s.Store.AcknowledgeIncident(ctx, c.CustomerID(), id); err != nil {
		return nil, err
	}
	return s.Store.Incident(ctx, c.CustomerID(), id)
}
