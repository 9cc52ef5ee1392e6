package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/httpkit"
)

// BenchmarkUsersCurrent is the fixed cost of an authenticated call,
// in-process (no sockets): session check, role check, routing, metrics and
// the user's JSON. bench/users-current.sh measures the same call over
// HTTP against a bare handler.
func BenchmarkUsersCurrent(b *testing.B) {
	for _, backend := range apitest.Backends(b) {
		b.Run(string(backend), func(b *testing.B) {
			e := apitest.New(b, backend)
			cookie := &http.Cookie{Name: httpkit.SessionCookie, Value: e.Admin.Session()}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest("GET", "/new/webservice/V5/users/current", nil)
					req.AddCookie(cookie)
					rec := httptest.NewRecorder()
					e.API.ServeHTTP(rec, req)
					if rec.Code != 200 {
						b.Fatalf("status %d", rec.Code)
					}
				}
			})
		})
	}
}
