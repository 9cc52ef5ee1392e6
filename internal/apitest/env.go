package apitest

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/wnms/wnms/internal/analytics"
	"github.com/wnms/wnms/internal/api"
	"github.com/wnms/wnms/internal/app"
	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// CheapArgon keeps password hashing fast under the race detector; the
// parameters live in each hash, so verification is unaffected.
var CheapArgon = auth.Argon2Params{Memory: 256, Time: 1, Threads: 1}

// Env is a running server over a fresh store.
type Env struct {
	T         testing.TB
	Backend   Backend
	Config    store.Config
	Store     *store.Store
	Auth      *auth.Service
	API       *api.Server
	HTTP      *httptest.Server
	Analytics *httptest.Server
	Logs      *SyncBuffer
	Admin     *Client

	AdminKeyID, AdminKeyValue string

	dbs struct {
		sync.Mutex
		main, telemetry *sql.DB
	}
}

// DB is a connection pool of the test's own on e's database, opened on
// first use as another program would open it (storetest.DB): for tests
// that count, read or lock what the server stores from outside it.
func (e *Env) DB() *sql.DB {
	e.dbs.Lock()
	defer e.dbs.Unlock()
	if e.dbs.main == nil {
		e.dbs.main = storetest.DB(e.T, e.Config)
	}
	return e.dbs.main
}

// TelemetryDB is DB for e's telemetry (storetest.TelemetryDB): on SQLite
// a file of its own.
func (e *Env) TelemetryDB() *sql.DB {
	e.dbs.Lock()
	defer e.dbs.Unlock()
	if e.dbs.telemetry == nil {
		e.dbs.telemetry = storetest.TelemetryDB(e.T, e.Config)
	}
	return e.dbs.telemetry
}

// SyncBuffer is a goroutine-safe log sink.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything logged so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// New boots a server over a fresh store of backend b, with a SUPERUSER
// API user "admin" logged in as e.Admin.
func New(t testing.TB, b Backend) *Env {
	t.Helper()
	cfg := StoreConfig(t, b)
	return NewAt(t, b, cfg)
}

// NewAt boots a server (a replica) over the store cfg names.
func NewAt(t testing.TB, b Backend, cfg store.Config) *Env {
	t.Helper()
	st := OpenStoreAt(t, cfg)
	e := &Env{T: t, Backend: b, Config: cfg, Store: st, Logs: &SyncBuffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", e.Logs.String())
		}
	})
	ctx := context.Background()
	secret, err := auth.LoadSecret(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	e.Auth = auth.NewService(st, secret)
	e.Auth.Argon = CheapArgon
	log := slog.New(slog.NewJSONHandler(e.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg := metrics.NewRegistry()
	m := httpkit.NewMetrics(reg)
	e.API = api.New(app.New(st, e.Auth, log, reg), api.Info{Version: "test", Build: "test", ServerID: 1, DataDir: cfg.DataDir,
		Hostname: "test"}, m)
	// /metrics on the API listener, as `serve --metrics-listen api`, so
	// that a test scrapes what it did through the same client.
	e.API.ServeMetrics()
	e.HTTP = httptest.NewServer(e.API)
	t.Cleanup(e.HTTP.Close)
	an := analytics.New(st, e.Auth, log, m)
	an.Footfall = e.API.Telemetry
	e.Analytics = httptest.NewServer(an)
	t.Cleanup(e.Analytics.Close)

	admin, err := auth.EnsureAPIUser(ctx, st, "admin", "SUPERUSER", wnms.OnPremCustomer)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := st.APIKeys(ctx, admin.CustomerID)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		k, v, err := e.Auth.NewKey(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		e.AdminKeyID, e.AdminKeyValue = k.KeyID, v
	}
	if e.AdminKeyID != "" {
		e.Admin = e.LoginKey(t, e.AdminKeyID, e.AdminKeyValue)
	}
	return e
}

// Client is an HTTP client of one listener (the main one unless made by
// AnalyticsClient) with its own cookie jar.
// Every response it receives is checked against the OpenAPI document.
type Client struct {
	t    testing.TB
	env  *Env
	http *http.Client
	base string
	// listener is the listener base belongs to: its error envelope and
	// calls are what responses are checked against.
	listener Listener
	// Header is sent with every request.
	Header http.Header
	// User is the user the client logged in as, if any.
	User *wnms.User
}

// NewClient returns a client with no session.
func (e *Env) NewClient() *Client {
	jar, _ := cookiejar.New(nil)
	return &Client{t: e.T, env: e, http: &http.Client{Jar: jar}, base: e.HTTP.URL, Header: http.Header{}}
}

// Remote returns a client, logged in with the key, of the main listener
// of a server running elsewhere (base is http://host:port); its exchanges
// are checked against the OpenAPI document like any other.
func Remote(t testing.TB, base, keyID, keyValue string) *Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &Client{t: t, http: &http.Client{Jar: jar}, base: base, Header: http.Header{}}
	r := c.Expect(http.StatusOK, "POST", "/login/key/test/3600",
		map[string]string{"type": "apikeycredentials", "keyId": keyID, "keyValue": keyValue})
	var u wnms.User
	r.Decode(t, &u)
	c.User = &u
	return c
}

// AnalyticsClient returns a client of the analytics listener sharing c's
// cookies (the analytics listener accepts the main listener's session).
func (c *Client) AnalyticsClient() *Client {
	jar, _ := cookiejar.New(nil)
	ac := &Client{t: c.t, env: c.env, http: &http.Client{Jar: jar}, base: c.env.Analytics.URL, listener: AnalyticsListener,
		Header: c.Header.Clone(), User: c.User}
	if tok := c.Session(); tok != "" {
		ac.SetSession(tok)
	}
	return ac
}

// WithT returns a copy of c, sharing its session, that reports to t: a
// fuzz target must report to the *testing.T it is given.
func (c *Client) WithT(t testing.TB) *Client {
	cc := *c
	cc.t = t
	return &cc
}

// Session returns the client's JSESSIONID, or "".
func (c *Client) Session() string {
	u, _ := http.NewRequest("GET", c.env.HTTP.URL+"/", nil)
	for _, ck := range c.http.Jar.Cookies(u.URL) {
		if ck.Name == httpkit.SessionCookie {
			return ck.Value
		}
	}
	return ""
}

// SetSession makes the client send the given JSESSIONID.
func (c *Client) SetSession(token string) {
	c.Header.Set("Cookie", httpkit.SessionCookie+"="+token)
}

// Response is a received response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Decode unmarshals the body into v, failing the test on error.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", trim(r.Body), err)
	}
}

// ErrorCode returns the errorCode of an error body, or "".
func (r *Response) ErrorCode() string {
	var b struct {
		Errors []struct {
			ErrorCode string `json:"errorCode"`
		} `json:"errors"`
		Data []struct {
			ErrorCode string `json:"errorCode"`
		} `json:"data"`
	}
	if json.Unmarshal(r.Body, &b) != nil {
		return ""
	}
	if len(b.Errors) > 0 {
		return b.Errors[0].ErrorCode
	}
	if len(b.Data) > 0 {
		return b.Data[0].ErrorCode
	}
	return ""
}

// MoreInfo returns the moreInfo of an error body, or "".
func (r *Response) MoreInfo() string {
	var b struct {
		Errors []struct {
			MoreInfo string `json:"moreInfo"`
		} `json:"errors"`
	}
	if json.Unmarshal(r.Body, &b) != nil || len(b.Errors) == 0 {
		return ""
	}
	return b.Errors[0].MoreInfo
}

// Raw is a request body sent as is, with its content type.
type Raw struct {
	ContentType string
	Body        []byte
}

// Do sends a request. path is below /new/webservice unless it starts with
// "/new/", "/api/" or names an operational endpoint. body is nil, a Raw,
// or a value sent as JSON.
func (c *Client) Do(method, path string, body any) *Response {
	c.t.Helper()
	full := path
	if !strings.HasPrefix(path, "/new/") && !strings.HasPrefix(path, "/api/") &&
		path != "/healthz" && path != "/readyz" && path != "/metrics" {
		full = api.BasePath + path
	}
	var rd io.Reader
	var raw []byte
	ct := ""
	switch b := body.(type) {
	case nil:
	case Raw:
		raw, ct = b.Body, b.ContentType
	case []byte:
		raw, ct = b, "application/json"
	case string:
		raw, ct = []byte(b), "application/json"
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		raw, ct = j, "application/json"
	}
	if raw != nil {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.base+full, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, full, err)
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	r := &Response{Status: resp.StatusCode, Header: resp.Header, Body: rb}
	if strings.EqualFold(req.Header.Get("Content-Encoding"), "gzip") && raw != nil {
		// The document describes the body the server reads: inflated.
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err == nil {
			raw, err = io.ReadAll(zr)
		}
		if err != nil {
			raw = nil // the server refused it; there is no request to check
		}
	}
	c.check(method, strings.SplitN(full, "?", 2)[0], r, raw, ct)
	return r
}

// check validates the exchange against the OpenAPI document.
func (c *Client) check(method, path string, r *Response, reqBody []byte, ct string) {
	c.t.Helper()
	v, err := OpenAPI()
	if err != nil {
		c.t.Fatalf("openapi document: %v", err)
	}
	if err := v.CheckResponseOn(c.listener, method, path, r.Status, r.Header, r.Body); err != nil {
		c.t.Errorf("%v", err)
	}
	// Every answer but the console's page and files, and the layout files
	// of sfiles (named by their content, privately cacheable), is not to
	// be kept by a browser or a proxy (components.headers.CacheControl).
	if path != "/" && !strings.HasPrefix(path, "/console/") && !strings.HasSuffix(path, "/sfiles") {
		if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
			c.t.Errorf("%s %s %d: Cache-Control %q, want no-store", method, path, r.Status, cc)
		}
	}
	if r.Status < 300 && reqBody != nil && strings.HasPrefix(ct, "application/json") {
		if err := v.CheckRequestOn(c.listener, method, path, reqBody); err != nil {
			c.t.Errorf("%v", err)
		}
	}
}

// Expect sends a request and fails the test unless the status is want.
func (c *Client) Expect(want int, method, path string, body any) *Response {
	c.t.Helper()
	r := c.Do(method, path, body)
	if r.Status != want {
		c.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.Status, want, trim(r.Body))
	}
	return r
}

// LoginKey opens a session with an API key.
func (e *Env) LoginKey(t testing.TB, keyID, keyValue string) *Client {
	t.Helper()
	c := e.NewClient()
	c.t = t
	r := c.Expect(http.StatusOK, "POST", "/login/key/test/3600",
		map[string]string{"type": "apikeycredentials", "keyId": keyID, "keyValue": keyValue})
	var u wnms.User
	r.Decode(t, &u)
	c.User = &u
	return c
}

// UserSpec describes a user to create for a test.
type UserSpec struct {
	Login     string
	Role      wnms.Role
	Customer  int64   // default 1
	Locations []int64 // default [0]
	Type      string  // default API
	Password  string  // for LOCAL users
}

// NewUser creates a user directly in the store. API users are logged in
// with a new key; the client is nil for other types.
func (e *Env) NewUser(t testing.TB, s UserSpec) (*wnms.User, *Client) {
	t.Helper()
	ctx := context.Background()
	if s.Customer == 0 {
		s.Customer = wnms.OnPremCustomer
	}
	if s.Locations == nil {
		s.Locations = []int64{wnms.RootLocation}
	}
	if s.Type == "" {
		s.Type = wnms.UserTypeAPI
	}
	if s.Login == "" {
		s.Login = fmt.Sprintf("u-%s-%s", strings.ToLower(string(s.Role)), auth.RandomToken(4))
	}
	if err := e.Store.EnsureCustomer(ctx, s.Customer, fmt.Sprintf("customer %d", s.Customer)); err != nil {
		t.Fatal(err)
	}
	nu := wnms.NewUser(s.Customer)
	u := &nu
	u.LoginID, u.Role, u.UserType = s.Login, s.Role, s.Type
	for _, id := range s.Locations {
		u.AllowedLocations = append(u.AllowedLocations, wnms.LocalID(id))
	}
	var hash string
	if s.Password != "" {
		h, err := auth.HashPassword(s.Password, CheapArgon)
		if err != nil {
			t.Fatal(err)
		}
		hash = h
	}
	if err := e.Store.CreateUser(ctx, u, hash); err != nil {
		t.Fatal(err)
	}
	if s.Type != wnms.UserTypeAPI {
		return u, nil
	}
	k, v, err := e.Auth.NewKey(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	return u, e.LoginKey(t, k.KeyID, v)
}

// NewLocation creates a location under parent directly in the store.
func (e *Env) NewLocation(t testing.TB, parent int64, typ, name string, customer int64) *wnms.Location {
	t.Helper()
	if customer == 0 {
		customer = wnms.OnPremCustomer
	}
	p := wnms.LocalID(parent)
	l := &wnms.Location{Type: typ, Name: name, ParentID: &p, TimezoneID: "UTC", CustomerID: customer}
	if err := e.Store.EnsureCustomer(context.Background(), customer, fmt.Sprintf("customer %d", customer)); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.CreateLocation(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	return l
}
