package api

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/baseline"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// The association export, the trends and the baselines.

// exportParams are what an association export asks for: the window in
// the path (startdate before enddate, ms), format (JSON or CSV, in any
// case, quoted or not), tohashmac, locationid and the node.
type exportParams struct {
	From, To   int64
	Format     string
	Hashed     bool
	LocationID *int64
}

func (p *exportParams) decode(f *form) {
	p.From, p.To = f.pathInt("startdate"), f.pathInt("enddate")
	p.Format = f.str("format")
	p.Hashed = f.bool("tohashmac", false)
	p.LocationID = f.optInt("locationid")
}

func (p *exportParams) Validate(now time.Time) error {
	w := wnms.Window{From: p.From, To: p.To, FromParam: "startdate", ToParam: "enddate"}
	if err := w.Check(now, 0); err != nil {
		return err
	}
	if p.From >= p.To {
		return wnms.ParamError("enddate", "enddate %d must be after startdate %d", p.To, p.From)
	}
	format, ok := oneOf(p.Format, "JSON", "CSV")
	if p.Format == "" {
		format, ok = "JSON", true
	}
	if !ok {
		return wnms.ParamError("format", "format must be JSON or CSV, not %q", p.Format)
	}
	p.Format = format
	return nil
}

// associationData is GET /analytics/associationdata/{startdate}/{enddate}:
// the associations (Success events) of the window at the caller's
// locations, as JSON or CSV, kept in the store; it answers the file's link
// as text.
func (s *Server) associationData(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	c := wnms.CallerFrom(ctx)
	var p exportParams
	if err := s.bind(r, &p); err != nil {
		return err
	}
	at, err := s.Telemetry.Location(ctx, c, p.LocationID)
	if err != nil {
		return err
	}
	key, err := s.Telemetry.ExportAssociations(ctx, c, telemetry.ExportQuery{From: p.From, To: p.To,
		Format: p.Format, Hashed: p.Hashed, At: at})
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write([]byte("webservice/sfiles?id=" + key))
	return err
}

// trendParams are what a trend call asks for: the series type (one of
// types, in any case), the device (boxid, or for clients a macaddress),
// the client's ssid, and the window (by default the last 2 hours, at most
// 7 days).
type trendParams struct {
	types    []string
	clientOK bool // a client may be named by macaddress

	Type           string
	DeviceCategory string
	BoxID          *int64
	MAC            string
	SSID           string
	trendWindow
}

// trendWindow is a trend's window: by default the last 2 hours, at most
// 7 days.
type trendWindow struct{ openWindow }

// settle checks the window and settles its defaults.
func (p *trendWindow) settle(now time.Time) error {
	if err := p.openWindow.Validate(now); err != nil {
		return err
	}
	if p.To < 0 {
		p.To = now.UnixMilli()
	}
	if p.From < 0 {
		p.From = p.To - telemetry.DefaultTrendWindow.Milliseconds()
	}
	w := wnms.Window{From: p.From, To: p.To, FromParam: "fromtime", ToParam: "totime"}
	return w.Check(now, telemetry.MaxTrendWindow)
}

func (p *trendParams) decode(f *form) {
	p.DeviceCategory = f.str("devicecategory")
	p.Type = strings.ToLower(f.str("type"))
	p.BoxID = f.optInt("boxid")
	if p.clientOK && p.BoxID == nil && f.err == nil {
		if v := f.str("macaddress"); v != "" {
			if p.MAC = f.mac("macaddress", v); f.err != nil {
				f.err = wnms.ParamError("macaddress", "%q is not a MAC address", v)
			}
		}
	}
	p.SSID = f.str("ssid")
	p.openWindow.decode(f)
}

// Validate checks the type, that a device is named, and the window, whose
// defaults it settles.
func (p *trendParams) Validate(now time.Time) error {
	if !p.clientOK && p.DeviceCategory != "" && !strings.EqualFold(p.DeviceCategory, "MANAGED_AP") {
		return wnms.ParamError("devicecategory", "devicecategory must be MANAGED_AP, not %q", p.DeviceCategory)
	}
	switch {
	case p.Type == "":
		return wnms.MissingParam("type")
	case !slices.Contains(p.types, p.Type):
		return wnms.ParamError("type", "type must be %s, not %q", orList(p.types), p.Type)
	case p.BoxID == nil && p.MAC == "":
		return wnms.MissingParam("boxid")
	}
	return p.settle(now)
}

// radioStatsParams: the AP's boxId and the window.
type radioStatsParams struct {
	BoxID int64
	trendWindow
}

func (p *radioStatsParams) decode(f *form) {
	p.BoxID = f.pathInt("boxId")
	p.openWindow.decode(f)
}

func (p *radioStatsParams) Validate(now time.Time) error { return p.settle(now) }

// radioStats is GET /devices/manageddevices/{boxId}/radiostatistics (an
// extension): an AP's radios (channel, utilisation, noise, clients) in
// 5-minute buckets.
func (s *Server) radioStats(w http.ResponseWriter, r *http.Request) error {
	var p radioStatsParams
	if err := s.bind(r, &p); err != nil {
		return err
	}
	out, err := s.Telemetry.RadioStats(r.Context(), wnms.CallerFrom(r.Context()),
		telemetry.RadioStatsQuery{BoxID: p.BoxID, From: p.From, To: p.To})
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (p *trendParams) query() telemetry.TrendQuery {
	return telemetry.TrendQuery{Type: p.Type, BoxID: p.BoxID, MAC: p.MAC, SSID: p.SSID, From: p.From, To: p.To}
}

// orList is "a, b or c".
func orList(list []string) string {
	if len(list) < 2 {
		return strings.Join(list, "")
	}
	return strings.Join(list[:len(list)-1], ", ") + " or " + list[len(list)-1]
}

// clientTrend is GET /devices/clients/statistics/trend: a client's data
// rate (kbps), traffic (kilobytes) or retry rate (%) in 5-minute buckets.
func (s *Server) clientTrend(w http.ResponseWriter, r *http.Request) error {
	p := trendParams{types: []string{"clientdatarate", "clienttraffic", "clientretransmissionrate", "clientrssi", "clientsnr"}, clientOK: true}
	if err := s.bind(r, &p); err != nil {
		return err
	}
	out, err := s.Telemetry.ClientTrend(r.Context(), wnms.CallerFrom(r.Context()), p.query())
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}

// apTrend is GET /devices/manageddevices/statistics/trend: an AP's
// throughput (kbps) or client count in 5-minute buckets.
func (s *Server) apTrend(w http.ResponseWriter, r *http.Request) error {
	p := trendParams{types: []string{"apdatatransferhistory", "apclientcount"}}
	if err := s.bind(r, &p); err != nil {
		return err
	}
	out, err := s.Telemetry.APTrend(r.Context(), wnms.CallerFrom(r.Context()), p.query())
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}

// baselineParams are what the baseline calls read: the window (by
// default the last 24 hours, at most baseline.MaxWindow), the location
// (default the root), and for the scope calls the band and SSID, and a
// client's MAC where the call takes one.
type baselineParams struct {
	scope bool // band and SSID are read
	mac   int  // 0: no MAC; 1: optional; 2: required
	closedWindow
	LocationID  int64
	LocationSet bool
	Band        string
	BandParam   string
	SSID        string
	MAC         string
}

func (p *baselineParams) decode(f *form) {
	if p.scope {
		p.BandParam = f.str("frequencyband")
		p.SSID = f.str("ssid")
	}
	if p.mac > 0 && f.err == nil {
		p.MAC = f.mac("macaddress", f.str("macaddress"))
		if f.err != nil {
			f.err = wnms.ParamError("macaddress", "macaddress %q is not a MAC address (six hex pairs, : or - between them)", f.str("macaddress"))
		}
	}
	p.closedWindow.decode(f)
	p.LocationSet = f.given("locationid")
	p.LocationID = f.int("locationid", wnms.RootLocation)
}

func (p *baselineParams) Validate(now time.Time) error {
	if p.scope {
		var ok bool
		if p.Band, ok = baseline.ParseBand(p.BandParam); !ok {
			return wnms.ParamError("frequencyband", "frequencyband must be 2.4GHz, 5GHz or ANY, not %q", p.BandParam)
		}
		if err := wnms.CheckOctets("ssid", p.SSID, 0, wnms.MaxSSIDOctets); err != nil {
			return wnms.AtField(err, "ssid")
		}
	}
	if p.mac == 2 && p.MAC == "" {
		return wnms.MissingParam("macaddress")
	}
	p.def, p.longest = 24*time.Hour, baseline.MaxWindow
	return p.closedWindow.Validate(now)
}

// bindBaseline reads a baseline call's parameters and its location for
// the caller.
func (s *Server) bindBaseline(r *http.Request, p *baselineParams) (*wnms.Location, error) {
	if err := bindAt(r, p, s.Baselines.Now); err != nil {
		return nil, err
	}
	return s.locationFor(r.Context(), wnms.CallerFrom(r.Context()), p.LocationID)
}

// connectivity is GET /baselines/clientsconnectivity.
func (s *Server) connectivity(w http.ResponseWriter, r *http.Request) error {
	p := baselineParams{scope: true}
	l, err := s.bindBaseline(r, &p)
	if err != nil {
		return err
	}
	points, err := s.Baselines.Connectivity(r.Context(), wnms.CallerFrom(r.Context()).CustomerID(), l, p.Band, p.SSID, p.from, p.to)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, points)
	return nil
}

// performance is GET /baselines/clientsperformance.
func (s *Server) performance(w http.ResponseWriter, r *http.Request) error {
	p := baselineParams{scope: true, mac: 1}
	l, err := s.bindBaseline(r, &p)
	if err != nil {
		return err
	}
	points, err := s.Baselines.Performance(r.Context(), wnms.CallerFrom(r.Context()).CustomerID(), l, p.Band, p.SSID, p.MAC, p.from, p.to)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, points)
	return nil
}

// dataRate is GET /baselines/clientdatarate.
func (s *Server) dataRate(w http.ResponseWriter, r *http.Request) error {
	p := baselineParams{mac: 2}
	l, err := s.bindBaseline(r, &p)
	if err != nil {
		return err
	}
	points, err := s.Baselines.DataRate(r.Context(), wnms.CallerFrom(r.Context()).CustomerID(), l, p.MAC, p.from, p.to)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, points)
	return nil
}

// anomalies is GET /baselines/anomalies: the anomalies recorded at the
// locations the caller sees (below locationid when given), newest first.
func (s *Server) anomalies(w http.ResponseWriter, r *http.Request) error {
	var p baselineParams
	if err := bindAt(r, &p, s.Baselines.Now); err != nil {
		return err
	}
	under := wnms.RootPath // without locationid: wherever the caller sees
	if p.LocationSet {
		l, err := s.locationFor(r.Context(), wnms.CallerFrom(r.Context()), p.LocationID)
		if err != nil {
			return err
		}
		under = l.Path
	}
	out, err := s.Baselines.Anomalies(r.Context(), wnms.CallerFrom(r.Context()), under, p.from, p.to)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}

// failingParams are GET /baselines/clientsconnectivity/failingclients's:
// a connectivity scope and one slot (the one holding timestamp).
type failingParams struct {
	baselineParams
	Timestamp *int64
	Limit     int64
}

func (p *failingParams) decode(f *form) {
	p.baselineParams.decode(f)
	p.Timestamp = f.optInt("timestamp")
	p.Limit = f.int("limit", 100)
}

func (p *failingParams) Validate(now time.Time) error {
	if err := p.baselineParams.Validate(now); err != nil {
		return err
	}
	if p.Timestamp == nil {
		return wnms.MissingParam("timestamp")
	}
	if err := wnms.CheckInstant("timestamp", *p.Timestamp, now); err != nil {
		return err
	}
	if p.Limit < 1 || p.Limit > 1000 {
		return wnms.ParamError("limit", "limit must be 1-1000, not %d", p.Limit)
	}
	return nil
}

// failingClients is GET /baselines/clientsconnectivity/failingclients:
// the clients a connectivity data point counts as failing.
func (s *Server) failingClients(w http.ResponseWriter, r *http.Request) error {
	p := failingParams{baselineParams: baselineParams{scope: true}}
	if err := bindAt(r, &p, s.Baselines.Now); err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	l, err := s.locationFor(r.Context(), c, p.LocationID)
	if err != nil {
		return err
	}
	out, err := s.Baselines.FailingClients(r.Context(), c.CustomerID(), l, p.Band, p.SSID, *p.Timestamp, int(p.Limit))
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}
