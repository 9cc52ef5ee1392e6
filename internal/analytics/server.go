// Package analytics is the second listener of wnms: location analytics
// under /api/v1.N, with its own error envelope. It accepts the JSESSIONID
// session of the main listener.
package analytics

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/wnms"
)

// Server is the analytics listener's handler.
type Server struct {
	Store wnms.Store
	Auth  *auth.Service
	Log   *slog.Logger

	root  *http.ServeMux
	calls *http.ServeMux
}

// New builds the analytics server.
func New(st wnms.Store, a *auth.Service, log *slog.Logger) *Server {
	s := &Server{Store: st, Auth: a, Log: log, root: http.NewServeMux(), calls: http.NewServeMux()}
	s.routes()
	s.calls.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, wnms.NotFound("no such path: %s", r.URL.Path))
	})
	s.root.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.root.HandleFunc("/api/", s.dispatch)
	s.root.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, wnms.NotFound("no such path: %s", r.URL.Path))
	})
	return s
}

// routes lists the analytics calls, below /api/v1.N.
func (s *Server) routes() {
	s.handle("GET /session", s.session)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.Log.Error("panic in analytics handler", "path", r.URL.Path, "panic", p)
			s.writeError(w, r, errors.New("panic"))
		}
	}()
	s.root.ServeHTTP(w, r)
}

// isVersion reports whether seg is v1.N.
func isVersion(seg string) bool {
	rest, ok := strings.CutPrefix(strings.ToLower(seg), "v1.")
	if !ok || rest == "" {
		return false
	}
	_, err := strconv.Atoi(rest)
	return err == nil
}

func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/api/")
	seg, after, _ := strings.Cut(rest, "/")
	if !isVersion(seg) {
		s.writeError(w, r, wnms.NotFound("no such path: %s (expected /api/v1.N/...)", r.URL.Path))
		return
	}
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path, u.RawPath = "/"+after, ""
	r2.URL = &u
	s.calls.ServeHTTP(w, r2)
}

type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle registers a call that needs a session of any role.
func (s *Server) handle(pattern string, h handlerFunc) {
	s.calls.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		var token string
		if ck, err := r.Cookie("JSESSIONID"); err == nil {
			token = ck.Value
		}
		c, err := s.Auth.Authenticate(r.Context(), token)
		if err == nil && c.Session.PasswordChange {
			err = wnms.Errorf(wnms.AccessDenied, "the password has expired; change it first")
		}
		if err == nil {
			err = h(w, r.WithContext(wnms.WithCaller(r.Context(), c)))
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
}

// session answers who the session belongs to: a cheap check that a main
// listener session works here.
func (s *Server) session(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "",
		"data": map[string]any{"loginId": c.User.LoginID, "role": c.User.Role}})
	return nil
}

// errorEnvelope is the analytics error body of decisions.md §3.
type errorEnvelope struct {
	Success bool          `json:"success"`
	Message string        `json:"message"`
	Data    []errorDetail `json:"data"`
}

type errorDetail struct {
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *wnms.Error
	if !errors.As(err, &e) {
		s.Log.Error("analytics request failed", "path", r.URL.Path, "error", err.Error())
		e = wnms.Errorf(wnms.InternalError, "internal error; see the server log")
	}
	writeJSON(w, e.Status(), errorEnvelope{Success: false, Message: e.Message,
		Data: []errorDetail{{ErrorCode: e.Code, Message: e.Message}}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"success":false,"message":"encoding failed","data":[]}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}
