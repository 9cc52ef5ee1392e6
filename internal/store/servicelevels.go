package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/wnms"
)

// The service levels' hourly counts, kept by every ingest in the
// transaction that stores its events, as the baseline slots' client rows
// are (slotclients.go), and for the same reasons exact:
// service_level_hours holds an hour's attempts by place and outcome,
// service_level_slow its timed Successes slower than each target (a
// multiple of wnms.TargetStepMs up to wnms.MaxTargetMs) by slow phase.
//   - A batch all of whose events were stored adds its attempts' counts.
//   - A batch of which some were not (a retry) cannot tell which: the
//     counts of every hour it names are made again from the stored
//     events instead (an hour's events, read once, counted in memory by
//     row of the tables, at most its places times the targets).
//
// On PostgreSQL additions commute and take the hours' advisory locks
// shared; a recount takes them exclusively after the batch's events are
// written, so it waits for the additions under way and counts them all.

var (
	serviceHourColumns = []string{"customer_id", "hour", "location_id", "ap_box_id", "ssid", "band", "successes", "untimed",
		"fail_assoc", "fail_auth", "fail_dhcp", "fail_dns"}
	serviceSlowColumns = []string{"customer_id", "target_ms", "hour", "location_id", "ap_box_id", "ssid", "band", "slow_auth", "slow_dhcp"}
)

func compareServicePlaces(a, b wnms.ServicePlace) int {
	return cmp.Or(cmp.Compare(a.Hour, b.Hour), cmp.Compare(a.LocationID, b.LocationID), cmp.Compare(a.APBoxID, b.APBoxID),
		strings.Compare(a.SSID, b.SSID), strings.Compare(a.Band, b.Band))
}

// slowKey is a row of service_level_slow: a target and a place.
type slowKey struct {
	target int64
	place  wnms.ServicePlace
}

// serviceTally is what a batch (or an hour's events) adds to the two
// tables.
type serviceTally struct {
	hours map[wnms.ServicePlace]*wnms.ServiceCounts
	slow  map[slowKey]*[2]int64 // slow_auth, slow_dhcp
}

func newServiceTally() *serviceTally {
	return &serviceTally{hours: map[wnms.ServicePlace]*wnms.ServiceCounts{}, slow: map[slowKey]*[2]int64{}}
}

// add counts an event (nothing for one that is no connection attempt): a
// timed Success is slow for every target below its time to connect.
func (t *serviceTally) add(e *wnms.ClientEvent) {
	outcome, ttc, ok := wnms.AttemptOutcome(e)
	if !ok {
		return
	}
	var box int64
	if e.APBoxID != nil {
		box = *e.APBoxID
	}
	p := wnms.ServicePlace{Hour: wnms.HourOf(e.Timestamp), LocationID: e.LocationID, APBoxID: box, SSID: e.SSID, Band: wnms.BandOf(e.Channel)}
	c := t.hours[p]
	if c == nil {
		c = &wnms.ServiceCounts{}
		t.hours[p] = c
	}
	c.CountAttempt(outcome)
	if outcome != wnms.OutcomeSlowAuth && outcome != wnms.OutcomeSlowDHCP {
		return
	}
	for target := int64(wnms.TargetStepMs); target <= wnms.MaxTargetMs && target < ttc; target += wnms.TargetStepMs {
		k := slowKey{target, p}
		n := t.slow[k]
		if n == nil {
			n = &[2]int64{}
			t.slow[k] = n
		}
		if outcome == wnms.OutcomeSlowAuth {
			n[0]++
		} else {
			n[1]++
		}
	}
}

// rows are the tally's rows of both tables, in key order.
func (t *serviceTally) rows(customerID int64) (hours, slow [][]any) {
	places := slices.SortedFunc(maps.Keys(t.hours), compareServicePlaces)
	for _, p := range places {
		c := t.hours[p]
		hours = append(hours, []any{customerID, p.Hour, p.LocationID, p.APBoxID, p.SSID, p.Band, c.Successes, c.Untimed,
			c.FailAssoc, c.FailAuth, c.FailDHCP, c.FailDNS})
	}
	keys := slices.SortedFunc(maps.Keys(t.slow), func(a, b slowKey) int {
		return cmp.Or(cmp.Compare(a.target, b.target), compareServicePlaces(a.place, b.place))
	})
	for _, k := range keys {
		n := t.slow[k]
		p := k.place
		slow = append(slow, []any{customerID, k.target, p.Hour, p.LocationID, p.APBoxID, p.SSID, p.Band, n[0], n[1]})
	}
	return hours, slow
}

// lockHours takes the service level advisory lock of each hour (sorted)
// of the customer: shared to add, exclusive to recount (PostgreSQL).
func lockHours(ctx context.Context, b *bulkTx, customerID int64, hours []int64, exclusive bool) error {
	return b.LockEach(ctx, "service levels "+strconv.FormatInt(customerID, 10)+" ", hours, exclusive)
}

// keepServiceLevels brings the service level counts up to date with a
// batch of events of which stored were stored (see above).
func keepServiceLevels(ctx context.Context, b *bulkTx, customerID int64, events []*wnms.ClientEvent, stored int64) error {
	if stored == 0 {
		return nil
	}
	t := newServiceTally()
	for _, e := range events {
		t.add(e)
	}
	if len(t.hours) == 0 {
		return nil
	}
	var hours []int64
	for _, p := range slices.SortedFunc(maps.Keys(t.hours), compareServicePlaces) {
		if len(hours) == 0 || hours[len(hours)-1] != p.Hour {
			hours = append(hours, p.Hour)
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
	return insertServiceTally(ctx, b, customerID, t, true)
}

// insertServiceTally writes a tally's rows, added to those stored (add)
// or as new rows.
func insertServiceTally(ctx context.Context, b *bulkTx, customerID int64, t *serviceTally, add bool) error {
	hours, slow := t.rows(customerID)
	sum := func(table, key string, cols []string) string {
		if !add {
			return ""
		}
		set := make([]string, len(cols))
		for i, c := range cols {
			set[i] = c + " = " + table + "." + c + " + excluded." + c
		}
		return "ON CONFLICT (" + key + ") DO UPDATE SET " + strings.Join(set, ", ")
	}
	if _, err := b.Insert(ctx, "service_level_hours", serviceHourColumns, hours, sum("service_level_hours",
		"customer_id, hour, location_id, ap_box_id, ssid, band", serviceHourColumns[6:])); err != nil {
		return err
	}
	_, err := b.Insert(ctx, "service_level_slow", serviceSlowColumns, slow, sum("service_level_slow",
		"customer_id, target_ms, hour, location_id, ap_box_id, ssid, band", serviceSlowColumns[7:]))
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

// recountServiceHour makes the customer's rows of hour in both tables
// again from its stored events, read once and counted in memory by row
// (at most the hour's places times the targets).
func recountServiceHour(ctx context.Context, b *bulkTx, customerID, hour int64) error {
	t := newServiceTally()
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
			t.add(&e)
			return nil
		})
	if err != nil {
		return err
	}
	for _, table := range []string{"service_level_hours", "service_level_slow"} {
		if _, err := b.Exec(ctx, `DELETE FROM `+table+` WHERE customer_id = $1 AND hour = $2`, customerID, hour); err != nil {
			return err
		}
	}
	return insertServiceTally(ctx, b, customerID, t, false)
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

// backfillSkip is how many hours without attempts one backfill step
// passes over before it records where it got to.
const backfillSkip = 24 * 7

// BackfillServiceLevels takes one step of counting the service levels of
// the attempts stored before ingest kept their counts (the
// service_level_backfill row a migration left): the next hour, at or
// after from (ms: the oldest hour retention keeps), that holds attempts
// is counted again from its stored events for each customer it holds, as
// RebuildServiceLevels does, and the row moves past it. done tells that
// nothing is left (the row is gone); hour is the hour counted (-1 when
// none was).
func (s *Store) BackfillServiceLevels(ctx context.Context, from int64) (hour int64, done bool, err error) {
	var next, until int64
	err = s.tr.QueryRowContext(ctx, `SELECT next_hour, until_ms FROM service_level_backfill`).Scan(&next, &until)
	if errors.Is(err, sql.ErrNoRows) {
		return -1, true, nil
	}
	if err != nil {
		return -1, false, err
	}
	h := max(next, wnms.HourOf(from))
	hour = -1
	for i := 0; i < backfillSkip && h < until && hour < 0; i++ {
		customers, err := queryIDs(ctx, s.tr, `SELECT DISTINCT customer_id FROM client_events
			WHERE ts >= $1 AND ts < $2 AND event_type IN ('`+wnms.Success+`', '`+wnms.Failure+`') ORDER BY customer_id`,
			h, h+wnms.ServiceLevelHour)
		if err != nil {
			return -1, false, err
		}
		for _, c := range customers {
			if err := s.RebuildServiceLevels(ctx, c, h, h); err != nil {
				return -1, false, err
			}
			hour = h
		}
		h += wnms.ServiceLevelHour
	}
	if h >= until {
		_, err = s.tw.ExecContext(ctx, `DELETE FROM service_level_backfill`)
		return hour, err == nil, err
	}
	_, err = s.tw.ExecContext(ctx, `UPDATE service_level_backfill SET next_hour = $1`, h)
	return hour, false, err
}

// ServiceLevelCounts sums the service level counts of q (see
// wnms.ServiceLevelQuery) by group: one row per group of each table
// comes back, so its size is the number of groups, never the number of
// attempts. The slow Successes are read from q.TargetMs's rows only.
func (s *Store) ServiceLevelCounts(ctx context.Context, q wnms.ServiceLevelQuery) ([]wnms.ServiceLevelCount, error) {
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
	where := func(args *sqlArgs) string {
		w := "customer_id = " + args.add(q.CustomerID) + " AND hour >= " + args.add(q.From) + " AND hour <= " + args.add(q.To)
		if q.Locations != nil {
			cond, arg := inList(s.dialect, "$"+strconv.Itoa(len(*args)+1), q.Locations)
			*args = append(*args, arg)
			w += " AND location_id" + cond
		}
		return w
	}
	byGroup := map[string]*wnms.ServiceLevelCount{}
	var order []string
	at := func(g string) *wnms.ServiceLevelCount {
		c := byGroup[g]
		if c == nil {
			c = &wnms.ServiceLevelCount{Group: g}
			byGroup[g] = c
			order = append(order, g)
		}
		return c
	}
	var args sqlArgs
	w := where(&args)
	rows, err := s.tr.QueryContext(ctx, `SELECT `+group+` AS g, SUM(successes), SUM(untimed), SUM(fail_assoc), SUM(fail_auth),
		SUM(fail_dhcp), SUM(fail_dns) FROM service_level_hours WHERE `+w+` GROUP BY g`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var g string
		var c wnms.ServiceCounts
		if err := rows.Scan(&g, &c.Successes, &c.Untimed, &c.FailAssoc, &c.FailAuth, &c.FailDHCP, &c.FailDNS); err != nil {
			return nil, err
		}
		at(g).Add(c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	args = sqlArgs{}
	target := args.add(q.TargetMs)
	w = where(&args)
	rows, err = s.tr.QueryContext(ctx, `SELECT `+group+` AS g, SUM(slow_auth), SUM(slow_dhcp) FROM service_level_slow
		WHERE target_ms = `+target+` AND `+w+` GROUP BY g`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var g string
		var c wnms.ServiceCounts
		if err := rows.Scan(&g, &c.SlowAuth, &c.SlowDHCP); err != nil {
			return nil, err
		}
		at(g).Add(c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	args = sqlArgs{}
	w = where(&args)
	rows, err = s.tr.QueryContext(ctx, `SELECT `+group+` AS g, SUM(samples), SUM(weak), SUM(util_known), SUM(busy), SUM(roams),
		SUM(slow_roams), SUM(suboptimal_roams) FROM service_level_radio WHERE `+w+` GROUP BY g`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var g string
		var c wnms.ServiceCounts
		if err := rows.Scan(&g, &c.Samples, &c.Weak, &c.UtilKnown, &c.Busy, &c.Roams, &c.SlowRoams, &c.SuboptimalRoams); err != nil {
			return nil, err
		}
		at(g).Add(c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]wnms.ServiceLevelCount, len(order))
	for i, g := range order {
		out[i] = *byGroup[g]
	}
	return out, nil
}

// ServiceLevelTargets returns the customer's locations' own targets.
func (s *Store) ServiceLevelTargets(ctx context.Context, customerID int64) (map[int64]wnms.ServiceLevelTargets, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT location_id, success_goal, ttc_ms, ttc_goal, coverage_goal, capacity_goal, roaming_goal FROM service_level_targets
		WHERE customer_id = $1`, customerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]wnms.ServiceLevelTargets{}
	for rows.Next() {
		var id int64
		var t wnms.ServiceLevelTargets
		if err := rows.Scan(&id, &t.SuccessGoal, &t.TTCMs, &t.TTCGoal, &t.CoverageGoal, &t.CapacityGoal, &t.RoamingGoal); err != nil {
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
		_, err := tx.ExecContext(ctx, `INSERT INTO service_level_targets (customer_id, location_id, success_goal, ttc_ms, ttc_goal,
			coverage_goal, capacity_goal, roaming_goal, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (customer_id, location_id)
			DO UPDATE SET success_goal = excluded.success_goal, ttc_ms = excluded.ttc_ms, ttc_goal = excluded.ttc_goal,
			coverage_goal = excluded.coverage_goal, capacity_goal = excluded.capacity_goal, roaming_goal = excluded.roaming_goal,
			updated_at = excluded.updated_at`, customerID, locationID, t.SuccessGoal, t.TTCMs, t.TTCGoal,
			t.CoverageGoal, t.CapacityGoal, t.RoamingGoal, s.nowMS())
		return err
	})
}

// ServiceLevelAPNames returns the names of the customer's APs among
// boxIDs, which the service levels grouped by AP show.
func (s *Store) ServiceLevelAPNames(ctx context.Context, customerID int64, boxIDs []int64) (map[int64]string, error) {
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
