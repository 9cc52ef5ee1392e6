package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/servicelevel"
	"github.com/wnms/wnms/internal/wnms"
)

// serviceLevelParams are GET /servicelevels's: the location (default the
// root), the window (by default the last 24 hours, at most
// servicelevel.MaxWindow) and the grouping.
type serviceLevelParams struct {
	closedWindow
	LocationID int64
	GroupBy    string
}

var groupings = []string{wnms.GroupNone, wnms.GroupFloor, wnms.GroupAP, wnms.GroupSSID, wnms.GroupBand}

func (p *serviceLevelParams) decode(f *form) {
	p.closedWindow.decode(f)
	p.LocationID = f.int("locationid", wnms.RootLocation)
	p.GroupBy = strings.ToLower(f.str("groupby"))
}

func (p *serviceLevelParams) Validate(now time.Time) error {
	if p.GroupBy == "" {
		p.GroupBy = wnms.GroupNone
	}
	ok := false
	for _, g := range groupings {
		ok = ok || g == p.GroupBy
	}
	if !ok {
		return wnms.ParamError("groupby", "groupby must be %s, not %q", orList(groupings), p.GroupBy)
	}
	p.def, p.longest = servicelevel.DefaultWindow, servicelevel.MaxWindow
	return p.closedWindow.Validate(now)
}

// serviceLevels is GET /servicelevels: the service levels of a location's
// subtree in a window, as a whole and by group.
func (s *Server) serviceLevels(w http.ResponseWriter, r *http.Request) error {
	var p serviceLevelParams
	if err := bindAt(r, &p, s.Baselines.Now); err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	l, err := s.locationFor(r.Context(), c, p.LocationID)
	if err != nil {
		return err
	}
	out, err := s.ServiceLevels.Levels(r.Context(), c.CustomerID(), l, p.from, p.to, p.GroupBy)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}

// targetParams are the service level targets calls': the location, the
// root by default for a read, required for a write.
type targetParams struct {
	write      bool
	LocationID int64
}

func (p *targetParams) decode(f *form) {
	def := int64(wnms.RootLocation)
	if p.write {
		def = -2 // required
	}
	p.LocationID = readLocationID(f, def)
}

func (p *targetParams) Validate(time.Time) error { return nil }

// serviceLevelTargets is GET /servicelevels/targets: a location's applied
// targets and where they are defined.
func (s *Server) serviceLevelTargets(w http.ResponseWriter, r *http.Request) error {
	var p targetParams
	if err := bindAt(r, &p, s.Baselines.Now); err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	l, err := s.locationFor(r.Context(), c, p.LocationID)
	if err != nil {
		return err
	}
	out, err := s.ServiceLevels.Targets(r.Context(), c.CustomerID(), l)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}

// putServiceLevelTargets is PUT /servicelevels/targets?locationid=: gives
// the location targets of its own (its subtree inherits them where it has
// none of its own).
func (s *Server) putServiceLevelTargets(w http.ResponseWriter, r *http.Request) error {
	p := targetParams{write: true}
	if err := bindAt(r, &p, s.Baselines.Now); err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	l, err := s.locationFor(r.Context(), c, p.LocationID)
	if err != nil {
		return err
	}
	body, err := httpkit.ReadJSON(w, r, httpkit.MaxJSONBody)
	if err != nil {
		return err
	}
	var in servicelevel.TargetsInput
	if err := wnms.DecodeJSONObject(body, &in); err != nil {
		return err
	}
	out, err := s.ServiceLevels.SetTargets(r.Context(), c.CustomerID(), l, &in)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}
