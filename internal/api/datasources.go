package api

import (
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

// getDataSources is GET /datasources: the caller's customer's
// configuration, secrets masked.
func (s *Server) getDataSources(w http.ResponseWriter, r *http.Request) error {
	d, err := s.Store.DataSources(r.Context(), wnms.CallerFrom(r.Context()).CustomerID())
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, d.Masked())
	return nil
}

// putDataSources is PUT /datasources: replaces the configuration; a
// secret sent back masked keeps the stored one. Each source's location
// must be one the caller sees. The listeners take the new configuration
// at once (replicas within their reload interval). Answers it, masked.
func (s *Server) putDataSources(w http.ResponseWriter, r *http.Request) error {
	body, err := policyBody(w, r)
	if err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	d, err := s.Store.UpdateDataSources(r.Context(), c.CustomerID(), func(cur *wnms.DataSources) (*wnms.DataSources, error) {
		next, err := wnms.ParseDataSources(body, cur)
		if err != nil {
			return nil, err
		}
		for _, src := range next.Sources {
			if _, err := access.LocationFor(r.Context(), s.Store, c, src.LocationID.ID); err != nil {
				return nil, err
			}
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
	httpkit.WriteJSON(w, http.StatusOK, d.Masked())
	return nil
}
