package telemetry

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// eventRoutes registers the client event calls.
func (s *Service) eventRoutes(handle func(pattern string, rule access.Rule, h httpkit.HandlerFunc)) {
	handle("POST /ingest/clientevents", access.SuAdOp, s.ingest("clientevents", s.IngestEvents))
	handle("POST /ingest/files", access.SuAdOp, s.ingestFile)
	handle("GET /devices/clientevents/metadata", access.AnyRole, s.eventMetadata)
	handle("GET /devices/clientevents/{macaddress}/{offset}/{limit}", access.AnyRole, s.clientEvents)
	handle("GET /devices/clients/connectionlogs", access.AnyRole, s.connectionLogs)
}

// eventMetadata is GET /devices/clientevents/metadata: the catalogue of
// intermediate events.
func (s *Service) eventMetadata(w http.ResponseWriter, r *http.Request) error {
	if err := httpkit.LocalNode(r); err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, Catalogue())
	return nil
}

// eventPage is the answer of the client event list.
type eventPage struct {
	PreviousLink *string           `json:"previousLink"`
	NextLink     *string           `json:"nextLink"`
	TotalCount   int               `json:"totalCount"`
	ClientEvents []json.RawMessage `json:"clientEvents"`
}

// clientEvents is GET /devices/clientevents/{macaddress}/{offset}/{limit}:
// a client's events, newest first.
func (s *Service) clientEvents(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	c := wnms.CallerFrom(ctx)
	macParam := r.PathValue("macaddress")
	mac, ok := ParseMAC(macParam)
	if !ok {
		return wnms.ParamError("macaddress", "%q is not a MAC address (six hex octets separated by ':' or '-')", macParam)
	}
	offset, limit, err := pathPage(r)
	if err != nil {
		return err
	}
	if err := httpkit.LocalNode(r); err != nil {
		return err
	}
	if _, err := httpkit.QueryBool(r, "totalcountrequired", false); err != nil {
		return err
	}
	at, err := s.locationParam(r, c)
	if err != nil {
		return err
	}
	q := EventQuery{MAC: mac, Offset: int(offset), Limit: int(limit), Count: true}
	if q.From, q.To, err = timeWindow(r, s.Now()); err != nil {
		return err
	}
	if v, _ := httpkit.QueryValue(r, "clienteventtype"); v != "" {
		t, ok := normalizeType(v)
		if !ok {
			return wnms.ParamError("clienteventtype", "clienteventtype must be Success, Failure or Intermediate, not %q", v)
		}
		q.Types = []string{t}
	}
	for _, p := range []struct {
		name string
		dst  **int
	}{{"eventcategory", &q.Code}, {"failureoreventtypecode", &q.SubCode}} {
		if v, _ := httpkit.QueryValue(r, p.name); v != "" {
			n, err := httpkit.ParseInt(p.name, v)
			if err != nil {
				return err
			}
			code := int(n)
			*p.dst = &code
		}
	}
	if v, _ := httpkit.QueryValue(r, "protocol"); v != "" {
		p, err := checkEnum("protocol", v, "A", "BG")
		if err != nil {
			return wnms.ParamError("protocol", "protocol must be A or BG, not %q", v)
		}
		q.Protocols = []string{p}
	}
	for _, v := range httpkit.QueryValues(r, "ssid") {
		for _, ssid := range strings.Split(v, ",") {
			if ssid = strings.TrimSpace(ssid); ssid != "" {
				q.SSIDs = append(q.SSIDs, ssid)
			}
		}
	}
	events, total, err := s.ClientEvents(ctx, c, at, q)
	if err != nil {
		return err
	}
	page := eventPage{ClientEvents: events, TotalCount: total}
	page.PreviousLink, page.NextLink = pageLinks(offset, limit, total, func(from int64) string {
		return pathLink("/"+macParam, from, limit, r)
	})
	httpkit.WriteRawJSON(w, http.StatusOK, page.encode())
	return nil
}

// encode writes the page as JSON. The events are stored as the JSON they
// are answered as (written by the server when it stored them), so they are
// copied as they are, not decoded and checked again.
func (p *eventPage) encode() []byte {
	n := 96
	for _, e := range p.ClientEvents {
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
	link(p.PreviousLink)
	b = append(b, `,"nextLink":`...)
	link(p.NextLink)
	b = append(b, `,"totalCount":`...)
	b = strconv.AppendInt(b, int64(p.TotalCount), 10)
	b = append(b, `,"clientEvents":[`...)
	for i, e := range p.ClientEvents {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, "]}"...)
}

// connectionLogs is GET /devices/clients/connectionlogs: a client's
// Success and Failure events at 802.11ac APs, newest first.
func (s *Service) connectionLogs(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	c := wnms.CallerFrom(ctx)
	v, _ := httpkit.QueryValue(r, "clientmacaddress")
	if v == "" {
		return wnms.MissingParam("clientmacaddress")
	}
	mac, ok := ParseMAC(v)
	if !ok {
		return wnms.ParamError("clientmacaddress", "%q is not a MAC address (six hex octets separated by ':' or '-')", v)
	}
	if err := httpkit.LocalNode(r); err != nil {
		return err
	}
	q := EventQuery{MAC: mac, Dot11ACOnly: true, Limit: DefaultPageLimit}
	var err error
	if q.From, q.To, err = timeWindow(r, s.Now()); err != nil {
		return err
	}
	limit, err := httpkit.QueryInt(r, "limit", DefaultPageLimit)
	if err != nil {
		return err
	}
	if err := checkLimit(limit); err != nil {
		return err
	}
	q.Limit = int(limit)
	logType, _ := httpkit.QueryValue(r, "logtype")
	switch strings.ToLower(logType) {
	case "", "all":
		logType = "all"
	case "success", "failure":
		logType = strings.ToLower(logType)
	default:
		return wnms.ParamError("logtype", "logtype must be success, failure or all, not %q", logType)
	}
	var failureType *int
	if v, _ := httpkit.QueryValue(r, "failuretype"); v != "" {
		n, err := httpkit.ParseInt("failuretype", v)
		if err != nil {
			return err
		}
		code := int(n)
		failureType = &code
	}
	out := struct {
		SuccessLogs []json.RawMessage `json:"successLogs"`
		FailureLogs []json.RawMessage `json:"failureLogs"`
	}{[]json.RawMessage{}, []json.RawMessage{}}
	if logType != "failure" {
		sq := q
		sq.Types = []string{Success}
		if out.SuccessLogs, _, err = s.ClientEvents(ctx, c, nil, sq); err != nil {
			return err
		}
	}
	if logType != "success" {
		fq := q
		fq.Types, fq.Code = []string{Failure}, failureType
		if out.FailureLogs, _, err = s.ClientEvents(ctx, c, nil, fq); err != nil {
			return err
		}
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}

// locationParam reads the optional locationid parameter for the caller.
func (s *Service) locationParam(r *http.Request, c *wnms.Caller) (*wnms.Location, error) {
	v, _ := httpkit.QueryValue(r, "locationid")
	if v == "" {
		return nil, nil
	}
	id, err := httpkit.ParseInt("locationid", v)
	if err != nil {
		return nil, err
	}
	l, err := access.LocationFor(r.Context(), s.Store, c, id)
	if wnms.ErrorCode(err) == wnms.ResourceNotFound {
		return nil, wnms.ParamError("locationid", "no location %d", id)
	}
	return l, err
}

// timeWindow reads fromtime and totime (ms, -1 or absent: unbounded on
// that side); a given time must lie in [0, now + 1 day], and fromtime
// after totime is INVALID_PARAMETER.
func timeWindow(r *http.Request, now time.Time) (from, to int64, err error) {
	if from, err = httpkit.QueryInt(r, "fromtime", -1); err != nil {
		return 0, 0, err
	}
	if to, err = httpkit.QueryInt(r, "totime", -1); err != nil {
		return 0, 0, err
	}
	for _, p := range []struct {
		name string
		v    int64
	}{{"fromtime", from}, {"totime", to}} {
		if p.v == -1 {
			continue
		}
		if err := wnms.CheckInstant(p.name, p.v, now); err != nil {
			return 0, 0, wnms.ParamError(p.name, "%s must be epoch milliseconds between 0 and one day from now, or -1", p.name)
		}
	}
	if from >= 0 && to >= 0 && from > to {
		return 0, 0, wnms.ParamError("fromtime", "fromtime %d is after totime %d", from, to)
	}
	return from, to, nil
}

// checkLimit checks a page size: 1 to MaxPageLimit.
func checkLimit(limit int64) error {
	if limit > MaxPageLimit {
		e := wnms.Errorf(wnms.PageSizeExceeded, "limit is at most %d", MaxPageLimit)
		e.MoreInfo = "limit"
		return e
	}
	if limit < 1 {
		return wnms.ParamError("limit", "limit must be at least 1")
	}
	return nil
}

// pathPage reads the {offset} and {limit} path parameters of a paged
// list: offset at least 0, limit 1 to MaxPageLimit.
func pathPage(r *http.Request) (offset, limit int64, err error) {
	if offset, err = httpkit.PathInt(r, "offset"); err != nil {
		return 0, 0, err
	}
	if offset < 0 {
		return 0, 0, wnms.ParamError("offset", "offset must not be negative")
	}
	if limit, err = httpkit.PathInt(r, "limit"); err != nil {
		return 0, 0, err
	}
	return offset, limit, checkLimit(limit)
}

// pageLinks are the previous and next links of a page (nil where there is
// none), made by link from a page's offset.
func pageLinks(offset, limit int64, total int, link func(from int64) string) (prev, next *string) {
	if offset > 0 {
		l := link(max(0, offset-limit))
		prev = &l
	}
	if offset+limit < int64(total) {
		l := link(offset + limit)
		next = &l
	}
	return prev, next
}

// pathLink is the link of a path-paged list's page: prefix, the offset and
// limit, and the request's query.
func pathLink(prefix string, from, limit int64, r *http.Request) string {
	l := prefix + "/" + strconv.FormatInt(from, 10) + "/" + strconv.FormatInt(limit, 10)
	if r.URL.RawQuery != "" {
		l += "?" + r.URL.RawQuery
	}
	return l
}
