package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// Every call with parameters reads them into its own params struct in two
// steps: decode turns the request's strings into typed values (a value of
// the wrong type is INVALID_PARAMETER), then Validate checks what was read
// against the rules and the clock, before any work. Handlers then make one
// service call with what was read and write its answer.
type params interface {
	decode(f *form)
	Validate(now time.Time) error
}

// bind reads r into p: decode, then Validate at the telemetry clock.
func (s *Server) bind(r *http.Request, p params) error {
	return bindAt(r, p, s.Telemetry.Now)
}

// bindAt reads r into p: decode, then Validate at now().
func bindAt(r *http.Request, p params, now func() time.Time) error {
	f := &form{r: r}
	p.decode(f)
	if f.err != nil {
		return f.err
	}
	return p.Validate(now())
}

// form reads a request's path and query parameters. The first error
// sticks: later reads answer zero values, and bind returns that error.
type form struct {
	r   *http.Request
	err error
}

// str is a query parameter (trimmed and unquoted as httpkit.QueryValue
// reads it; "" when absent).
func (f *form) str(name string) string {
	v, _ := httpkit.QueryValue(f.r, name)
	return v
}

// given says whether a query parameter was given, even empty.
func (f *form) given(name string) bool {
	_, ok := httpkit.QueryValue(f.r, name)
	return ok
}

// strs are every non-empty value of a repeatable query parameter.
func (f *form) strs(name string) []string { return httpkit.QueryValues(f.r, name) }

// raw are a repeatable query parameter's values exactly as given.
func (f *form) raw(name string) []string { return f.r.URL.Query()[name] }

// int is an integer query parameter; absent or empty is def.
func (f *form) int(name string, def int64) int64 {
	if f.err != nil {
		return def
	}
	n, err := httpkit.QueryInt(f.r, name, def)
	f.err = err
	return n
}

// optInt is an integer query parameter, nil when absent or empty.
func (f *form) optInt(name string) *int64 {
	if f.err != nil || f.str(name) == "" {
		return nil
	}
	n, err := httpkit.ParseInt(name, f.str(name))
	if f.err = err; err != nil {
		return nil
	}
	return &n
}

// bool is a boolean query parameter; absent or empty is def.
func (f *form) bool(name string, def bool) bool {
	if f.err != nil {
		return def
	}
	b, err := httpkit.QueryBool(f.r, name, def)
	f.err = err
	return b
}

// optBool is a boolean query parameter, nil when absent.
func (f *form) optBool(name string) *bool {
	if !f.given(name) {
		return nil
	}
	b := f.bool(name, false)
	return &b
}

// pathInt is an integer path parameter.
func (f *form) pathInt(name string) int64 {
	if f.err != nil {
		return 0
	}
	n, err := httpkit.PathInt(f.r, name)
	f.err = err
	return n
}

// path is a path parameter as given.
func (f *form) path(name string) string { return f.r.PathValue(name) }

// fail records err unless an earlier error stuck.
func (f *form) fail(err error) {
	if f.err == nil {
		f.err = err
	}
}

// mac is a MAC address parameter value v of parameter name ("" stays "").
func (f *form) mac(name, v string) string {
	if v == "" {
		return ""
	}
	m, ok := telemetry.ParseMAC(v)
	if !ok {
		f.fail(wnms.ParamError(name, "%q is not a MAC address (six hex octets separated by ':' or '-')", v))
	}
	return m
}

// oneOf is v in the spelling of the allowed value it matches in any case.
func oneOf(v string, allowed ...string) (string, bool) {
	for _, a := range allowed {
		if strings.EqualFold(v, a) {
			return a, true
		}
	}
	return "", false
}

// limit checks a page size: 1 to telemetry.MaxPageLimit.
func checkLimit(limit int64) error {
	if limit > telemetry.MaxPageLimit {
		e := wnms.Errorf(wnms.PageSizeExceeded, "limit is at most %d", telemetry.MaxPageLimit)
		e.MoreInfo = "limit"
		return e
	}
	if limit < 1 {
		return wnms.ParamError("limit", "limit must be at least 1")
	}
	return nil
}

// page is an offset and a page size.
type page struct{ Offset, Limit int64 }

// decodePath reads {offset} and {limit} from the path.
func (p *page) decodePath(f *form) {
	p.Offset, p.Limit = f.pathInt("offset"), f.pathInt("limit")
}

// Validate checks the offset (at least 0) and the size.
func (p page) Validate() error {
	if p.Offset < 0 {
		return wnms.ParamError("offset", "offset must not be negative")
	}
	return checkLimit(p.Limit)
}

// links are the previous and next links of the page (nil where there is
// none), made by link from a page's offset.
func (p page) links(total int, link func(from int64) string) (prev, next *string) {
	if p.Offset > 0 {
		l := link(max(0, p.Offset-p.Limit))
		prev = &l
	}
	if p.Offset+p.Limit < int64(total) {
		l := link(p.Offset + p.Limit)
		next = &l
	}
	return prev, next
}

// pathLinks are the links of a path-paged list: prefix, then the offset
// and limit, then the request's query.
func (p page) pathLinks(r *http.Request, prefix string, total int) (prev, next *string) {
	return p.links(total, func(from int64) string {
		l := prefix + "/" + strconv.FormatInt(from, 10) + "/" + strconv.FormatInt(p.Limit, 10)
		if r.URL.RawQuery != "" {
			l += "?" + r.URL.RawQuery
		}
		return l
	})
}

// openWindow is fromtime and totime (ms) where -1 or absent leaves that
// side unbounded.
type openWindow struct{ From, To int64 }

func (w *openWindow) decode(f *form) {
	w.From, w.To = f.int("fromtime", -1), f.int("totime", -1)
}

// Validate checks that a given time lies in [0, now + 1 day] and that
// fromtime is not after totime.
func (w openWindow) Validate(now time.Time) error {
	for _, p := range []struct {
		name string
		v    int64
	}{{"fromtime", w.From}, {"totime", w.To}} {
		if p.v == -1 {
			continue
		}
		if err := wnms.CheckInstant(p.name, p.v, now); err != nil {
			return wnms.ParamError(p.name, "%s must be epoch milliseconds between 0 and one day from now, or -1", p.name)
		}
	}
	if w.From >= 0 && w.To >= 0 && w.From > w.To {
		return wnms.ParamError("fromtime", "fromtime %d is after totime %d", w.From, w.To)
	}
	return nil
}

// closedWindow is fromtime and totime (ms) with defaults: totime now,
// fromtime def before totime; at most max wide, within [0, now + 1 day].
type closedWindow struct {
	From, To     *int64
	from, to     int64 // what Validate settled
	def, longest time.Duration
}

func (w *closedWindow) decode(f *form) {
	w.From, w.To = f.optInt("fromtime"), f.optInt("totime")
}

// Validate settles the defaults and checks the window.
func (w *closedWindow) Validate(now time.Time) error {
	w.to = now.UnixMilli()
	if w.To != nil {
		w.to = *w.To
	}
	// The default fromtime is only computed from a totime in range, so it
	// cannot wrap around.
	if err := wnms.CheckInstant("totime", w.to, now); err != nil {
		return err
	}
	w.from = w.to - w.def.Milliseconds()
	if w.From != nil {
		w.from = *w.From
	}
	win := wnms.Window{From: w.from, To: w.to, FromParam: "fromtime", ToParam: "totime"}
	return win.Check(now, w.longest)
}

// readLocationID reads the locationid query parameter: def when absent
// (def < -1: required), and no valid id below -1.
func readLocationID(f *form, def int64) int64 {
	if f.str("locationid") == "" && def < -1 {
		f.fail(wnms.MissingParam("locationid")) // absent or empty
		return 0
	}
	id := f.int("locationid", def)
	if f.err == nil && id < -1 {
		f.fail(wnms.ParamError("locationid", "no location %d", id))
	}
	return id
}
