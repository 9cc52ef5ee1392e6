// Package ubustest is an OpenWrt AP for tests: an httptest server that
// speaks rpcd's JSON-RPC as uhttpd-mod-ubus serves it at /ubus and
// uhttpd's event stream at /ubus/subscribe/<object>, answering with the
// recorded replies of a real device (testdata/rax3000m, a CMCC RAX3000M)
// and, where no recording exists, with replies written from OpenWrt's
// source (testdata/source; testdata/README.md says which is which).
//
// What it serves, for each interface of Config.Interfaces (all served
// from the recordings of phy0-ap0): hostapd.<if> get_clients and
// get_status, and events; iwinfo devices, and info, assoclist and survey
// for {"device": <if>}; session login; list. Like uhttpd, it looks the
// object up before it checks the session's ACL (-32000 for a missing
// object, -32002 for a missing, expired or refused session) and answers
// a call's own failures as a ubus status in the result array ([4] for an
// unknown iwinfo device, [3] for an unknown method, [6] for a wrong
// password). Batched requests (a JSON array) are not served.
//
// Tests steer it: ExpireSessions, Reboot, SetDelay, SetGarbage,
// SetHTTPStatus, SetReply and SetStatus, and Publish to push events; they
// observe it with Requests and WaitSubscribers.
package ubustest

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:embed testdata/rax3000m/*.json testdata/source/*.json testdata/source/*.txt
var files embed.FS

// File gives a file of testdata by its path there, e.g.
// "rax3000m/hostapd_get_status.json"; it panics if there is none.
func File(name string) []byte {
	b, err := files.ReadFile("testdata/" + name)
	if err != nil {
		panic(err)
	}
	return b
}

// The login the server accepts unless Config says otherwise.
const (
	Username = "wnms"
	Password = "wnms-secret"
)

// DefaultSID is the session id of everyone who has not logged in; its ACL
// allows session login only.
const DefaultSID = "00000000000000000000000000000000"

// DefaultACL is what a login may call: the "ubus" scope of an rpcd ACL,
// object pattern → method patterns (fnmatch, as rpcd matches them).
var DefaultACL = map[string][]string{
	"hostapd.*": {"get_clients", "get_status", ":subscribe"},
	"iwinfo":    {"devices", "info", "assoclist", "survey"},
}

// Config sets up a Server; the zero Config is the defaults.
type Config struct {
	Username, Password string              // default Username, Password
	SessionTimeout     time.Duration       // idle time before a session is dropped; default 300 s
	Interfaces         []string            // hostapd's interfaces; default phy0-ap0
	ACL                map[string][]string // default DefaultACL
}

type key struct{ object, method string }

type reply struct {
	data   []byte
	status int
}

type session struct {
	expires time.Time
	timeout time.Duration
}

type stream struct {
	object string
	ch     chan []byte
	kill   chan struct{} // closed by Reboot: the object went away
	gone   chan struct{} // closed when the handler returns
}

// Server is a running fake AP. Its methods are safe for concurrent use.
type Server struct {
	// URL is the ubus endpoint, for ubus.Client.URL.
	URL string

	srv *httptest.Server
	cfg Config

	mu         sync.Mutex
	sessions   map[string]*session
	ifaces     []string
	replies    map[key]reply
	delay      time.Duration
	garbage    []byte
	httpStatus int
	counts     map[key]int
	streams    map[*stream]struct{}
	changed    chan struct{} // closed and replaced when streams change
	done       chan struct{}
	closed     bool
}

// New starts a Server, closed when the test ends.
func New(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	if cfg.Username == "" && cfg.Password == "" {
		cfg.Username, cfg.Password = Username, Password
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 300 * time.Second
	}
	if cfg.Interfaces == nil {
		cfg.Interfaces = []string{"phy0-ap0"}
	}
	if cfg.ACL == nil {
		cfg.ACL = DefaultACL
	}
	s := &Server{
		cfg:      cfg,
		sessions: map[string]*session{},
		ifaces:   slices.Clone(cfg.Interfaces),
		replies:  map[key]reply{},
		counts:   map[key]int{},
		streams:  map[*stream]struct{}{},
		changed:  make(chan struct{}),
		done:     make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /ubus", s.handleRPC)
	mux.HandleFunc("GET /ubus/subscribe/{object}", s.handleSubscribe)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL + "/ubus"
	tb.Cleanup(s.Close)
	return s
}

// Client gives an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Close ends the open event streams and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	s.srv.Close()
}

// ExpireSessions drops every session, as rpcd does when they time out.
func (s *Server) ExpireSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.sessions)
}

// Reboot drops every session, ends the open event streams (as uhttpd does
// when hostapd removes the object) and gives hostapd the interfaces
// ifaces from now on.
func (s *Server) Reboot(ifaces ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.sessions)
	s.ifaces = slices.Clone(ifaces)
	for st := range s.streams {
		close(st.kill)
		delete(s.streams, st)
	}
	s.notify()
}

// SetDelay makes every answer wait d first (0: answer at once).
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// SetGarbage makes every JSON-RPC answer body b, with status 200 (nil:
// answer properly again).
func (s *Server) SetGarbage(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.garbage = slices.Clone(b)
}

// SetHTTPStatus makes every answer, JSON-RPC or event stream, an empty one
// with HTTP status code (0: answer properly again).
func (s *Server) SetHTTPStatus(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.httpStatus = code
}

// SetReply makes a call of object's method (once the ACL allows it)
// succeed with data, a JSON object, instead of the recording; the object
// then exists even if nothing else makes it. nil data removes the
// override.
func (s *Server) SetReply(object, method string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if data == nil {
		delete(s.replies, key{object, method})
		return
	}
	s.replies[key{object, method}] = reply{data: slices.Clone(data)}
}

// SetStatus makes a call of object's method answer ubus status (e.g. 4
// not found, 7 timeout) without data.
func (s *Server) SetStatus(object, method string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies[key{object, method}] = reply{status: status}
}

// Requests counts the requests for object's method so far: calls, and
// subscriptions as method ":subscribe"; list requests count as object ""
// and method "list"; session logins as "session", "login".
func (s *Server) Requests(object, method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[key{object, method}]
}

// Subscribers gives the number of open event streams of object.
func (s *Server) Subscribers(object string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for st := range s.streams {
		if st.object == object {
			n++
		}
	}
	return n
}

// WaitSubscribers waits until object has n open event streams, or ctx
// ends.
func (s *Server) WaitSubscribers(ctx context.Context, object string, n int) error {
	for {
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
		if got := s.Subscribers(object); got == n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%d streams of %s, waiting for %d: %w", s.Subscribers(object), object, n, ctx.Err())
		}
	}
}

// notify wakes WaitSubscribers; s.mu is held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Publish sends a notification of type typ with data (encoded to JSON) on
// every open event stream of object, as hostapd's ubus_notify reaches
// uhttpd, and gives the number of streams it went to.
func (s *Server) Publish(object, typ string, data any) int {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	return s.PublishRaw(object, "event: "+typ+"\ndata: "+string(b)+"\n\n")
}

// PublishRaw writes raw, as it is, on every open event stream of object,
// and gives the number of streams it went to.
func (s *Server) PublishRaw(object, raw string) int {
	s.mu.Lock()
	var to []*stream
	for st := range s.streams {
		if st.object == object {
			to = append(to, st)
		}
	}
	s.mu.Unlock()
	n := 0
	for _, st := range to {
		select {
		case st.ch <- []byte(raw):
			n++
		case <-st.gone:
		case <-st.kill:
		case <-s.done:
		}
	}
	return n
}

// wait sleeps the configured delay; false if the request or server ended
// first.
func (s *Server) wait(r *http.Request) bool {
	s.mu.Lock()
	d := s.delay
	s.mu.Unlock()
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.done:
	}
	return false
}

// The JSON-RPC errors of uhttpd ubus.c (json_errors).
var rpcErrors = map[int]string{
	-32700: "Parse error",
	-32600: "Invalid request",
	-32601: "Method not found",
	-32602: "Invalid parameters",
	-32603: "Internal error",
	-32000: "Object not found",
	-32001: "Session not found",
	-32002: "Access denied",
	-32003: "ubus request timed out",
}

func (s *Server) handleRPC(w http.ResponseWriter, r *http.Request) {
	if !s.wait(r) {
		return
	}
	s.mu.Lock()
	status, garbage := s.httpStatus, s.garbage
	s.mu.Unlock()
	if status != 0 {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if garbage != nil {
		w.Write(garbage)
		return
	}
	// uhttpd's UH_UBUS_MAX_POST_SIZE.
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10+1))
	var req struct {
		JSONRPC string            `json:"jsonrpc"`
		ID      json.RawMessage   `json:"id"`
		Method  *string           `json:"method"`
		Params  []json.RawMessage `json:"params"`
	}
	if err != nil || len(body) > 64<<10 || json.Unmarshal(body, &req) != nil || req.JSONRPC != "2.0" || req.Method == nil {
		writeError(w, req.ID, -32700)
		return
	}
	switch *req.Method {
	case "call":
		s.call(w, req.ID, req.Params)
	case "list":
		s.list(w, req.ID, req.Params)
	default:
		writeError(w, req.ID, -32601)
	}
}

func (s *Server) call(w http.ResponseWriter, id json.RawMessage, params []json.RawMessage) {
	var sid, object, method string
	var args map[string]json.RawMessage
	if len(params) < 4 || json.Unmarshal(params[0], &sid) != nil || json.Unmarshal(params[1], &object) != nil ||
		json.Unmarshal(params[2], &method) != nil || json.Unmarshal(params[3], &args) != nil || args == nil {
		writeError(w, id, -32700)
		return
	}
	s.mu.Lock()
	s.counts[key{object, method}]++
	exists := s.exists(object)
	allowed := s.allowed(sid, object, method)
	s.mu.Unlock()
	switch {
	case !exists:
		writeError(w, id, -32000)
		return
	case !allowed:
		writeError(w, id, -32002)
		return
	case args["ubus_rpc_session"] != nil:
		writeError(w, id, -32602)
		return
	}
	status, data := s.dispatch(object, method, args)
	result := []any{status}
	if data != nil {
		result = append(result, json.RawMessage(data))
	}
	writeResult(w, id, result)
}

// dispatch answers a call that uhttpd let through.
func (s *Server) dispatch(object, method string, args map[string]json.RawMessage) (int, []byte) {
	s.mu.Lock()
	rep, override := s.replies[key{object, method}]
	ifaces := slices.Clone(s.ifaces)
	s.mu.Unlock()
	if override {
		return rep.status, rep.data
	}
	switch {
	case object == "session" && method == "login":
		return s.login(args)
	case object == "iwinfo":
		if method == "devices" {
			b, _ := json.Marshal(map[string]any{"devices": ifaces})
			return 0, b
		}
		file := map[string]string{
			"info":      "rax3000m/iwinfo_info_phy0.json",
			"assoclist": "rax3000m/iwinfo_assoclist.json",
			"survey":    "rax3000m/iwinfo_survey_phy0.json",
		}[method]
		if file == "" {
			return 3, nil
		}
		// rpcd's iwinfo plugin (rpc_iwinfo_open): no device is an
		// invalid argument, an unknown one not found.
		var dev string
		if json.Unmarshal(args["device"], &dev) != nil {
			return 2, nil
		}
		if !slices.Contains(ifaces, dev) {
			return 4, nil
		}
		return 0, File(file)
	case strings.HasPrefix(object, "hostapd."):
		switch method {
		case "get_clients":
			return 0, File("source/hostapd_get_clients.json")
		case "get_status":
			return 0, File("rax3000m/hostapd_get_status.json")
		}
	}
	return 3, nil
}

// login is rpcd's session login (rpcd session.c, rpc_handle_login).
func (s *Server) login(args map[string]json.RawMessage) (int, []byte) {
	var user, pass string
	if json.Unmarshal(args["username"], &user) != nil || json.Unmarshal(args["password"], &pass) != nil {
		return 2, nil
	}
	if user != s.cfg.Username || pass != s.cfg.Password {
		return 6, nil
	}
	timeout := s.cfg.SessionTimeout
	var secs int
	if t, ok := args["timeout"]; ok && json.Unmarshal(t, &secs) == nil && secs > 0 {
		timeout = time.Duration(secs) * time.Second
	}
	var b [16]byte
	rand.Read(b[:])
	sid := hex.EncodeToString(b[:])
	s.mu.Lock()
	s.sessions[sid] = &session{expires: time.Now().Add(timeout), timeout: timeout}
	s.mu.Unlock()
	data, _ := json.Marshal(map[string]any{
		"ubus_rpc_session": sid,
		"timeout":          int(timeout / time.Second),
		"expires":          int(timeout / time.Second),
		"acls": map[string]any{
			"access-group": map[string][]string{"wnms-test": {"read"}},
			"ubus":         s.cfg.ACL,
		},
		"data": map[string]string{"username": user},
	})
	return 0, data
}

// exists tells whether object is registered on the bus; s.mu is held.
func (s *Server) exists(object string) bool {
	if object == "session" || object == "iwinfo" {
		return true
	}
	if iface, ok := strings.CutPrefix(object, "hostapd."); ok && slices.Contains(s.ifaces, iface) {
		return true
	}
	for k := range s.replies {
		if k.object == object {
			return true
		}
	}
	return false
}

// allowed is rpcd's session access: the session exists (touching it) and
// its ACL grants object's method; s.mu is held.
func (s *Server) allowed(sid, object, method string) bool {
	acl := map[string][]string{"session": {"access", "login"}}
	if sid != DefaultSID {
		ses := s.sessions[sid]
		if ses == nil {
			return false
		}
		if time.Now().After(ses.expires) {
			delete(s.sessions, sid)
			return false
		}
		ses.expires = time.Now().Add(ses.timeout)
		acl = s.cfg.ACL
	}
	for objPattern, methods := range acl {
		if ok, _ := path.Match(objPattern, object); !ok {
			continue
		}
		for _, m := range methods {
			if ok, _ := path.Match(m, method); ok {
				return true
			}
		}
	}
	return false
}

// list is uhttpd's list: with patterns, each matching object and its
// methods; without, the object names.
func (s *Server) list(w http.ResponseWriter, id json.RawMessage, params []json.RawMessage) {
	s.mu.Lock()
	s.counts[key{"", "list"}]++
	objects := map[string]map[string]map[string]string{
		"session": {"login": {"username": "string", "password": "string", "timeout": "number"}, "access": {}},
		"iwinfo": {"devices": {}, "info": {"device": "string"}, "assoclist": {"device": "string", "mac": "string"},
			"survey": {"device": "string"}},
	}
	for _, iface := range s.ifaces {
		objects["hostapd."+iface] = map[string]map[string]string{"get_clients": {}, "get_status": {}}
	}
	for k := range s.replies {
		if objects[k.object] == nil {
			objects[k.object] = map[string]map[string]string{}
		}
		objects[k.object][k.method] = map[string]string{}
	}
	s.mu.Unlock()
	if params == nil {
		var names []string
		for name := range objects {
			names = append(names, name)
		}
		slices.Sort(names)
		writeResult(w, id, names)
		return
	}
	result := map[string]any{}
	for _, p := range params {
		var pattern string
		if json.Unmarshal(p, &pattern) != nil {
			continue
		}
		for name, methods := range objects {
			if ok, _ := path.Match(pattern, name); ok {
				result[name] = methods
			}
		}
	}
	writeResult(w, id, result)
}

func (s *Server) handleSubscribe(w http.ResponseWriter, r *http.Request) {
	if !s.wait(r) {
		return
	}
	object := r.PathValue("object")
	sid := DefaultSID
	if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "Bearer ") {
		sid = a[7:]
	}
	s.mu.Lock()
	s.counts[key{object, ":subscribe"}]++
	status := s.httpStatus
	allowed := s.allowed(sid, object, ":subscribe")
	exists := strings.HasPrefix(object, "hostapd.") && s.exists(object)
	s.mu.Unlock()
	if status != 0 {
		w.WriteHeader(status)
		return
	}
	// uhttpd ubus.c, uh_ubus_handle_get_subscribe: the ACL first, then
	// the object; both refusals are status 200 with a JSON body.
	if !allowed || !exists {
		w.Header().Set("Content-Type", "application/json")
		if !allowed {
			io.WriteString(w, `{"code":-13,"message":"Permission denied"}`)
		} else {
			io.WriteString(w, `{"code":4,"message":"Not found"}`)
		}
		return
	}
	st := &stream{object: object, ch: make(chan []byte), kill: make(chan struct{}), gone: make(chan struct{})}
	defer close(st.gone)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.streams[st] = struct{}{}
	s.notify()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if _, ok := s.streams[st]; ok {
			delete(s.streams, st)
			s.notify()
		}
		s.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	for {
		select {
		case b := <-st.ch:
			if _, err := w.Write(b); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		case <-st.kill:
			return
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}

func writeResult(w http.ResponseWriter, id json.RawMessage, result any) {
	writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": rawID(id), "result": result})
}

func writeError(w http.ResponseWriter, id json.RawMessage, code int) {
	writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": rawID(id),
		"error": map[string]any{"code": code, "message": rpcErrors[code]}})
}

// rawID is the request's id as it came, or null.
func rawID(id json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(id)) == 0 {
		return json.RawMessage("null")
	}
	return id
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	w.Write(b)
}
