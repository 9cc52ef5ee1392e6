package telemetry

import (
	"context"
	"mime"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// MaxAPList is the most APs GET /devices/aps answers; X-Total-Count says
// how many matched.
const MaxAPList = 100

// Paging of the managed-device list.
const (
	DefaultPageLimit = 100
	MaxPageLimit     = 1000
)

// Routes registers the telemetry calls with handle (the listener's route
// table; paths are below the base path and the version segment).
func (s *Service) Routes(handle func(pattern string, rule access.Rule, h httpkit.HandlerFunc)) {
	handle("POST /ingest/aps", access.SuAdOp, s.ingest("aps", s.IngestAPs))
	handle("GET /devices/aps", access.SuAdOp, s.listAPs)
	handle("GET /devices/manageddevices", access.SuAdOp, s.managedDevices)
	s.eventRoutes(handle)
	s.clientRoutes(handle)
	s.exportRoutes(handle)
	s.trendRoutes(handle)
}

// ingest is the handler of an ingest call of records of kind: it reads the
// body, answers what store made of it, and counts the result.
func (s *Service) ingest(kind string, store func(ctx context.Context, c *wnms.Caller, body []byte) (*Result, error)) httpkit.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		// Batches take turns: a few at a time are read, checked and
		// written, the others wait (first come, first served) with their
		// bodies still unread. So fifty senders share the engine's rate
		// instead of dividing it among fifty half-parsed batches fighting
		// for one writer, and memory holds a few bodies, not fifty.
		release, err := s.admit(r.Context())
		if err != nil {
			return err
		}
		defer release()
		httpkit.RestartBodyTime(w, r) // the wait in line is not the body's time
		body, err := readIngestBody(w, r)
		if err != nil {
			return err
		}
		res, err := store(r.Context(), wnms.CallerFrom(r.Context()), body)
		if err != nil {
			return err
		}
		s.count(kind, res)
		httpkit.WriteJSON(w, http.StatusOK, res)
		return nil
	}
}

// ingestTypes are the content types an ingest body may declare.
var ingestTypes = map[string]bool{"application/json": true, "application/x-ndjson": true,
	"application/ndjson": true, "application/jsonl": true, "application/x-jsonlines": true}

// DefaultIngestTurns is how many ingest batches are worked on at once by
// default: one per core, at least two (one parsed while another writes).
func DefaultIngestTurns() int { return max(2, runtime.GOMAXPROCS(0)) }

// admit waits for the batch's turn (until ctx ends) and returns the
// function that ends it.
func (s *Service) admit(ctx context.Context) (func(), error) {
	s.turnsOnce.Do(func() {
		n := s.IngestTurns
		if n <= 0 {
			n = DefaultIngestTurns()
		}
		s.turns = make(chan struct{}, n)
	})
	select {
	case s.turns <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	n := s.inFlight.Add(1)
	for {
		peak := s.peakInFlight.Load()
		if n <= peak || s.peakInFlight.CompareAndSwap(peak, n) {
			break
		}
	}
	return func() { s.inFlight.Add(-1); <-s.turns }, nil
}

// PeakIngestInFlight is the most ingest batches that were ever worked on
// at once.
func (s *Service) PeakIngestInFlight() int64 { return s.peakInFlight.Load() }

// readIngestBody reads an ingest body: JSON or NDJSON, at most
// MaxIngestBody bytes (413 beyond).
func readIngestBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !ingestTypes[mt] {
			return nil, wnms.Errorf(wnms.UnsupportedMediaType, "an ingest body is application/json (an array) or application/x-ndjson, not %q", ct)
		}
	}
	return httpkit.ReadBody(w, r, MaxIngestBody)
}

// listAPs is GET /devices/aps: at most MaxAPList APs, X-Total-Count.
func (s *Service) listAPs(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	if c.Session.ClusterChildren {
		return wnms.Errorf(wnms.NotSupportedInCluster, "the AP list is not available in a session opened for cluster data; use devices/manageddevices")
	}
	q, err := s.apQuery(r.Context(), r, c, "sortcolumn", "sortascending", true)
	if err != nil {
		return err
	}
	q.Limit = MaxAPList
	aps, total, err := s.ListAPs(r.Context(), c, q)
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

// devicePage is the answer of the paged managed-device list.
type devicePage struct {
	ManagedDevices []AP    `json:"managedDevices"`
	TotalCount     int     `json:"totalCount"`
	PreviousLink   *string `json:"previousLink"`
	NextLink       *string `json:"nextLink"`
}

// managedDevices is GET /devices/manageddevices: the APs, paged by
// offset and limit, newest box first unless asked otherwise.
func (s *Service) managedDevices(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	q, err := s.apQuery(r.Context(), r, c, "sortby", "ascending", false)
	if err != nil {
		return err
	}
	offset, err := httpkit.QueryInt(r, "offset", 0)
	if err != nil {
		return err
	}
	if offset < 0 {
		return wnms.ParamError("offset", "offset must not be negative")
	}
	limit, err := httpkit.QueryInt(r, "limit", DefaultPageLimit)
	if err != nil {
		return err
	}
	if err := checkLimit(limit); err != nil {
		return err
	}
	q.Offset, q.Limit = int(offset), int(limit)
	aps, total, err := s.ListAPs(r.Context(), c, q)
	if err != nil {
		return err
	}
	page := devicePage{ManagedDevices: aps, TotalCount: total}
	page.PreviousLink, page.NextLink = pageLinks(offset, limit, total, func(from int64) string {
		v := r.URL.Query()
		v.Set("offset", strconv.FormatInt(from, 10))
		v.Set("limit", strconv.FormatInt(limit, 10))
		return "/devices/manageddevices?" + v.Encode()
	})
	httpkit.WriteJSON(w, http.StatusOK, page)
	return nil
}

// apQuery reads the filters the AP lists share: macaddress and locationid
// (both repeatable), capability, active, name, filter (repeatable, with
// operator), the node, and the sort parameters named sortParam and
// ascParam (ascending by default when asc).
func (s *Service) apQuery(ctx context.Context, r *http.Request, c *wnms.Caller, sortParam, ascParam string, asc bool) (APQuery, error) {
	var q APQuery
	if err := httpkit.LocalNode(r); err != nil {
		return q, err
	}
	for _, m := range httpkit.QueryValues(r, "macaddress") {
		mac, ok := ParseMAC(m)
		if !ok {
			return q, wnms.ParamError("macaddress", "%q is not a MAC address (six hex octets separated by ':' or '-')", m)
		}
		q.MACs = append(q.MACs, mac)
	}
	for _, v := range httpkit.QueryValues(r, "locationid") {
		id, err := httpkit.ParseInt("locationid", v)
		if err != nil {
			return q, err
		}
		l, err := access.LocationFor(ctx, s.Store, c, id)
		if wnms.ErrorCode(err) == wnms.ResourceNotFound {
			return q, wnms.ParamError("locationid", "no location %d", id)
		}
		if err != nil {
			return q, err
		}
		q.Locations = append(q.Locations, l.Path)
	}
	capability, err := httpkit.QueryInt(r, "capability", 0)
	if err != nil {
		return q, err
	}
	if capability < 0 || capability > capAll {
		return q, wnms.ParamError("capability", "capability is a bit mask of 1 (802.11n), 2 (802.11ac) and 4 (802.11ax): 0 to %d", capAll)
	}
	q.Capability = int(capability)
	if _, given := httpkit.QueryValue(r, "active"); given {
		active, err := httpkit.QueryBool(r, "active", false)
		if err != nil {
			return q, err
		}
		q.Active = &active
	}
	q.Name, _ = httpkit.QueryValue(r, "name")
	if len(q.Name) > MaxAPName*4 {
		return q, wnms.ParamError("name", "name is at most %d characters", MaxAPName)
	}
	op, _ := httpkit.QueryValue(r, "operator")
	f, ok, err := ParseFilters(r.URL.Query()["filter"], op, APProperties)
	if err != nil {
		return q, err
	}
	if ok {
		q.Filter = &f
	}
	q.Sort = "boxid"
	if v, _ := httpkit.QueryValue(r, sortParam); v != "" {
		q.Sort = strings.ToLower(v)
		if !slices.Contains(APSortColumns, q.Sort) {
			return q, wnms.ParamError(sortParam, "%s must be one of %s, not %q", sortParam, strings.Join(APSortColumns, ", "), v)
		}
	}
	q.Ascending, err = httpkit.QueryBool(r, ascParam, asc)
	return q, err
}
