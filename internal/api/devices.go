package api

import (
	"encoding/json"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// The telemetry calls: ingest and the device lists.

// ingestTypes are the content types an ingest body may declare.
var ingestTypes = map[string]bool{"application/json": true, "application/x-ndjson": true,
	"application/ndjson": true, "application/jsonl": true, "application/x-jsonlines": true}

// ingest is the handler of POST /ingest/{kind}: it waits for the batch's
// turn, reads the body (JSON or NDJSON, at most telemetry.MaxIngestBody)
// and answers what the service made of it.
func (s *Server) ingest(kind string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		release, err := s.Telemetry.Admit(r.Context())
		if err != nil {
			return err
		}
		defer release()
		httpkit.RestartBodyTime(w, r) // the wait in line is not the body's time
		if ct := r.Header.Get("Content-Type"); ct != "" {
			mt, _, err := mime.ParseMediaType(ct)
			if err != nil || !ingestTypes[mt] {
				return wnms.Errorf(wnms.UnsupportedMediaType, "an ingest body is application/json (an array) or application/x-ndjson, not %q", ct)
			}
		}
		body, err := httpkit.ReadBody(w, r, telemetry.MaxIngestBody)
		if err != nil {
			return err
		}
		res, err := s.Telemetry.Ingest(r.Context(), wnms.CallerFrom(r.Context()), kind, body)
		if err != nil {
			return err
		}
		httpkit.WriteJSON(w, http.StatusOK, res)
		return nil
	}
}

// ingestFile is POST /ingest/files: a connection log bundle (the multipart
// part uploadedFile), kept for failure events to name by the fileId it
// answers.
func (s *Server) ingestFile(w http.ResponseWriter, r *http.Request) error {
	data, err := httpkit.ReadUpload(w, r, "uploadedFile", telemetry.MaxLogBundle)
	if err != nil {
		return err
	}
	key, err := s.Telemetry.PutBundle(r.Context(), wnms.CallerFrom(r.Context()), data)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, map[string]string{"fileId": key})
	return nil
}

// apParams are the filters the AP lists share: macaddress and locationid
// (both repeatable), capability, active, name, filter (repeatable, with
// operator), the node, and the sort parameter and direction, whose names
// differ between the two lists.
type apParams struct {
	sortParam, ascParam string
	defaultAscending    bool

	MACs        []string
	LocationIDs []int64
	Capability  int64
	Active      *bool
	Name        string
	Filters     []string
	Operator    string
	Sort        string
	Ascending   bool
}

func (p *apParams) decode(f *form) {
	for _, m := range f.strs("macaddress") {
		p.MACs = append(p.MACs, f.mac("macaddress", m))
	}
	for _, v := range f.strs("locationid") {
		if f.err == nil {
			id, err := httpkit.ParseInt("locationid", v)
			f.fail(err)
			p.LocationIDs = append(p.LocationIDs, id)
		}
	}
	p.Capability = f.int("capability", 0)
	p.Active = f.optBool("active")
	p.Name = f.str("name")
	p.Operator = f.str("operator")
	p.Filters = f.raw("filter")
	p.Sort = f.str(p.sortParam)
	p.Ascending = f.bool(p.ascParam, p.defaultAscending)
}

// Validate checks the capability mask, the name's length and the sort
// column.
func (p *apParams) Validate(time.Time) error {
	if p.Capability < 0 || p.Capability > wnms.CapAll {
		return wnms.ParamError("capability", "capability is a bit mask of 1 (802.11n), 2 (802.11ac) and 4 (802.11ax): 0 to %d", wnms.CapAll)
	}
	if len(p.Name) > telemetry.MaxAPName*4 {
		return wnms.ParamError("name", "name is at most %d characters", telemetry.MaxAPName)
	}
	if p.Sort == "" {
		p.Sort = "boxid"
	}
	if v := p.Sort; !slices.Contains(telemetry.APSortColumns, strings.ToLower(v)) {
		return wnms.ParamError(p.sortParam, "%s must be one of %s, not %q", p.sortParam, strings.Join(telemetry.APSortColumns, ", "), v)
	}
	p.Sort = strings.ToLower(p.Sort)
	return nil
}

// query is the service's AP query for the caller: the locations are
// resolved (one the caller cannot see is INVALID_PARAMETER) and the
// filters parsed.
func (s *Server) apQuery(r *http.Request, p *apParams) (wnms.APQuery, error) {
	q := wnms.APQuery{MACs: p.MACs, Capability: int(p.Capability), Active: p.Active, Name: p.Name,
		Sort: p.Sort, Ascending: p.Ascending}
	c := wnms.CallerFrom(r.Context())
	for _, id := range p.LocationIDs {
		l, err := s.Telemetry.Location(r.Context(), c, &id)
		if err != nil {
			return q, err
		}
		q.Locations = append(q.Locations, l.Path)
	}
	f, ok, err := telemetry.ParseFilters(p.Filters, p.Operator, telemetry.APProperties)
	if ok {
		q.Filter = &f
	}
	return q, err
}

// listAPs is GET /devices/aps: at most telemetry.MaxAPList APs, with
// X-Total-Count.
func (s *Server) listAPs(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	if c.Session.ClusterChildren {
		return wnms.Errorf(wnms.NotSupportedInCluster, "the AP list is not available in a session opened for cluster data; use devices/manageddevices")
	}
	p := apParams{sortParam: "sortcolumn", ascParam: "sortascending", defaultAscending: true}
	if err := s.bind(r, &p); err != nil {
		return err
	}
	q, err := s.apQuery(r, &p)
	if err != nil {
		return err
	}
	q.Limit = telemetry.MaxAPList
	aps, total, err := s.Telemetry.ListAPs(r.Context(), c, q)
	if err != nil {
		return err
	}
	writeCapped(w, aps, total)
	return nil
}

// writeCapped answers the first items of a capped list, with how many
// matched in all in X-Total-Count.
func writeCapped(w http.ResponseWriter, items any, total int) {
	w.Header().Set("X-Total-Count", strconv.Itoa(total))
	httpkit.WriteJSON(w, http.StatusOK, items)
}

// apStatus is one AP as GET /devices/apstatus answers it: what a status
// board shows, for every role.
type apStatus struct {
	BoxID           int64           `json:"boxId"`
	Name            string          `json:"name"`
	MacAddress      string          `json:"macaddress"`
	LocationID      wnms.LocationID `json:"locationId"`
	ActiveStatus    bool            `json:"activeStatus"`
	UpSince         int64           `json:"upSince"`
	LastSeen        int64           `json:"lastSeen"`
	NumAssocClients int             `json:"numAssocClients"`
	Position        *wnms.Position  `json:"position,omitempty"`
}

// apStatusList is GET /devices/apstatus (an extension): the status of the
// APs devices/manageddevices would list, with its parameters, for every
// role. The interface's AP lists are not a VIEWER's calls, and a VIEWER's
// first question is which APs are down.
func (s *Server) apStatusList(w http.ResponseWriter, r *http.Request) error {
	return s.pageAPs(w, r, "/devices/apstatus?", func(aps []wnms.AP, total int, prev, next *string) any {
		out := struct {
			APStatus     []apStatus `json:"apStatus"`
			TotalCount   int        `json:"totalCount"`
			PreviousLink *string    `json:"previousLink"`
			NextLink     *string    `json:"nextLink"`
		}{APStatus: make([]apStatus, len(aps)), TotalCount: total, PreviousLink: prev, NextLink: next}
		for i, a := range aps {
			out.APStatus[i] = apStatus{BoxID: a.BoxID, Name: a.Name, MacAddress: a.MacAddress, LocationID: a.LocationID,
				ActiveStatus: a.ActiveStatus, UpSince: a.UpSince, LastSeen: a.LastSeen, NumAssocClients: a.NumAssocClients,
				Position: a.Position}
		}
		return out
	})
}

// managedDevicesParams: the AP filters, offset and limit.
type managedDevicesParams struct {
	apParams
	page
}

func (p *managedDevicesParams) decode(f *form) {
	p.apParams.decode(f)
	p.Offset, p.Limit = f.int("offset", 0), f.int("limit", telemetry.DefaultPageLimit)
}

func (p *managedDevicesParams) Validate(now time.Time) error {
	if err := p.apParams.Validate(now); err != nil {
		return err
	}
	return p.page.Validate()
}

// managedDevices is GET /devices/manageddevices: the APs, paged by offset
// and limit, newest box first unless asked otherwise.
func (s *Server) managedDevices(w http.ResponseWriter, r *http.Request) error {
	return s.pageAPs(w, r, "/devices/manageddevices?", func(aps []wnms.AP, total int, prev, next *string) any {
		return struct {
			ManagedDevices []wnms.AP `json:"managedDevices"`
			TotalCount     int       `json:"totalCount"`
			PreviousLink   *string   `json:"previousLink"`
			NextLink       *string   `json:"nextLink"`
		}{ManagedDevices: aps, TotalCount: total, PreviousLink: prev, NextLink: next}
	})
}

// pageAPs answers a page of the APs the filters of managedDevicesParams
// select, as page makes it of the APs, how many matched, and the links to
// the pages before and after (path: the call's path and "?").
func (s *Server) pageAPs(w http.ResponseWriter, r *http.Request, path string, page func(aps []wnms.AP, total int, prev, next *string) any) error {
	c := wnms.CallerFrom(r.Context())
	p := managedDevicesParams{apParams: apParams{sortParam: "sortby", ascParam: "ascending"}}
	if err := s.bind(r, &p); err != nil {
		return err
	}
	q, err := s.apQuery(r, &p.apParams)
	if err != nil {
		return err
	}
	q.Offset, q.Limit = int(p.Offset), int(p.Limit)
	aps, total, err := s.Telemetry.ListAPs(r.Context(), c, q)
	if err != nil {
		return err
	}
	prev, next := p.links(total, func(from int64) string {
		v := r.URL.Query()
		v.Set("offset", strconv.FormatInt(from, 10))
		v.Set("limit", strconv.FormatInt(p.Limit, 10))
		return path + v.Encode()
	})
	httpkit.WriteJSON(w, http.StatusOK, page(aps, total, prev, next))
	return nil
}

// clientParams are the filters of the client lists: locationid, ssid,
// active, filter (with operator), and the node.
type clientParams struct {
	LocationID *int64
	SSID       string
	Active     *bool
	Filters    []string
	Operator   string
}

func (p *clientParams) decode(f *form) {
	p.LocationID = f.optInt("locationid")
	p.SSID = f.str("ssid")
	p.Active = f.optBool("active")
	p.Operator = f.str("operator")
	p.Filters = f.raw("filter")
}

func (p *clientParams) Validate(time.Time) error { return nil }

// clientQuery is the service's client query and location for the caller.
func (s *Server) clientQuery(r *http.Request, p *clientParams) (*wnms.Location, wnms.ClientQuery, error) {
	q := wnms.ClientQuery{SSID: p.SSID, Active: p.Active}
	at, err := s.Telemetry.Location(r.Context(), wnms.CallerFrom(r.Context()), p.LocationID)
	if err != nil {
		return nil, q, err
	}
	f, ok, err := telemetry.ParseFilters(p.Filters, p.Operator, telemetry.ClientProperties)
	if ok {
		q.Filter = &f
	}
	return at, q, err
}

// listClients is GET /devices/clients: at most telemetry.MaxClientList
// clients, last seen first, with X-Total-Count.
func (s *Server) listClients(w http.ResponseWriter, r *http.Request) error {
	var p clientParams
	if err := s.bind(r, &p); err != nil {
		return err
	}
	at, q, err := s.clientQuery(r, &p)
	if err != nil {
		return err
	}
	q.Limit = telemetry.MaxClientList
	clients, total, err := s.Telemetry.Clients(r.Context(), wnms.CallerFrom(r.Context()), at, q)
	if err != nil {
		return err
	}
	writeCapped(w, clients, total)
	return nil
}

// clientPageParams: the client filters and the page in the path.
type clientPageParams struct {
	clientParams
	page
}

func (p *clientPageParams) decode(f *form) {
	p.page.decodePath(f)
	p.clientParams.decode(f)
}

func (p *clientPageParams) Validate(time.Time) error { return p.page.Validate() }

// pageClients is GET /devices/clients/{offset}/{limit}.
func (s *Server) pageClients(w http.ResponseWriter, r *http.Request) error {
	var p clientPageParams
	if err := s.bind(r, &p); err != nil {
		return err
	}
	at, q, err := s.clientQuery(r, &p.clientParams)
	if err != nil {
		return err
	}
	q.Offset, q.Limit = int(p.Offset), int(p.Limit)
	clients, total, err := s.Telemetry.Clients(r.Context(), wnms.CallerFrom(r.Context()), at, q)
	if err != nil {
		return err
	}
	out := struct {
		ClientList   []wnms.Client `json:"clientList"`
		TotalCount   int           `json:"totalCount"`
		PreviousLink *string       `json:"previousLink"`
		NextLink     *string       `json:"nextLink"`
	}{ClientList: clients, TotalCount: total}
	out.PreviousLink, out.NextLink = p.pathLinks(r, "/devices/clients", total)
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}

// observersParams: the client's boxId and the node.
type observersParams struct{ BoxID int64 }

func (p *observersParams) decode(f *form) {
	p.BoxID = f.pathInt("boxId")
}

func (p *observersParams) Validate(time.Time) error { return nil }

// observers is GET /devices/clients/{boxId}/observingmanageddevices.
func (s *Server) observers(w http.ResponseWriter, r *http.Request) error {
	var p observersParams
	if err := s.bind(r, &p); err != nil {
		return err
	}
	out, err := s.Telemetry.Observers(r.Context(), wnms.CallerFrom(r.Context()), p.BoxID)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}

// placeAP is PUT /devices/manageddevices/{boxId}/position (an extension):
// {"position": {x, y}} puts the AP there on its floor's layout,
// {"position": null} takes it off the plan. Only the position changes.
func (s *Server) placeAP(w http.ResponseWriter, r *http.Request) error {
	box, err := httpkit.PathInt(r, "boxId")
	if err != nil {
		return err
	}
	body, err := httpkit.ReadJSON(w, r, httpkit.MaxJSONBody)
	if err != nil {
		return err
	}
	var in struct {
		Position json.RawMessage `json:"position"`
	}
	if err := wnms.DecodeJSONObject(body, &in); err != nil {
		return err
	}
	if in.Position == nil {
		return wnms.Invalid("position", "required ({\"x\", \"y\"}, or null to take the AP off the plan)")
	}
	var pos *telemetry.PositionInput
	if string(in.Position) != "null" {
		pos = new(telemetry.PositionInput)
		if err := wnms.DecodeJSONObject(in.Position, pos); err != nil {
			return err
		}
	}
	placed, err := s.Telemetry.PlaceAP(r.Context(), wnms.CallerFrom(r.Context()), box, pos)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, struct {
		BoxID    int64          `json:"boxId"`
		Position *wnms.Position `json:"position"`
	}{box, placed})
	return nil
}
