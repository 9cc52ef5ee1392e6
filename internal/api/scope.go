package api

import (
	"context"
	"net/http"

	"github.com/wnms/wnms/internal/access"

	"github.com/wnms/wnms/internal/wnms"
)

// locationFor reads location id for the caller (wnms.LocationFor).
func (s *Server) locationFor(ctx context.Context, c *wnms.Caller, id int64) (*wnms.Location, error) {
	return access.LocationFor(ctx, s.Store, c, id)
}

// locationParam reads the locationid query parameter and checks it for the
// caller. When the parameter is absent, def is used; def < -1 means the
// parameter is required.
func (s *Server) locationParam(r *http.Request, def int64) (*wnms.Location, error) {
	f := &form{r: r}
	id := readLocationID(f, def)
	if f.err != nil {
		return nil, f.err
	}
	l, err := s.locationFor(r.Context(), wnms.CallerFrom(r.Context()), id)
	if wnms.ErrorCode(err) == wnms.ResourceNotFound {
		return nil, wnms.ParamError("locationid", "no location %d", id)
	}
	return l, err
}
