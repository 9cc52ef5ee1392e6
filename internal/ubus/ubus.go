package ubus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultSID is the session id rpcd gives everyone before login; its ACL
// (the "unauthenticated" access group) allows session login.
const DefaultSID = "00000000000000000000000000000000"

// DefaultTimeout bounds one HTTP exchange with the AP when Client.Timeout
// is zero. The context's own deadline applies too, whichever comes first.
const DefaultTimeout = 10 * time.Second

// Client talks to one AP's rpcd through uhttpd-mod-ubus. Set the exported
// fields before the first call and do not change them after; a Client is
// safe for concurrent use and must not be copied after first use.
//
// A Client logs in (session login) on its first call and keeps the
// session. When rpcd answers a call "access denied", which is also its
// answer for a session that expired or was lost in a reboot, the Client
// logs in once more and repeats the call once; a second refusal is
// ErrAccessDenied. So an object outside the ACL costs one extra login per
// call.
type Client struct {
	// URL is the ubus endpoint, e.g. "http://192.168.1.1/ubus"; events
	// are read from URL + "/subscribe/<object>".
	URL string
	// Username and Password are a login of /etc/config/rpcd.
	Username, Password string
	// HTTP does the exchanges (nil: http.DefaultClient). Its Timeout, if
	// any, also ends event streams: leave it zero and rely on contexts.
	HTTP *http.Client
	// Timeout bounds each HTTP exchange of Call, List and Login (0:
	// DefaultTimeout). Subscribe's stream is bounded by its context only.
	Timeout time.Duration
	// SessionTimeout is the idle time after which rpcd drops the session,
	// asked for at login (0: rpcd's default, 300 s).
	SessionTimeout time.Duration

	mu      sync.Mutex
	session Session // zero before the first login

	loginMu sync.Mutex // one login at a time
	nextID  atomic.Uint64
}

// Session is rpcd's answer to session login (rpcd session.c,
// rpc_session_dump).
type Session struct {
	ID      string `json:"ubus_rpc_session"`
	Timeout int    `json:"timeout"` // seconds of idleness before rpcd drops it
	Expires int    `json:"expires"` // seconds left when rpcd answered
	// ACLs is scope ("ubus", "access-group", "uci", ...) → object pattern
	// → functions.
	ACLs map[string]map[string][]string `json:"acls"`
	Data map[string]any                 `json:"data"`
}

// Object is one ubus object as list describes it: its methods, each with
// its arguments and their types ("string", "number", "boolean", "array",
// "object").
type Object struct {
	Path    string
	Methods map[string]map[string]string
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// Login starts a new session with Username and Password and keeps it for
// the calls that follow. It returns ErrLoginFailed when rpcd refuses the
// credentials, and the errors of Call otherwise.
func (c *Client) Login(ctx context.Context) (Session, error) {
	c.loginMu.Lock()
	defer c.loginMu.Unlock()
	return c.login(ctx)
}

// login runs with loginMu held.
func (c *Client) login(ctx context.Context) (Session, error) {
	args := map[string]any{"username": c.Username, "password": c.Password}
	if c.SessionTimeout > 0 {
		// rpcd counts whole seconds, and 0 would mean a session that
		// never expires.
		args["timeout"] = max(1, int(c.SessionTimeout/time.Second))
	}
	var s Session
	err := c.exchange(ctx, "login", DefaultSID, "session", "login", args, &s)
	var e *Error
	if errors.As(err, &e) && e.Kind == ErrAccessDenied && e.Code == statusPermission {
		e.Kind = ErrLoginFailed
	}
	if err != nil {
		return Session{}, err
	}
	if len(s.ID) != len(DefaultSID) || s.ID == DefaultSID {
		return Session{}, &Error{Op: "login", Kind: ErrBadReply, Err: fmt.Errorf("session id %q", s.ID)}
	}
	c.mu.Lock()
	c.session = s
	c.mu.Unlock()
	return s, nil
}

// Session gives the session in use, and false before the first login.
func (c *Client) Session() (Session, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session, c.session.ID != ""
}

// sid gives the session id to use, logging in when there is none; fresh
// says the login happened now. A stale id, when not empty, is one the AP
// refused: a new login replaces it unless another call already did.
func (c *Client) sid(ctx context.Context, stale string) (id string, fresh bool, err error) {
	c.mu.Lock()
	id = c.session.ID
	c.mu.Unlock()
	if id != "" && id != stale {
		return id, false, nil
	}
	c.loginMu.Lock()
	defer c.loginMu.Unlock()
	c.mu.Lock()
	id = c.session.ID
	c.mu.Unlock()
	if id != "" && id != stale {
		return id, false, nil
	}
	s, err := c.login(ctx)
	return s.ID, true, err
}

// Call calls method of object with args (a struct or map that encodes to a
// JSON object; nil is {}) and decodes the reply's data into out (a
// pointer; nil discards it). It logs in when it has no session, and once
// more if rpcd refuses the session.
//
// Errors are *Error, of kind ErrAccessDenied, ErrLoginFailed, ErrNotFound,
// ErrTimeout, ErrInvalidArgument, ErrBadReply, ErrHTTPStatus, ErrCanceled
// or ErrUnreachable.
func (c *Client) Call(ctx context.Context, object, method string, args, out any) error {
	op := "call " + object + " " + method
	sid, fresh, err := c.sid(ctx, "")
	if err != nil {
		return err
	}
	err = c.exchange(ctx, op, sid, object, method, args, out)
	if fresh || !errors.Is(err, ErrAccessDenied) {
		return err
	}
	sid, _, err = c.sid(ctx, sid)
	if err != nil {
		return err
	}
	return c.exchange(ctx, op, sid, object, method, args, out)
}

// request is one JSON-RPC request to uhttpd: method "call" with params
// [session, object, method, args], or "list" with params [pattern, ...].
type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      uint64 `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

// exchange makes one call with session sid.
func (c *Client) exchange(ctx context.Context, op, sid, object, method string, args, out any) error {
	if args == nil {
		args = struct{}{}
	}
	a, err := json.Marshal(args)
	if err != nil || len(a) == 0 || a[0] != '{' {
		// uhttpd answers a call whose arguments are not an object with a
		// parse error; say so before asking.
		return &Error{Op: op, Kind: ErrInvalidArgument, Err: fmt.Errorf("arguments must encode to a JSON object (%v)", err)}
	}
	id := c.nextID.Add(1)
	body, err := c.post(ctx, op, request{JSONRPC: "2.0", ID: id, Method: "call",
		Params: []any{sid, object, method, json.RawMessage(a)}})
	if err != nil {
		return err
	}
	return decodeCall(op, body, id, out)
}

// List lists the objects whose path matches pattern (a glob such as
// "hostapd.*", as ubus list takes), sorted by path. uhttpd answers list
// without a session. Errors are those of Call.
func (c *Client) List(ctx context.Context, pattern string) ([]Object, error) {
	op := "list " + pattern
	id := c.nextID.Add(1)
	body, err := c.post(ctx, op, request{JSONRPC: "2.0", ID: id, Method: "list", Params: []any{pattern}})
	if err != nil {
		return nil, err
	}
	objects, err := decodeList(op, body, id)
	if err != nil {
		return nil, err
	}
	list := make([]Object, 0, len(objects))
	for path, methods := range objects {
		list = append(list, Object{Path: path, Methods: methods})
	}
	slices.SortFunc(list, func(a, b Object) int { return strings.Compare(a.Path, b.Path) })
	return list, nil
}

// HostapdInterfaces gives the interfaces hostapd serves (the <if> of its
// hostapd.<if> objects), sorted. Interfaces change when the AP reboots or
// its wireless configuration is reloaded. Errors are those of Call.
func (c *Client) HostapdInterfaces(ctx context.Context) ([]string, error) {
	objects, err := c.List(ctx, "hostapd.*")
	if err != nil {
		return nil, err
	}
	var ifaces []string
	for _, o := range objects {
		if name, ok := strings.CutPrefix(o.Path, "hostapd."); ok && name != "" {
			ifaces = append(ifaces, name)
		}
	}
	return ifaces, nil
}

// post sends one JSON-RPC request and reads the reply body, capped at
// MaxReplyBytes, within Timeout.
func (c *Client) post(ctx context.Context, op string, r request) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	b, err := json.Marshal(r)
	if err != nil {
		return nil, &Error{Op: op, Kind: ErrInvalidArgument, Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(b))
	if err != nil {
		return nil, &Error{Op: op, Kind: ErrUnreachable, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, transportError(ctx, op, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// Read a little so the connection can be reused, never more.
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
		return nil, &Error{Op: op, Kind: ErrHTTPStatus, HTTPStatus: resp.StatusCode}
	}
	body, err := readCapped(resp.Body, MaxReplyBytes)
	if isTooLarge(err) {
		return nil, &Error{Op: op, Kind: ErrBadReply, Err: err}
	}
	if err != nil {
		return nil, transportError(ctx, op, err)
	}
	return body, nil
}

// transportError classifies a failed HTTP exchange: the context's end,
// a network timeout, or no exchange at all.
func transportError(ctx context.Context, op string, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return &Error{Op: op, Kind: ErrTimeout, Err: context.DeadlineExceeded}
	case errors.Is(ctx.Err(), context.Canceled) || errors.Is(err, context.Canceled):
		return &Error{Op: op, Kind: ErrCanceled, Err: context.Canceled}
	}
	var t interface{ Timeout() bool }
	if errors.As(err, &t) && t.Timeout() {
		return &Error{Op: op, Kind: ErrTimeout, Err: err}
	}
	return &Error{Op: op, Kind: ErrUnreachable, Err: err}
}
