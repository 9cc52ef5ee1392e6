package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/wnms"
)

// DeliveryStore is what the webhook dispatcher needs of the store.
type DeliveryStore interface {
	QueueDeliveries(ctx context.Context, pass wnms.QueuePass) ([]wnms.Claimed, error)
	DueWebhooks(ctx context.Context, now int64) ([]int64, error)
	ClaimDeliveries(ctx context.Context, webhookID int64, n int, now, until int64) ([]*wnms.Delivery, error)
	FinishDeliveries(ctx context.Context, rs []wnms.DeliveryResult, retryFor time.Duration, owner string,
		cursors []wnms.Cursor) (lost []int64, err error)
	WebhookTarget(ctx context.Context, id int64) (url, secret string, err error)
}

// Dispatcher delivers the outbox's events to the webhooks: at least once,
// so that a restart loses none, and once each when replicas share the
// store; a failed attempt is retried with exponential back-off (1 s
// doubling, at most 10 minutes apart) for 24 hours. A receiver that fails
// backs off as a whole, so a dead one holds one attempt at a time and
// never slows the others or the API.
//
// A webhook's new events are read by the one dispatcher that holds the
// webhook's lease (taken and renewed by its queue passes, for ReadLease at
// most). While
// the receiver answers, they are sent straight from the outbox, and each
// delivery's row is written once, when its attempt has ended; the
// webhook's durable cursor then moves past the events whose rows are
// written, so that a dispatcher killed with attempts in flight leaves
// their events to the lease's next holder. A webhook backing off has its
// events queued as rows, which are claimed and retried after its pause,
// and so are the attempts that failed.
type Dispatcher struct {
	Store DeliveryStore
	Log   *slog.Logger
	// Client sends the deliveries; NewWebhookClient's with Targets by
	// default.
	Client *http.Client
	// Targets says which addresses webhooks may reach; the API checks a
	// webhook's URL against it when it is saved, and the default Client
	// at each connection.
	Targets Targets
	// Lease is how long a claimed delivery is this server's (30 s), and
	// a webhook's lease on its events (that, or ReadLease if shorter); a
	// server that dies leaves them to another after that.
	Lease time.Duration
	// RetryFor is how long an event is retried (24 h).
	RetryFor time.Duration
	// PerWebhook and Total bound the attempts in flight
	// (DefaultPerWebhook and DefaultTotal). Eight times as many
	// deliveries may be claimed and waiting here for a free attempt, so
	// that one pass over the store feeds a fast receiver for more than
	// one round of attempts.
	PerWebhook, Total int
	// Poll is how often due deliveries are looked for (250 ms) besides
	// when new events arrive.
	Poll time.Duration
	// Now is the clock.
	Now func() time.Time

	once    sync.Once
	wake    chan struct{}
	results chan wnms.DeliveryResult
	// events: new outbox events may be waiting to be queued (Wake).
	events atomic.Bool
	mu     sync.Mutex
	// held counts the deliveries claimed here and not finished, per
	// webhook and in all; queues are those waiting for an attempt.
	held   map[int64]int
	total  int
	queues map[int64]*hookQueue
	// waiting are the webhooks this server queued deliveries for that it
	// could not claim at once: their next free attempts claim them.
	waiting map[int64]bool
	// owner is this run's lease owner id; hooks, what this run handed out
	// of the webhooks it holds the lease of.
	owner     string
	hooks     map[int64]*hookState
	attempts  *metrics.CounterVec
	latencies *metrics.HistogramVec
}

// Instrument registers the dispatcher's series.
func (d *Dispatcher) Instrument(reg *metrics.Registry) {
	d.attempts = reg.Counter("wnms_webhook_attempts_total", "Webhook delivery attempts, by result (delivered, failed).", "result")
	d.latencies = reg.Histogram("wnms_webhook_delay_seconds", "From an event's time to its delivery.",
		[]float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 60, 600}, "kind")
}

func (d *Dispatcher) init() {
	d.once.Do(func() {
		d.wake = make(chan struct{}, 1)
		d.results = make(chan wnms.DeliveryResult, 2*finishBatch)
		d.held = map[int64]int{}
		d.queues = map[int64]*hookQueue{}
		d.waiting = map[int64]bool{}
		if d.Client == nil {
			d.Client = NewWebhookClient(10*time.Second, d.Targets)
		}
		if d.Lease == 0 {
			d.Lease = 30 * time.Second
		}
		if d.RetryFor == 0 {
			d.RetryFor = Retention
		}
		if d.PerWebhook == 0 {
			d.PerWebhook = DefaultPerWebhook
		}
		if d.Total == 0 {
			d.Total = DefaultTotal
		}
		if d.Poll == 0 {
			d.Poll = 250 * time.Millisecond
		}
		if d.Now == nil {
			d.Now = time.Now
		}
	})
}

// hookState is what a run handed out of a webhook it holds the lease of.
type hookState struct {
	// mark: every event up to it was handed out or queued (0: unknown,
	// start at the durable cursor); out: events handed out without a row
	// whose results are not recorded.
	mark int64
	out  map[int64]bool
	// gen counts resets of mark (the lease was lost, or results could not
	// be recorded): a queue pass that read the mark before a reset does
	// not set it.
	gen int
	// left: events wait in the outbox for a free attempt.
	left bool
}

// hook is id's state (d.mu held).
func (d *Dispatcher) hook(id int64) *hookState {
	h := d.hooks[id]
	if h == nil {
		h = &hookState{out: map[int64]bool{}}
		d.hooks[id] = h
	}
	return h
}

// low is the lowest event handed out and not recorded, but those in
// skip (0: none).
func (h *hookState) low(skip map[int64]bool) int64 {
	var low int64
	for id := range h.out {
		if !skip[id] && (low == 0 || id < low) {
			low = id
		}
	}
	return low
}

// readLease is how long a webhook's events are this server's to read
// (Lease, at most ReadLease): renewed by every pass once half of it is
// gone, so a live server keeps it, and short, so that after a restart
// (a server has a new owner id each run) or a crash another takes the
// webhook over within seconds.
func (d *Dispatcher) readLease() time.Duration { return min(d.Lease, ReadLease) }

// ReadLease is the longest lease on a webhook's events.
const ReadLease = 10 * time.Second

// The default bounds on attempts in flight: to one webhook, and in all.
const (
	DefaultPerWebhook = 128
	DefaultTotal      = 1024
)

// claimAhead is how many times the attempts in flight may be claimed and
// held here.
const claimAhead = 8

// Wake makes the dispatcher look for work now: new events arrived.
func (d *Dispatcher) Wake() {
	d.init()
	d.events.Store(true)
	d.nudge()
}

// nudge makes the dispatcher look again at what is queued (an attempt
// ended, so a slot is free).
func (d *Dispatcher) nudge() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends. Attempts in flight when it ends are left
// claimed: their lease runs out and they are sent again (those with no
// row by the next holder of their webhook's lease, from its cursor). Each
// run has a lease owner id of its own.
func (d *Dispatcher) Run(ctx context.Context) {
	d.init()
	var id [12]byte
	rand.Read(id[:])
	d.mu.Lock()
	d.owner = hex.EncodeToString(id[:])
	d.hooks = map[int64]*hookState{}
	d.mu.Unlock()
	go d.finish(ctx)
	t := time.NewTicker(d.Poll)
	defer t.Stop()
	// Each pass costs write transactions (on SQLite, of the one writer):
	// a pass woken by an ended attempt only claims for the webhooks with
	// deliveries waiting here; new events are queued when the hub says
	// they came, and everything else (retries come due, claims of a
	// server that died run out, other replicas' events) every Poll.
	all := true
	for {
		now := d.Now()
		if all || d.events.Swap(false) {
			gens := map[int64]int{}
			d.mu.Lock()
			owner := d.owner
			d.mu.Unlock()
			claimed, err := d.Store.QueueDeliveries(ctx, wnms.QueuePass{Owner: owner, Until: now.Add(d.readLease()).UnixMilli(),
				Hook: func(id int64, taken bool) (mark, low int64, free int) {
					d.mu.Lock()
					defer d.mu.Unlock()
					h := d.hook(id)
					if taken {
						h.mark = 0
						h.gen++
					}
					gens[id] = h.gen
					return h.mark, h.low(nil), d.freeLocked(id)
				}})
			if err != nil && ctx.Err() == nil {
				d.Log.Error("webhooks: queueing deliveries failed", "err", err)
				d.events.Store(true)
			}
			more := false
			for _, c := range claimed {
				d.mu.Lock()
				if c.Waiting > 0 {
					d.waiting[c.WebhookID] = true
				}
				if c.Leased {
					h := d.hook(c.WebhookID)
					if h.gen == gens[c.WebhookID] {
						more = more || c.Mark > h.mark
						h.mark = c.Mark
					}
					h.left = c.Left
					for _, del := range c.Deliveries {
						h.out[del.EventID] = true
					}
				}
				d.mu.Unlock()
				if len(c.Deliveries) > 0 {
					d.send(ctx, c)
				}
				more = more || len(c.Deliveries) > 0 || c.Waiting > 0
			}
			// A pass takes a batch of events: while one hands out or
			// queues something, another may find more. Events left for
			// want of attempts are taken when an attempt ends.
			if more {
				d.events.Store(true)
			}
		}
		d.dispatch(ctx, all)
		all = false
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			all = true
		case <-d.wake:
		}
	}
}

// dispatch claims due deliveries of the webhooks that have some (all
// such, or those with deliveries waiting here) within the bounds on
// attempts in flight, and sends each.
func (d *Dispatcher) dispatch(ctx context.Context, all bool) {
	now := d.Now()
	var ids []int64
	if all {
		var err error
		if ids, err = d.Store.DueWebhooks(ctx, now.UnixMilli()); err != nil {
			if ctx.Err() == nil {
				d.Log.Error("webhooks: listing failed", "err", err)
			}
			return
		}
	} else {
		d.mu.Lock()
		for id := range d.waiting {
			ids = append(ids, id)
		}
		d.mu.Unlock()
	}
	for _, id := range ids {
		free := d.reserve(id)
		if free <= 0 {
			continue
		}
		ds, err := d.Store.ClaimDeliveries(ctx, id, free, now.UnixMilli(), now.Add(d.Lease).UnixMilli())
		if err == nil && len(ds) < free {
			d.mu.Lock()
			delete(d.waiting, id) // none left due now
			d.mu.Unlock()
		}
		if err == nil && len(ds) > 0 {
			var url, secret string
			url, secret, err = d.Store.WebhookTarget(ctx, id)
			if err == nil {
				d.send(ctx, wnms.Claimed{WebhookID: id, URL: url, Secret: secret, Deliveries: ds})
			}
		}
		d.release(id, free)
		if err != nil && wnms.ErrorCode(err) != wnms.ResourceNotFound && ctx.Err() == nil {
			d.Log.Error("webhooks: claiming deliveries failed", "webhook_id", id, "err", err)
		}
	}
}

// freeLocked is how many more deliveries a webhook may have claimed here
// now (d.mu held).
func (d *Dispatcher) freeLocked(id int64) int {
	return max(0, min(claimAhead*d.PerWebhook-d.held[id], claimAhead*d.Total-d.total))
}

// reserve holds every slot a webhook may fill now and returns how many:
// what the caller does not send it gives back with release.
func (d *Dispatcher) reserve(id int64) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	free := d.freeLocked(id)
	d.held[id] += free
	d.total += free
	return free
}

// release gives back n of a webhook's slots.
func (d *Dispatcher) release(id int64, n int) {
	d.mu.Lock()
	d.held[id] -= n
	d.total -= n
	d.mu.Unlock()
}

// hookQueue holds a webhook's claimed deliveries until an attempt is free
// for them: at most PerWebhook workers send them, oldest first.
type hookQueue struct {
	url, secret string
	waiting     []queued
	workers     int
}

// queued is a claimed delivery waiting to be sent before start: later,
// the claim is too close to its end for an attempt to finish within it
// (another server could send it too), so it is given back unsent.
type queued struct {
	d     *wnms.Delivery
	start time.Time
}

// send queues claimed deliveries for their webhook's workers, starting as
// many as may be in flight.
func (d *Dispatcher) send(ctx context.Context, c wnms.Claimed) {
	start := d.Now().Add(d.Lease / 2)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.held[c.WebhookID] += len(c.Deliveries)
	d.total += len(c.Deliveries)
	q := d.queues[c.WebhookID]
	if q == nil {
		q = &hookQueue{}
		d.queues[c.WebhookID] = q
	}
	q.url, q.secret = c.URL, c.Secret
	for _, del := range c.Deliveries {
		q.waiting = append(q.waiting, queued{del, start})
	}
	for q.workers < d.PerWebhook && q.workers < len(q.waiting) {
		q.workers++
		go d.worker(ctx, c.WebhookID, q)
	}
}

// worker sends a webhook's queued deliveries one at a time until none is
// left. When an attempt fails, the deliveries still waiting are given
// back: the webhook backs off as a whole and retries them after its pause.
func (d *Dispatcher) worker(ctx context.Context, id int64, q *hookQueue) {
	for {
		d.mu.Lock()
		if len(q.waiting) == 0 || ctx.Err() != nil {
			q.workers--
			if q.workers == 0 && d.queues[id] == q {
				delete(d.queues, id)
			}
			d.mu.Unlock()
			return
		}
		next := q.waiting[0]
		q.waiting[0] = queued{}
		q.waiting = q.waiting[1:]
		url, secret := q.url, q.secret
		d.mu.Unlock()
		var r wnms.DeliveryResult
		if d.Now().After(next.start) {
			r.Unsent = true
		} else {
			r = d.Send(ctx, url, secret, next.d.EventID, next.d.Body)
			if r.Status < 200 || r.Status >= 300 {
				d.mu.Lock()
				d.giveBack(ctx, id, q)
				d.mu.Unlock()
			}
		}
		r.Delivery = next.d
		d.finished(ctx, id, r)
	}
}

// giveBack returns a webhook's waiting deliveries unsent (d.mu held).
func (d *Dispatcher) giveBack(ctx context.Context, id int64, q *hookQueue) {
	waiting := q.waiting
	q.waiting = nil
	go func() {
		for _, w := range waiting {
			d.finished(ctx, id, wnms.DeliveryResult{Delivery: w.d, Unsent: true})
		}
	}()
}

// finished frees a delivery's slot and hands its result to be recorded.
func (d *Dispatcher) finished(ctx context.Context, id int64, r wnms.DeliveryResult) {
	d.mu.Lock()
	d.held[id]--
	d.total--
	if h := d.hooks[id]; h != nil && h.left {
		h.left = false
		d.events.Store(true) // its events waiting in the outbox can be taken
	}
	d.mu.Unlock()
	d.nudge() // a slot is free
	select {
	case d.results <- r:
	case <-ctx.Done():
	}
}

// finishBatch is the most results one store write records: at thousands
// of deliveries a second the writes must be few and large.
const finishBatch = 1000

// finish records attempts' results, a batch at a time.
func (d *Dispatcher) finish(ctx context.Context) {
	var batch []wnms.DeliveryResult
	flush := func() {
		if len(batch) == 0 {
			return
		}
		// Each webhook's cursor may move below the lowest event handed
		// out and not recorded once this batch is; to its mark when none
		// is left.
		recorded := map[int64]map[int64]bool{}
		for _, r := range batch {
			if del := r.Delivery; del.ID == 0 {
				if recorded[del.WebhookID] == nil {
					recorded[del.WebhookID] = map[int64]bool{}
				}
				recorded[del.WebhookID][del.EventID] = true
			}
		}
		var cursors []wnms.Cursor
		d.mu.Lock()
		owner := d.owner
		for id, evs := range recorded {
			if h := d.hooks[id]; h != nil && h.mark > 0 {
				to := h.mark
				if low := h.low(evs); low > 0 {
					to = min(to, low-1)
				}
				cursors = append(cursors, wnms.Cursor{WebhookID: id, EventID: to})
			}
		}
		d.mu.Unlock()
		lost, err := d.Store.FinishDeliveries(ctx, batch, d.RetryFor, owner, cursors)
		if err != nil && ctx.Err() == nil {
			// Claimed rows' claims run out and they are sent again; the
			// events handed out without a row are below the durable
			// cursor, and are handed out again from there: at least once,
			// never lost.
			d.Log.Error("webhooks: recording results failed", "err", err)
		}
		d.mu.Lock()
		for id, evs := range recorded {
			if h := d.hooks[id]; h != nil {
				for e := range evs {
					delete(h.out, e)
				}
				if err != nil {
					h.mark = 0
					h.gen++
				}
			}
		}
		// A lease lost (the webhook's events are another's now, or it
		// is gone): start again at the durable cursor if it comes back.
		for _, id := range lost {
			if h := d.hooks[id]; h != nil {
				h.mark = 0
				h.gen++
			}
		}
		d.mu.Unlock()
		for _, r := range batch {
			if r.Unsent {
				continue
			}
			ok := r.Status >= 200 && r.Status < 300
			if d.attempts != nil {
				if ok {
					d.attempts.With("delivered").Inc()
					d.latencies.With(r.Delivery.Kind).Observe(float64(r.At-r.Delivery.EventTime) / 1000)
				} else {
					d.attempts.With("failed").Inc()
				}
			}
		}
		batch = batch[:0]
	}
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-d.results:
			batch = append(batch, r)
			if len(batch) >= finishBatch {
				flush()
			}
		case <-t.C:
			// What waits goes in first: a tick that found one result
			// while many queue would record a batch of one.
		drain:
			for len(batch) < finishBatch {
				select {
				case r := <-d.results:
					batch = append(batch, r)
				default:
					break drain
				}
			}
			flush()
		}
	}
}

// Signature is the X-Wnms-Signature of a body sent at ts (Unix seconds):
// "sha256=" and the hex HMAC-SHA256, keyed with the webhook's secret, of
// the timestamp, a dot and the body.
func Signature(secret string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// StandardSignature is the webhook-signature of a body sent at ts (Unix
// seconds) as message id, by the Standard Webhooks specification: "v1,"
// and the base64 HMAC-SHA256, keyed with key (wnms.StandardWebhookKey),
// of the id, a dot, the timestamp, a dot and the body.
func StandardSignature(key []byte, id string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// messageID is a delivery's webhook-id: its event's id, the same on every
// attempt so that a receiver can drop repeats; a test event (id 0), which
// is never retried, has one of its own.
func messageID(eventID int64) string {
	if eventID > 0 {
		return strconv.FormatInt(eventID, 10)
	}
	var b [12]byte
	rand.Read(b[:])
	return "test-" + hex.EncodeToString(b[:])
}

// Send POSTs one event's body to url, signed twice (X-Wnms-Signature and
// the Standard Webhooks webhook-signature), and says how it went.
func (d *Dispatcher) Send(ctx context.Context, url, secret string, eventID int64, body []byte) wnms.DeliveryResult {
	d.init()
	start := d.Now()
	ts := start.Unix()
	r := wnms.DeliveryResult{}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "wnms-webhook/1")
		req.Header.Set("X-Wnms-Event-Id", strconv.FormatInt(eventID, 10))
		req.Header.Set("X-Wnms-Timestamp", strconv.FormatInt(ts, 10))
		req.Header.Set("X-Wnms-Signature", Signature(secret, ts, body))
		// The Standard Webhooks headers (standardwebhooks.com), so that
		// any of its verifiers checks a delivery. A stored secret that is
		// not a valid whsec_ key (saved before they were checked) signs
		// as given.
		key, kerr := wnms.StandardWebhookKey(secret)
		if kerr != nil {
			key = []byte(secret)
		}
		id := messageID(eventID)
		req.Header["webhook-id"] = []string{id}
		req.Header["webhook-timestamp"] = []string{strconv.FormatInt(ts, 10)}
		req.Header["webhook-signature"] = []string{StandardSignature(key, id, ts, body)}
		var resp *http.Response
		if resp, err = d.Client.Do(req); err == nil {
			// Only the status matters; a little of the body is read so the
			// connection can be reused.
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			r.Status = resp.StatusCode
			if r.Status < 200 || r.Status >= 300 {
				r.Error = wnms.DeliveryErrorStatus
			}
		}
	}
	if err != nil {
		// Only the class: the error's text may carry the receiver's own
		// words or tell a closed port from a refused address.
		r.Error = errorClass(err)
	}
	end := d.Now()
	r.At, r.LatencyMS = end.UnixMilli(), end.Sub(start).Milliseconds()
	return r
}

// NewWebhookClient is an HTTP client for webhooks: it connects only to
// addresses targets allows, checked against the address dialled whatever a
// name resolves to at the time, never follows redirects, and gives each
// attempt timeout.
func NewWebhookClient(timeout time.Duration, targets Targets) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, Control: func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%s: %w", address, errRefused)
		}
		if why := targets.Refused(ap.Addr()); why != "" {
			return fmt.Errorf("%s is %s: %w", ap.Addr(), why, errRefused)
		}
		return nil
	}}
	// As many idle connections per receiver as attempts may be in flight
	// to it: with fewer, every burst of attempts past them dials and
	// closes connections of its own, which cost more than the attempts.
	tr := &http.Transport{
		DialContext:           dialer.DialContext,
		MaxIdleConns:          DefaultTotal,
		MaxIdleConnsPerHost:   DefaultPerWebhook,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
