package api

import (
	"net/http"
	"slices"
	"time"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// getDataSourceStatus is GET /datasources/status: per source of the
// caller's customer that lies in the caller's locations, and per RADIUS
// upstream (for a caller allowed at the root, who alone may change them),
// what this server's listeners saw since it started: the state, the last
// packet, the records by outcome, and the BSSIDs, NAS-Identifiers and
// addresses that matched no AP, to be registered (docs/datasources.md).
func (s *Server) getDataSourceStatus(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	c := wnms.CallerFrom(ctx)
	d, err := s.Store.DataSources(ctx, c.CustomerID())
	if err != nil {
		return err
	}
	scope, err := c.ScopePaths(ctx)
	if err != nil {
		return err
	}
	root := slices.Contains(scope, wnms.RootPath)
	var srcs []wnms.DataSource
	for _, src := range d.Sources {
		if root {
			srcs = append(srcs, src)
			continue
		}
		if _, err := access.LocationFor(ctx, s.Store, c, src.LocationID.ID); err == nil {
			srcs = append(srcs, src)
		} else if code := wnms.ErrorCode(err); code != wnms.LocationAccessDenied && code != wnms.ResourceNotFound {
			return err
		}
	}
	var st *wnms.DataSourceStatus
	if s.DataSourceStatus != nil {
		st = s.DataSourceStatus(c.CustomerID(), srcs, root, time.Now())
	} else {
		st = &wnms.DataSourceStatus{Sources: []wnms.SourceStatus{}, Upstreams: []wnms.UpstreamStatus{}}
		for _, src := range srcs {
			st.Sources = append(st.Sources, wnms.SourceStatus{Name: src.Name, LocationID: src.LocationID,
				State: wnms.StateIdle, Counts: map[string]uint64{}, Unmatched: []wnms.UnmatchedID{}})
		}
	}
	// The pollers' state, as their servers recorded it with their leases
	// (any replica answers it).
	states, err := s.Store.PollerStates(ctx, c.CustomerID())
	if err != nil {
		return err
	}
	st.Pollers = []wnms.PollerStatus{}
	now := time.Now().UnixMilli()
	for _, p := range d.Pollers {
		if !root {
			if _, err := access.LocationFor(ctx, s.Store, c, p.LocationID.ID); err != nil {
				if code := wnms.ErrorCode(err); code != wnms.LocationAccessDenied && code != wnms.ResourceNotFound {
					return err
				}
				continue
			}
		}
		ps, ok := states[p.Name]
		st.Pollers = append(st.Pollers, wnms.PollerStatusOf(p, ps, ok, now))
	}
	httpkit.WriteJSON(w, http.StatusOK, st)
	return nil
}
