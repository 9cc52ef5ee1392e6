package api_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// rawExchange sends a raw HTTP/1.1 request to addr, closes the writing
// side, and returns the response.
func rawExchange(t *testing.T, addr, req string) *http.Response {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func hostOf(url string) string { return strings.TrimPrefix(url, "http://") }

// errorCodeOf reads the errorCode of either listener's error body.
func errorCodeOf(t *testing.T, resp *http.Response) string {
	t.Helper()
	var b struct {
		Errors []struct{ ErrorCode string } `json:"errors"`
		Data   []struct{ ErrorCode string } `json:"data"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("error body is not JSON: %q", raw)
	}
	if len(b.Errors) > 0 {
		return b.Errors[0].ErrorCode
	}
	if len(b.Data) > 0 {
		return b.Data[0].ErrorCode
	}
	return ""
}

// A body shorter than its Content-Length is the client's error: 400
// INVALID_REQUEST_BODY on both listeners, not 500.
func TestShortBodyIsBadRequest(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	floor := e.NewLocation(t, 0, wnms.FloorLocation, "Floor", 1)
	cookie := "JSESSIONID=" + e.Admin.Session()
	for _, tc := range []struct {
		name, addr, path string
	}{
		{"main", hostOf(e.HTTP.URL), "/new/webservice/V5/users"},
		{"analytics", hostOf(e.Analytics.URL), fmt.Sprintf("/api/v1.14/analytics/graphs/locationtracking/zones/ap/config?server_id=1&location_id=%d&node_type=location", floor.ID.ID)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := rawExchange(t, tc.addr, "PUT "+tc.path+" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+
				"Cookie: "+cookie+"\r\nContent-Length: 5000\r\n\r\n{\"user\": {\"loginId\": ")
			if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d %s, want 400 JSON", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if code := errorCodeOf(t, resp); code != wnms.InvalidRequestBody {
				t.Errorf("errorCode %s, want %s", code, wnms.InvalidRequestBody)
			}
		})
	}
	if strings.Contains(e.Logs.String(), `"level":"ERROR"`) {
		t.Errorf("a client's short body was logged as an error:\n%s", e.Logs.String())
	}
}

// Repeated slashes are one slash on both listeners, answered in place; dot
// segments are the listener's JSON 404, never a redirect.
func TestPathNormalization(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	ac := e.Admin.AnalyticsClient()
	for _, tc := range []struct {
		name   string
		c      *apitest.Client
		path   string
		status int
	}{
		{"double slash after new", e.Admin, "/new//webservice/V5/users/current", 200},
		{"many slashes", e.Admin, "/new///webservice//V5///users/current", 200},
		{"double slash on analytics", ac, "/api//v1.14/session", 200},
		{"dot segment", e.Admin, "/new/webservice/V5/./users/current", 404},
		{"dot-dot segment", e.Admin, "/new/webservice/V5/x/../users/current", 404},
		{"dot segment on analytics", ac, "/api/v1.14/./session", 404},
		{"dot-dot on analytics", ac, "/api/v1.14/x/../session", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.c.Do("GET", tc.path, nil)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d; %s", r.Status, tc.status, r.Body)
			}
			if tc.status == 404 && r.ErrorCode() != wnms.ResourceNotFound {
				t.Errorf("errorCode %q, want %s", r.ErrorCode(), wnms.ResourceNotFound)
			}
		})
	}
}

// Names must be stored as sent: bytes that are not UTF-8 and escapes of lone
// surrogates (which encoding/json would turn into U+FFFD) are refused.
func TestBodiesMustBeValidText(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	for _, tc := range []struct{ name, firstName string }{
		{"invalid UTF-8", "Ada\xff"},
		{"lone high surrogate", `Ada\ud800`},
		{"lone low surrogate", `Ada\udc00`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := fmt.Sprintf(`{"user":{"loginId":"text%d","role":"VIEWER","userType":"API","firstName":"%s"}}`, len(tc.name), tc.firstName)
			r := e.Admin.Do("PUT", "/V5/users", apitest.Raw{ContentType: "application/json", Body: []byte(body)})
			if r.Status != 400 || r.ErrorCode() != wnms.InvalidRequestBody {
				t.Fatalf("status %d %s, want 400 INVALID_REQUEST_BODY; %s", r.Status, r.ErrorCode(), r.Body)
			}
		})
	}
	var u wnms.User
	e.Admin.Expect(200, "PUT", "/V5/users", apitest.Raw{ContentType: "application/json",
		Body: []byte(`{"user":{"loginId":"emoji","role":"VIEWER","userType":"API","firstName":"\ud83d\ude00 ok"}}`)}).Decode(t, &u)
	if u.FirstName != "😀 ok" {
		t.Errorf("a valid surrogate pair came back as %q", u.FirstName)
	}
}

// An empty locationid is a missing one, named as such (it once reported an
// internal placeholder, "no location -2").
func TestEmptyLocationIDIsMissing(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/V5/layouts?locationid="},
		{"GET", "/V5/layouts/image?locationid="},
		{"DELETE", "/V5/layouts?locationid="},
		{"PUT", "/V5/templates?locationid="},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			var body any
			if tc.method == "PUT" {
				body = map[string]any{"templateName": "x"}
			}
			r := e.Admin.Do(tc.method, tc.path, body)
			var eb struct {
				Errors []struct{ ErrorCode, Message, MoreInfo string } `json:"errors"`
			}
			r.Decode(t, &eb)
			if r.Status != 400 || len(eb.Errors) != 1 || eb.Errors[0].ErrorCode != wnms.MissingParameter || eb.Errors[0].MoreInfo != "locationid" ||
				strings.Contains(eb.Errors[0].Message, "-2") {
				t.Errorf("status %d %s, want 400 MISSING_PARAMETER naming locationid", r.Status, r.Body)
			}
		})
	}
}

// API answers are Cache-Control: no-store (successes, errors and the event
// stream, on both listeners), so no browser cache or proxy keeps a user's
// data; the console's page and files stay cacheable with revalidation.
// Before, API answers carried no Cache-Control at all.
func TestAPIAnswersAreNotStored(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	for _, c := range []struct {
		url, want string
		cookie    bool
	}{
		{e.HTTP.URL + "/new/webservice/V5/users/current", "no-store", true},
		{e.HTTP.URL + "/new/webservice/V5/users/current", "no-store", false}, // 401
		{e.HTTP.URL + "/new/webservice/users/current", "no-store", true},     // 404: no version
		{e.HTTP.URL + "/new/webservice/V5/events/stream?kinds=nope", "no-store", true},
		{e.HTTP.URL + "/healthz", "no-store", false},
		{e.Analytics.URL + "/api/v1.1/zones?locationid=0", "no-store", true},
		{e.Analytics.URL + "/healthz", "no-store", false},
		{e.HTTP.URL + "/", "no-cache", false},
		{e.HTTP.URL + "/console/app.js", "no-cache", false},
	} {
		req, _ := http.NewRequest("GET", c.url, nil)
		if c.cookie {
			req.Header.Set("Cookie", httpkit.SessionCookie+"="+e.Admin.Session())
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Cache-Control"); got != c.want {
			t.Errorf("GET %s (%d): Cache-Control %q, want %q", c.url, resp.StatusCode, got, c.want)
		}
	}
}
