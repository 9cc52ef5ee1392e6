// Package benchserver runs the wnms API inside a benchmark's process, on a
// loopback port, with the real listener kit and handlers over a store.
package benchserver

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/api"
	"github.com/wnms/wnms/internal/app"
	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/wnms"
)

// Server is a running API.
type Server struct {
	Store  *store.Store
	Auth   *auth.Service
	API    *api.Server
	Secret []byte
	Log    *slog.Logger // errors only
	Base   string       // http://127.0.0.1:port/new/webservice

	handled handled
}

// maxHandled bounds the handling times a Server keeps between two calls
// of Handled; past it they are not kept.
const maxHandled = 1 << 16

// handled is how long the API's handler took for each call whose path
// contains one of the substrings asked about.
type handled struct {
	mu    sync.Mutex
	paths []string
	took  map[string][]time.Duration
}

// TimeHandling starts keeping, for Handled, how long the server takes to
// handle each call whose path contains one of paths: from the handler's
// start to its return, in the server's process, so without the waits
// for a connection's goroutine to run and for the caller to read.
func (s *Server) TimeHandling(paths ...string) {
	s.handled.mu.Lock()
	defer s.handled.mu.Unlock()
	s.handled.paths = paths
	s.handled.took = map[string][]time.Duration{}
}

// Handled returns and forgets the handling times kept for path (one of
// TimeHandling's), in no particular order.
func (s *Server) Handled(path string) []time.Duration {
	s.handled.mu.Lock()
	defer s.handled.mu.Unlock()
	out := s.handled.took[path]
	delete(s.handled.took, path)
	return out
}

// ServeHTTP serves the API, timing the calls TimeHandling asked for.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	s.API.ServeHTTP(w, r)
	took := time.Since(start)
	h := &s.handled
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.paths {
		if strings.Contains(r.URL.Path, p) && len(h.took[p]) < maxHandled {
			h.took[p] = append(h.took[p], took)
		}
	}
}

// OpenStore opens a serving store on the PostgreSQL of databaseURL, or
// (empty) on SQLite in a new temporary directory named after name;
// closing it removes that directory.
func OpenStore(ctx context.Context, databaseURL, name string) (st *store.Store, closeStore func(), err error) {
	cfg := store.Config{DatabaseURL: databaseURL, Serving: true}
	cleanup := func() {}
	if databaseURL == "" {
		dir, err := os.MkdirTemp("", name)
		if err != nil {
			return nil, nil, err
		}
		cfg.DataDir, cleanup = dir, func() { os.RemoveAll(dir) }
	}
	if st, err = store.Open(ctx, cfg); err != nil {
		cleanup()
		return nil, nil, err
	}
	return st, func() { st.Close(); cleanup() }, nil
}

// Start serves the API over st until the process ends.
func Start(ctx context.Context, st *store.Store) (*Server, error) {
	secret, err := auth.LoadSecret(ctx, st)
	if err != nil {
		return nil, err
	}
	a := auth.NewService(st, secret)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	reg := metrics.NewRegistry()
	srv := api.New(app.New(st, a, log, reg), api.Info{Version: "bench", ServerID: 1}, httpkit.NewMetrics(reg))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{Store: st, Auth: a, API: srv, Secret: secret, Log: log,
		Base: "http://" + ln.Addr().String() + "/new/webservice"}
	go http.Serve(ln, s)
	return s, nil
}

// Key makes a new API key of the SUPERUSER "bench" and returns its id
// and value.
func (s *Server) Key(ctx context.Context) (id, value string, err error) {
	u, err := auth.EnsureAPIUser(ctx, s.Store, "bench", "SUPERUSER", wnms.OnPremCustomer)
	if err != nil {
		return "", "", err
	}
	k, v, err := s.Auth.NewKey(ctx, u)
	if err != nil {
		return "", "", err
	}
	return k.KeyID, v, nil
}

// ParentKey makes a new cluster parent's key (wnms apikey create
// --cluster-parent) of the SUPERUSER "bench" and returns its id and value.
func (s *Server) ParentKey(ctx context.Context) (id, value string, err error) {
	u, err := auth.EnsureAPIUser(ctx, s.Store, "bench", "SUPERUSER", wnms.OnPremCustomer)
	if err != nil {
		return "", "", err
	}
	k, v, err := s.Auth.NewClusterParentKey(ctx, u)
	if err != nil {
		return "", "", err
	}
	return k.KeyID, v, nil
}

// Session logs in with a new key of the SUPERUSER "bench" and returns the
// session cookie's value.
func (s *Server) Session(ctx context.Context, c *http.Client) (string, error) {
	return s.SessionWith(ctx, c, "")
}

// SessionWith is Session with a query on the login call
// ("?getClusterChildrenData=true").
func (s *Server) SessionWith(ctx context.Context, c *http.Client, query string) (string, error) {
	id, value, err := s.Key(ctx)
	if err != nil {
		return "", err
	}
	body, _ := json.Marshal(map[string]string{"type": "apikeycredentials", "keyId": id, "keyValue": value})
	resp, err := c.Post(s.Base+"/login/key/bench/86400"+query, "application/json", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	for _, ck := range resp.Cookies() {
		if ck.Name == "JSESSIONID" {
			return ck.Value, nil
		}
	}
	return "", fmt.Errorf("login: %s", resp.Status)
}

// CreateDatabase makes the PostgreSQL database name beside the one of
// base (a URL) and returns its URL.
func CreateDatabase(ctx context.Context, base, name string) (string, error) {
	db, err := sql.Open("pgx", base)
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}
