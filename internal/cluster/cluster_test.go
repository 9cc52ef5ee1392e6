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

func newFake(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *fake {
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
