package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/httpkit"
)

// readAllocBudget is how many allocations one authenticated read (GET
// /users/current with a session cookie) may make inside the server, from
// the router's request id to the answer: the request's context and copies,
// the caller, the cookie, the metrics and the body. A read once made 51:
// the fields= parser built a map of every user field on each call (26),
// and the Cache-Control value was a new slice each time (1).
// Speed is measured in bench/readratio; this guards the part of the cost
// that is exact.
const readAllocBudget = 30

// TestAuthenticatedReadAllocs counts the allocations of an authenticated
// read served by the API listener's handler, with the session already
// checked once (as every read after a login finds it).
func TestAuthenticatedReadAllocs(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, backend apitest.Backend) {
		e := apitest.New(t, backend)
		// The suite logs every request at debug level; a server logs at info.
		e.API.Router.Log = slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
		req := httptest.NewRequest("GET", "/new/webservice/V5/users/current", nil)
		req.AddCookie(&http.Cookie{Name: httpkit.SessionCookie, Value: e.Admin.Session()})
		w := &discardWriter{h: http.Header{}}
		serve := func() {
			clear(w.h)
			w.status = 0
			e.API.ServeHTTP(w, req)
			if w.status != http.StatusOK {
				t.Fatalf("GET /users/current: status %d", w.status)
			}
		}
		serve() // the session enters the cache
		if n := testing.AllocsPerRun(200, serve); n > readAllocBudget {
			t.Errorf("an authenticated read allocates %.0f times, budget %d", n, readAllocBudget)
		} else {
			t.Logf("an authenticated read allocates %.0f times (budget %d)", n, readAllocBudget)
		}
	})
}

// discardWriter is a ResponseWriter that keeps the status and drops the
// body, allocating nothing of its own.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(b), nil
}
func (w *discardWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
