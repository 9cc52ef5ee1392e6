package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/wnms/wnms/internal/wnms"
)

// execQuerier runs statements: a pool or a transaction.
type execQuerier interface {
	querier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

const insertAudit = `INSERT INTO audit_log (customer_id, ts, user_id, login_id, key_id, role, via,
	source_address, request_id, method, path, resource_type, resource_id, status, changed_fields, location_path,
	resource_name, changes, changes_omitted)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) RETURNING id`

// auditArgs are r's values for insertAudit.
func (s *Store) auditArgs(r *wnms.AuditRecord) ([]any, error) {
	if r.Timestamp == 0 {
		r.Timestamp = s.nowMS()
	}
	fields := r.ChangedFields
	if fields == nil {
		fields = []string{}
	}
	fj, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	cj := []byte("[]")
	if len(r.Changes) > 0 {
		if cj, err = json.Marshal(r.Changes); err != nil {
			return nil, err
		}
	}
	return []any{r.CustomerID, r.Timestamp, r.Actor.UserID, r.Actor.LoginID, r.Actor.KeyID, string(r.Actor.Role), r.Actor.Via,
		r.SourceAddress, r.RequestID, r.Method, r.Path, r.ResourceType, r.ResourceID, r.Status, string(fj), r.LocationPath,
		r.ResourceName, string(cj), r.ChangesOmitted}, nil
}

// insertOutbox stores an event in the outbox; on SQLite the one writer
// commits ids in order, so no lock is needed.
const insertOutbox = `INSERT INTO event_outbox (customer_id, kind, ts, location_path, data) VALUES ($1, $2, $3, $4, $5)`

// insertAuditEvent is insertAudit and, in the same statement, the
// configChanged event of the record into the inbox (PostgreSQL): one round
// trip, and no lock on the outbox's order in the change's transaction.
// The event's data is $21, the record's id and $22 joined.
const insertAuditEvent = `WITH a AS (` + insertAudit + `)
	INSERT INTO event_inbox (customer_id, kind, ts, location_path, data)
	SELECT $1, $20, $2, '', $21::text || a.id::text || $22::text FROM a RETURNING (SELECT id FROM a)`

// auditStmts are insertAudit and insertOutbox prepared on the SQLite
// writer: parsing them again in every change's transaction, which holds
// the one writer, cost as much as running them. PostgreSQL's driver
// prepares and caches statements per connection by itself.
type auditStmts struct {
	mu            sync.Mutex
	audit, outbox *sql.Stmt
	// policy reads a global policy in its change's transaction: the value
	// before a change that its audit record compares with the new one;
	// upsertPolicy writes one.
	policy, upsertPolicy *sql.Stmt
}

// prepareAudit prepares the audit statements on the SQLite writer once;
// it must not run inside a transaction of the writer. Until it succeeds
// (before the migrations ran) the statements run unprepared.
func (s *Store) prepareAudit(ctx context.Context) {
	p := &s.audit
	if !preparesOnWriter(s.dialect) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.outbox != nil {
		return
	}
	// Not the caller's context: statements outlive the call.
	ctx = context.WithoutCancel(ctx)
	a, err := s.w.PrepareContext(ctx, strings.TrimSuffix(insertAudit, " RETURNING id"))
	if err != nil {
		return
	}
	o, err := s.w.PrepareContext(ctx, insertOutbox)
	if err != nil {
		a.Close()
		return
	}
	pol, err := s.w.PrepareContext(ctx, selectPolicy)
	if err != nil {
		a.Close()
		o.Close()
		return
	}
	up, err := s.w.PrepareContext(ctx, upsertPolicy)
	if err != nil {
		a.Close()
		o.Close()
		pol.Close()
		return
	}
	p.audit, p.outbox, p.policy, p.upsertPolicy = a, o, pol, up
}

// stmt is the prepared form of st on q (a pool or a transaction of the
// writer), or nil.
func (p *auditStmts) stmt(ctx context.Context, q execQuerier, st func(p *auditStmts) *sql.Stmt) *sql.Stmt {
	p.mu.Lock()
	ps := st(p)
	p.mu.Unlock()
	if ps == nil {
		return nil
	}
	if tx, ok := q.(*sql.Tx); ok {
		return tx.StmtContext(ctx, ps)
	}
	if db, ok := q.(*sql.DB); ok && db != nil {
		return ps
	}
	return nil
}

// writeAudit stores r on q and returns its id.
func (s *Store) writeAudit(ctx context.Context, q execQuerier, r *wnms.AuditRecord) (int64, error) {
	args, err := s.auditArgs(r)
	if err != nil {
		return 0, err
	}
	if st := s.audit.stmt(ctx, q, func(p *auditStmts) *sql.Stmt { return p.audit }); st != nil {
		// SQLite: the row id of an insert costs less than RETURNING's row.
		var res sql.Result
		if res, err = st.ExecContext(ctx, args...); err == nil {
			r.ID, err = res.LastInsertId()
		}
	} else {
		err = q.QueryRowContext(ctx, insertAudit, args...).Scan(&r.ID)
	}
	return r.ID, err
}

// writeAuditEvent stores r and its configChanged event on tx and returns
// the record's id. On PostgreSQL the event goes to the inbox
// (SequenceEvents gives it its outbox id), in the record's statement; on
// SQLite, whose one writer commits in id order, to the outbox.
func (s *Store) writeAuditEvent(ctx context.Context, tx *sql.Tx, r *wnms.AuditRecord) (int64, error) {
	if !sequencesEvents(s.dialect) {
		id, err := s.writeAudit(ctx, tx, r)
		if err != nil {
			return 0, err
		}
		pre, post := configChangedData(*r)
		args := []any{r.CustomerID, wnms.EventConfigChanged, r.Timestamp, "", pre + strconv.FormatInt(id, 10) + post}
		if st := s.audit.stmt(ctx, tx, func(p *auditStmts) *sql.Stmt { return p.outbox }); st != nil {
			_, err = st.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, insertOutbox, args...)
		}
		return id, err
	}
	args, err := s.auditArgs(r)
	if err != nil {
		return 0, err
	}
	pre, post := configChangedData(*r)
	err = tx.QueryRowContext(ctx, insertAuditEvent, append(args, wnms.EventConfigChanged, pre, post)...).Scan(&r.ID)
	return r.ID, err
}

// auditInBulk is auditInTx for a bulk transaction: an ingest batch's,
// when the telemetry lives in the main database (PostgreSQL). On SQLite the
// telemetry file is a database of its own, and the call's record is
// written when the call ends, just after its batch committed.
func (s *Store) auditInBulk(ctx context.Context, b *bulkTx) (done func(committed bool), err error) {
	e := wnms.AuditFrom(ctx)
	if e == nil || s.tw != s.w {
		return func(bool) {}, nil
	}
	rec, ok := e.Claim()
	if !ok {
		return func(bool) {}, nil
	}
	args, err := s.auditArgs(&rec)
	if err == nil {
		rec.ID, err = b.QueryInt(ctx, insertAudit, args...)
	}
	if err != nil {
		e.Release()
		return nil, err
	}
	return func(committed bool) {
		if committed {
			e.Written(rec.ID)
		} else {
			e.Release()
		}
	}, nil
}

// auditInTx writes the audit record of the call in ctx, if it has one that
// no earlier transaction of the call wrote, inside tx: the change tx makes
// and its record commit together. It returns what to do once tx ended.
func (s *Store) auditInTx(ctx context.Context, tx *sql.Tx) (done func(committed bool), err error) {
	e := wnms.AuditFrom(ctx)
	if e == nil {
		return func(bool) {}, nil
	}
	rec, ok := e.Claim()
	if !ok {
		return func(bool) {}, nil
	}
	var id int64
	if ConfigChange(rec.ResourceType) {
		id, err = s.writeAuditEvent(ctx, tx, &rec)
	} else {
		id, err = s.writeAudit(ctx, tx, &rec)
	}
	if err != nil {
		e.Release()
		return nil, err
	}
	return func(committed bool) {
		if committed {
			e.Written(id)
		} else {
			e.Release()
		}
	}, nil
}

// auditAlso writes, inside tx, a second record for the call in ctx: a
// change the call made to another resource than its own (the lock that a
// failed login puts on its user), named name, changed from before to
// after (wnms.Diff). A change made outside any call records nothing here.
func (s *Store) auditAlso(ctx context.Context, tx *sql.Tx, resourceType, resourceID, name string, before, after any) error {
	e := wnms.AuditFrom(ctx)
	if e == nil {
		return nil
	}
	r := e.Record()
	if r.CustomerID == 0 {
		return nil
	}
	r.Changes, r.ChangesOmitted = wnms.Diff(before, after)
	fields := make([]string, len(r.Changes))
	for i, c := range r.Changes {
		fields[i] = c.Field
	}
	r.ResourceType, r.ResourceID, r.ResourceName, r.ChangedFields, r.Status = resourceType, resourceID, name, fields, 200
	_, err := s.writeAudit(ctx, tx, &r)
	return err
}

// auditCreated names the resource a call created in its audit record.
func auditCreated(ctx context.Context, id int64) {
	if e := wnms.AuditFrom(ctx); e != nil {
		e.SetResource("", strconv.FormatInt(id, 10))
	}
}

// auditChange records, in the audit record of the call in ctx, the name of
// the resource a transaction changes and its change from before to after
// (nil before: created; nil after: deleted), as wnms.Diff lists it. It
// must run inside the transaction, before it commits (the record is
// written in it); a change made outside any call records nothing.
func auditChange(ctx context.Context, name string, before, after any) {
	if e := wnms.AuditFrom(ctx); e != nil {
		e.SetChange(name, before, after)
	}
}

// AppendAudit stores a record on its own (wnms.AuditStore).
func (s *Store) AppendAudit(ctx context.Context, r *wnms.AuditRecord) error {
	_, err := s.writeAudit(ctx, s.w, r)
	return err
}

// SetAuditStatus corrects a record's status (wnms.AuditStore).
func (s *Store) SetAuditStatus(ctx context.Context, id int64, status int) error {
	_, err := s.w.ExecContext(ctx, `UPDATE audit_log SET status = $1 WHERE id = $2`, status, id)
	return err
}

// PurgeAudit deletes the records older than before, customer by customer
// through the (customer, time) index (no index on time alone: each index
// is a page more for every audited change to write), in batches so that a
// long backlog never holds the writer for long (wnms.AuditStore).
func (s *Store) PurgeAudit(ctx context.Context, before int64) (int64, error) {
	var total int64
	customer := int64(math.MinInt64)
	for {
		var next sql.NullInt64
		if err := s.r.QueryRowContext(ctx, `SELECT min(customer_id) FROM audit_log WHERE customer_id > $1`, customer).Scan(&next); err != nil {
			return total, err
		}
		if !next.Valid {
			return total, nil
		}
		customer = next.Int64
		for {
			res, err := s.w.ExecContext(ctx, `DELETE FROM audit_log WHERE id IN
				(SELECT id FROM audit_log WHERE customer_id = $1 AND ts < $2 LIMIT 10000)`, customer, before)
			if err != nil {
				return total, err
			}
			n, _ := res.RowsAffected()
			total += n
			if ctx.Err() != nil {
				return total, ctx.Err()
			}
			if n < 10000 {
				break
			}
		}
	}
}

// AuditRecords lists a customer's records, newest first (ties by id), with
// the number that match; page and count come from one snapshot
// (wnms.AuditStore).
func (s *Store) AuditRecords(ctx context.Context, q wnms.AuditQuery) ([]wnms.AuditRecord, int, error) {
	where := []string{"customer_id = $1"}
	args := []any{q.CustomerID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if q.From >= 0 {
		add("ts >= ?", q.From)
	}
	if q.To >= 0 {
		add("ts <= ?", q.To)
	}
	if q.LoginID != "" {
		add("login_id = ?", q.LoginID)
	}
	if q.ResourceType != "" {
		add("resource_type = ?", q.ResourceType)
	}
	if q.Scope != nil {
		args = append(args, q.Self)
		in := []string{"user_id = $" + strconv.Itoa(len(args))}
		for _, p := range q.Scope {
			lo, hi := subtreeBounds(p)
			args = append(args, lo, hi)
			in = append(in, subtreeMatch(s.dialect, "location_path", "$"+strconv.Itoa(len(args)-1), "$"+strconv.Itoa(len(args))))
		}
		where = append(where, "("+strings.Join(in, " OR ")+")")
	}
	cond := strings.Join(where, " AND ")
	n := len(args)
	return snapshotPage(ctx, s.r, `SELECT count(*) FROM audit_log WHERE `+cond, args,
		`SELECT id, customer_id, ts, user_id, login_id, key_id, role, via, source_address,
		request_id, method, path, resource_type, resource_id, status, changed_fields, resource_name, changes, changes_omitted
		FROM audit_log WHERE `+cond+` ORDER BY ts DESC, id DESC LIMIT $`+strconv.Itoa(n+1)+` OFFSET $`+strconv.Itoa(n+2),
		append(args, q.Limit, q.Offset), scanAuditRecord)
}

// scanAuditRecord scans a row of the audit log (AuditRecords' columns).
func scanAuditRecord(sc scanner) (wnms.AuditRecord, error) {
	var r wnms.AuditRecord
	var role string
	var fields, changes jsonText
	if err := sc.Scan(&r.ID, &r.CustomerID, &r.Timestamp, &r.Actor.UserID, &r.Actor.LoginID, &r.Actor.KeyID, &role,
		&r.Actor.Via, &r.SourceAddress, &r.RequestID, &r.Method, &r.Path, &r.ResourceType, &r.ResourceID, &r.Status,
		&fields, &r.ResourceName, &changes, &r.ChangesOmitted); err != nil {
		return r, err
	}
	r.Actor.Role = wnms.Role(role)
	if err := json.Unmarshal(fields, &r.ChangedFields); err != nil {
		return r, err
	}
	return r, json.Unmarshal(changes, &r.Changes)
}

// ConfigChange reports whether a committed change to a resource of this
// type is a configuration change, announced as a configChanged event:
// anything but sessions (logins, logouts) and telemetry intake.
func ConfigChange(resourceType string) bool {
	return resourceType != "session" && !strings.HasPrefix(resourceType, "ingest/")
}

// configChangedData is the data of the configChanged event of a
// configuration change, from its audit record (what changed, how and by
// whom; never a value), around the record's id: the event's data is pre,
// the id and post, so that it can be stored in the record's own statement.
func configChangedData(r wnms.AuditRecord) (pre, post string) {
	actor, _ := json.Marshal(struct {
		LoginID string `json:"loginId"`
		Via     string `json:"via"`
	}{r.Actor.LoginID, r.Actor.Via})
	rest, _ := json.Marshal(struct {
		ChangedFields []string `json:"changedFields"`
		Method        string   `json:"method"`
		Path          string   `json:"path"`
		ResourceID    string   `json:"resourceId"`
		ResourceType  string   `json:"resourceType"`
	}{r.ChangedFields, r.Method, r.Path, r.ResourceID, r.ResourceType})
	return `{"actor":` + string(actor) + `,"auditId":`, "," + string(rest[1:])
}
