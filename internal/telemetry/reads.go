package telemetry

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/wnms"
)

// Paging of the device and event lists, and the caps of the unpaged ones
// (X-Total-Count says how many matched).
const (
	DefaultPageLimit = 100
	MaxPageLimit     = 1000
	MaxAPList        = 100
	MaxClientList    = 100
)

// Trend windows: the default, and the widest.
const (
	DefaultTrendWindow = 2 * time.Hour
	MaxTrendWindow     = 7 * 24 * time.Hour
)

// MaxAssociations is the most associations one export holds; a wider
// window is refused with a request to narrow it.
const MaxAssociations = 500_000

// newFileKey is the unguessable key of a stored file.
func newFileKey() string { return rand.Text() + rand.Text() }

// Location is location id (nil: none given) as the caller sees it; a
// location the caller cannot see is an INVALID_PARAMETER locationid, as an
// unknown one is.
func (s *Service) Location(ctx context.Context, c *wnms.Caller, id *int64) (*wnms.Location, error) {
	if id == nil {
		return nil, nil
	}
	l, err := access.LocationFor(ctx, s.Store, c, *id)
	if wnms.ErrorCode(err) == wnms.ResourceNotFound {
		return nil, wnms.ParamError("locationid", "no location %d", *id)
	}
	return l, err
}

// LogQuery is what a connection log call asks for: a client's Success
// and Failure events at 802.11ac APs in a window (-1: unbounded), newest
// first, at most Limit of each.
type LogQuery struct {
	MAC         string
	From, To    int64
	Limit       int
	LogType     string // success, failure or all
	FailureType *int
}

// ConnectionLogs is the answer of the connection log call.
type ConnectionLogs struct {
	SuccessLogs []json.RawMessage `json:"successLogs"`
	FailureLogs []json.RawMessage `json:"failureLogs"`
}

// ConnectionLogs answers q for the caller.
func (s *Service) ConnectionLogs(ctx context.Context, c *wnms.Caller, q LogQuery) (ConnectionLogs, error) {
	out := ConnectionLogs{[]json.RawMessage{}, []json.RawMessage{}}
	eq := wnms.EventQuery{MAC: q.MAC, Dot11ACOnly: true, Limit: q.Limit, From: q.From, To: q.To}
	var err error
	if q.LogType != "failure" {
		sq := eq
		sq.Types = []string{wnms.Success}
		if out.SuccessLogs, _, err = s.ClientEvents(ctx, c, nil, sq); err != nil {
			return out, err
		}
	}
	if q.LogType != "success" {
		fq := eq
		fq.Types, fq.Code = []string{wnms.Failure}, q.FailureType
		if out.FailureLogs, _, err = s.ClientEvents(ctx, c, nil, fq); err != nil {
			return out, err
		}
	}
	return out, nil
}

// Trend is the answer of the trend calls: one series in 5-minute buckets,
// oldest first, only buckets with data.
type Trend struct {
	Type    string       `json:"type"`
	BoxID   int64        `json:"boxId"`
	Samples []TrendPoint `json:"samples"`
}

// TrendQuery is what a trend call asks for: the series (Type, lower
// case), the device (BoxID, or a client's MAC when BoxID is nil), the
// client's SSID, and the window (ms).
type TrendQuery struct {
	Type     string
	BoxID    *int64
	MAC      string
	SSID     string
	From, To int64
}

// ClientTrend is a client's data rate (kbps), traffic (kilobytes) or retry
// rate (%) in 5-minute buckets; the client must be one the caller sees.
func (s *Service) ClientTrend(ctx context.Context, c *wnms.Caller, q TrendQuery) (Trend, error) {
	filter := wnms.Cond{Op: "=", Property: "macaddress", Kind: wnms.FilterText, Values: []any{q.MAC}}
	if q.BoxID != nil {
		filter = wnms.Cond{Op: "=", Property: "boxid", Kind: wnms.FilterNumber, Values: []any{*q.BoxID}}
	}
	clients, _, err := s.Clients(ctx, c, nil, wnms.ClientQuery{Filter: &filter, Limit: 1})
	if err != nil {
		return Trend{}, err
	}
	if len(clients) == 0 {
		return Trend{}, wnms.NotFound("no such client")
	}
	locs, err := s.scopeLocations(ctx, c, nil)
	if err != nil {
		return Trend{}, err
	}
	buckets, err := s.Store.ClientTrend(ctx, c.CustomerID(), clients[0].MacAddress, q.SSID, locs, q.From, q.To)
	if err != nil {
		return Trend{}, err
	}
	out := Trend{Type: q.Type, BoxID: clients[0].BoxID, Samples: []TrendPoint{}}
	for _, b := range buckets {
		switch q.Type {
		case "clientdatarate":
			if b.HasRadio {
				out.Samples = append(out.Samples, TrendPoint{b.Time, b.DataRate * 1000})
			}
		case "clientretransmissionrate":
			if b.HasRadio {
				out.Samples = append(out.Samples, TrendPoint{b.Time, b.Retry})
			}
		case "clientrssi":
			if b.HasRadio {
				out.Samples = append(out.Samples, TrendPoint{b.Time, b.RSSI})
			}
		case "clientsnr":
			if b.SNR != nil {
				out.Samples = append(out.Samples, TrendPoint{b.Time, *b.SNR})
			}
		case "clienttraffic":
			if b.HasTraffic {
				out.Samples = append(out.Samples, TrendPoint{b.Time, float64(b.Bytes) / 1000})
			}
		}
	}
	return out, nil
}

// APTrend is an AP's throughput (kbps) or client count in 5-minute
// buckets; the AP (q.BoxID) must be one the caller sees.
func (s *Service) APTrend(ctx context.Context, c *wnms.Caller, q TrendQuery) (Trend, error) {
	id := *q.BoxID
	byBox := wnms.Cond{Op: "=", Property: "boxid", Kind: wnms.FilterNumber, Values: []any{id}}
	aps, _, err := s.ListAPs(ctx, c, wnms.APQuery{Filter: &byBox, Limit: 1})
	if err != nil {
		return Trend{}, err
	}
	if len(aps) == 0 {
		return Trend{}, wnms.NotFound("no AP %d", id)
	}
	buckets, err := s.Store.APTrend(ctx, c.CustomerID(), id, q.From, q.To)
	if err != nil {
		return Trend{}, err
	}
	out := Trend{Type: q.Type, BoxID: id, Samples: []TrendPoint{}}
	for _, b := range buckets {
		switch q.Type {
		case "apclientcount":
			out.Samples = append(out.Samples, TrendPoint{b.Time, float64(b.MaxClients)})
		case "apdatatransferhistory":
			if b.HasTraffic && b.CoveredMS > 0 {
				out.Samples = append(out.Samples, TrendPoint{b.Time, float64(b.Bytes) * 8 / 1000 / (float64(b.CoveredMS) / 1000)})
			}
		}
	}
	return out, nil
}

// Association is one row of the association data export.
type Association struct {
	MacAddress       string `json:"macAddress"`
	Timestamp        int64  `json:"timestamp"`
	BSSID            string `json:"bssid"`
	SSID             string `json:"ssid"`
	Channel          int    `json:"channel"`
	FrequencyBand    string `json:"frequencyBand"`
	Protocol         string `json:"protocol"`
	AssociatedAPName string `json:"associatedAPName"`
	LocationID       int64  `json:"locationId"`
}

var associationColumns = []string{"macAddress", "timestamp", "bssid", "ssid", "channel", "frequencyBand", "protocol",
	"associatedAPName", "locationId"}

func (a Association) csvRow() []string {
	return []string{a.MacAddress, strconv.FormatInt(a.Timestamp, 10), a.BSSID, a.SSID, strconv.Itoa(a.Channel),
		a.FrequencyBand, a.Protocol, a.AssociatedAPName, strconv.FormatInt(a.LocationID, 10)}
}

// HashMAC is the keyed hash that stands for a MAC in an export with
// tohashmac: the same for a MAC across calls and replicas (it is keyed by
// the server secret), and not reversible without that secret.
func (s *Service) HashMAC(mac string) string {
	k := hmac.New(sha256.New, s.Secret)
	k.Write([]byte("wnms association export MAC hash"))
	m := hmac.New(sha256.New, k.Sum(nil))
	m.Write([]byte(mac))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// ExportQuery is what an association export asks for: the window (ms,
// From before To), the format (JSON or CSV), whether MACs are hashed, and
// the location (nil: wherever the caller sees).
type ExportQuery struct {
	From, To int64
	Format   string
	Hashed   bool
	At       *wnms.Location
}

// ExportAssociations writes the associations (Success events) of q's
// window at the caller's locations, as JSON or CSV, keeps the file in the
// store, and returns its key.
func (s *Service) ExportAssociations(ctx context.Context, c *wnms.Caller, q ExportQuery) (string, error) {
	locs, err := s.scopeLocations(ctx, c, q.At)
	if err != nil {
		return "", err
	}
	events, err := s.Store.Associations(ctx, c.CustomerID(), locs, q.From, q.To, MaxAssociations+1)
	if err != nil {
		return "", err
	}
	if len(events) > MaxAssociations {
		return "", wnms.ParamError("enddate", "more than %d associations in the window: narrow it", MaxAssociations)
	}
	rows := make([]Association, 0, len(events))
	for _, raw := range events {
		var e struct {
			eventCommon
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			return "", err
		}
		ch := 0 // not known (stored as null, or as 0 before)
		if e.Channel != nil {
			ch = *e.Channel
		}
		a := Association{MacAddress: e.MacAddress, Timestamp: e.Timestamp, BSSID: e.BSSID, SSID: e.SSID,
			Channel: ch, FrequencyBand: wnms.BandOf(ch), Protocol: e.Protocol,
			AssociatedAPName: e.AssociatedAPName, LocationID: e.LocationID.ID}
		if q.Hashed {
			a.MacAddress = s.HashMAC(a.MacAddress)
		}
		rows = append(rows, a)
	}
	f := &wnms.File{Key: newFileKey(), CustomerID: c.CustomerID(), UserID: c.User.UserID,
		Kind: wnms.FileExport, LocationID: wnms.RootLocation}
	if q.At != nil {
		f.LocationID = q.At.ID.ID
	}
	if q.Format == "CSV" {
		var b bytes.Buffer
		cw := csv.NewWriter(&b)
		cw.Write(associationColumns)
		for _, a := range rows {
			cw.Write(a.csvRow())
		}
		cw.Flush()
		f.Data, f.ContentType = b.Bytes(), "text/csv; charset=utf-8"
	} else {
		if f.Data, err = json.Marshal(rows); err != nil {
			return "", err
		}
		f.ContentType = "application/json"
	}
	if err := s.Store.PutExport(ctx, f); err != nil {
		return "", err
	}
	return f.Key, nil
}
