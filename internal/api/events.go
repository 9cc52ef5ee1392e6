package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// The client event calls.

// eventMetadata is GET /devices/clientevents/metadata: the catalogue of
// intermediate events.
func (s *Server) eventMetadata(w http.ResponseWriter, r *http.Request) error {
	httpkit.WriteJSON(w, http.StatusOK, telemetry.Catalogue())
	return nil
}

// clientEventsParams are the parameters of a client's event page.
type clientEventsParams struct {
	MACParam   string // as given, for the page links
	MAC        string
	LocationID *int64
	page
	openWindow
	Type     string
	Code     *int64
	SubCode  *int64
	Protocol string
	SSIDs    []string
}

func (p *clientEventsParams) decode(f *form) {
	p.MACParam = f.path("macaddress")
	if p.MAC = f.mac("macaddress", p.MACParam); p.MACParam == "" {
		f.fail(wnms.ParamError("macaddress", "%q is not a MAC address (six hex octets separated by ':' or '-')", ""))
	}
	p.page.decodePath(f)
	f.bool("totalcountrequired", false) // the total is always counted
	p.LocationID = f.optInt("locationid")
	p.openWindow.decode(f)
	p.Type = f.str("clienteventtype")
	p.Code = f.optInt("eventcategory")
	p.SubCode = f.optInt("failureoreventtypecode")
	p.Protocol = f.str("protocol")
	for _, v := range f.strs("ssid") {
		for _, ssid := range strings.Split(v, ",") {
			if ssid = strings.TrimSpace(ssid); ssid != "" {
				p.SSIDs = append(p.SSIDs, ssid)
			}
		}
	}
}

// Validate checks the page, the window, the event type (Success, Failure
// or Intermediate) and the protocol (A or BG), each in any case.
func (p *clientEventsParams) Validate(now time.Time) error {
	if err := p.page.Validate(); err != nil {
		return err
	}
	if err := p.openWindow.Validate(now); err != nil {
		return err
	}
	if p.Type != "" {
		t, ok := telemetry.NormalizeType(p.Type)
		if !ok {
			return wnms.ParamError("clienteventtype", "clienteventtype must be Success, Failure or Intermediate, not %q", p.Type)
		}
		p.Type = t
	}
	if p.Protocol != "" {
		v, ok := oneOf(p.Protocol, "A", "BG")
		if !ok {
			return wnms.ParamError("protocol", "protocol must be A or BG, not %q", p.Protocol)
		}
		p.Protocol = v
	}
	return nil
}

// query is the service's event query.
func (p *clientEventsParams) query() wnms.EventQuery {
	q := wnms.EventQuery{MAC: p.MAC, Offset: int(p.Offset), Limit: int(p.Limit), Count: true,
		From: p.From, To: p.To, SSIDs: p.SSIDs, Code: intPtr(p.Code), SubCode: intPtr(p.SubCode)}
	if p.Type != "" {
		q.Types = []string{p.Type}
	}
	if p.Protocol != "" {
		q.Protocols = []string{p.Protocol}
	}
	return q
}

// intPtr is n as an int (nil stays nil).
func intPtr(n *int64) *int {
	if n == nil {
		return nil
	}
	v := int(*n)
	return &v
}

// clientEvents is GET /devices/clientevents/{macaddress}/{offset}/{limit}:
// a client's events, newest first.
func (s *Server) clientEvents(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	c := wnms.CallerFrom(ctx)
	var p clientEventsParams
	if err := s.bind(r, &p); err != nil {
		return err
	}
	at, err := s.Telemetry.Location(ctx, c, p.LocationID)
	if err != nil {
		return err
	}
	events, total, err := s.Telemetry.ClientEvents(ctx, c, at, p.query())
	if err != nil {
		return err
	}
	prev, next := p.pathLinks(r, "/"+p.MACParam, total)
	httpkit.WriteRawJSON(w, http.StatusOK, encodeEventPage(prev, next, total, events))
	return nil
}

// encodeEventPage writes an event page as JSON. The events are stored as
// the JSON they are answered as (written by the server when it stored
// them), so they are copied as they are, not decoded and checked again.
func encodeEventPage(prev, next *string, total int, events []json.RawMessage) []byte {
	n := 96
	for _, e := range events {
		n += len(e) + 1
	}
	b := make([]byte, 0, n)
	link := func(l *string) {
		if l == nil {
			b = append(b, "null"...)
			return
		}
		q, _ := json.Marshal(*l)
		b = append(b, q...)
	}
	b = append(b, `{"previousLink":`...)
	link(prev)
	b = append(b, `,"nextLink":`...)
	link(next)
	b = append(b, `,"totalCount":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	b = append(b, `,"clientEvents":[`...)
	for i, e := range events {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, "]}"...)
}

// connectionLogsParams are the parameters of a client's connection logs.
type connectionLogsParams struct {
	MACParam string
	MAC      string
	openWindow
	Limit       int64
	LogType     string
	FailureType *int64
}

func (p *connectionLogsParams) decode(f *form) {
	p.MACParam = f.str("clientmacaddress")
	p.MAC = f.mac("clientmacaddress", p.MACParam)
	p.openWindow.decode(f)
	p.Limit = f.int("limit", telemetry.DefaultPageLimit)
	p.LogType = f.str("logtype")
	p.FailureType = f.optInt("failuretype")
}

// Validate checks that the client is named, the window, the size and the
// log type (success, failure or all, in any case; all by default).
func (p *connectionLogsParams) Validate(now time.Time) error {
	if p.MACParam == "" {
		return wnms.MissingParam("clientmacaddress")
	}
	if err := p.openWindow.Validate(now); err != nil {
		return err
	}
	if err := checkLimit(p.Limit); err != nil {
		return err
	}
	switch strings.ToLower(p.LogType) {
	case "", "all":
		p.LogType = "all"
	case "success", "failure":
		p.LogType = strings.ToLower(p.LogType)
	default:
		return wnms.ParamError("logtype", "logtype must be success, failure or all, not %q", p.LogType)
	}
	return nil
}

// connectionLogs is GET /devices/clients/connectionlogs: a client's
// Success and Failure events at 802.11ac APs, newest first.
func (s *Server) connectionLogs(w http.ResponseWriter, r *http.Request) error {
	var p connectionLogsParams
	if err := s.bind(r, &p); err != nil {
		return err
	}
	out, err := s.Telemetry.ConnectionLogs(r.Context(), wnms.CallerFrom(r.Context()), telemetry.LogQuery{
		MAC: p.MAC, From: p.From, To: p.To, Limit: int(p.Limit), LogType: p.LogType, FailureType: intPtr(p.FailureType)})
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}
