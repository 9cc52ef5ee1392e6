package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/every"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/wnms"
)

// MaxForwardBody is the largest request body forwarded to a child (a
// floor plan upload fits).
const MaxForwardBody = 64 << 20

// MaxAnswer is the largest answer read from a child; a larger one is a
// 502 naming the child, so a child (or whatever answers at its address)
// cannot make the parent hold more than this per call.
const MaxAnswer = 64 << 20

// basePath is where a child serves its calls.
const basePath = "/new/webservice"

// Cluster is the parent's view of its children.
type Cluster struct {
	Log *slog.Logger
	// ServerID is this server's own serverID: analytics calls with it
	// stay here.
	ServerID int64
	// KeepAliveEvery is how often each child session is refreshed and
	// each child's state checked (default 1 min).
	KeepAliveEvery time.Duration

	mu       sync.RWMutex
	children map[int64]*child

	calls   *metrics.CounterVec
	latency *metrics.HistogramVec
}

// New returns a cluster of the configured children (none are contacted
// yet: Start logs in).
func New(cfg *Config, log *slog.Logger) *Cluster {
	c := &Cluster{Log: log, KeepAliveEvery: time.Minute, children: map[int64]*child{}}
	c.apply(cfg)
	return c
}

// Instrument registers wnms_cluster_child_up{child},
// wnms_cluster_child_calls_total{child,result} and
// wnms_cluster_child_call_duration_seconds{child}.
func (c *Cluster) Instrument(reg *metrics.Registry) {
	c.calls = reg.Counter("wnms_cluster_child_calls_total", "Calls forwarded to each child server, by result (ok, unreachable, timeout, bad_answer).", "child", "result")
	c.latency = reg.Histogram("wnms_cluster_child_call_duration_seconds", "Latency of the calls forwarded to each child server.",
		[]float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}, "child")
	reg.GaugeVecFunc("wnms_cluster_child_up", "1 when the child server's last contact succeeded, else 0.", "child", func() map[string]float64 {
		out := map[string]float64{}
		for _, s := range c.Status() {
			out[strconv.FormatInt(s.ChildID, 10)] = 0
			if s.Up {
				out[strconv.FormatInt(s.ChildID, 10)] = 1
			}
		}
		return out
	})
}

// apply replaces the children by cfg's, keeping the sessions of children
// whose entry did not change.
func (c *Cluster) apply(cfg *Config) {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make(map[int64]*child, len(cfg.Children))
	for _, cc := range cfg.Children {
		if old, ok := c.children[cc.ChildID]; ok && old.cfg == cc {
			next[cc.ChildID] = old
			continue
		}
		next[cc.ChildID] = newChild(cc)
	}
	c.children = next
}

// Reload replaces the configuration (SIGHUP), logs into the new children
// and forgets the removed ones.
func (c *Cluster) Reload(ctx context.Context, cfg *Config) {
	c.apply(cfg)
	c.checkAll(ctx)
}

func (c *Cluster) child(id int64) *child {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.children[id]
}

func (c *Cluster) all() []*child {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*child, 0, len(c.children))
	for _, ch := range c.children {
		out = append(out, ch)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].cfg.ChildID < out[j].cfg.ChildID })
	return out
}

// Run logs into every child now, then keeps the sessions alive until ctx
// ends.
func (c *Cluster) Run(ctx context.Context) {
	c.checkAll(ctx)
	every.Period(ctx, c.KeepAliveEvery, c.checkAll)
}

// checkAll refreshes every child's session (logging in when it has none
// or the child forgot it) and records whether the child answered.
func (c *Cluster) checkAll(ctx context.Context) {
	var wg sync.WaitGroup
	for _, ch := range c.all() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, ch.cfg.Timeout())
			defer cancel()
			resp, err := ch.do(cctx, http.MethodGet, basePath+"/V5/login/keepsessionalive", nil, nil)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("keep-alive answered %s", resp.Status)
				}
			}
			was := ch.setState(err)
			if c.Log != nil && was != (err == nil) {
				if err != nil {
					c.Log.Warn("cluster child down", "child", ch.cfg.ChildID, "name", ch.cfg.Name, "err", err)
				} else {
					c.Log.Info("cluster child up", "child", ch.cfg.ChildID, "name", ch.cfg.Name)
				}
			}
		}()
	}
	wg.Wait()
}

// ChildStatus is what system info and /readyz say of a child.
type ChildStatus struct {
	ChildID   int64  `json:"childId"`
	Name      string `json:"name"`
	URL       string `json:"url"`
	Up        bool   `json:"up"`
	LastError string `json:"lastError,omitempty"`
	CheckedAt int64  `json:"checkedAt,omitempty"` // Unix ms
}

// Status lists the children in id order.
func (c *Cluster) Status() []ChildStatus {
	var out []ChildStatus
	for _, ch := range c.all() {
		out = append(out, ch.status())
	}
	return out
}

// nodeID reads nodeid (or nodeId): 0 when absent.
func nodeID(r *http.Request) (int64, string, error) {
	for _, name := range []string{"nodeid", "nodeId"} {
		if !r.URL.Query().Has(name) {
			continue
		}
		n, err := httpkit.QueryInt(r, name, 0)
		if err != nil {
			return 0, name, err
		}
		if n < 0 {
			return 0, name, wnms.ParamError(name, "%s must be 0 (this server) or a child id, not %d", name, n)
		}
		return int64(n), name, nil
	}
	return 0, "", nil
}

// Intercept is the router's interceptor: a call with nodeid N ≠ 0 goes to
// child N with the same method, path, query (without nodeid), body and
// content type, and the child's answer comes back as it is. The call has
// passed the same role check as a local one; the caller must also be
// allowed to reach children (access.ReachChildren).
func (c *Cluster) Intercept(w http.ResponseWriter, r *http.Request, call httpkit.Call) (bool, error) {
	n, name, err := nodeID(r)
	if err != nil {
		return false, err
	}
	if n == 0 {
		caller := wnms.CallerFrom(r.Context())
		if caller != nil && caller.Session != nil && caller.Session.ClusterChildren && call.Cluster == httpkit.FannedOut && call.Serve != nil {
			return true, c.fanOut(w, r, call)
		}
		return false, nil
	}
	ch := c.child(n)
	if ch == nil {
		return false, wnms.ParamError(name, "no cluster child %d", n)
	}
	if err := originForm(r); err != nil {
		return false, err
	}
	if err := access.ReachChildren(wnms.CallerFrom(r.Context())); err != nil {
		return false, err
	}
	return true, c.forward(w, r, ch, ch.cfg.URL)
}

// originForm refuses a request whose target is not origin-form
// (/path?query): an absolute-form target names another host, and is
// never sent on to a child.
func originForm(r *http.Request) error {
	if !strings.HasPrefix(r.RequestURI, "/") {
		return wnms.ParamError("nodeid", "only a request target of the form /path?query is forwarded to a child")
	}
	return nil
}

// forwardHeader is what every call to a child carries besides its
// session: the caller's role as a cap, so the child applies the caller's
// rights rather than the parent key's, and who the call is for.
func (c *Cluster) forwardHeader(r *http.Request) http.Header {
	h := http.Header{}
	if caller := wnms.CallerFrom(r.Context()); caller != nil {
		h.Set(wnms.RoleCapHeader, string(caller.Role()))
		h.Set(wnms.ActingForHeader, caller.User.LoginID+"@"+strconv.FormatInt(c.ServerID, 10))
	} else {
		// A call with no caller never reaches a child; if one did, it
		// would carry the lowest role.
		h.Set(wnms.RoleCapHeader, string(wnms.Viewer))
	}
	return h
}

// readAnswer reads a child's answer up to MaxAnswer; a larger one is
// CHILD_UNREACHABLE naming the child.
func (c *Cluster) readAnswer(ch *child, body io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(body, MaxAnswer+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxAnswer {
		c.count(ch, "bad_answer")
		return nil, errTooLarge
	}
	return b, nil
}

// errTooLarge is a child's answer over MaxAnswer.
var errTooLarge = errors.New("answer larger than 64 MiB")

// InterceptAnalytics is the analytics listener's interceptor: a call whose
// server_id names a child (rather than this server) goes to that child's
// analyticsUrl, as Intercept forwards nodeid calls. The child must run
// with --server-id equal to its childId, since the call reaches it
// unchanged.
func (c *Cluster) InterceptAnalytics(w http.ResponseWriter, r *http.Request, call httpkit.Call) (bool, error) {
	v, _ := httpkit.QueryValue(r, "server_id")
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return false, nil // the call's own checks answer a bad server_id
	}
	ch := c.child(id)
	if ch == nil || ch.cfg.AnalyticsURL == "" {
		return false, nil
	}
	if err := originForm(r); err != nil {
		return false, err
	}
	if err := access.ReachChildren(wnms.CallerFrom(r.Context())); err != nil {
		return false, err
	}
	return true, c.forward(w, r, ch, ch.cfg.AnalyticsURL)
}

// forward sends r to ch and copies the answer to w.
func (c *Cluster) forward(w http.ResponseWriter, r *http.Request, ch *child, base string) error {
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(io.LimitReader(r.Body, MaxForwardBody+1))
		if err != nil {
			return wnms.Errorf(wnms.InvalidRequestBody, "reading the body: %v", err)
		}
		if len(b) > MaxForwardBody {
			return wnms.Errorf(wnms.PayloadTooLarge, "a body forwarded to a child is at most %d MiB", MaxForwardBody>>20)
		}
		body = b
	}
	q := r.URL.Query()
	q.Del("nodeid")
	q.Del("nodeId")
	// The router has cut the base path and version off r.URL.Path; the
	// child gets the path the client sent.
	target, _, _ := strings.Cut(r.RequestURI, "?")
	if target == "" || !strings.HasPrefix(target, "/") {
		target = r.URL.EscapedPath()
	}
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	header := c.forwardHeader(r)
	for _, h := range []string{"Content-Type", "Accept", "X-Request-Id"} {
		if v := r.Header.Get(h); v != "" {
			header.Set(h, v)
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), ch.cfg.Timeout())
	defer cancel()
	start := time.Now()
	resp, err := ch.doAt(ctx, base, r.Method, target, header, body)
	var answer []byte
	if err == nil {
		defer resp.Body.Close()
		answer, err = c.readAnswer(ch, resp.Body)
	}
	c.observe(ch, time.Since(start))
	if err == errTooLarge {
		return wnms.Errorf(wnms.ChildUnreachable, "%s: answer larger than %d MiB", ch.cfg, MaxAnswer>>20)
	}
	if err != nil {
		ch.setState(err)
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			c.count(ch, "timeout")
			return wnms.Errorf(wnms.ChildTimeout, "%s did not answer within %s", ch.cfg, ch.cfg.Timeout())
		}
		c.count(ch, "unreachable")
		return wnms.Errorf(wnms.ChildUnreachable, "%s could not be reached", ch.cfg)
	}
	ct := resp.Header.Get("Content-Type")
	if mt, _, _ := mime.ParseMediaType(ct); mt == "application/json" && len(answer) > 0 && !json.Valid(answer) {
		c.count(ch, "bad_answer")
		return wnms.Errorf(wnms.ChildUnreachable, "%s answered something that is not JSON", ch.cfg)
	}
	ch.setState(nil)
	c.count(ch, "ok")
	for _, h := range []string{"Content-Type", "Content-Disposition", "X-Total-Count", "Retry-After", "Location", "Cache-Control"} {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
	w.WriteHeader(resp.StatusCode)
	w.Write(answer)
	return nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (c *Cluster) count(ch *child, result string) {
	if c.calls != nil {
		c.calls.Inc(strconv.FormatInt(ch.cfg.ChildID, 10), result)
	}
}

func (c *Cluster) observe(ch *child, d time.Duration) {
	if c.latency != nil {
		c.latency.Observe(d.Seconds(), strconv.FormatInt(ch.cfg.ChildID, 10))
	}
}

// child is one child server and the parent's session on it.
type child struct {
	cfg    ChildConfig
	client *http.Client

	loginMu sync.Mutex // one login at a time
	mu      sync.Mutex
	session string
	up      bool
	lastErr string
	checked time.Time
}

func newChild(cfg ChildConfig) *child {
	tr := &http.Transport{MaxIdleConnsPerHost: 32, IdleConnTimeout: 90 * time.Second,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext, ResponseHeaderTimeout: cfg.Timeout()}
	return &child{cfg: cfg, client: &http.Client{Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (ch *child) setState(err error) (wasUp bool) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	wasUp = ch.up
	ch.up, ch.checked, ch.lastErr = err == nil, time.Now(), ""
	if err != nil {
		ch.lastErr = err.Error()
	}
	return wasUp
}

func (ch *child) status() ChildStatus {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	s := ChildStatus{ChildID: ch.cfg.ChildID, Name: ch.cfg.Name, URL: ch.cfg.URL, Up: ch.up, LastError: ch.lastErr}
	if !ch.checked.IsZero() {
		s.CheckedAt = ch.checked.UnixMilli()
	}
	return s
}

func (ch *child) currentSession() string {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.session
}

// login opens a session on the child with the configured key, unless
// another goroutine already replaced stale.
func (ch *child) login(ctx context.Context, stale string) (string, error) {
	ch.loginMu.Lock()
	defer ch.loginMu.Unlock()
	if s := ch.currentSession(); s != "" && s != stale {
		return s, nil
	}
	body, _ := json.Marshal(map[string]string{"type": "apikeycredentials", "keyId": ch.cfg.KeyID, "keyValue": ch.cfg.KeyValue})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ch.cfg.URL+basePath+"/login/key/wnms-parent/86400", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := ch.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("login with key %s answered %s", ch.cfg.KeyID, resp.Status)
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == "JSESSIONID" {
			ch.mu.Lock()
			ch.session = ck.Value
			ch.mu.Unlock()
			return ck.Value, nil
		}
	}
	return "", errors.New("login answered no JSESSIONID")
}

// do makes a call on the child with the parent's session, logging in
// first when there is none and again, once, when the child answers 401
// (it restarted, or the session expired).
func (ch *child) do(ctx context.Context, method, target string, header http.Header, body []byte) (*http.Response, error) {
	return ch.doAt(ctx, ch.cfg.URL, method, target, header, body)
}

// doAt is do on another listener of the child (its analytics listener),
// which takes the same session.
func (ch *child) doAt(ctx context.Context, base, method, target string, header http.Header, body []byte) (*http.Response, error) {
	s := ch.currentSession()
	for attempt := 0; ; attempt++ {
		if s == "" {
			var err error
			if s, err = ch.login(ctx, ""); err != nil {
				return nil, err
			}
		}
		u, err := url.Parse(base + target)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		if body == nil {
			req.Body, req.ContentLength = http.NoBody, 0
		}
		for k, v := range header {
			req.Header[k] = v
		}
		req.AddCookie(&http.Cookie{Name: "JSESSIONID", Value: s})
		resp, err := ch.client.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusUnauthorized || attempt > 0 {
			return resp, nil
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if s, err = ch.login(ctx, s); err != nil {
			return nil, err
		}
	}
}
