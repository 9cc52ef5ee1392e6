package httpkit

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkCrossOriginCheck is what the browser-origin check adds to
// every request of either listener: a read, a non-browser write, and a
// same-origin browser write (the console's).
func BenchmarkCrossOriginCheck(b *testing.B) {
	c := http.NewCrossOriginProtection()
	for _, tc := range []struct {
		name   string
		method string
		header map[string]string
	}{
		{"GET", "GET", nil},
		{"POST by a client", "POST", nil},
		{"POST by the console", "POST", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://wnms.example"}},
	} {
		req := httptest.NewRequest(tc.method, "http://wnms.example/new/webservice/V5/users", nil)
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if err := c.Check(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
