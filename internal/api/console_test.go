package api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
)

// The main listener serves the console at / and /console/..., and keeps
// its JSON 404 for every other path outside the API.
func TestConsoleIsServed(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	for _, tc := range []struct {
		path        string
		status      int
		contentType string
	}{
		{"/", 200, "text/html"},
		{"/console/app.js", 200, "text/javascript"},
		{"/console/settings", 200, "text/html"},
		{"/index.html", 404, "application/json"},
		{"/app.js", 404, "application/json"},
	} {
		resp, err := http.Get(e.HTTP.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.contentType) {
			t.Errorf("GET %s: %d %s %.100s", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	resp, err := http.Post(e.HTTP.URL+"/", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d", resp.StatusCode)
	}
}
