package telemetry

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// MaxAssociations is the most associations one export holds; a wider
// window is refused with a request to narrow it.
const MaxAssociations = 500_000

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

// exportRoutes registers the association data export.
func (s *Service) exportRoutes(handle func(pattern string, rule access.Rule, h httpkit.HandlerFunc)) {
	handle("GET /analytics/associationdata/{startdate}/{enddate}", access.AnyRole, s.associationData)
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

// associationData is GET /analytics/associationdata/{startdate}/{enddate}:
// it writes the associations (Success events) of the window at the
// caller's locations, as JSON or CSV, keeps the file in the store, and
// answers its link as text.
func (s *Service) associationData(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	c := wnms.CallerFrom(ctx)
	q, err := parseExportQuery(r, s.Now())
	if err != nil {
		return err
	}
	if err := httpkit.LocalNode(r); err != nil {
		return err
	}
	at, err := s.locationParam(r, c)
	if err != nil {
		return err
	}
	locs, err := s.scopeLocations(ctx, c, at)
	if err != nil {
		return err
	}
	events, err := s.Store.Associations(ctx, c.CustomerID(), locs, q.from, q.to, MaxAssociations+1)
	if err != nil {
		return err
	}
	if len(events) > MaxAssociations {
		return wnms.ParamError("enddate", "more than %d associations in the window: narrow it", MaxAssociations)
	}
	rows := make([]Association, 0, len(events))
	for _, raw := range events {
		var e struct {
			eventCommon
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			return err
		}
		a := Association{MacAddress: e.MacAddress, Timestamp: e.Timestamp, BSSID: e.BSSID, SSID: e.SSID,
			Channel: e.Channel, FrequencyBand: BandOf(e.Channel), Protocol: e.Protocol,
			AssociatedAPName: e.AssociatedAPName, LocationID: e.LocationID.ID}
		if q.hashed {
			a.MacAddress = s.HashMAC(a.MacAddress)
		}
		rows = append(rows, a)
	}
	f := &wnms.File{Key: rand.Text() + rand.Text(), CustomerID: c.CustomerID(), UserID: c.User.UserID,
		Kind: wnms.FileExport, LocationID: wnms.RootLocation}
	if at != nil {
		f.LocationID = at.ID.ID
	}
	if q.format == "CSV" {
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
			return err
		}
		f.ContentType = "application/json"
	}
	if err := s.Store.PutExport(ctx, f); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write([]byte("webservice/sfiles?id=" + f.Key))
	return err
}

// exportQuery is what an association export asks for.
type exportQuery struct {
	from, to int64
	format   string // JSON or CSV
	hashed   bool
}

// parseExportQuery reads the window (startdate before enddate, ms),
// format (JSON or CSV, in any case, quoted or not) and tohashmac.
func parseExportQuery(r *http.Request, now time.Time) (exportQuery, error) {
	var q exportQuery
	var err error
	if q.from, err = httpkit.PathInt(r, "startdate"); err != nil {
		return q, err
	}
	if q.to, err = httpkit.PathInt(r, "enddate"); err != nil {
		return q, err
	}
	w := wnms.Window{From: q.from, To: q.to, FromParam: "startdate", ToParam: "enddate"}
	if err := w.Check(now, 0); err != nil {
		return q, err
	}
	if q.from >= q.to {
		return q, wnms.ParamError("enddate", "enddate %d must be after startdate %d", q.to, q.from)
	}
	format, _ := httpkit.QueryValue(r, "format")
	switch strings.ToUpper(format) {
	case "", "JSON":
		q.format = "JSON"
	case "CSV":
		q.format = "CSV"
	default:
		return q, wnms.ParamError("format", "format must be JSON or CSV, not %q", format)
	}
	q.hashed, err = httpkit.QueryBool(r, "tohashmac", false)
	return q, err
}
