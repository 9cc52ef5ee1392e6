package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/wnms"
)

// The service levels' hourly counts (service_level_hours), kept by every
// ingest in the transaction that stores its events, as the baseline
// slots' client rows are (slotclients.go), and for the same reasons exact:
//   - A batch all of whose events were stored adds its attempts' counts.
//   - A batch of which some were not (a retry) cannot tell which: the
//     counts of every hour it names are made again from the stored
//     events instead (an hour's events, read once, counted in memory by
//     row of the table, which is at most its number of places and
//     outcomes).
//
// On PostgreSQL additions commute and take the hours' advisory locks
// shared; a recount takes them exclusively after the batch's events are
// written, so it waits for the additions under way and counts them all.

var serviceLevelColumns = []string{"customer_id", "hour", "location_id", "ap_box_id", "ssid", "band", "outcome", "ttc_steps", "attempts"}

const serviceLevelKey = "ON CONFLICT (customer_id, hour, location_id, ap_box_id, ssid, band, outcome, ttc_steps) DO UPDATE SET "

func compareServiceKeys(a, b wnms.ServiceLevelKey) int {
	return cmp.Or(cmp.Compare(a.Hour, b.Hour), cmp.Compare(a.LocationID, b.LocationID), cmp.Compare(a.APBoxID, b.APBoxID),
		strings.Compare(a.SSID, b.SSID), strings.Compare(a.Band, b.Band), cmp.Compare(a.Outcome, b.Outcome), cmp.Compare(a.Steps, b.Steps))
}

// serviceKey is the row of service_level_hours an event counts in (ok
// false: not a connection attempt).
func serviceKey(e *wnms.ClientEvent) (wnms.ServiceLevelKey, bool) {
	outcome, steps, ok := wnms.AttemptOutcome(e)
	if !ok {
		return wnms.ServiceLevelKey{}, false
	}
	var box int64
	if e.APBoxID != nil {
		box = *e.APBoxID
	}
	return wnms.ServiceLevelKey{Hour: wnms.HourOf(e.Timestamp), LocationID: e.LocationID, APBoxID: box, SSID: e.SSID,
		Band: wnms.BandOf(e.Channel), Outcome: outcome, Steps: steps}, true
}

// lockHours takes the service level advisory lock of each hour (sorted)
// of the customer: shared to add, exclusive to recount (PostgreSQL).
func lockHours(ctx context.Context, b *bulkTx, customerID int64, hours []int64, exclusive bool) error {
	if b.d != Postgres {
		return nil
	}
	q := `SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0))`
	if exclusive {
		q = advisoryLock
	}
	for _, h := range hours {
		if _, err := b.Exec(ctx, q, "service levels "+strconv.FormatInt(customerID, 10)+" "+strconv.FormatInt(h, 10)); err != nil {
			return err
		}
	}
	return nil
}

// keepServiceLevels brings service_level_hours up to date with a batch
// of events of which stored were stored (see above).
func keepServiceLevels(ctx context.Context, b *bulkTx, customerID int64, events []*wnms.ClientEvent, stored int64) error {
	if stored == 0 {
		return nil
	}
	counts := map[wnms.ServiceLevelKey]int64{}
	for _, e := range events {
		if k, ok := serviceKey(e); ok {
			counts[k]++
		}
	}
	if len(counts) == 0 {
		return nil
	}
	keys := slices.SortedFunc(func(yield func(wnms.ServiceLevelKey) bool) {
		for k := range counts {
			if !yield(k) {
				return
			}
		}
	}, compareServiceKeys)
	var hours []int64
	for _, k := range keys {
		if len(hours) == 0 || hours[len(hours)-1] != k.Hour {
			hours = append(hours, k.Hour)
		}
	}
	all := stored == int64(len(events))
	if err := lockHours(ctx, b, customerID, hours, !all); err != nil {
		return err
	}
	if !all {
		for _, h := range hours {
			if err := recountServiceHour(ctx, b, customerID, h); err != nil {
				return err
			}
		}
		return nil
	}
	rows := make([][]any, len(keys))
	for i, k := range keys {
		rows[i] = []any{customerID, k.Hour, k.LocationID, k.APBoxID, k.SSID, k.Band, int64(k.Outcome), k.Steps, counts[k]}
	}
	_, err := b.Insert(ctx, "service_level_hours", serviceLevelColumns, rows,
		serviceLevelKey+"attempts = service_level_hours.attempts + excluded.attempts")
	return err
}

// phaseTimes are the fields of a stored event's body that its outcome
// needs beyond the table's columns.
type phaseTimes struct {
	Channel *int   `json:"channel"`
	Assoc   *int64 `json:"associationTimestamp"`
	Auth    *int64 `json:"authenticationTimestamp"`
	Network *int64 `json:"networkTimestamp"`
}

// recountServiceHour makes the customer's rows of hour in
// service_level_hours again from its stored events.
func recountServiceHour(ctx context.Context, b *bulkTx, customerID, hour int64) error {
	counts := map[wnms.ServiceLevelKey]int64{}
	err := b.Query(ctx, `SELECT ts, event_type, location_id, ap_box_id, ssid, code, sub_code, body FROM client_events
		WHERE customer_id = $1 AND ts >= $2 AND ts < $3 AND event_type IN ('`+wnms.Success+`', '`+wnms.Failure+`')`,
		[]any{customerID, hour, hour + wnms.ServiceLevelHour}, func(scan func(dest ...any) error) error {
			var e wnms.ClientEvent
			var box, code, sub *int64
			var body string
			if err := scan(&e.Timestamp, &e.Type, &e.LocationID, &box, &e.SSID, &code, &sub, &body); err != nil {
				return err
			}
			var p phaseTimes
			if err := json.Unmarshal([]byte(body), &p); err != nil {
				return err
			}
			e.APBoxID = box
			if code != nil {
				c := int(*code)
				e.Code = &c
			}
			if sub != nil {
				c := int(*sub)
				e.SubCode = &c
			}
			if p.Channel != nil {
				e.Channel = *p.Channel
			}
			e.AssociatedAt, e.AuthenticatedAt, e.NetworkAt = known(p.Assoc), known(p.Auth), known(p.Network)
			if k, ok := serviceKey(&e); ok {
				counts[k]++
			}
			return nil
		})
	if err != nil {
		return err
	}
	if _, err := b.Exec(ctx, `DELETE FROM service_level_hours WHERE customer_id = $1 AND hour = $2`, customerID, hour); err != nil {
		return err
	}
	if len(counts) == 0 {
		return nil
	}
	keys := slices.SortedFunc(func(yield func(wnms.ServiceLevelKey) bool) {
		for k := range counts {
			if !yield(k) {
				return
			}
		}
	}, compareServiceKeys)
	rows := make([][]any, len(keys))
	for i, k := range keys {
		rows[i] = []any{customerID, k.Hour, k.LocationID, k.APBoxID, k.SSID, k.Band, int64(k.Outcome), k.Steps, counts[k]}
	}
	_, err = b.Insert(ctx, "service_level_hours", serviceLevelColumns, rows, "")
	return err
}

// known is a stored timestamp as observed: 0 and absent are not known.
func known(ts *int64) *int64 {
	if ts == nil || *ts == 0 {
		return nil
	}
	return ts
}

// RebuildServiceLevels makes the customer's service level counts of the
// hours from..to (ms) again from the stored events: what the counts must
// equal. Tests that check them, and benchmarks that write events around
// the ingest path, use it.
func (s *Store) RebuildServiceLevels(ctx context.Context, customerID, from, to int64) error {
	for h := wnms.HourOf(from); h <= to; h += wnms.ServiceLevelHour {
		err := s.withDays(ctx, 1, func(int) int64 { return h }, func() error {
			return s.bulk(ctx, s.tw, func(b *bulkTx) error {
				if err := lockHours(ctx, b, customerID, []int64{h}, true); err != nil {
					return err
				}
				return recountServiceHour(ctx, b, customerID, h)
			})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ServiceLevelCounts sums the service level counts of q (see
// wnms.ServiceLevelQuery) by group, outcome and whether the time to
// connect is within q.TargetSteps: one row per group and outcome, so its
// size is the number of groups, never the number of attempts.
func (s *Store) ServiceLevelCounts(ctx context.Context, q wnms.ServiceLevelQuery) ([]wnms.ServiceLevelCount, error) {
	var args sqlArgs
	where := "customer_id = " + args.add(q.CustomerID) + " AND hour >= " + args.add(q.From) + " AND hour <= " + args.add(q.To)
	if q.Locations != nil {
		cond, arg := inList(s.dialect, "$"+strconv.Itoa(len(args)+1), q.Locations)
		args = append(args, arg)
		where += " AND location_id" + cond
	}
	var group string
	switch q.GroupBy {
	case wnms.GroupNone:
		group = "''"
	case wnms.GroupFloor:
		group = "CAST(location_id AS TEXT)"
	case wnms.GroupAP:
		group = "CAST(ap_box_id AS TEXT)"
	case wnms.GroupSSID:
		group = "ssid"
	case wnms.GroupBand:
		group = "band"
	default:
		return nil, errors.New("service levels: unknown grouping " + q.GroupBy)
	}
	rows, err := s.tr.QueryContext(ctx, `SELECT `+group+` AS g, outcome, SUM(attempts),
		SUM(CASE WHEN ttc_steps <= `+args.add(q.TargetSteps)+` THEN attempts ELSE 0 END)
		FROM service_level_hours WHERE `+where+` GROUP BY g, outcome`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []wnms.ServiceLevelCount
	for rows.Next() {
		var c wnms.ServiceLevelCount
		if err := rows.Scan(&c.Group, &c.Outcome, &c.Attempts, &c.Within); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ServiceLevelTargets returns the customer's locations' own targets.
func (s *Store) ServiceLevelTargets(ctx context.Context, customerID int64) (map[int64]wnms.ServiceLevelTargets, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT location_id, success_goal, ttc_ms, ttc_goal FROM service_level_targets
		WHERE customer_id = $1`, customerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]wnms.ServiceLevelTargets{}
	for rows.Next() {
		var id int64
		var t wnms.ServiceLevelTargets
		if err := rows.Scan(&id, &t.SuccessGoal, &t.TTCMs, &t.TTCGoal); err != nil {
			return nil, err
		}
		out[id] = t
	}
	return out, rows.Err()
}

// PutServiceLevelTargets sets a location's own targets; the call's audit
// record, written in the same transaction, names them (name) and what
// they replace (before: the targets the location had applied, its own,
// inherited or the defaults).
func (s *Store) PutServiceLevelTargets(ctx context.Context, customerID, locationID int64, name string, before, t wnms.ServiceLevelTargets) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		auditChange(ctx, name, before.AuditView(), t.AuditView())
		_, err := tx.ExecContext(ctx, `INSERT INTO service_level_targets (customer_id, location_id, success_goal, ttc_ms, ttc_goal, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (customer_id, location_id)
			DO UPDATE SET success_goal = excluded.success_goal, ttc_ms = excluded.ttc_ms, ttc_goal = excluded.ttc_goal,
			updated_at = excluded.updated_at`, customerID, locationID, t.SuccessGoal, t.TTCMs, t.TTCGoal, s.nowMS())
		return err
	})
}

// APNames returns the names of the customer's APs among boxIDs.
func (s *Store) APNames(ctx context.Context, customerID int64, boxIDs []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(boxIDs))
	if len(boxIDs) == 0 {
		return out, nil
	}
	from, cond, arg := keysIn(s.dialect, "$2", "a.box_id", boxIDs)
	rows, err := s.r.QueryContext(ctx, `SELECT a.box_id, a.name FROM `+from+`aps a WHERE a.customer_id = $1 AND `+cond, customerID, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, err
		}
		out[id] = name
	}
	return out, rows.Err()
}
