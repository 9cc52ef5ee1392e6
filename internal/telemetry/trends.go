package telemetry

import (
	"net/http"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// Trend windows: the default, and the widest.
const (
	DefaultTrendWindow = 2 * time.Hour
	MaxTrendWindow     = 7 * 24 * time.Hour
)

// Trend is the answer of the trend calls: one series in 5-minute buckets,
// oldest first, only buckets with data.
type Trend struct {
	Type    string       `json:"type"`
	BoxID   int64        `json:"boxId"`
	Samples []TrendPoint `json:"samples"`
}

// trendRoutes registers the trend calls.
func (s *Service) trendRoutes(handle func(pattern string, rule access.Rule, h httpkit.HandlerFunc)) {
	handle("GET /devices/clients/statistics/trend", access.AnyRole, s.clientTrend)
	handle("GET /devices/manageddevices/statistics/trend", access.AnyRole, s.apTrend)
}

// trendWindow reads fromtime and totime: by default the last 2 hours; at
// most 7 days, both within [0, now + 1 day].
func (s *Service) trendWindow(r *http.Request) (from, to int64, err error) {
	now := s.Now()
	if from, to, err = timeWindow(r, now); err != nil {
		return 0, 0, err
	}
	if to < 0 {
		to = now.UnixMilli()
	}
	if from < 0 {
		from = to - DefaultTrendWindow.Milliseconds()
	}
	w := wnms.Window{From: from, To: to, FromParam: "fromtime", ToParam: "totime"}
	if err := w.Check(now, MaxTrendWindow); err != nil {
		return 0, 0, err
	}
	return from, to, nil
}

// clientTrend is GET /devices/clients/statistics/trend: a client's data
// rate (kbps), traffic (kilobytes) or retry rate (%) in 5-minute buckets.
func (s *Service) clientTrend(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	c := wnms.CallerFrom(ctx)
	typ, _ := httpkit.QueryValue(r, "type")
	typ = strings.ToLower(typ)
	switch typ {
	case "clientdatarate", "clienttraffic", "clientretransmissionrate":
	case "":
		return wnms.MissingParam("type")
	default:
		return wnms.ParamError("type", "type must be clientdatarate, clienttraffic or clientretransmissionrate, not %q", typ)
	}
	if err := httpkit.LocalNode(r); err != nil {
		return err
	}
	from, to, err := s.trendWindow(r)
	if err != nil {
		return err
	}
	var filter Cond
	if v, _ := httpkit.QueryValue(r, "boxid"); v != "" {
		id, err := httpkit.ParseInt("boxid", v)
		if err != nil {
			return err
		}
		filter = Cond{Op: "=", Property: "boxid", Kind: Number, Values: []any{id}}
	} else if v, _ := httpkit.QueryValue(r, "macaddress"); v != "" {
		mac, ok := ParseMAC(v)
		if !ok {
			return wnms.ParamError("macaddress", "%q is not a MAC address", v)
		}
		filter = Cond{Op: "=", Property: "macaddress", Kind: Text, Values: []any{mac}}
	} else {
		return wnms.MissingParam("boxid")
	}
	ssid, _ := httpkit.QueryValue(r, "ssid")
	clients, _, err := s.Clients(ctx, c, nil, ClientQuery{Filter: &filter, Limit: 1})
	if err != nil {
		return err
	}
	if len(clients) == 0 {
		return wnms.NotFound("no such client")
	}
	locs, err := s.scopeLocations(ctx, c, nil)
	if err != nil {
		return err
	}
	buckets, err := s.Store.ClientTrend(ctx, c.CustomerID(), clients[0].MacAddress, ssid, locs, from, to)
	if err != nil {
		return err
	}
	out := Trend{Type: typ, BoxID: clients[0].BoxID, Samples: []TrendPoint{}}
	for _, b := range buckets {
		switch typ {
		case "clientdatarate":
			out.Samples = append(out.Samples, TrendPoint{b.Time, b.DataRate * 1000})
		case "clientretransmissionrate":
			out.Samples = append(out.Samples, TrendPoint{b.Time, b.Retry})
		case "clienttraffic":
			if b.HasTraffic {
				out.Samples = append(out.Samples, TrendPoint{b.Time, float64(b.Bytes) / 1000})
			}
		}
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}

// apTrend is GET /devices/manageddevices/statistics/trend: an AP's
// throughput (kbps) or client count in 5-minute buckets.
func (s *Service) apTrend(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	c := wnms.CallerFrom(ctx)
	if v, _ := httpkit.QueryValue(r, "devicecategory"); v != "" && !strings.EqualFold(v, "MANAGED_AP") {
		return wnms.ParamError("devicecategory", "devicecategory must be MANAGED_AP, not %q", v)
	}
	typ, _ := httpkit.QueryValue(r, "type")
	typ = strings.ToLower(typ)
	switch typ {
	case "apdatatransferhistory", "apclientcount":
	case "":
		return wnms.MissingParam("type")
	default:
		return wnms.ParamError("type", "type must be apdatatransferhistory or apclientcount, not %q", typ)
	}
	if err := httpkit.LocalNode(r); err != nil {
		return err
	}
	v, _ := httpkit.QueryValue(r, "boxid")
	if v == "" {
		return wnms.MissingParam("boxid")
	}
	id, err := httpkit.ParseInt("boxid", v)
	if err != nil {
		return err
	}
	from, to, err := s.trendWindow(r)
	if err != nil {
		return err
	}
	byBox := Cond{Op: "=", Property: "boxid", Kind: Number, Values: []any{id}}
	aps, _, err := s.ListAPs(ctx, c, APQuery{Filter: &byBox, Limit: 1})
	if err != nil {
		return err
	}
	if len(aps) == 0 {
		return wnms.NotFound("no AP %d", id)
	}
	buckets, err := s.Store.APTrend(ctx, c.CustomerID(), id, from, to)
	if err != nil {
		return err
	}
	out := Trend{Type: typ, BoxID: id, Samples: []TrendPoint{}}
	for _, b := range buckets {
		switch typ {
		case "apclientcount":
			out.Samples = append(out.Samples, TrendPoint{b.Time, float64(b.MaxClients)})
		case "apdatatransferhistory":
			if b.HasTraffic && b.CoveredMS > 0 {
				out.Samples = append(out.Samples, TrendPoint{b.Time, float64(b.Bytes) * 8 / 1000 / (float64(b.CoveredMS) / 1000)})
			}
		}
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}
