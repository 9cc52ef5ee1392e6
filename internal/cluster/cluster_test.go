package cluster

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/wnms"
)

// fake is a child that logs in anyone and answers /V5/things as told.
type fake struct {
	*httptest.Server
	logins atomic.Int64
	answer func(w http.ResponseWriter, r *http.Request)
}

func newFake(t testing.TB, answer func(w http.ResponseWriter, r *http.Request)) *fake {
	f := &fake{answer: answer}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /new/webservice/login/key/", func(w http.ResponseWriter, r *http.Request) {
		n := f.logins.Add(1)
		http.SetCookie(w, &http.Cookie{Name: "JSESSIONID", Value: "s" + string(rune('0'+n))})
		io.WriteString(w, `{}`)
	})
	mux.HandleFunc("/new/webservice/V5/things", func(w http.ResponseWriter, r *http.Request) { f.answer(w, r) })
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func rootCaller() *wnms.Caller {
	u := &wnms.User{UserID: 1, Role: wnms.SuperUser, CustomerID: wnms.OnPremCustomer,
		AllowedLocations: []wnms.LocationID{wnms.LocalID(wnms.RootLocation)}}
	return wnms.NewCaller(u, &wnms.Session{}, nil)
}

// call runs a request through Intercept as the router would.
func call(c *Cluster, caller *wnms.Caller, method, target string) (*httptest.ResponseRecorder, bool, error) {
	r := httptest.NewRequest(method, target, nil)
	r = r.WithContext(wnms.WithCaller(r.Context(), caller))
	w := httptest.NewRecorder()
	handled, err := c.Intercept(w, r, httpkit.Call{Pattern: method + " /things"})
	return w, handled, err
}

func code(err error) string {
	var we *wnms.Error
	if errors.As(err, &we) {
		return we.Code + ": " + we.Message
	}
	return ""
}

func TestForwardFailuresNameTheChild(t *testing.T) {
	slow := newFake(t, func(w http.ResponseWriter, r *http.Request) { time.Sleep(3 * time.Second) })
	garbage := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "<html>not json</html>")
	})
	expired := newFake(t, nil)
	expired.answer = func(w http.ResponseWriter, r *http.Request) {
		// The first session is forgotten, as after a restart.
		if ck, _ := r.Cookie("JSESSIONID"); ck == nil || ck.Value == "s1" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Total-Count", "7")
		json.NewEncoder(w).Encode(map[string]any{"query": r.URL.RawQuery})
	}
	cfg := &Config{Children: []ChildConfig{
		{ChildID: 1, Name: "Slow", URL: slow.URL, KeyID: "k", KeyValue: "v", TimeoutSeconds: 1},
		{ChildID: 2, Name: "Garbage", URL: garbage.URL, KeyID: "k", KeyValue: "v"},
		{ChildID: 3, Name: "Restarted", URL: expired.URL, KeyID: "k", KeyValue: "v"},
	}}
	c := New(cfg, nil)
	c.Instrument(metrics.NewRegistry())

	start := time.Now()
	_, handled, err := call(c, rootCaller(), "GET", "/new/webservice/V5/things?nodeid=1")
	if !handled || code(err) != "CHILD_TIMEOUT: child 1 (Slow) did not answer within 1s" || time.Since(start) > 2500*time.Millisecond {
		t.Errorf("slow child: %v %q after %s", handled, code(err), time.Since(start))
	}
	_, _, err = call(c, rootCaller(), "GET", "/new/webservice/V5/things?nodeid=2")
	if code(err) != "CHILD_UNREACHABLE: child 2 (Garbage) answered something that is not JSON" {
		t.Errorf("garbage: %q", code(err))
	}
	w, _, err := call(c, rootCaller(), "GET", "/new/webservice/V5/things?nodeid=3&b=2&a=1")
	if err != nil || w.Code != 200 || !strings.Contains(w.Body.String(), `"query":"a=1\u0026b=2"`) || w.Header().Get("X-Total-Count") != "7" ||
		expired.logins.Load() != 2 {
		t.Errorf("re-login: %v %d %s %v, %d logins", err, w.Code, w.Body.String(), w.Header(), expired.logins.Load())
	}
	if _, handled, err := call(c, rootCaller(), "GET", "/new/webservice/V5/things"); handled || err != nil {
		t.Errorf("no nodeid: handled %v %v", handled, err)
	}
	st := c.Status()
	if len(st) != 3 || st[0].Up || !st[2].Up {
		t.Errorf("status: %+v", st)
	}

	// Another customer, or a caller below the root, reaches no child.
	for _, u := range []*wnms.User{
		{Role: wnms.SuperUser, CustomerID: 2, AllowedLocations: []wnms.LocationID{wnms.LocalID(0)}},
		{Role: wnms.SuperUser, CustomerID: wnms.OnPremCustomer, AllowedLocations: []wnms.LocationID{wnms.LocalID(5)}},
	} {
		_, _, err := call(c, wnms.NewCaller(u, &wnms.Session{}, nil), "GET", "/new/webservice/V5/things?nodeid=3")
		if !strings.HasPrefix(code(err), "LOCATION_ACCESS_DENIED") {
			t.Errorf("caller %+v: %q", u, code(err))
		}
	}
}

// fanOutCall runs a list call through Intercept in a getClusterChildrenData
// session, the parent's own part answering local.
func fanOutCall(c *Cluster, pattern, target, local string) (*httptest.ResponseRecorder, error) {
	r := httptest.NewRequest("GET", target, nil)
	caller := rootCaller()
	caller.Session.ClusterChildren = true
	r = r.WithContext(wnms.WithCaller(r.Context(), caller))
	w := httptest.NewRecorder()
	serve := func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, local)
		return nil
	}
	_, err := c.Intercept(w, r, httpkit.Call{Pattern: pattern, Serve: serve, Cluster: httpkit.FannedOut})
	return w, err
}

// A child's answer is bounded (64 MiB), and an answer the merge cannot use
// (a location tree holding non-objects, once a panic and a 500) is a 502
// naming the child.
func TestChildAnswersBoundedAndChecked(t *testing.T) {
	huge := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		chunk := []byte(strings.Repeat(" ", 1<<20))
		io.WriteString(w, "[")
		for i := 0; i < MaxAnswer>>20+1; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		io.WriteString(w, "]")
	})
	var tree atomic.Value
	odd := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, tree.Load().(string))
	})
	c := New(&Config{Children: []ChildConfig{
		{ChildID: 1, Name: "Huge", URL: huge.URL, KeyID: "k", KeyValue: "v", TimeoutSeconds: 30},
		{ChildID: 2, Name: "Odd", URL: odd.URL, KeyID: "k", KeyValue: "v"},
	}}, nil)
	c.Instrument(metrics.NewRegistry())

	_, handled, err := call(c, rootCaller(), "GET", "/new/webservice/V5/things?nodeid=1")
	if !handled || code(err) != "CHILD_UNREACHABLE: child 1 (Huge): answer larger than 64 MiB" {
		t.Errorf("huge answer forwarded: %v %q", handled, code(err))
	}

	c2 := New(&Config{Children: []ChildConfig{{ChildID: 2, Name: "Odd", URL: odd.URL, KeyID: "k", KeyValue: "v"}}}, nil)
	c2.Instrument(metrics.NewRegistry())
	local := `{"rootLocationId":{"type":"locallocationid","id":0},"locations":{"{\"type\":\"locallocationid\",\"id\":0}":{"type":"folderlocation","id":{"type":"locallocationid","id":0},"name":"Root"}}}`
	for _, bad := range []string{
		`{"rootLocationId":{"type":"locallocationid","id":0},"locations":{"x":5}}`,
		`{"rootLocationId":{"type":"locallocationid","id":0},"locations":{"x":[1,2]}}`,
		`{"rootLocationId":{"type":"locallocationid","id":0},"locations":{"x":{"id":7}}}`,
		`{"rootLocationId":{"type":"locallocationid","id":0},"locations":{"x":null}}`,
	} {
		tree.Store(bad)
		_, err := fanOutCall(c2, "GET /locations/tree", "/new/webservice/V5/things", local)
		if code(err) != "CHILD_UNREACHABLE: child 2 (Odd) answered something that is not the list this call returns" {
			t.Errorf("tree %s: %q", bad, code(err))
		}
	}
	tree.Store(`{"rootLocationId":{"type":"locallocationid","id":0},"locations":{}}`)
	if w, err := fanOutCall(c2, "GET /locations/tree", "/new/webservice/V5/things", local); err != nil || w.Code != 200 {
		t.Errorf("a good tree: %v %d", err, w.Code)
	}
}

// Only an origin-form target is forwarded: an absolute-form one (GET
// http://other/...) is 400 and leaves the child's state alone (it once
// marked a healthy child down).
func TestAbsoluteFormNotForwarded(t *testing.T) {
	good := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `[]`)
	})
	c := New(&Config{Children: []ChildConfig{{ChildID: 1, Name: "Good", URL: good.URL, KeyID: "k", KeyValue: "v"}}}, nil)
	c.Instrument(metrics.NewRegistry())
	if _, _, err := call(c, rootCaller(), "GET", "/new/webservice/V5/things?nodeid=1"); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/new/webservice/V5/things?nodeid=1", nil)
	r.RequestURI = "http://other.example:9/new/webservice/V5/things?nodeid=1"
	r = r.WithContext(wnms.WithCaller(r.Context(), rootCaller()))
	_, err := c.Intercept(httptest.NewRecorder(), r, httpkit.Call{Pattern: "GET /things"})
	if !strings.HasPrefix(code(err), "INVALID_PARAMETER") {
		t.Errorf("absolute form: %q", code(err))
	}
	if st := c.Status(); !st[0].Up {
		t.Errorf("the child was marked down: %+v", st)
	}
}

// FuzzFanOutMerge: whatever a child answers to a fanned-out list call, the
// parent answers the merge or an error naming the child, never a panic.
func FuzzFanOutMerge(f *testing.F) {
	for _, s := range []string{
		`{"rootLocationId":{"type":"locallocationid","id":0},"locations":{"x":5}}`,
		`{"rootLocationId":{"type":"locallocationid","id":0},"locations":{"a":{"type":"folderlocation","id":{"type":"locallocationid","id":0}}}}`,
		`{"rootLocationId":null,"locations":{}}`,
		`[1,2,{"id":{"type":"locallocationid","id":3}}]`,
		`{"totalCount":3,"items":[1]}`,
		`{"totalCount":"x","items":7}`,
		`nope`,
	} {
		f.Add(s)
	}
	var answer atomic.Value
	answer.Store("")
	child := newFake(f, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer.Load().(string))
	})
	c := New(&Config{Children: []ChildConfig{{ChildID: 1, Name: "C", URL: child.URL, KeyID: "k", KeyValue: "v"}}}, nil)
	c.Instrument(metrics.NewRegistry())
	locals := map[string]string{
		"GET /locations/tree": `{"rootLocationId":{"type":"locallocationid","id":0},"locations":{"{\"type\":\"locallocationid\",\"id\":0}":{"type":"folderlocation","id":{"type":"locallocationid","id":0}}}}`,
		"GET /things":         `[1]`,
		"GET /paged":          `{"totalCount":1,"items":[1]}`,
	}
	f.Fuzz(func(t *testing.T, body string) {
		answer.Store(body)
		for pattern, local := range locals {
			w, err := fanOutCall(c, pattern, "/new/webservice/V5/things", local)
			if err != nil && !strings.HasPrefix(code(err), "CHILD_") {
				t.Fatalf("%s with %q: %v", pattern, body, err)
			}
			if err == nil && w.Code != 200 {
				t.Fatalf("%s with %q: %d", pattern, body, w.Code)
			}
		}
	})
}
