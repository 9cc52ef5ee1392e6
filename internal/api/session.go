package api

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// Login type names (matched case-insensitively).
const (
	typeAPIKey   = "apikeycredentials"
	typePassword = "usernamepasswordcredentials"
)

// Session timeout bounds in seconds (api.md §2).
const (
	MinSessionTimeout = 60
	MaxSessionTimeout = 86400
)

// loginBody is the body of both login calls.
type loginBody struct {
	Type     string `json:"type"`
	KeyID    string `json:"keyId"`
	KeyValue string `json:"keyValue"`
	Username string `json:"username"`
	Password string `json:"password"`
}

// loginParams are the path and query parameters of a login.
type loginParams struct {
	ClientIdentifier string
	Timeout          int
	ClusterChildren  bool
}

func parseLoginParams(r *http.Request) (loginParams, error) {
	var p loginParams
	p.ClientIdentifier = r.PathValue("clientidentifier")
	if n := utf8.RuneCountInString(p.ClientIdentifier); n < 1 || n > 20 {
		return p, wnms.ParamError("clientidentifier", "clientidentifier must be 1 to 20 characters")
	}
	t, err := strconv.Atoi(r.PathValue("timeout"))
	if err != nil {
		return p, wnms.ParamError("timeout", "timeout must be an integer number of seconds")
	}
	if t < MinSessionTimeout || t > MaxSessionTimeout {
		return p, wnms.ParamError("timeout", "timeout must be %d to %d seconds", MinSessionTimeout, MaxSessionTimeout)
	}
	p.Timeout = t
	p.ClusterChildren, err = httpkit.QueryBool(r, "getClusterChildrenData", false)
	return p, err
}

// loginKey is POST /login/key/{clientidentifier}/{timeout}: API keys only.
func (s *Server) loginKey(w http.ResponseWriter, r *http.Request) error {
	return s.doLogin(w, r, true)
}

// login is POST /login/{clientidentifier}/{timeout}: an API key or a LOCAL
// user's name and password.
func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	return s.doLogin(w, r, false)
}

func (s *Server) doLogin(w http.ResponseWriter, r *http.Request, keyOnly bool) error {
	p, err := parseLoginParams(r)
	if err != nil {
		return err
	}
	addr := clientAddr(r)
	var b loginBody
	if err := httpkit.DecodeJSON(w, r, &b, 64<<10); err != nil {
		return err
	}
	req := auth.LoginRequest{ClientIdentifier: p.ClientIdentifier, Timeout: p.Timeout,
		ClusterChildren: p.ClusterChildren, Addr: addr}
	var l *auth.Login
	switch t := strings.ToLower(b.Type); {
	case t == "":
		return wnms.Invalid("type", "required: %s or %s", typeAPIKey, typePassword)
	case t == typeAPIKey:
		if b.KeyID == "" {
			return wnms.Invalid("keyId", "required")
		}
		if b.KeyValue == "" {
			return wnms.Invalid("keyValue", "required")
		}
		l, err = s.Auth.LoginKey(r.Context(), req, b.KeyID, b.KeyValue)
	case t == typePassword && !keyOnly:
		if b.Username == "" {
			return wnms.Invalid("username", "required")
		}
		if b.Password == "" {
			return wnms.Invalid("password", "required")
		}
		l, err = s.Auth.LoginPassword(r.Context(), req, b.Username, b.Password)
	default:
		return wnms.Errorf(wnms.UnsupportedAuthType, "authentication type %q is not supported on this call", b.Type)
	}
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: httpkit.SessionCookie, Value: l.Token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.Info.TLS})
	body, err := loginResponse(l)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, body)
	return nil
}

// loginResponse is the caller's User plus the fields real clients read
// after login (api.md §2).
func loginResponse(l *auth.Login) (map[string]any, error) {
	b, err := json.Marshal(l.User)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["loginName"] = l.User.LoginID
	m["primaryEmailAddress"] = l.User.Email
	m["userRoleId"] = l.User.Role.Rank()
	if l.Session.KeyID != "" {
		m["keyId"] = l.Session.KeyID
	}
	m["sessionTimeout"] = l.Session.Timeout
	m["clientIdentifier"] = l.Session.ClientIdentifier
	m["getClusterChildrenData"] = l.Session.ClusterChildren
	return m, nil
}

// clientAddr is the source address of the request, without the port.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// logout is POST /logout: the session ends at once, on every replica.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	if err := s.Auth.Logout(r.Context(), c); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: httpkit.SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.Info.TLS})
	return okEmpty(w)
}

// keepAlive is GET or POST /login/keepsessionalive.
func (s *Server) keepAlive(w http.ResponseWriter, r *http.Request) error {
	if err := s.Auth.KeepAlive(r.Context(), wnms.CallerFrom(r.Context())); err != nil {
		return err
	}
	return okEmpty(w)
}
