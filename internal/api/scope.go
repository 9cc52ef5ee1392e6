package api

import (
	"context"
	"net/http"

	"github.com/wnms/wnms/internal/wnms"
)

// locationFor reads location id for the caller: RESOURCE_NOT_FOUND when it
// does not exist, LOCATION_ACCESS_DENIED when it lies outside the caller's
// customer or allowed locations. Every call that takes a location goes
// through here.
func (s *Server) locationFor(ctx context.Context, c *wnms.Caller, id int64) (*wnms.Location, error) {
	l, err := s.Store.Location(ctx, id)
	if err != nil {
		return nil, err
	}
	ok, err := c.Sees(ctx, l)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, wnms.Errorf(wnms.LocationAccessDenied, "location %d is outside your locations", id)
	}
	return l, nil
}

// locationParam reads the locationid query parameter and checks it for the
// caller. When the parameter is absent, def is used; def < -1 means the
// parameter is required.
func (s *Server) locationParam(r *http.Request, def int64) (*wnms.Location, error) {
	id, err := queryInt(r, "locationid", def)
	if err != nil {
		return nil, err
	}
	if id < -1 {
		if _, given := queryValue(r, "locationid"); !given {
			return nil, wnms.MissingParam("locationid")
		}
		return nil, wnms.ParamError("locationid", "no location %d", id)
	}
	l, err := s.locationFor(r.Context(), wnms.CallerFrom(r.Context()), id)
	if wnms.ErrorCode(err) == wnms.ResourceNotFound {
		return nil, wnms.ParamError("locationid", "no location %d", id)
	}
	return l, err
}
