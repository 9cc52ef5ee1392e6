package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/incident"
	"github.com/wnms/wnms/internal/wnms"
)

// incidentParams are GET /incidents's: the window (by default the last 7
// days, at most 31), the location (default: wherever the caller sees), the
// state and the page.
type incidentParams struct {
	closedWindow
	LocationID  int64
	LocationSet bool
	State       string
	page
}

func (p *incidentParams) decode(f *form) {
	p.closedWindow.decode(f)
	p.LocationSet = f.given("locationid")
	p.LocationID = readLocationID(f, wnms.RootLocation)
	p.State = f.str("state")
	p.Offset = f.int("offset", 0)
	p.Limit = f.int("limit", 100)
}

func (p *incidentParams) Validate(now time.Time) error {
	switch p.State {
	case "":
		p.State = incident.StateAll
	case incident.StateOpen, incident.StateClosed, incident.StateAll:
	default:
		return wnms.ParamError("state", "state must be open, closed or all, not %q", p.State)
	}
	if err := p.page.Validate(); err != nil {
		return err
	}
	p.def, p.longest = 7*24*time.Hour, incident.MaxWindow*time.Millisecond
	return p.closedWindow.Validate(now)
}

// incidentPage is a page of incidents.
type incidentPage struct {
	Incidents    []*wnms.Incident `json:"incidents"`
	TotalCount   int              `json:"totalCount"`
	PreviousLink *string          `json:"previousLink"`
	NextLink     *string          `json:"nextLink"`
}

// listIncidents is GET /incidents: the incidents at the sites the caller
// sees (concerning locationid when given), newest first, a page at a time.
func (s *Server) listIncidents(w http.ResponseWriter, r *http.Request) error {
	var p incidentParams
	if err := bindAt(r, &p, s.Incidents.Now); err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	under := wnms.RootPath
	if p.LocationSet {
		l, err := s.locationFor(r.Context(), c, p.LocationID)
		if err != nil {
			return err
		}
		under = l.Path
	}
	list, err := s.Incidents.List(r.Context(), c, under, p.from, p.to, p.State)
	if err != nil {
		return err
	}
	out := incidentPage{Incidents: []*wnms.Incident{}, TotalCount: len(list)}
	if p.Offset < int64(len(list)) {
		out.Incidents = list[p.Offset:min(int64(len(list)), p.Offset+p.Limit)]
	}
	out.PreviousLink, out.NextLink = p.page.links(len(list), func(from int64) string {
		q := r.URL.Query()
		q.Set("offset", strconv.FormatInt(from, 10))
		q.Set("limit", strconv.FormatInt(p.Limit, 10))
		return "/incidents?" + q.Encode()
	})
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getIncident is GET /incidents/{id}.
func (s *Server) getIncident(w http.ResponseWriter, r *http.Request) error {
	id, err := httpkit.PathInt(r, "id")
	if err != nil {
		return err
	}
	in, err := s.Incidents.Get(r.Context(), wnms.CallerFrom(r.Context()), id)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, in)
	return nil
}

// acknowledgeIncident is POST /incidents/{id}/acknowledge.
func (s *Server) acknowledgeIncident(w http.ResponseWriter, r *http.Request) error {
	id, err := httpkit.PathInt(r, "id")
	if err != nil {
		return err
	}
	in, err := s.Incidents.Acknowledge(r.Context(), wnms.CallerFrom(r.Context()), id)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, in)
	return nil
}
