package console_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/console"
)

func get(t *testing.T, h http.Handler, method, path string, header map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Result()
}

func TestServesThePageAndItsFiles(t *testing.T) {
	h := console.New()
	for _, tc := range []struct {
		path, contentType, contains string
	}{
		{"/", "text/html", `<script src="/console/app.js"`},
		{"/console/", "text/html", `<main id="view"`},
		{"/console/clients/alice", "text/html", `<main id="view"`}, // a bookmarked view reloads
		{"/console/app.js", "text/javascript", "'use strict'"},
		{"/console/app.css", "text/css", ":root"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r := get(t, h, "GET", tc.path, nil)
			body, _ := io.ReadAll(r.Body)
			if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), tc.contentType) || !strings.Contains(string(body), tc.contains) {
				t.Fatalf("%d %s: %.200s", r.StatusCode, r.Header.Get("Content-Type"), body)
			}
			for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Cache-Control": "no-cache"} {
				if r.Header.Get(k) != want {
					t.Errorf("%s: %q", k, r.Header.Get(k))
				}
			}
			if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("CSP %q", csp)
			}
			// Gzipped when the browser takes it, the same bytes inflated.
			z := get(t, h, "GET", tc.path, map[string]string{"Accept-Encoding": "gzip, deflate, br"})
			if z.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("Content-Encoding %q", z.Header.Get("Content-Encoding"))
			}
			zr, err := gzip.NewReader(z.Body)
			if err != nil {
				t.Fatal(err)
			}
			inflated, _ := io.ReadAll(zr)
			if !bytes.Equal(inflated, body) {
				t.Error("the gzipped file differs")
			}
			if r := get(t, h, "GET", tc.path, map[string]string{"Accept-Encoding": "gzip;q=0"}); r.Header.Get("Content-Encoding") != "" {
				t.Error("gzip sent to a browser that refused it")
			}
			// Unchanged since the last load: 304, no body.
			nm := get(t, h, "GET", tc.path, map[string]string{"If-None-Match": r.Header.Get("ETag")})
			if b, _ := io.ReadAll(nm.Body); nm.StatusCode != http.StatusNotModified || len(b) != 0 {
				t.Errorf("If-None-Match: %d, %d bytes", nm.StatusCode, len(b))
			}
			head := get(t, h, "HEAD", tc.path, nil)
			if b, _ := io.ReadAll(head.Body); head.StatusCode != 200 || len(b) != 0 || head.Header.Get("Content-Length") == "" {
				t.Errorf("HEAD: %d, %d bytes", head.StatusCode, len(b))
			}
		})
	}
}

// The console's script and style sheets stay under 300 KB as sent.
func TestSizeBudget(t *testing.T) {
	plain, gzipped := console.New().Size()
	t.Logf("script and style sheets: %d bytes, %d gzipped", plain, gzipped)
	if gzipped == 0 || gzipped > 300<<10 {
		t.Fatalf("%d bytes gzipped, budget 300 KB", gzipped)
	}
}
