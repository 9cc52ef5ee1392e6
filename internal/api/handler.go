package api

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/metrics"

	"github.com/wnms/wnms/internal/wnms"
)

// handlerFunc is a call's handler: it writes a success response or returns
// an error for writeError.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// The access rules of the route table (routes.go).
var (
	public   = httpkit.Public
	anyRole  = httpkit.AnyRole
	suAdOp   = httpkit.SuAdOp
	suAd     = httpkit.SuAd
	selfOnly = httpkit.SelfOnly
)

// handle registers a call. The pattern is the method and the path below
// the version segment, as the interface names it.
func (s *Server) handle(pattern string, who httpkit.Access, h handlerFunc) {
	s.calls.Handle(pattern, s.wrap(pattern, who, h))
}

// wrap authenticates and authorizes a call, runs it, maps its error and
// records metrics.
func (s *Server) wrap(route string, who httpkit.Access, h handlerFunc) http.Handler {
	latency := s.Metrics.Latency.With(route)
	var byStatus sync.Map // status -> *metrics.Counter
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		c, err := httpkit.Authorize(s.Auth, r, who)
		if err == nil {
			if c != nil && !wnms.SetCaller(r.Context(), c) {
				r = r.WithContext(wnms.WithCaller(r.Context(), c))
			}
			err = h(sw, r)
		}
		if err != nil {
			s.writeError(sw, r, err)
		}
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		n, ok := byStatus.Load(status)
		if !ok {
			n, _ = byStatus.LoadOrStore(status, s.Metrics.Requests.With(route, strconv.Itoa(status)))
		}
		n.(*metrics.Counter).Inc()
		latency.Observe(time.Since(start).Seconds())
		if s.Log.Enabled(r.Context(), -4) {
			s.Log.Debug("request", "request_id", RequestID(r.Context()), "method", r.Method,
				"route", route, "status", status, "duration_ms", float64(time.Since(start).Microseconds())/1000)
		}
	})
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
