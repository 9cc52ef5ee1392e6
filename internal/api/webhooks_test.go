package api_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/notify"
	"github.com/wnms/wnms/internal/wnms"
)

const hookSecret = "receiver-shared-secret-0123456789"

// receiver is a webhook receiver that checks both signatures of every
// delivery (with its own HMAC, not wnms's): X-Wnms-Signature with the
// secret as given, and the Standard Webhooks webhook-signature with its
// key (the secret's bytes, or a whsec_ secret's decoded ones, decoded
// here). It counts acknowledged deliveries by event id.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	secret string // hookSecret unless set before the first delivery
	mu     sync.Mutex
	acked  map[int64]int // event id -> 2xx answers sent for it
	kinds  map[int64]string
	hits   atomic.Int64
	answer func(n int64) int // status for the n-th request (1-based); nil: 200
	hold   chan struct{}     // when set, every request waits for it to close
}

// allowLocalReceivers lets e's webhooks reach the tests' receivers, which
// listen on loopback, as --webhook-allow-private does.
func allowLocalReceivers(envs ...*apitest.Env) {
	for _, e := range envs {
		e.API.Webhooks.Targets.AllowPrivate = true
	}
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t, secret: hookSecret, acked: map[int64]int{}, kinds: map[int64]string{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		if r.hold != nil {
			select {
			case <-r.hold:
			default:
				close(r.hold)
			}
		}
		r.srv.Close()
	})
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	n := r.hits.Add(1)
	if r.hold != nil {
		select {
		case <-r.hold:
		case <-req.Context().Done():
			return
		}
	}
	body, _ := io.ReadAll(req.Body)
	ts := req.Header.Get("X-Wnms-Timestamp")
	mac := hmac.New(sha256.New, []byte(r.secret))
	mac.Write([]byte(ts + "." + string(body)))
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); req.Header.Get("X-Wnms-Signature") != want {
		r.t.Errorf("bad signature %q for %s", req.Header.Get("X-Wnms-Signature"), body)
	}
	if err := verifyStandardWebhook(r.secret, req.Header, body); err != nil {
		r.t.Errorf("Standard Webhooks signature: %v (for %s)", err, body)
	}
	if req.Header.Get("webhook-timestamp") != ts {
		r.t.Errorf("webhook-timestamp %q, X-Wnms-Timestamp %q", req.Header.Get("webhook-timestamp"), ts)
	}
	if sec, err := strconv.ParseInt(ts, 10, 64); err != nil || time.Since(time.Unix(sec, 0)) > time.Minute {
		r.t.Errorf("timestamp %q", ts)
	}
	var ev wnms.Event
	if err := json.Unmarshal(body, &ev); err != nil {
		r.t.Errorf("body %s: %v", body, err)
	}
	if strconv.FormatInt(ev.ID, 10) != req.Header.Get("X-Wnms-Event-Id") {
		r.t.Errorf("X-Wnms-Event-Id %q for event %d", req.Header.Get("X-Wnms-Event-Id"), ev.ID)
	}
	if id := req.Header.Get("webhook-id"); ev.ID != 0 && id != strconv.FormatInt(ev.ID, 10) || ev.ID == 0 && !strings.HasPrefix(id, "test-") {
		r.t.Errorf("webhook-id %q for event %d", id, ev.ID)
	}
	status := http.StatusOK
	if r.answer != nil {
		status = r.answer(n)
	}
	if status < 300 {
		r.mu.Lock()
		r.acked[ev.ID]++
		r.kinds[ev.ID] = ev.Kind
		r.mu.Unlock()
	}
	w.WriteHeader(status)
}

// verifyStandardWebhook checks a delivery as a Standard Webhooks verifier
// does (standardwebhooks.com; written here, not taken from wnms): the key
// is the secret after whsec_ decoded from base64, or the secret's bytes;
// the signed content "<webhook-id>.<webhook-timestamp>.<body>"; one of
// the space-separated "v1,<base64>" signatures must match, and the
// timestamp be within 5 minutes.
func verifyStandardWebhook(secret string, h http.Header, body []byte) error {
	key := []byte(secret)
	if b64, ok := strings.CutPrefix(secret, "whsec_"); ok {
		var err error
		if key, err = base64.StdEncoding.DecodeString(b64); err != nil {
			return err
		}
	}
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return fmt.Errorf("headers missing: id %q, timestamp %q, signature %q", id, ts, sigs)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return fmt.Errorf("timestamp %q", ts)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(body)))
	want := mac.Sum(nil)
	for _, sig := range strings.Fields(sigs) {
		v, b64, _ := strings.Cut(sig, ",")
		got, err := base64.StdEncoding.DecodeString(b64)
		if v == "v1" && err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("no v1 signature matches in %q", sigs)
}

// waitAcked waits until n distinct events were acknowledged.
func (r *receiver) waitAcked(t *testing.T, n int, within time.Duration) map[int64]int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r.mu.Lock()
		got := len(r.acked)
		out := make(map[int64]int, got)
		for k, v := range r.acked {
			out[k] = v
		}
		r.mu.Unlock()
		if got >= n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events acknowledged within %s (%d requests)", got, n, within, r.hits.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitDispatched waits until e's dispatchers have dealt with every event
// stored so far, as the database shows it: each enabled webhook's durable
// cursor is at the last event (a cursor moves only past the events whose
// deliveries are recorded and those the webhook does not take), and no
// delivery waits to be retried.
func waitDispatched(t *testing.T, e *apitest.Env, within time.Duration) {
	t.Helper()
	ctx := context.Background()
	var last int64
	if err := e.DB().QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM event_outbox`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	var behind, pending int
	for deadline := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
		if err := e.DB().QueryRowContext(ctx, `SELECT (SELECT count(*) FROM webhooks WHERE enabled AND cursor < $1),
			(SELECT count(*) FROM webhook_deliveries WHERE state = 'pending')`, last).Scan(&behind, &pending); err != nil {
			t.Fatal(err)
		}
		if behind == 0 && pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("within %s, %d webhooks did not reach event %d and %d deliveries are pending", within, behind, last, pending)
		}
	}
}

// startDispatcher runs e's webhook dispatcher polling every 20 ms (and
// with lease, when given) until the returned function, which waits for it
// to stop, or the test's end.
func startDispatcher(t *testing.T, e *apitest.Env, lease time.Duration) func() {
	ctx, cancel := context.WithCancel(context.Background())
	e.API.Webhooks.Poll = 20 * time.Millisecond
	if lease > 0 {
		e.API.Webhooks.Lease = lease
	}
	done := make(chan struct{})
	go func() { defer close(done); e.API.Webhooks.Run(ctx) }()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func createHook(t *testing.T, c *apitest.Client, url string, extra map[string]any) wnms.Webhook {
	t.Helper()
	body := map[string]any{"url": url, "secret": hookSecret}
	for k, v := range extra {
		body[k] = v
	}
	var h wnms.Webhook
	c.Expect(http.StatusOK, "PUT", "/V5/webhooks", body).Decode(t, &h)
	return h
}

func raiseAPs(e *apitest.Env, loc *wnms.Location, n int) {
	for i := 0; i < n; i++ {
		e.API.Hub.APChange(context.Background(), notify.AP{CustomerID: 1, BoxID: int64(i + 1), Name: fmt.Sprint("ap", i),
			MacAddress: "00:11:22:33:44:55", LocationID: loc.ID.ID}, i%2 == 1)
	}
}

// Webhooks are configured by SU and AD of their own customer, with
// checked URLs and secrets that never show.
func TestWebhookConfig(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := newAuthzFixture(t, b)
		e := f.E
		allowLocalReceivers(e)
		rcv := newReceiver(t)
		h := createHook(t, e.Admin, rcv.srv.URL, map[string]any{"kinds": []string{"apdown", "anomaly"},
			"locationId": map[string]any{"type": "locallocationid", "id": f.Site.ID.ID}})
		if h.Secret != wnms.SecretMask || h.Kinds[0] != "apDown" || h.LocationID.ID != f.Site.ID.ID || !h.Enabled {
			t.Errorf("created %+v", h)
		}
		var list []wnms.Webhook
		r := e.Admin.Expect(http.StatusOK, "GET", "/V5/webhooks", nil)
		r.Decode(t, &list)
		if len(list) != 1 || strings.Contains(string(r.Body), hookSecret) {
			t.Errorf("list %s", r.Body)
		}
		// The masked secret keeps the stored one; other fields change.
		var mod wnms.Webhook
		e.Admin.Expect(http.StatusOK, "POST", fmt.Sprintf("/V5/webhooks/%d", h.ID),
			map[string]any{"secret": wnms.SecretMask, "enabled": false}).Decode(t, &mod)
		if mod.Enabled {
			t.Error("not disabled")
		}
		if _, secret, err := e.Store.WebhookTarget(context.Background(), h.ID); err != nil || secret != hookSecret {
			t.Errorf("stored secret %q, %v", secret, err)
		}
		for name, body := range map[string]map[string]any{
			"ftp url":        {"url": "ftp://example.com/x", "secret": hookSecret},
			"metadata":       {"url": "http://169.254.169.254/latest", "secret": hookSecret},
			"link-local v6":  {"url": "http://[fe80::1]/x", "secret": hookSecret},
			"relative":       {"url": "/hook", "secret": hookSecret},
			"short secret":   {"url": rcv.srv.URL, "secret": "short"},
			"no secret":      {"url": rcv.srv.URL},
			"unknown kind":   {"url": rcv.srv.URL, "secret": hookSecret, "kinds": []string{"apExploded"}},
			"user info":      {"url": "http://u:p@example.com/", "secret": hookSecret},
			"wrong type url": {"url": 5, "secret": hookSecret},
		} {
			if r := e.Admin.Do("PUT", "/V5/webhooks", body); r.Status != http.StatusBadRequest {
				t.Errorf("%s: status %d, want 400: %s", name, r.Status, r.Body)
			}
		}
		// Roles, customers and locations.
		for _, role := range []wnms.Role{wnms.Viewer, wnms.Operator, wnms.PowerUser} {
			_, c := e.NewUser(t, apitest.UserSpec{Role: role})
			if r := c.Do("GET", "/V5/webhooks", nil); r.Status != http.StatusForbidden {
				t.Errorf("%s lists webhooks: %d", role, r.Status)
			}
			if r := c.Do("POST", fmt.Sprintf("/V5/webhooks/%d/test", h.ID), nil); r.Status != http.StatusForbidden {
				t.Errorf("%s tests a webhook: %d", role, r.Status)
			}
		}
		_, foreign := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
		for _, call := range [][2]string{{"DELETE", ""}, {"GET", "/deliveries"}, {"POST", "/test"}} {
			if r := foreign.Do(call[0], fmt.Sprintf("/V5/webhooks/%d%s", h.ID, call[1]), nil); r.Status != http.StatusNotFound {
				t.Errorf("another customer %s %s: %d, want 404", call[0], call[1], r.Status)
			}
		}
		var flist []wnms.Webhook
		foreign.Expect(http.StatusOK, "GET", "/V5/webhooks", nil).Decode(t, &flist)
		if len(flist) != 0 {
			t.Errorf("another customer lists %+v", flist)
		}
		_, scoped := e.NewUser(t, apitest.UserSpec{Role: wnms.Administrator, Locations: []int64{f.Other.ID.ID}})
		if r := scoped.Do("DELETE", fmt.Sprintf("/V5/webhooks/%d", h.ID), nil); r.Status != http.StatusForbidden || r.ErrorCode() != wnms.LocationAccessDenied {
			t.Errorf("outside the caller's locations: %d %s", r.Status, r.ErrorCode())
		}
		if r := scoped.Do("PUT", "/V5/webhooks", map[string]any{"url": rcv.srv.URL, "secret": hookSecret}); r.Status != http.StatusForbidden {
			t.Errorf("a scoped caller creates a root webhook: %d", r.Status)
		}
		// The test call reaches the receiver, signed.
		var res struct {
			Delivered bool
			Status    int
		}
		e.Admin.Expect(http.StatusOK, "POST", fmt.Sprintf("/V5/webhooks/%d/test", h.ID), nil).Decode(t, &res)
		if !res.Delivered || res.Status != 200 || rcv.hits.Load() != 1 {
			t.Errorf("test call: %+v, %d requests", res, rcv.hits.Load())
		}
		e.Admin.Expect(http.StatusNoContent, "DELETE", fmt.Sprintf("/V5/webhooks/%d", h.ID), nil)
		if r := e.Admin.Do("GET", fmt.Sprintf("/V5/webhooks/%d/deliveries", h.ID), nil); r.Status != http.StatusNotFound {
			t.Errorf("deleted webhook's deliveries: %d", r.Status)
		}
	})
}

// Events reach every webhook that takes them, once each, signed; one at a
// site gets only that site's; a receiver that fails for a while gets every
// event once it recovers; the delivery log shows the attempts.
func TestWebhookDelivery(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := newAuthzFixture(t, b)
		e := f.E
		allowLocalReceivers(e)
		startDispatcher(t, e, 0) // before the hub, whose first event wakes (and sets up) the dispatcher
		startHub(t, e)
		all := newReceiver(t)
		site := newReceiver(t)
		flaky := newReceiver(t)
		// The flaky receiver fails its first requests (counted, not timed:
		// on a loaded machine the first event may come after any window).
		flaky.answer = func(n int64) int {
			if n <= 3 {
				return http.StatusServiceUnavailable
			}
			return http.StatusOK
		}
		createHook(t, e.Admin, all.srv.URL, nil)
		createHook(t, e.Admin, site.srv.URL, map[string]any{"locationId": map[string]any{"type": "locallocationid", "id": f.Site.ID.ID}})
		fh := createHook(t, e.Admin, flaky.srv.URL, map[string]any{"kinds": []string{"apDown", "apUp"}})

		raiseAPs(e, f.Floor, 10)
		raiseAPs(e, f.OtherFloor, 10)
		// 20 AP events and the three webhook creations (configChanged).
		got := all.waitAcked(t, 20, 20*time.Second)
		siteGot := site.waitAcked(t, 10, 20*time.Second)
		flakyGot := flaky.waitAcked(t, 20, 30*time.Second)
		for name, m := range map[string]map[int64]int{"all": got, "site": siteGot, "flaky": flakyGot} {
			for id, n := range m {
				if n != 1 {
					t.Errorf("%s: event %d acknowledged %d times", name, id, n)
				}
			}
		}
		// Every event has been through every webhook: what the receivers
		// and the delivery log have now is all they get.
		waitDispatched(t, e, 20*time.Second)
		if n := len(site.waitAcked(t, 0, 0)); n != 10 {
			t.Errorf("the site's webhook got %d events, want the site's 10", n)
		}
		if flaky.hits.Load() <= 20 {
			t.Errorf("the flaky receiver saw %d requests: it never failed", flaky.hits.Load())
		}
		var page struct {
			Deliveries []wnms.Delivery
			TotalCount int
		}
		e.Admin.Expect(http.StatusOK, "GET", fmt.Sprintf("/V5/webhooks/%d/deliveries?limit=1000", fh.ID), nil).Decode(t, &page)
		retried := 0
		for _, d := range page.Deliveries {
			if d.State != wnms.DeliveryDelivered || d.LastStatus != 200 {
				t.Errorf("delivery %+v", d)
			}
			if d.Attempts > 1 {
				retried++
			}
		}
		if page.TotalCount != 20 || retried == 0 {
			t.Errorf("the flaky webhook's log: %d deliveries, %d retried", page.TotalCount, retried)
		}
	})
}

// A receiver that never answers holds its own attempts only: the API
// answers meanwhile, and another webhook still gets its events.
func TestWebhookDeadReceiver(t *testing.T) {
	f := newAuthzFixture(t, apitest.SQLite)
	e := f.E
	allowLocalReceivers(e)
	e.API.Webhooks.Client = notify.NewWebhookClient(30*time.Second, e.API.Webhooks.Targets)
	startDispatcher(t, e, 0)
	startHub(t, e)
	dead := newReceiver(t)
	dead.hold = make(chan struct{})
	live := newReceiver(t)
	createHook(t, e.Admin, dead.srv.URL, nil)
	createHook(t, e.Admin, live.srv.URL, map[string]any{"kinds": []string{"apDown", "apUp"}})
	raiseAPs(e, f.Floor, 40)
	live.waitAcked(t, 40, 20*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for dead.hits.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if dead.hits.Load() == 0 {
		t.Fatal("the dead receiver was never called")
	}
	// The dead receiver holds its requests; writes and reads answer.
	for i := 0; i < 5; i++ {
		e.Admin.Expect(http.StatusOK, "PUT", "/V5/templates?locationid=0", profilesBody(fmt.Sprint("while-dead-", i)))
	}
	if n := dead.hits.Load(); n > int64(e.API.Webhooks.PerWebhook) {
		t.Errorf("the dead receiver holds %d requests, more than the %d one webhook may", n, e.API.Webhooks.PerWebhook)
	}
}

// Two replicas on one PostgreSQL deliver each event exactly once to a
// receiver that acknowledges; a replica stopped in the middle of its
// deliveries leaves them to the other, which delivers them after their
// lease: nothing is lost.
func TestWebhookReplicas(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := newAuthzFixture(t, b)
		a := f.E
		bEnv := apitest.NewAt(t, b, a.Config)
		allowLocalReceivers(a, bEnv)
		rcv := newReceiver(t)
		createHook(t, a.Admin, rcv.srv.URL, map[string]any{"kinds": []string{"apDown", "apUp"}})
		// The dispatchers are set up before the hubs, whose first events
		// wake (and set up) them.
		// Leases long enough that no delivery outlives its claim on a
		// loaded machine: a claim that expires mid-delivery is delivered
		// again by design (at least once).
		stopA := startDispatcher(t, a, 10*time.Second)
		bEnv.API.Webhooks.PerWebhook = 1 // B sends one at a time, so A claims some
		stopB := startDispatcher(t, bEnv, 10*time.Second)
		startHub(t, a)
		startHub(t, bEnv)
		raiseAPs(a, f.Floor, 100)
		raiseAPs(bEnv, f.Floor, 100)
		got := rcv.waitAcked(t, 200, 30*time.Second)
		for id, n := range got {
			if n != 1 {
				t.Errorf("event %d acknowledged %d times", id, n)
			}
		}
		// Replica A's receiver hangs; A is stopped with its deliveries
		// claimed and unanswered; B delivers them once the lease ends. B
		// is stopped meanwhile, so that A is the one holding the new
		// webhook's lease when it stops.
		stopA()
		stopB()
		rcv2 := newReceiver(t)
		rcv2.hold = make(chan struct{})
		createHook(t, a.Admin, rcv2.srv.URL, map[string]any{"kinds": []string{"apDown"}})
		stopA = startDispatcher(t, a, 2*time.Second)
		raiseAPs(a, f.Floor, 20) // 10 apDown
		deadline := time.Now().Add(10 * time.Second)
		for rcv2.hits.Load() < 2 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if rcv2.hits.Load() < 2 {
			t.Fatal("replica A sent nothing to the new webhook")
		}
		stopA()
		startDispatcher(t, bEnv, 2*time.Second)
		close(rcv2.hold)
		got = rcv2.waitAcked(t, 10, 30*time.Second)
		if len(got) != 10 {
			t.Errorf("%d of 10 events delivered after a replica stopped", len(got))
		}
	})
}

// Webhook targets (decisions §23): loopback, private and the server's own
// addresses are refused unless the server allows them, and then only a
// SUPERUSER sets one; the address is checked again at each connection; a
// delivery and the test call keep the status and an error class, never
// the receiver's own text. Before, any public-looking target was taken,
// and the test call echoed the receiver's status text and "connection
// refused" for a closed port: a port scanner.
func TestWebhookTargets(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := newAuthzFixture(t, b)
		e := f.E
		rcv := newReceiver(t)
		closed := newReceiver(t)
		closed.srv.Close() // a port nothing listens on
		refused := map[string]string{
			"loopback v4": "http://127.0.0.1:9/hook", "loopback v6": "http://[::1]:9/hook",
			"RFC 1918 10/8": "http://10.1.2.3/hook", "RFC 1918 172.16/12": "http://172.16.0.1/hook",
			"RFC 1918 192.168/16": "http://192.168.1.1/hook", "unique local fc00::/7": "http://[fd12::1]/hook",
			"a name of loopback": "http://localhost:9/hook", "the local receiver": rcv.srv.URL,
			"IPv4-mapped loopback": "http://[::ffff:127.0.0.1]/hook", "metadata": "http://169.254.169.254/",
			"a name that does not resolve": "http://no-such-host.invalid/hook",
		}
		if own := ownPublicAddr(); own != "" {
			refused["this server's own address"] = "http://" + own + "/hook"
		}
		for name, url := range refused {
			r := e.Admin.Do("PUT", "/V5/webhooks", map[string]any{"url": url, "secret": hookSecret})
			if r.Status != http.StatusBadRequest || r.ErrorCode() != wnms.ValidationFailed {
				t.Errorf("%s (%s): %d %s, want 400 VALIDATION_FAILED", name, url, r.Status, r.Body)
			}
		}
		// A public address is taken (nothing is sent on saving).
		pub := createHook(t, e.Admin, "http://203.0.113.7:8080/hook", nil)
		if r := e.Admin.Do("POST", fmt.Sprintf("/V5/webhooks/%d", pub.ID), map[string]any{"url": "http://10.0.0.1/"}); r.Status != http.StatusBadRequest {
			t.Errorf("re-pointed at a private address: %d %s", r.Status, r.Body)
		}

		// With --webhook-allow-private, a SUPERUSER may set one; an
		// ADMINISTRATOR may not.
		allowLocalReceivers(e)
		_, admin := e.NewUser(t, apitest.UserSpec{Role: wnms.Administrator})
		if r := admin.Do("PUT", "/V5/webhooks", map[string]any{"url": rcv.srv.URL, "secret": hookSecret}); r.Status != http.StatusForbidden || r.ErrorCode() != wnms.AccessDenied {
			t.Errorf("an ADMINISTRATOR sets a loopback target: %d %s", r.Status, r.Body)
		}
		if r := admin.Do("PUT", "/V5/webhooks", map[string]any{"url": "http://169.254.169.254/", "secret": hookSecret}); r.Status != http.StatusBadRequest {
			t.Errorf("metadata with private targets allowed: %d %s", r.Status, r.Body)
		}
		ok := createHook(t, e.Admin, rcv.srv.URL, nil)
		teapot := newReceiver(t)
		teapot.answer = func(int64) int { return http.StatusTeapot }
		tea := createHook(t, e.Admin, teapot.srv.URL, nil)
		dead := createHook(t, e.Admin, closed.srv.URL, nil)
		tlsRcv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
		t.Cleanup(tlsRcv.Close)
		tlsHook := createHook(t, e.Admin, tlsRcv.URL, nil)
		slow := newReceiver(t)
		slow.hold = make(chan struct{})
		slowHook := createHook(t, e.Admin, slow.srv.URL, nil)

		type result struct {
			Delivered  bool
			Status     int
			ErrorClass string
			Error      string
		}
		test := func(id int64) (result, string) {
			var res result
			r := e.Admin.Expect(http.StatusOK, "POST", fmt.Sprintf("/V5/webhooks/%d/test", id), nil)
			r.Decode(t, &res)
			return res, string(r.Body)
		}
		for _, c := range []struct {
			name   string
			id     int64
			status int
			class  string
		}{
			{"a receiver that acknowledges", ok.ID, 200, ""},
			{"a receiver that answers 418", tea.ID, 418, wnms.DeliveryErrorStatus},
			{"a closed port", dead.ID, 0, wnms.DeliveryErrorConnect},
			{"a certificate nobody signed", tlsHook.ID, 0, wnms.DeliveryErrorTLS},
		} {
			res, body := test(c.id)
			if res.Status != c.status || res.ErrorClass != c.class || res.Delivered != (c.class == "") {
				t.Errorf("%s: %s", c.name, body)
			}
			for _, leak := range []string{"teapot", "Teapot", "refused", "dial", "x509", "certificate", "127.0.0.1"} {
				if strings.Contains(body, leak) {
					t.Errorf("%s: the answer shows %q: %s", c.name, leak, body)
				}
			}
		}
		e.API.Webhooks.Client = notify.NewWebhookClient(300*time.Millisecond, e.API.Webhooks.Targets)
		if res, body := test(slowHook.ID); res.ErrorClass != wnms.DeliveryErrorTimeout || res.Status != 0 {
			t.Errorf("a receiver that never answers: %s", body)
		}
		close(slow.hold)

		// The server restarted without --webhook-allow-private: a stored
		// loopback target is refused at the connection, whatever was
		// allowed when it was saved (as a name that resolves elsewhere
		// later is).
		e.API.Webhooks.Targets.AllowPrivate = false
		e.API.Webhooks.Client = notify.NewWebhookClient(10*time.Second, e.API.Webhooks.Targets)
		before := rcv.hits.Load()
		if res, body := test(ok.ID); res.ErrorClass != wnms.DeliveryErrorConnect || res.Delivered {
			t.Errorf("a loopback target without the allow flag: %s", body)
		}
		if rcv.hits.Load() != before {
			t.Error("the loopback receiver was reached without the allow flag")
		}

		// A delivery record keeps the status and the class.
		e.API.Webhooks.Targets.AllowPrivate = true
		e.API.Webhooks.Client = notify.NewWebhookClient(10*time.Second, e.API.Webhooks.Targets)
		startDispatcher(t, e, 0)
		startHub(t, e)
		raiseAPs(e, f.Floor, 1)
		deadline := time.Now().Add(20 * time.Second)
		for {
			var page struct{ Deliveries []wnms.Delivery }
			r := e.Admin.Expect(http.StatusOK, "GET", fmt.Sprintf("/V5/webhooks/%d/deliveries", tea.ID), nil)
			r.Decode(t, &page)
			if len(page.Deliveries) > 0 && page.Deliveries[0].Attempts > 0 {
				d := page.Deliveries[0]
				if d.LastStatus != 418 || d.LastErrorClass != wnms.DeliveryErrorStatus || d.LastError != "the receiver answered 418" ||
					strings.Contains(string(r.Body), "eapot") {
					t.Errorf("delivery record %s", r.Body)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no attempt recorded: %s", r.Body)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// ownPublicAddr is an address of this host's interfaces that is neither
// loopback, private nor link-local ("" when it has none).
func ownPublicAddr() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, _ := netip.AddrFromSlice(n.IP)
		ip = ip.Unmap()
		if ip.IsValid() && ip.Is4() && !ip.IsLoopback() && !ip.IsPrivate() && !ip.IsLinkLocalUnicast() {
			return ip.String()
		}
	}
	return ""
}

// Every delivery carries the Standard Webhooks headers beside X-Wnms-*
// (decisions §23, revised turn 4), checked by a receiver that verifies
// both signatures: a whsec_ secret signs webhook-signature with its
// decoded bytes and X-Wnms-Signature as given; a plain secret signs both
// as given. A whsec_ secret that is not a Standard Webhooks key is
// refused on PUT and POST with nothing changed.
func TestWebhookStandardSignatures(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := newAuthzFixture(t, b)
		e := f.E
		allowLocalReceivers(e)
		startDispatcher(t, e, 0)
		startHub(t, e)
		const whsec = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		std := newReceiver(t)
		std.secret = whsec
		plain := newReceiver(t)
		sh := createHook(t, e.Admin, std.srv.URL, map[string]any{"secret": whsec, "kinds": []string{"apDown", "apUp"}})
		createHook(t, e.Admin, plain.srv.URL, map[string]any{"kinds": []string{"apDown", "apUp"}})
		raiseAPs(e, f.Floor, 10)
		std.waitAcked(t, 10, 20*time.Second)
		plain.waitAcked(t, 10, 20*time.Second)
		// The test call is signed the same way, with an id of its own.
		var res struct{ Delivered bool }
		e.Admin.Expect(http.StatusOK, "POST", fmt.Sprintf("/V5/webhooks/%d/test", sh.ID), nil).Decode(t, &res)
		if !res.Delivered {
			t.Error("the test event was not delivered")
		}

		for name, secret := range map[string]string{
			"not base64":       "whsec_this is not base64!!",
			"URL alphabet":     "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS_",
			"padding missing":  "whsec_" + strings.TrimRight(base64.StdEncoding.EncodeToString(make([]byte, 64)), "="),
			"key of 18 bytes":  "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2La",
			"key of 66 bytes":  "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 66)),
			"nothing after it": "whsec_",
		} {
			r := e.Admin.Do("PUT", "/V5/webhooks", map[string]any{"url": plain.srv.URL, "secret": secret})
			if r.Status != http.StatusBadRequest || r.ErrorCode() != wnms.ValidationFailed || strings.Contains(string(r.Body), secret) {
				t.Errorf("PUT, %s: %d %s", name, r.Status, r.Body)
			}
			r = e.Admin.Do("POST", fmt.Sprintf("/V5/webhooks/%d", sh.ID), map[string]any{"secret": secret, "enabled": false})
			if r.Status != http.StatusBadRequest || r.ErrorCode() != wnms.ValidationFailed || strings.Contains(string(r.Body), secret) {
				t.Errorf("POST, %s: %d %s", name, r.Status, r.Body)
			}
		}
		var hooks []wnms.Webhook
		e.Admin.Expect(http.StatusOK, "GET", "/V5/webhooks", nil).Decode(t, &hooks)
		if len(hooks) != 2 {
			t.Errorf("%d webhooks after the refused ones, want 2", len(hooks))
		}
		if _, secret, err := e.Store.WebhookTarget(context.Background(), sh.ID); err != nil || secret != whsec {
			t.Errorf("the refused changes changed the secret: %v", err)
		}
		for _, h := range hooks {
			if !h.Enabled {
				t.Errorf("webhook %d disabled by a refused change", h.ID)
			}
		}
	})
}
