package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

const webhookColumns = `id, customer_id, url, secret, kinds, location_id, location_path, enabled, created_at FROM webhooks`

func scanWebhook(sc scanner) (*wnms.Webhook, error) {
	var w wnms.Webhook
	var kinds jsonText
	var loc int64
	if err := sc.Scan(&w.ID, &w.CustomerID, &w.URL, &w.Secret, &kinds, &loc, &w.LocationPath, &w.Enabled, &w.CreatedAt); err != nil {
		return nil, err
	}
	w.LocationID = wnms.LocalID(loc)
	if err := json.Unmarshal(kinds, &w.Kinds); err != nil {
		return nil, err
	}
	return &w, nil
}

// Webhooks lists a customer's webhooks, oldest first (wnms.WebhookStore).
func (s *Store) Webhooks(ctx context.Context, customerID int64) ([]wnms.Webhook, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+webhookColumns+` WHERE customer_id = $1 ORDER BY id`, customerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []wnms.Webhook{}
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *w)
	}
	return out, rows.Err()
}

// Webhook reads one of a customer's webhooks; another customer's is
// RESOURCE_NOT_FOUND (wnms.WebhookStore).
func (s *Store) Webhook(ctx context.Context, customerID, id int64) (*wnms.Webhook, error) {
	return s.webhookOn(ctx, s.r, customerID, id, "")
}

func (s *Store) webhookOn(ctx context.Context, q querier, customerID, id int64, lock string) (*wnms.Webhook, error) {
	w, err := scanWebhook(q.QueryRowContext(ctx, `SELECT `+webhookColumns+` WHERE id = $1 AND customer_id = $2`+lock, id, customerID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, wnms.NotFound("no webhook %d", id)
	}
	return w, err
}

// CreateWebhook stores a new webhook, which takes the events raised from
// now on (wnms.WebhookStore).
func (s *Store) CreateWebhook(ctx context.Context, w *wnms.Webhook) error {
	kinds, err := json.Marshal(w.Kinds)
	if err != nil {
		return err
	}
	w.CreatedAt = s.nowMS()
	return s.tx(ctx, func(tx *sql.Tx) error {
		var cursor sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT max(id) FROM event_outbox`).Scan(&cursor); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `INSERT INTO webhooks (customer_id, url, secret, kinds, location_id, location_path,
			enabled, cursor, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
			w.CustomerID, w.URL, w.Secret, string(kinds), w.LocationID.ID, w.LocationPath, w.Enabled, cursor.Int64, w.CreatedAt).Scan(&w.ID); err != nil {
			return err
		}
		auditCreated(ctx, w.ID)
		auditChange(ctx, webhookName(w.URL), nil, auditWebhook(w))
		return nil
	})
}

// UpdateWebhook replaces a webhook by update(current), read and written in
// one transaction (wnms.WebhookStore).
func (s *Store) UpdateWebhook(ctx context.Context, customerID, id int64, update func(w *wnms.Webhook) error) (*wnms.Webhook, error) {
	var out *wnms.Webhook
	err := s.txSolo(ctx, func(tx *sql.Tx) error { // update checks against the store
		w, err := s.webhookOn(ctx, tx, customerID, id, forUpdate(s.dialect, "webhooks"))
		if err != nil {
			return err
		}
		was := w.Enabled
		before, err := json.Marshal(auditWebhook(w)) // for the audit record; update changes w
		if err != nil {
			return err
		}
		if err := update(w); err != nil {
			return err
		}
		auditChange(ctx, webhookName(w.URL), json.RawMessage(before), auditWebhook(w))
		kinds, err := json.Marshal(w.Kinds)
		if err != nil {
			return err
		}
		// A change of address or secret starts afresh: the back-off of a
		// receiver that failed is no reason to wait for a new one. A
		// webhook enabled again takes the events from now on, as a new one.
		if _, err := tx.ExecContext(ctx, `UPDATE webhooks SET url = $1, secret = $2, kinds = $3, location_id = $4,
			location_path = $5, enabled = $6, failures = 0, paused_until = 0 WHERE id = $7`,
			w.URL, w.Secret, string(kinds), w.LocationID.ID, w.LocationPath, w.Enabled, id); err != nil {
			return err
		}
		if w.Enabled && !was {
			if _, err := tx.ExecContext(ctx, `UPDATE webhooks SET cursor = (SELECT coalesce(max(id), 0) FROM event_outbox) WHERE id = $1`, id); err != nil {
				return err
			}
		}
		out = w
		return nil
	})
	return out, err
}

// DeleteWebhook removes a webhook and its deliveries (wnms.WebhookStore).
func (s *Store) DeleteWebhook(ctx context.Context, customerID, id int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if w, err := s.webhookOn(ctx, tx, customerID, id, ""); err == nil {
			auditChange(ctx, webhookName(w.URL), auditWebhook(w), nil)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM webhooks WHERE id = $1 AND customer_id = $2`, id, customerID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return wnms.NotFound("no webhook %d", id)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE webhook_id = $1`, id)
		return err
	})
}

const (
	deliveryFields = `id, webhook_id, event_id, kind, event_ts, state, attempts, next_at, last_status, last_error,
	last_latency_ms, updated_at`
	deliveryColumns = deliveryFields + ` FROM webhook_deliveries`
)

func scanDelivery(sc scanner, body *jsonText) (*wnms.Delivery, error) {
	var d wnms.Delivery
	dest := []any{&d.ID, &d.WebhookID, &d.EventID, &d.Kind, &d.EventTime, &d.State, &d.Attempts, &d.NextAttemptAt,
		&d.LastStatus, &d.LastError, &d.LastLatencyMS, &d.UpdatedAt}
	if body != nil {
		dest = append(dest, body)
	}
	if err := sc.Scan(dest...); err != nil {
		return nil, err
	}
	// last_error holds the failure's class only (wnms.DeliveryErrorText).
	d.LastErrorClass = d.LastError
	d.LastError = wnms.DeliveryErrorText(d.LastErrorClass, d.LastStatus)
	if body != nil {
		d.Body = *body
	}
	return &d, nil
}

// Deliveries lists a webhook's deliveries, the latest changed first, with
// how many there are (wnms.WebhookStore).
func (s *Store) Deliveries(ctx context.Context, webhookID int64, offset, limit int) ([]wnms.Delivery, int, error) {
	return snapshotPage(ctx, s.r, `SELECT count(*) FROM webhook_deliveries WHERE webhook_id = $1`, []any{webhookID},
		`SELECT `+deliveryColumns+` WHERE webhook_id = $1 ORDER BY updated_at DESC, id DESC LIMIT $2 OFFSET $3`,
		[]any{webhookID, limit, offset}, func(sc scanner) (wnms.Delivery, error) {
			d, err := scanDelivery(sc, nil)
			if err != nil {
				return wnms.Delivery{}, err
			}
			return *d, nil
		})
}

// QueueBatch is how many outbox events one pass reads for a webhook.
const QueueBatch = 1000

// QueueDeliveries passes every enabled webhook's new outbox events to
// deliveries, in one transaction; on PostgreSQL it locks the webhooks'
// rows (FOR NO KEY UPDATE), skipping those another replica is passing or
// recording results of.
//
// A webhook is read by the dispatcher that holds its lease: a webhook
// whose lease another owner holds until after now is skipped; one whose
// lease is free, run out or pass.Owner's is taken (or renewed) until
// pass.Until. Its events after the later of its durable cursor and the
// owner's mark (pass.Hook; a lease just taken starts at the cursor) are
// read, up to QueueBatch after the lowest start. A webhook not backing
// off is handed the events it wants, as deliveries with no row, up to
// the free attempts pass.Hook allows; the others stay in the outbox for
// a later pass (Claimed.Left), and Claimed.Mark ends at the last event
// handed out. A webhook backing off has them queued as pending rows
// (Claimed.Waiting says how many) for ClaimDeliveries after its pause.
//
// The durable cursor only moves to an event below which nothing the
// owner handed out is unrecorded (the low that pass.Hook gives, and
// what this pass hands out), so a server killed with deliveries in
// flight leaves their events to the lease's next holder. Every webhook
// given deliveries or left events is in the answer.
func (s *Store) QueueDeliveries(ctx context.Context, pass wnms.QueuePass) ([]wnms.Claimed, error) {
	var out []wnms.Claimed
	err := s.tx(ctx, func(tx *sql.Tx) error {
		out = nil
		// NO KEY UPDATE, the lock the pass's updates take anyway: FOR
		// UPDATE also conflicts with the key-share lock that recording
		// results (FinishDeliveries) takes on the same rows through the
		// deliveries' foreign key for its whole transaction, and the pass
		// skipped every webhook whose results were being recorded,
		// delaying its new events to a later pass.
		lock := skipLocked(s.dialect, "NO KEY UPDATE")
		rows, err := tx.QueryContext(ctx, `SELECT id, customer_id, url, secret, kinds, location_path, cursor, paused_until,
			lease_owner, lease_until FROM webhooks WHERE enabled ORDER BY id`+lock)
		if err != nil {
			return err
		}
		type hook struct {
			w          wnms.Webhook
			c          wnms.Claimed
			cursor     int64
			paused     int64
			owner      string
			leaseUntil int64
			start, low int64 // events after start are read; low: see pass.Hook
			free       int
		}
		now := s.nowMS()
		var hooks []*hook
		first := int64(-1)
		for rows.Next() {
			h := &hook{}
			var kinds jsonText
			if err := rows.Scan(&h.w.ID, &h.w.CustomerID, &h.c.URL, &h.c.Secret, &kinds, &h.w.LocationPath, &h.cursor, &h.paused,
				&h.owner, &h.leaseUntil); err != nil {
				rows.Close()
				return err
			}
			if h.owner != pass.Owner && h.owner != "" && h.leaseUntil > now {
				continue // another dispatcher's
			}
			if err := json.Unmarshal(kinds, &h.w.Kinds); err != nil {
				rows.Close()
				return err
			}
			h.c.WebhookID, h.c.Leased = h.w.ID, true
			mark, low, free := pass.Hook(h.w.ID, h.owner != pass.Owner)
			h.start, h.low, h.free = max(h.cursor, mark), low, free
			hooks = append(hooks, h)
			// One with no free attempt takes nothing: it does not hold the
			// others back.
			if (h.free > 0 || h.paused > now) && (first < 0 || h.start < first) {
				first = h.start
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(hooks) == 0 {
			return err
		}
		var evs []*wnms.Event
		last := first
		if first >= 0 {
			if evs, err = eventsAfter(ctx, tx, first, QueueBatch); err != nil {
				return err
			}
			if len(evs) > 0 {
				last = evs[len(evs)-1].ID
			}
		}
		// A lease is renewed when less than half of it is left.
		renewAt := now + (pass.Until-now)/2
		// The webhooks whose lease is taken or renewed, or whose cursor
		// moves (to EventID), written together at the end.
		var leased []wnms.Cursor
		for _, h := range hooks {
			h.c.Mark = h.start
			safe := h.start // where the durable cursor may move
			if h.paused <= now && h.free == 0 {
				h.c.Left = true // not read: the events after start wait
			} else if h.start < last {
				var queue []*wnms.Event
				for _, e := range evs {
					if e.ID <= h.start {
						continue
					}
					if h.w.Wants(e) {
						if h.paused <= now && len(h.c.Deliveries) == h.free {
							h.c.Left = true
							break
						}
						if err := e.Encode(); err != nil {
							return err
						}
						if h.paused > now { // a receiver backing off takes its retries first
							queue = append(queue, e)
						} else {
							h.c.Deliveries = append(h.c.Deliveries, &wnms.Delivery{WebhookID: h.w.ID, EventID: e.ID,
								Kind: e.Kind, EventTime: e.Timestamp, State: wnms.DeliveryPending, Body: e.JSON})
						}
					}
					h.c.Mark = e.ID
				}
				if !h.c.Left {
					h.c.Mark = last
				}
				h.c.Waiting = len(queue)
				for len(queue) > 0 {
					n := min(len(queue), 500)
					if _, err := s.queueBatch(ctx, tx, h.w.ID, queue[:n], nil, now, 0); err != nil {
						return err
					}
					queue = queue[n:]
				}
				safe = h.c.Mark
				if len(h.c.Deliveries) > 0 {
					safe = h.c.Deliveries[0].EventID - 1
				}
			}
			if h.low > 0 {
				safe = min(safe, h.low-1)
			}
			if h.owner != pass.Owner || h.leaseUntil < renewAt || safe > h.cursor {
				leased = append(leased, wnms.Cursor{WebhookID: h.w.ID, EventID: safe})
			}
			if len(h.c.Deliveries) > 0 || h.c.Waiting > 0 || h.c.Left || h.c.Mark != h.start || h.owner != pass.Owner {
				out = append(out, h.c)
			}
		}
		return s.leaseWebhooks(ctx, tx, leased, pass)
	})
	return out, err
}

// leaseWebhooks gives pass.Owner the lease of each webhook of cs until
// pass.Until and moves its cursor up to the cursor's event: in one
// statement on PostgreSQL (a statement a webhook was a round trip each in
// every queue pass), a prepared one a webhook on SQLite.
func (s *Store) leaseWebhooks(ctx context.Context, tx *sql.Tx, cs []wnms.Cursor, pass wnms.QueuePass) error {
	if len(cs) == 0 {
		return nil
	}
	if writesArrays(s.dialect) {
		ids, events := make([]int64, len(cs)), make([]int64, len(cs))
		for i, c := range cs {
			ids[i], events[i] = c.WebhookID, c.EventID
		}
		_, err := tx.ExecContext(ctx, `UPDATE webhooks w SET lease_owner = $1, lease_until = $2, cursor = GREATEST(w.cursor, v.event_id)
			FROM unnest($3::bigint[], $4::bigint[]) AS v (id, event_id) WHERE w.id = v.id`, pass.Owner, pass.Until, ids, events)
		return err
	}
	st, err := tx.PrepareContext(ctx, `UPDATE webhooks SET lease_owner = $1, lease_until = $2, cursor = `+greatest(s.dialect)+`(cursor, $3)
		WHERE id = $4`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, c := range cs {
		if _, err := st.ExecContext(ctx, pass.Owner, pass.Until, c.EventID, c.WebhookID); err != nil {
			return err
		}
	}
	return nil
}

// DueWebhooks are the ids of the enabled webhooks not backing off at now
// (ms) that have a delivery due and not claimed: the only ones a claim
// (ClaimDeliveries) can find something for. While receivers answer there
// are none, and finding that is one read, where a claim per webhook was a
// write transaction each (on SQLite, of the one writer).
func (s *Store) DueWebhooks(ctx context.Context, now int64) ([]int64, error) {
	return queryIDs(ctx, s.r, `SELECT w.id FROM webhooks w WHERE w.enabled AND w.paused_until <= $1 AND EXISTS (
		SELECT 1 FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.state = $2 AND d.next_at <= $1 AND d.claim_until < $1)
		ORDER BY w.id`, now, wnms.DeliveryPending)
}

// ClaimDeliveries claims at most n of a webhook's due deliveries until
// until (ms), oldest due first: no other server sends them before the
// claim ends (rows another replica is claiming are skipped on PostgreSQL).
func (s *Store) ClaimDeliveries(ctx context.Context, webhookID int64, n int, now, until int64) ([]*wnms.Delivery, error) {
	var out []*wnms.Delivery
	skip := skipLocked(s.dialect, "UPDATE")
	err := txOn(ctx, s.w, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `UPDATE webhook_deliveries SET claim_until = $1 WHERE id IN (
			SELECT id FROM webhook_deliveries WHERE webhook_id = $2 AND state = $3 AND next_at <= $4 AND claim_until < $4
			ORDER BY next_at, id LIMIT $5`+skip+`) RETURNING `+deliveryFields+`, body`,
			until, webhookID, wnms.DeliveryPending, now, n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var body jsonText
			d, err := scanDelivery(rows, &body)
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		return rows.Err()
	})
	return out, err
}

// WebhookTarget reads a webhook's URL and the secret that signs its
// deliveries.
func (s *Store) WebhookTarget(ctx context.Context, id int64) (url, secret string, err error) {
	err = s.r.QueryRowContext(ctx, `SELECT url, secret FROM webhooks WHERE id = $1`, id).Scan(&url, &secret)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", wnms.NotFound("no webhook %d", id)
	}
	return url, secret, err
}

// Backoff is the wait before retry number n (1: the first): 1 s doubling,
// at most 10 minutes.
func Backoff(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	if n > 10 {
		return 10 * time.Minute
	}
	return min(time.Second<<(n-1), 10*time.Minute)
}

// FinishDeliveries records how attempts ended, in one transaction: a 2xx
// delivers; anything else is retried after Backoff(attempts), until the
// event is retryFor old, when the delivery has failed. An unsent delivery
// only gives its claim back. A delivery handed out with no row (ID 0) has
// its row written now, once, in that state: pending ones (unsent, or to
// be retried) keep the body for their retry, the others do not need it;
// a row the event has already is left as it is. A webhook whose attempt
// failed backs off as a whole (Backoff of its consecutive failures) so
// that a dead receiver costs one attempt at a time; one that answered
// starts afresh.
//
// In the same transaction each of cursors moves its webhook's durable
// cursor forward, if owner still holds the webhook's lease; lost are the
// webhooks of cursors whose lease it does not.
func (s *Store) FinishDeliveries(ctx context.Context, rs []wnms.DeliveryResult, retryFor time.Duration, owner string,
	cursors []wnms.Cursor) (lost []int64, err error) {
	if len(rs) == 0 && len(cursors) == 0 {
		return nil, nil
	}
	err = txOn(ctx, s.w, func(tx *sql.Tx) error {
		lost = nil
		now := s.nowMS()
		answered := map[int64]bool{}
		var updates, records [][]any
		var unsent []int64
		for _, r := range rs {
			d := r.Delivery
			if r.Unsent {
				if d.ID == 0 {
					records = append(records, []any{d.WebhookID, d.EventID, d.Kind, d.EventTime, string(d.Body),
						wnms.DeliveryPending, d.Attempts, now, 0, "", int64(0), now})
				} else {
					unsent = append(unsent, d.ID)
				}
				continue
			}
			attempts := d.Attempts + 1
			state, next := wnms.DeliveryDelivered, r.At
			ok := r.Status >= 200 && r.Status < 300
			if !ok {
				state, next = wnms.DeliveryPending, r.At+Backoff(attempts).Milliseconds()
				if next-d.EventTime >= retryFor.Milliseconds() {
					state = wnms.DeliveryFailed
				}
			}
			if d.ID == 0 {
				body := ""
				if state == wnms.DeliveryPending {
					body = string(d.Body)
				}
				records = append(records, []any{d.WebhookID, d.EventID, d.Kind, d.EventTime, body,
					state, attempts, next, r.Status, r.Error, r.LatencyMS, r.At})
			} else {
				updates = append(updates, []any{d.ID, state, attempts, next, r.Status, r.Error, r.LatencyMS, r.At})
			}
			var err error
			if ok {
				answered[d.WebhookID] = true
			} else {
				// Attempts that fail together (sent in one round) count
				// once: only a failure after the pause ended pauses again.
				var failures int
				if err = tx.QueryRowContext(ctx, `UPDATE webhooks SET failures = failures + 1 WHERE id = $1 AND paused_until <= $2
					RETURNING failures`, d.WebhookID, r.At).Scan(&failures); errors.Is(err, sql.ErrNoRows) {
					continue // paused already, or deleted meanwhile
				} else if err != nil {
					return err
				}
				_, err = tx.ExecContext(ctx, `UPDATE webhooks SET paused_until = $1 WHERE id = $2`,
					r.At+Backoff(failures).Milliseconds(), d.WebhookID)
			}
			if err != nil {
				return err
			}
		}
		for len(updates) > 0 {
			n := min(len(updates), 5000)
			if err := s.finishBatch(ctx, tx, updates[:n]); err != nil {
				return err
			}
			updates = updates[n:]
		}
		for len(records) > 0 {
			n := min(len(records), 5000)
			if err := s.recordBatch(ctx, tx, records[:n]); err != nil {
				return err
			}
			records = records[n:]
		}
		if len(unsent) > 0 {
			q, args := idList(s.dialect, `UPDATE webhook_deliveries SET claim_until = 0 WHERE id`, unsent)
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return err
			}
		}
		// A webhook that answered starts afresh: once per batch.
		var ok []int64
		for id := range answered {
			ok = append(ok, id)
		}
		slices.Sort(ok)
		cs := slices.Clone(cursors)
		slices.SortFunc(cs, func(a, b wnms.Cursor) int { return cmp.Compare(a.WebhookID, b.WebhookID) })
		if writesArrays(s.dialect) {
			var err error
			lost, err = s.finishWebhooksPG(ctx, tx, ok, cs, owner)
			return err
		}
		if len(ok) > 0 {
			q, args := idList(s.dialect, `UPDATE webhooks SET failures = 0, paused_until = 0 WHERE failures <> 0 AND id`, ok)
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return err
			}
		}
		for _, c := range cs {
			res, err := tx.ExecContext(ctx, `UPDATE webhooks SET cursor = `+greatest(s.dialect)+`(cursor, $1)
				WHERE id = $2 AND lease_owner = $3`, c.EventID, c.WebhookID, owner)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				lost = append(lost, c.WebhookID)
			}
		}
		return nil
	})
	return lost, err
}

// finishWebhooksPG is the end of FinishDeliveries on PostgreSQL, in three
// statements whatever the number of webhooks: the webhooks' rows locked
// in id order (a queue pass skips locked rows; two servers finishing
// together wait for each other in one order; NO KEY UPDATE, the lock the
// updates take anyway, so as not to conflict with the key-share lock the
// delivery rows' foreign key takes on the same rows), the failures of those that
// answered reset, and the cursors moved (each only up, and only while
// owner holds the webhook's lease). It returns the webhooks of cursors
// whose lease is lost.
func (s *Store) finishWebhooksPG(ctx context.Context, tx *sql.Tx, answered []int64, cs []wnms.Cursor, owner string) ([]int64, error) {
	ids := slices.Clone(answered)
	hooks, events := make([]int64, len(cs)), make([]int64, len(cs))
	for i, c := range cs {
		ids = append(ids, c.WebhookID)
		hooks[i], events[i] = c.WebhookID, c.EventID
	}
	if len(ids) == 0 {
		return nil, nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if _, err := tx.ExecContext(ctx, `SELECT id FROM webhooks WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE`, ids); err != nil {
		return nil, err
	}
	if len(answered) > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE webhooks SET failures = 0, paused_until = 0
			WHERE failures <> 0 AND id = ANY($1)`, answered); err != nil {
			return nil, err
		}
	}
	if len(cs) == 0 {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, `UPDATE webhooks w SET cursor = GREATEST(w.cursor, v.event_id)
		FROM unnest($1::bigint[], $2::bigint[]) AS v (id, event_id)
		WHERE w.id = v.id AND w.lease_owner = $3 RETURNING w.id`, hooks, events, owner)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	moved := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		moved[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var lost []int64
	for _, id := range hooks {
		if !moved[id] {
			lost = append(lost, id)
		}
	}
	return lost, nil
}

// eventsAfter is EventsAfter on q.
func eventsAfter(ctx context.Context, q querier, after int64, limit int) ([]*wnms.Event, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, customer_id, kind, ts, location_path, data FROM event_outbox
		WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*wnms.Event
	for rows.Next() {
		var e wnms.Event
		var data jsonText
		if err := rows.Scan(&e.ID, &e.CustomerID, &e.Kind, &e.Timestamp, &e.LocationPath, &data); err != nil {
			return nil, err
		}
		e.Data = json.RawMessage(data)
		out = append(out, &e)
	}
	return out, rows.Err()
}

// webhookName names a webhook in the audit log: its URL's host (the rest
// of a URL may carry a token).
func webhookName(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return ""
}

// auditWebhook is a webhook as its audit record compares it: a password
// in its URL's user information shows as "xxxxx" (the secret field is
// masked by the record itself).
func auditWebhook(w *wnms.Webhook) *wnms.Webhook {
	c := *w
	if u, err := url.Parse(w.URL); err == nil {
		c.URL = u.Redacted()
	}
	return &c
}
