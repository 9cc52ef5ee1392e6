package httpkit

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/wnms"
)

// nullStore is an auth store for calls that need no session: the router
// tests only exercise public calls, so a store is never reached.
type nullStore struct{ auth.Store }

func (nullStore) SubscribeAuth(func(wnms.AuthEvent)) {}

// testRouter is a listener with a /v1/ prefix, a few public calls and a
// simple error envelope.
func testRouter(t *testing.T) (*Router, *bytes.Buffer, *metrics.Registry) {
	t.Helper()
	var logs bytes.Buffer
	reg := metrics.NewRegistry()
	k := NewRouter("test", slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), NewMetrics(reg),
		auth.NewService(nullStore{}, []byte("s")), func(w http.ResponseWriter, e *wnms.Error) {
			WriteJSON(w, Status(e.Code), map[string]string{"code": e.Code, "message": e.Message})
		})
	k.Root.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		k.ServeCalls(w, r, strings.TrimPrefix(r.URL.Path, "/v1"))
	})
	k.Handle("GET /things/{id}", access.Public, Forwarded, func(w http.ResponseWriter, r *http.Request) error {
		WriteJSON(w, 200, map[string]string{"id": r.PathValue("id"), "request": RequestID(r.Context())})
		return nil
	})
	k.Handle("PUT /things/{id}", access.Public, Forwarded, func(w http.ResponseWriter, r *http.Request) error {
		return wnms.Invalid("name", "required")
	})
	k.Handle("GET /boom", access.Public, Forwarded, func(w http.ResponseWriter, r *http.Request) error { panic("secret detail") })
	k.Handle("GET /broken", access.Public, Forwarded, func(w http.ResponseWriter, r *http.Request) error {
		return context.DeadlineExceeded // any error that is not the client's
	})
	return k, &logs, reg
}

func do(h http.Handler, method, path string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func TestRouter(t *testing.T) {
	k, logs, reg := testRouter(t)
	for _, tc := range []struct {
		name, method, path string
		status             int
		code, allow        string
	}{
		{"a call", "GET", "/v1/things/7", 200, "", ""},
		{"repeated slashes", "GET", "//v1//things/7", 200, "", ""},
		{"a domain error", "PUT", "/v1/things/7", 400, wnms.ValidationFailed, ""},
		{"unknown path", "GET", "/v1/nothing", 404, wnms.ResourceNotFound, ""},
		{"unknown root path", "GET", "/elsewhere", 404, wnms.ResourceNotFound, ""},
		{"other method", "DELETE", "/v1/things/7", 405, wnms.MethodNotAllowed, "GET, PUT"},
		{"dot segment", "GET", "/v1/x/../things/7", 404, wnms.ResourceNotFound, ""},
		{"panic", "GET", "/v1/boom", 500, wnms.InternalError, ""},
		{"internal error", "GET", "/v1/broken", 500, wnms.InternalError, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(k, tc.method, tc.path, nil)
			var body map[string]string
			json.Unmarshal(w.Body.Bytes(), &body)
			if w.Code != tc.status || body["code"] != tc.code || w.Header().Get("Allow") != tc.allow {
				t.Errorf("%d %v Allow %q, want %d %s %q", w.Code, body, w.Header().Get("Allow"), tc.status, tc.code, tc.allow)
			}
			if w.Header().Get("X-Request-Id") == "" {
				t.Error("no request id")
			}
			if strings.Contains(w.Body.String(), "secret detail") {
				t.Error("a panic's detail reached the client")
			}
			if tc.status == 500 && !strings.Contains(body["message"], w.Header().Get("X-Request-Id")) {
				t.Errorf("a 500 does not name its request id: %v", body)
			}
		})
	}
	if w := do(k, "GET", "/v1/things/1", map[string]string{"X-Request-Id": "abc-123"}); !strings.Contains(w.Body.String(), `"request":"abc-123"`) ||
		w.Header().Get("X-Request-Id") != "abc-123" {
		t.Errorf("the client's request id was not kept: %s", w.Body)
	}
	if !strings.Contains(logs.String(), "secret detail") || !strings.Contains(logs.String(), `"listener":"test"`) {
		t.Error("the panic was not logged with its listener")
	}
	var m strings.Builder
	reg.Write(&m)
	for _, want := range []string{`wnms_http_requests_total{listener="test",route="GET /things/{id}",status="200"} 3`,
		`wnms_http_requests_total{listener="test",route="PUT /things/{id}",status="400"} 1`,
		`wnms_http_request_duration_seconds_count{listener="test",route="GET /broken"} 1`} {
		if !strings.Contains(m.String(), want) {
			t.Errorf("metrics lack %s:\n%s", want, m.String())
		}
	}
}

// The interceptor sees every call after its access check, with the call's
// pattern and rule, and may answer it instead of the handler.
func TestRouterIntercept(t *testing.T) {
	k, _, _ := testRouter(t)
	var seen []string
	k.Intercept = func(w http.ResponseWriter, r *http.Request, c Call) (bool, error) {
		seen = append(seen, c.Pattern)
		switch r.URL.Query().Get("node") {
		case "":
			return false, nil
		case "7":
			WriteJSON(w, 200, map[string]string{"answered": "by the interceptor"})
			return true, nil
		}
		return false, wnms.ParamError("node", "no node %s", r.URL.Query().Get("node"))
	}
	if w := do(k, "GET", "/v1/things/1", nil); !strings.Contains(w.Body.String(), `"id":"1"`) {
		t.Errorf("not passed to the handler: %s", w.Body)
	}
	if w := do(k, "GET", "/v1/things/1?node=7", nil); !strings.Contains(w.Body.String(), "by the interceptor") {
		t.Errorf("not answered by the interceptor: %s", w.Body)
	}
	if w := do(k, "PUT", "/v1/things/1?node=9", nil); w.Code != 400 || !strings.Contains(w.Body.String(), wnms.InvalidParameter) {
		t.Errorf("the interceptor's error: %d %s", w.Code, w.Body)
	}
	if strings.Join(seen, ",") != "GET /things/{id},GET /things/{id},PUT /things/{id}" {
		t.Errorf("the interceptor saw %v", seen)
	}
}

// What a route declares it does in a cluster decides what a nodeid does:
// on a server without children a child named is an unknown one, and a
// call on the caller's session takes none; an interceptor (the
// cluster's) sees every call but the session's.
func TestRouterClusterModes(t *testing.T) {
	k, _, _ := testRouter(t)
	ok := func(w http.ResponseWriter, r *http.Request) error { WriteJSON(w, 200, map[string]string{}); return nil }
	k.Handle("GET /list", access.Public, FannedOut, ok)
	k.Handle("POST /session", access.Public, Local, ok)
	for _, tc := range []struct {
		name, method, path string
		intercept          bool
		status             int
		message            string // in the error's message
	}{
		{"this server", "GET", "/v1/things/7?nodeid=0", false, 200, ""},
		{"a child, none configured", "GET", "/v1/things/7?nodeid=3", false, 400, "no cluster child 3"},
		{"a list naming a child, none configured", "GET", "/v1/list?nodeId=2", false, 400, "no cluster child 2"},
		{"a session call naming a child", "POST", "/v1/session?nodeid=1", false, 400, "concerns your session"},
		{"a session call, an interceptor set", "POST", "/v1/session?nodeid=1", true, 400, "concerns your session"},
		{"a session call without nodeid, an interceptor set", "POST", "/v1/session", true, 200, ""},
		{"a child, an interceptor set", "GET", "/v1/things/7?nodeid=3", true, 299, ""},
		{"a list, an interceptor set", "GET", "/v1/list", true, 299, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k.Intercept = nil
			var seen []Cluster
			if tc.intercept {
				k.Intercept = func(w http.ResponseWriter, r *http.Request, c Call) (bool, error) {
					seen = append(seen, c.Cluster)
					w.WriteHeader(299) // answered by the interceptor
					return true, nil
				}
			}
			w := do(k, tc.method, tc.path, nil)
			if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.message) {
				t.Fatalf("%d %s, want %d with %q", w.Code, w.Body, tc.status, tc.message)
			}
			if tc.intercept && strings.Contains(tc.path, "session") && len(seen) != 0 {
				t.Errorf("the interceptor saw a session call: %v", seen)
			}
		})
	}
}
