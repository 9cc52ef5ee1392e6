package analytics

import (
	"context"
	"net/http"
	"time"

	"github.com/wnms/wnms/internal/access"

	_ "time/tzdata" // every zone id loads even without system zoneinfo

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// LayoutDims reads the dimensions of a floor's layout. ok is false when
// the floor has no layout. The floor layout store implements it; the zone
// configuration reads it through this interface only.
type LayoutDims interface {
	FloorDimensions(ctx context.Context, locationID int64) (length, width float64, unit string, ok bool, err error)
}

// FootfallSource counts associated clients for the zone configuration's
// footfall range.
type FootfallSource interface {
	// DailyClients returns the least and the most distinct clients
	// associated per day at the location with materialized path path (and
	// below), for the customer, over the days of [from, to) as the time
	// zone tz counts them. A day without associations counts 0.
	DailyClients(ctx context.Context, customerID int64, path string, from, to time.Time, tz *time.Location) (min, max int64, err error)
}

// zoneQuery is the query of the zone configuration calls.
type zoneQuery struct {
	ServerID   int64
	LocationID int64
	NodeType   string
}

// parseZoneQuery reads server_id, location_id and node_type: each is
// required (MISSING_PARAMETER); server_id must be this server's serverID
// and node_type one of location, zone, data (INVALID_PARAMETER).
func (s *Server) parseZoneQuery(r *http.Request) (zoneQuery, error) {
	var q zoneQuery
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"server_id", &q.ServerID}, {"location_id", &q.LocationID}} {
		v, _ := httpkit.QueryValue(r, p.name)
		if v == "" {
			return q, wnms.MissingParam(p.name)
		}
		n, err := httpkit.ParseInt(p.name, v)
		if err != nil {
			return q, err
		}
		*p.dst = n
	}
	if q.ServerID != s.ServerID {
		return q, wnms.ParamError("server_id", "no server %d here; this server's serverID is %d", q.ServerID, s.ServerID)
	}
	v, _ := httpkit.QueryValue(r, "node_type")
	if v == "" {
		return q, wnms.MissingParam("node_type")
	}
	var ok bool
	if q.NodeType, ok = wnms.ParseNodeType(v); !ok {
		return q, wnms.ParamError("node_type", "node_type must be location, zone or data, not %q", v)
	}
	return q, nil
}

// zoneTarget reads the query and its location for the caller: 404 when
// the location does not exist, 403 LOCATION_ACCESS_DENIED when it lies
// outside the caller's customer or allowed locations.
func (s *Server) zoneTarget(r *http.Request) (zoneQuery, *wnms.Caller, *wnms.Location, error) {
	q, err := s.parseZoneQuery(r)
	if err != nil {
		return q, nil, nil, err
	}
	c := wnms.CallerFrom(r.Context())
	loc, err := access.LocationFor(r.Context(), s.Store, c, q.LocationID)
	return q, c, loc, err
}

// getZoneConfig answers the zone configuration of a location.
func (s *Server) getZoneConfig(w http.ResponseWriter, r *http.Request) error {
	q, c, loc, err := s.zoneTarget(r)
	if err != nil {
		return err
	}
	zc, err := s.Store.ZoneConfig(r.Context(), c.CustomerID(), q.LocationID)
	if err != nil {
		return err
	}
	return s.writeZoneConfig(w, r, c, loc, zc)
}

// putZoneConfig stores the given parts of a location's zone configuration
// and answers like getZoneConfig. Nothing is stored unless the whole
// request is valid.
func (s *Server) putZoneConfig(w http.ResponseWriter, r *http.Request) error {
	q, c, loc, err := s.zoneTarget(r)
	if err != nil {
		return err
	}
	body, err := httpkit.ReadJSON(w, r, httpkit.MaxJSONBody)
	if err != nil {
		return err
	}
	ch, err := decodeZoneChange(body, q)
	if err != nil {
		return err
	}
	zc := &wnms.ZoneConfig{LocationID: q.LocationID, CustomerID: c.CustomerID(),
		Layout: ch.Layout, Footfall: ch.Footfall, DwellTime: ch.DwellTime}
	if err := s.Store.UpdateZoneConfig(r.Context(), zc, ch.Parts); err != nil {
		return err
	}
	return s.writeZoneConfig(w, r, c, loc, zc)
}

// Zone configuration response (api.md §13). The body is a
// one-element array, as in the interface's sample.
type (
	zoneResponse struct {
		Success bool     `json:"success"`
		Message string   `json:"message"`
		Data    zoneData `json:"data"`
	}
	zoneData struct {
		TotalCount  int          `json:"totalCount"`
		FloorConfig floorConfig  `json:"floorConfig"`
		Campaign    zoneCampaign `json:"campaign"`
	}
	floorConfig struct {
		Config  zoneConfigJSON `json:"config"`
		Options zoneOptions    `json:"options"`
	}
	zoneConfigJSON struct {
		ServerID   int64           `json:"server_id"`
		LocationID int64           `json:"location_id"`
		Layout     wnms.ZoneLayout `json:"layout"`
		Range      zoneRange       `json:"range"`
	}
	zoneRange struct {
		Footfall  wnms.FootfallRange `json:"footfall"`
		DwellTime []int              `json:"dwell_time"`
	}
	zoneOptions struct {
		Durations           []int        `json:"durations"`
		SubDurations        subDurations `json:"subDurations"`
		SubDurationSections []string     `json:"subDurationSections"`
	}
	zoneCampaign struct {
		ActiveLandingPage struct {
			PageID int64 `json:"page_id"`
		} `json:"active_landing_page"`
	}
)

// subDurationSections are the time slots of a day offered for analytics.
var subDurationSections = []string{"12am-8am", "8am-12pm", "12pm-4pm", "4pm-8pm", "8pm-12am", "all"}

// writeZoneConfig answers the effective zone configuration of loc: the
// stored parts, else their defaults.
func (s *Server) writeZoneConfig(w http.ResponseWriter, r *http.Request, c *wnms.Caller, loc *wnms.Location, zc *wnms.ZoneConfig) error {
	ctx := r.Context()
	tz := locationZone(loc)
	now := s.Auth.Now()
	// totalCount is the number of zones the location covers: its floors
	// (a floor counts itself), as only floors have an area to analyse.
	total, err := s.Store.FloorCount(ctx, c.CustomerID(), loc.Path)
	if err != nil {
		return err
	}
	cfg := zoneConfigJSON{ServerID: s.ServerID, LocationID: zc.LocationID,
		Layout: wnms.ZoneLayout{Unit: wnms.UnitFeet}, Range: zoneRange{DwellTime: wnms.DefaultDwellTime}}
	// A layout set by PUT wins over the floor layout: it is what the user
	// asked analytics to use. PUT with "layout": null returns to the floor
	// layout.
	switch {
	case zc.Layout != nil:
		cfg.Layout = *zc.Layout
	case !loc.IsFolder() && s.Layouts != nil:
		length, width, unit, ok, err := s.Layouts.FloorDimensions(ctx, loc.ID.ID)
		if err != nil {
			return err
		}
		if ok {
			if u, known := wnms.ParseUnit(unit); known {
				unit = u
			}
			cfg.Layout = wnms.ZoneLayout{Length: length, Width: width, Unit: unit}
		}
	}
	if zc.Footfall != nil {
		cfg.Range.Footfall = *zc.Footfall
	} else if cfg.Range.Footfall, err = s.measuredFootfall(ctx, c, loc, tz, now); err != nil {
		return err
	}
	if zc.DwellTime != nil {
		cfg.Range.DwellTime = zc.DwellTime
	}
	var resp zoneResponse
	resp.Success = true
	resp.Data = zoneData{TotalCount: total, FloorConfig: floorConfig{Config: cfg, Options: zoneOptions{
		Durations:           durations,
		SubDurations:        subDurationsFor(now.In(tz)),
		SubDurationSections: subDurationSections,
	}}}
	resp.Data.Campaign.ActiveLandingPage.PageID = zc.PageID
	httpkit.WriteJSON(w, http.StatusOK, []zoneResponse{resp})
	return nil
}

// footfallDays is how far back the footfall range looks.
const footfallDays = 365

// measuredFootfall is the least and most distinct associated clients per
// day at loc over the last 365 days (today included), the days counted in
// the location's time zone; 0/0 when no FootfallSource is wired in.
func (s *Server) measuredFootfall(ctx context.Context, c *wnms.Caller, loc *wnms.Location, tz *time.Location, now time.Time) (wnms.FootfallRange, error) {
	if s.Footfall == nil {
		return wnms.FootfallRange{}, nil
	}
	y, m, d := now.In(tz).Date()
	to := time.Date(y, m, d+1, 0, 0, 0, 0, tz)
	from := time.Date(y, m, d+1-footfallDays, 0, 0, 0, 0, tz)
	lo, hi, err := s.Footfall.DailyClients(ctx, c.CustomerID(), loc.Path, from, to, tz)
	return wnms.FootfallRange{Min: lo, Max: hi}, err
}

// locationZone is the time zone of a location; an empty or unknown id is
// UTC.
func locationZone(l *wnms.Location) *time.Location {
	if tz, err := wnms.LoadLocation(l.TimezoneID); err == nil && l.TimezoneID != "" {
		return tz
	}
	return time.UTC
}

// storeLayouts reads floor dimensions from the layout store.
type storeLayouts struct {
	st interface {
		Layout(ctx context.Context, locationID int64) (*wnms.FloorLayout, error)
	}
}

// FloorDimensions implements LayoutDims over the stored floor layout.
func (l storeLayouts) FloorDimensions(ctx context.Context, locationID int64) (float64, float64, string, bool, error) {
	fl, err := l.st.Layout(ctx, locationID)
	if wnms.ErrorCode(err) == wnms.ResourceNotFound {
		return 0, 0, "", false, nil
	}
	if err != nil {
		return 0, 0, "", false, err
	}
	return float64(fl.Length), float64(fl.Width), fl.Unit, true, nil
}
