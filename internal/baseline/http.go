package baseline

import (
	"net/http"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// MaxWindow is the longest fromtime–totime a baseline call covers.
const MaxWindow = 31 * 24 * time.Hour

// Routes registers the baseline calls with handle.
func (s *Service) Routes(handle func(pattern string, rule access.Rule, h httpkit.HandlerFunc)) {
	handle("GET /baselines/clientsconnectivity", access.AnyRole, s.connectivity)
	handle("GET /baselines/clientsperformance", access.AnyRole, s.performance)
	handle("GET /baselines/clientdatarate", access.AnyRole, s.dataRate)
	handle("GET /baselines/anomalies", access.AnyRole, s.anomalies)
}

// ParseBand reads frequencyband: 2.4GHz, 5GHz or ANY, in any case.
func ParseBand(v string) (string, bool) {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "", "ANY":
		return BandAny, true
	case "2.4GHZ", "2.4", Band24:
		return Band24, true
	case "5GHZ", "5", Band5:
		return Band5, true
	}
	return "", false
}

// window reads fromtime and totime (ms): by default the last 24 hours, at
// most MaxWindow, both within [0, now + 1 day] (checked before any work).
func (s *Service) window(r *http.Request) (from, to int64, err error) {
	now := s.Now()
	if to, err = httpkit.QueryInt(r, "totime", now.UnixMilli()); err != nil {
		return 0, 0, err
	}
	// The default fromtime is only computed from a totime in range, so it
	// cannot wrap around.
	if err := wnms.CheckInstant("totime", to, now); err != nil {
		return 0, 0, err
	}
	if from, err = httpkit.QueryInt(r, "fromtime", to-int64(24*time.Hour/time.Millisecond)); err != nil {
		return 0, 0, err
	}
	w := wnms.Window{From: from, To: to, FromParam: "fromtime", ToParam: "totime"}
	if err := w.Check(now, MaxWindow); err != nil {
		return 0, 0, err
	}
	return from, to, nil
}

// location reads locationid (default the root) for the caller.
func (s *Service) location(r *http.Request, c *wnms.Caller) (*wnms.Location, error) {
	id, err := httpkit.QueryInt(r, "locationid", wnms.RootLocation)
	if err != nil {
		return nil, err
	}
	return access.LocationFor(r.Context(), s.Store, c, id)
}

// scopeQuery is what the scope baselines read: band, SSID, window and
// location.
type scopeQuery struct {
	band, ssid string
	from, to   int64
	loc        *wnms.Location
}

func (s *Service) scopeQuery(r *http.Request, c *wnms.Caller) (q scopeQuery, err error) {
	if err := httpkit.LocalNode(r); err != nil {
		return q, err
	}
	bandParam, _ := httpkit.QueryValue(r, "frequencyband")
	var ok bool
	if q.band, ok = ParseBand(bandParam); !ok {
		return q, wnms.ParamError("frequencyband", "frequencyband must be 2.4GHz, 5GHz or ANY, not %q", bandParam)
	}
	q.ssid, _ = httpkit.QueryValue(r, "ssid")
	if err := wnms.CheckOctets("ssid", q.ssid, 0, wnms.MaxSSIDOctets); err != nil {
		return q, wnms.AtField(err, "ssid")
	}
	if q.from, q.to, err = s.window(r); err != nil {
		return q, err
	}
	q.loc, err = s.location(r, c)
	return q, err
}

// macParam reads a client MAC in any case, with : or - (required or not).
func macParam(r *http.Request, required bool) (string, error) {
	v, given := httpkit.QueryValue(r, "macaddress")
	if !given || v == "" {
		if required {
			return "", wnms.MissingParam("macaddress")
		}
		return "", nil
	}
	m, ok := telemetry.ParseMAC(v)
	if !ok {
		return "", wnms.ParamError("macaddress", "macaddress %q is not a MAC address (six hex pairs, : or - between them)", v)
	}
	return m, nil
}

// connectivity is GET /baselines/clientsconnectivity.
func (s *Service) connectivity(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	q, err := s.scopeQuery(r, c)
	if err != nil {
		return err
	}
	points, err := s.Connectivity(r.Context(), c.CustomerID(), q.loc, q.band, q.ssid, q.from, q.to)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, points)
	return nil
}

// performance is GET /baselines/clientsperformance.
func (s *Service) performance(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	q, err := s.scopeQuery(r, c)
	if err != nil {
		return err
	}
	mac, err := macParam(r, false)
	if err != nil {
		return err
	}
	points, err := s.Performance(r.Context(), c.CustomerID(), q.loc, q.band, q.ssid, mac, q.from, q.to)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, points)
	return nil
}

// dataRate is GET /baselines/clientdatarate.
func (s *Service) dataRate(w http.ResponseWriter, r *http.Request) error {
	if err := httpkit.LocalNode(r); err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	mac, err := macParam(r, true)
	if err != nil {
		return err
	}
	from, to, err := s.window(r)
	if err != nil {
		return err
	}
	l, err := s.location(r, c)
	if err != nil {
		return err
	}
	points, err := s.DataRate(r.Context(), c.CustomerID(), l, mac, from, to)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, points)
	return nil
}

// anomalyJSON is an anomaly as the list answers it.
type anomalyJSON struct {
	LocationID wnms.LocationID `json:"locationId"`
	Anomaly
}

// anomalies is GET /baselines/anomalies: the anomalies recorded at the
// locations the caller sees (below locationid when given), newest first.
func (s *Service) anomalies(w http.ResponseWriter, r *http.Request) error {
	if err := httpkit.LocalNode(r); err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	from, to, err := s.window(r)
	if err != nil {
		return err
	}
	under := wnms.RootPath // without locationid: wherever the caller sees
	if _, given := httpkit.QueryValue(r, "locationid"); given {
		l, err := s.location(r, c)
		if err != nil {
			return err
		}
		under = l.Path
	}
	// From the start of the slot holding fromtime, so that slot counts.
	list, err := s.Store.Anomalies(r.Context(), c.CustomerID(), nil, SlotOf(from), to)
	if err != nil {
		return err
	}
	var ids []int64
	for _, a := range list {
		ids = append(ids, a.LocationID)
	}
	paths, err := s.Store.LocationPaths(r.Context(), ids)
	if err != nil {
		return err
	}
	scope, err := c.ScopePaths(r.Context())
	if err != nil {
		return err
	}
	out := []anomalyJSON{}
	for _, a := range list {
		p, ok := paths[a.LocationID]
		if ok && wnms.UnderAny(p, []string{under}) && wnms.UnderAny(p, scope) {
			out = append(out, anomalyJSON{LocationID: wnms.LocalID(a.LocationID), Anomaly: a})
		}
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}
