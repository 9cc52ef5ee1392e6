package api

import (
	"context"
	"net/http"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// The data sources (docs/datasources.md): the RADIUS servers wnms passes
// authentication and accounting on to, and the APs, controllers and DHCP
// servers that may send it RADIUS packets and syslog lines. One
// configuration per customer, stored, so every replica's listeners serve
// it; secrets leave only masked.
//
// A caller sees and changes only the sources at locations it sees (a
// location-scoped ADMINISTRATOR, its sites'); the others are neither shown
// to it nor removed by its PUT. The radius block serves every location:
// every caller of the call sees it (masked), only a SUPERUSER or a caller
// allowed the root changes it.

// getDataSources is GET /datasources: the caller's customer's
// configuration as the caller sees it, secrets masked.
func (s *Server) getDataSources(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	d, err := s.Store.DataSources(r.Context(), c.CustomerID())
	if err != nil {
		return err
	}
	view, _, err := s.dataSourcesView(r.Context(), c, d)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, view.Masked())
	return nil
}

// putDataSources is PUT /datasources: replaces the sources the caller
// sees and, for a SUPERUSER or a caller allowed the root, the radius
// block (anyone else must send it back as it is: LOCATION_ACCESS_DENIED
// otherwise); a secret sent back masked keeps the stored one. Each
// source's location must be one the caller sees. The listeners take the
// new configuration at once (replicas within their reload interval).
// Answers it as the caller sees it, masked.
func (s *Server) putDataSources(w http.ResponseWriter, r *http.Request) error {
	body, err := policyBody(w, r)
	if err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	var view *wnms.DataSources
	_, err = s.Store.UpdateDataSources(r.Context(), c.CustomerID(), func(cur *wnms.DataSources) (*wnms.DataSources, error) {
		seen, hidden, err := s.dataSourcesView(r.Context(), c, cur)
		if err != nil {
			return nil, err
		}
		next, err := wnms.ParseDataSources(body, seen)
		if err != nil {
			return nil, err
		}
		if !next.SameUpstreams(cur) {
			if err := access.ChangeUpstreams(c); err != nil {
				return nil, err
			}
		}
		for _, id := range next.Locations() {
			if _, err := access.LocationFor(r.Context(), s.Store, c, id); err != nil {
				return nil, err
			}
		}
		view = next.Masked()
		if err := next.Keep(hidden); err != nil {
			return nil, err
		}
		if s.CheckDataSources != nil {
			if err := s.CheckDataSources(r.Context(), c.CustomerID(), next); err != nil {
				return nil, err
			}
		}
		return next, nil
	})
	if err != nil {
		return err
	}
	if s.OnDataSourcesChange != nil {
		s.OnDataSourcesChange()
	}
	httpkit.WriteJSON(w, http.StatusOK, view)
	return nil
}

// dataSourcesView splits d into what the caller sees (the radius block,
// and the sources and pollers at its locations) and what it does not.
func (s *Server) dataSourcesView(ctx context.Context, c *wnms.Caller, d *wnms.DataSources) (view, hidden *wnms.DataSources, err error) {
	seen, err := access.SeenLocations(ctx, s.Store, c, d.Locations())
	if err != nil {
		return nil, nil, err
	}
	view, hidden = d.Split(func(id int64) bool { return seen[id] })
	return view, hidden, nil
}
