package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
)

// serveFuzz sends one request straight to the handler and checks the
// properties every answer has: never a 5xx, and every error is the §3 body
// with the status it states.
func serveFuzz(t *testing.T, e *apitest.Env, method, target string, body []byte, cookie string) int {
	req, err := http.NewRequest(method, "http://wnms"+target, bytes.NewReader(body))
	if err != nil {
		return 0 // not a request a client could send
	}
	req.RemoteAddr = "192.0.2.1:1234"
	req.Header.Set("Content-Type", "application/json")
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: "JSESSIONID", Value: cookie})
	}
	rec := httptest.NewRecorder()
	e.API.ServeHTTP(rec, req)
	if rec.Code >= 500 {
		t.Fatalf("%s %q with %q: status %d %s", method, target, body, rec.Code, rec.Body)
	}
	if rec.Code >= 400 {
		var eb struct {
			Status int `json:"status"`
			Errors []struct {
				ErrorCode string `json:"errorCode"`
				Message   string `json:"message"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Status != rec.Code || len(eb.Errors) != 1 || eb.Errors[0].ErrorCode == "" {
			t.Fatalf("%s %q: error body %q does not follow §3", method, target, rec.Body)
		}
	}
	return rec.Code
}

func FuzzUserBody(f *testing.F) {
	e := apitest.New(f, apitest.SQLite)
	cookie := e.Admin.Session()
	for _, s := range []string{
		`{"user":{"loginId":"a","role":"VIEWER","userType":"LOCAL"},"password":"12345678"}`,
		`{"user":{"loginId":"b","role":"OPERATOR","userType":"API","allowedLocations":[{"type":"locallocationid","id":0}]}}`,
		`{"user":{"loginId":"c","role":"VIEWER","passwdSettings":{"passwordExpires":true}},"password":"x"}`,
		`{"user":{"loginId":"d","role":"VIEWER","userDefinedFields":[{"name":"x","value":"y"}]},"password":"12345678"}`,
		`{"user":{"loginId":"e","role":"VIEWER","timeZone":"Asia/Kolkata","timezonOffSetInMins":-99999},"password":"12345678"}`,
		`{"user":null}`, `[]`, `"x"`, `{"user":{"allowedLocations":[{"id":1e99}]}}`, ``,
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, create bool) {
		method := "POST"
		if create {
			method = "PUT"
		}
		switch code := serveFuzz(t, e, method, "/new/webservice/V5/users", body, cookie); code {
		case 0, 200, 400, 403, 404, 409, 413, 415:
		default:
			t.Fatalf("%s /users %q: unexpected status %d", method, body, code)
		}
	})
}

func FuzzLogin(f *testing.F) {
	e := apitest.New(f, apitest.SQLite)
	f.Add("client", "600", "getClusterChildrenData=true", []byte(`{"type":"apikeycredentials","keyId":"a","keyValue":"b"}`))
	f.Add("c", "60", "", []byte(`{"type":"usernamepasswordcredentials","username":"admin","password":"x"}`))
	f.Add("", "-1", "getClusterChildrenData=%", []byte(`{`))
	f.Add("ünïcödé-client-name!", "86400", "a=b&a=c", []byte(`{"type":5}`))
	f.Fuzz(func(t *testing.T, client, timeout, query string, body []byte) {
		target := "/new/webservice/login/" + url.PathEscape(client) + "/" + url.PathEscape(timeout)
		if query != "" {
			target += "?" + query
		}
		if _, err := url.ParseRequestURI("http://wnms" + target); err != nil {
			return
		}
		switch code := serveFuzz(t, e, "POST", target, body, ""); code {
		case 0, 200, 400, 401, 404, 415, 429:
		default:
			t.Fatalf("login %q: unexpected status %d", target, code)
		}
	})
}

func FuzzRouting(f *testing.F) {
	e := apitest.New(f, apitest.SQLite)
	cookie := e.Admin.Session()
	for _, p := range []string{"/new/webservice/V5/users/current", "/new/webservice/v9/x", "/new/webservice/V2/locations/-1",
		"/new/webservice/V5/users/99999999999999999999", "/healthz", "/new/webservice/", "/new/webservice/V5/apikeys/%2e%2e",
		"/new/webservice/V5/system/version?locationid=1e3"} {
		f.Add("GET", p)
		f.Add("DELETE", p)
	}
	f.Fuzz(func(t *testing.T, method, target string) {
		switch method {
		case "GET", "DELETE", "PATCH", "OPTIONS":
		default:
			return
		}
		if len(target) == 0 || target[0] != '/' {
			return
		}
		if _, err := url.ParseRequestURI("http://wnms" + target); err != nil {
			return
		}
		serveFuzz(t, e, method, target, nil, cookie)
	})
}
