package store

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/wnms/wnms/internal/wnms"
)

// RadiosByBSSID tells which of the customer's APs each BSSID belongs to
// (see telemetry.EventStore).
func (s *Store) RadiosByBSSID(ctx context.Context, customerID int64, bssids []string) (map[string]wnms.RadioAP, error) {
	out := make(map[string]wnms.RadioAP, len(bssids))
	if len(bssids) == 0 {
		return out, nil
	}
	from, cond, arg := keysIn(s.dialect, "$2", "r.bssid", bssids)
	rows, err := s.r.QueryContext(ctx, `SELECT r.bssid, a.box_id, a.name, a.location_id, a.device_capability
		FROM `+from+`ap_radios r JOIN aps a ON a.box_id = r.box_id WHERE r.customer_id = $1 AND `+cond,
		customerID, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var bssid string
		var r wnms.RadioAP
		var capability int
		if err := rows.Scan(&bssid, &r.BoxID, &r.Name, &r.LocationID, &capability); err != nil {
			return nil, err
		}
		r.Dot11AC = capability&wnms.Cap80211ac != 0
		out[bssid] = r
	}
	return out, rows.Err()
}

var eventColumns = []string{"customer_id", "event_id", "mac", "ts", "event_type", "location_id", "ap_box_id",
	"dot11ac", "ssid", "protocol", "code", "sub_code", "body"}

// InsertClientEvents stores events through the bulk path on the telemetry
// database (see telemetry.EventStore), and in the same transaction what
// their connection attempts add to their clients' rows of the baseline
// slots (slotclients.go); what they say of their clients, and which slots
// are out of date, is written behind (derived.go). An event without the client's id gets one no
// client can send (its own namespace, "~" and random), so it never
// collides.
func (s *Store) InsertClientEvents(ctx context.Context, customerID int64, events []*wnms.ClientEvent, bodies [][]byte, clients map[int64]wnms.ClientUpdate, derived ...wnms.DerivedEvent) (int, error) {
	// Roams (sent, or derived by the ingest) are stored one by one, so
	// that the roaming service level counts each new one once.
	var roams []wnms.DerivedEvent
	if slices.ContainsFunc(events, func(e *wnms.ClientEvent) bool { return e.Roam != nil }) {
		var evs []*wnms.ClientEvent
		var bs [][]byte
		for i, e := range events {
			if e.Roam != nil {
				roams = append(roams, wnms.DerivedEvent{Event: e, Body: bodies[i]})
			} else {
				evs, bs = append(evs, e), append(bs, bodies[i])
			}
		}
		events, bodies = evs, bs
	}
	sent := len(roams)
	roams = append(roams, derived...)
	rows := eventRows(customerID, events, bodies)

	d := derivedOf(clients)
	for _, e := range events {
		if e.Type == wnms.Success || e.Type == wnms.Failure {
			d.slots[wnms.SlotOf(e.Timestamp)] = true
		}
	}
	var n int
	at := func(i int) int64 {
		if i < len(events) {
			return events[i].Timestamp
		}
		return roams[i-len(events)].Event.Timestamp
	}
	err := s.withDays(ctx, len(events)+len(roams), at, func() error {
		var err error
		n, err = s.writeDerived(ctx, customerID, d, func(b *bulkTx) (int64, error) {
			var n int64
			if len(rows) > 0 {
				var err error
				if n, err = b.Insert(ctx, "client_events", eventColumns, rows, "ON CONFLICT (customer_id, event_id, ts) DO NOTHING"); err != nil {
					return 0, err
				}
			}
			if err := keepSlotAttempts(ctx, b, customerID, events, n); err != nil {
				return 0, err
			}
			if err := keepServiceLevels(ctx, b, customerID, events, n); err != nil {
				return 0, err
			}
			m, err := insertRoams(ctx, b, customerID, roams, sent)
			return n + m, err
		})
		return err
	})
	return n, err
}

// bodyText is an event's body as its text column takes it, without a
// copy (a batch's bodies are the largest part of its rows): a body is
// the JSON the ingest marshalled, which nothing writes to after, and the
// drivers copy what they bind before the call returns.
func bodyText(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// eventRows are the rows of client_events for events and their bodies.
func eventRows(customerID int64, events []*wnms.ClientEvent, bodies [][]byte) [][]any {
	rows := make([][]any, len(events))
	for i, e := range events {
		id := e.EventID
		if id == "" {
			id = "~" + rand.Text()
		}
		var box, code, sub any
		if e.APBoxID != nil {
			box = *e.APBoxID
		}
		if e.Code != nil {
			code = int64(*e.Code)
		}
		if e.SubCode != nil {
			sub = int64(*e.SubCode)
		}
		rows[i] = []any{customerID, id, e.MacAddress, e.Timestamp, e.Type, e.LocationID, box, e.Dot11AC,
			e.SSID, e.Protocol, code, sub, bodyText(bodies[i])}
	}
	return rows
}

// ClientEvents answers q from the telemetry database (see
// telemetry.EventStore).
// eventFilter is the WHERE condition of q on client_events, and its
// arguments.
func (s *Store) eventFilter(q wnms.EventQuery) (string, sqlArgs) {
	var args sqlArgs
	where := []string{"customer_id = " + args.add(q.CustomerID), "mac = " + args.add(q.MAC)}
	if q.Locations != nil {
		cond, arg := inList(s.dialect, "$"+strconv.Itoa(len(args)+1), q.Locations)
		args = append(args, arg)
		where = append(where, "location_id"+cond)
	}
	if q.From >= 0 {
		where = append(where, "ts >= "+args.add(q.From))
	}
	if q.To >= 0 {
		where = append(where, "ts <= "+args.add(q.To))
	}
	for _, f := range []struct {
		col  string
		vals []string
	}{{"event_type", q.Types}, {"protocol", q.Protocols}, {"ssid", q.SSIDs}} {
		if f.vals == nil {
			continue
		}
		ph := make([]string, len(f.vals))
		for i, v := range f.vals {
			ph[i] = args.add(v)
		}
		where = append(where, f.col+" IN ("+strings.Join(ph, ", ")+")")
	}
	if q.Code != nil {
		where = append(where, "code = "+args.add(int64(*q.Code)))
	}
	if q.SubCode != nil {
		where = append(where, "sub_code = "+args.add(int64(*q.SubCode)))
	}
	if q.Dot11ACOnly {
		// The bare column, as the partial index client_events_connlog
		// states it, so the planner can use that index; and its condition
		// on the type when the query asks for connection attempts alone
		// (as connection logs do), which that index holds.
		where = append(where, "dot11ac")
		if len(q.Types) > 0 && !slices.ContainsFunc(q.Types, func(t string) bool { return t != wnms.Success && t != wnms.Failure }) {
			where = append(where, attemptTypes)
		}
	}
	return strings.Join(where, " AND "), args
}

func (s *Store) ClientEvents(ctx context.Context, q wnms.EventQuery) ([]json.RawMessage, int, error) {
	cond, args := s.eventFilter(q)
	count := ""
	if q.Count {
		count = `SELECT count(*) FROM client_events WHERE ` + cond
	}
	return snapshotPage(ctx, s.tr, count, args, `SELECT body FROM client_events WHERE `+cond+
		` ORDER BY ts DESC, id DESC LIMIT `+strconv.Itoa(q.Limit)+` OFFSET `+strconv.Itoa(q.Offset), args,
		func(sc scanner) (json.RawMessage, error) {
			var body jsonText
			err := sc.Scan(&body)
			return json.RawMessage(body), err
		})
}

// SubtreeLocations lists the location ids at or below paths (see
// telemetry.EventStore).
func (s *Store) SubtreeLocations(ctx context.Context, customerID int64, paths []string) ([]int64, error) {
	out := []int64{}
	if len(paths) == 0 {
		return out, nil
	}
	var args sqlArgs
	cust := args.add(customerID)
	or := make([]string, len(paths))
	for i, p := range paths {
		lo, hi := subtreeBounds(p)
		or[i] = subtreeMatch(s.dialect, "path", args.add(lo), args.add(hi))
	}
	return queryIDs(ctx, s.r, `SELECT id FROM locations WHERE (customer_id = `+cust+` OR customer_id IS NULL OR customer_id = 0) AND (`+
		strings.Join(or, " OR ")+`) ORDER BY id`, args...)
}

// Associations lists Success events in a window (see
// telemetry.EventStore).
func (s *Store) Associations(ctx context.Context, customerID int64, locs []int64, from, to int64, limit int) ([]json.RawMessage, error) {
	q, args := s.associationsQuery(customerID, locs, from, to, limit)
	return queryJSON(ctx, s.tr, q, args...)
}

// associationsQuery is Associations' query and its arguments.
func (s *Store) associationsQuery(customerID int64, locs []int64, from, to int64, limit int) (string, sqlArgs) {
	var args sqlArgs
	where := "customer_id = " + args.add(customerID) + " AND event_type = " + args.add(wnms.Success) +
		" AND ts >= " + args.add(from) + " AND ts <= " + args.add(to)
	if locs != nil {
		cond, arg := inList(s.dialect, "$"+strconv.Itoa(len(args)+1), locs)
		args = append(args, arg)
		where += " AND location_id" + cond
	}
	return `SELECT body FROM client_events WHERE ` + where + ` ORDER BY ts, id LIMIT ` + strconv.Itoa(limit), args
}

// purgeColumns are the time column of each purged telemetry table.
var purgeColumns = map[string]string{"client_events": "ts", "client_stats": "ts", "ap_stats": "ts", "radio_stats": "ts", "clients": "last_seen"}

// PurgeTelemetry deletes at most batch rows of a telemetry table older
// than before (see telemetry.Purger).
func (s *Store) PurgeTelemetry(ctx context.Context, table string, before int64, batch int) (int, error) {
	if s.Partitioned(table) {
		return 0, nil // whole days go with MaintainPartitions
	}
	if table == "log_bundles" {
		res, err := s.w.ExecContext(ctx, `DELETE FROM exports WHERE file_key IN (SELECT file_key FROM exports
			WHERE kind = $1 AND created_at < $2 LIMIT `+strconv.Itoa(batch)+`)`, wnms.FileBundle, before)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		return int(n), err
	}
	if table == "clients" || table == "baseline_dirty" {
		if err := s.settle(ctx); err != nil {
			return 0, err
		}
	}
	switch table {
	case "conn_obs", "perf_obs", "perf_ap_obs", "anomalies", "baseline_dirty", "anomaly_pending":
		// Baseline rows, keyed by slot: at most a few hundred an hour.
		res, err := s.tw.ExecContext(ctx, `DELETE FROM `+table+` WHERE slot < $1`, before)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		return int(n), err
	case "service_level_hours", "service_level_slow", "service_level_radio":
		// A row per place of an hour (and target): a batch at a time.
		res, err := s.tw.ExecContext(ctx, `DELETE FROM `+table+` WHERE (customer_id, hour, location_id, ap_box_id, ssid, band) IN
			(SELECT customer_id, hour, location_id, ap_box_id, ssid, band FROM `+table+` WHERE hour < $1 LIMIT `+strconv.Itoa(batch)+`)`,
			wnms.HourOf(before))
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		return int(n), err
	case "incidents":
		// Incidents live in the main database, a row per incident.
		res, err := s.w.ExecContext(ctx, `DELETE FROM incidents WHERE id IN
			(SELECT id FROM incidents WHERE last_slot < $1 LIMIT `+strconv.Itoa(batch)+`)`, before)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		return int(n), err
	case "radio_stats":
		// Keyed by radio and time (SQLite; PostgreSQL drops whole days).
		res, err := s.tw.ExecContext(ctx, `DELETE FROM radio_stats WHERE (customer_id, bssid, ts) IN
			(SELECT customer_id, bssid, ts FROM radio_stats WHERE ts < $1 LIMIT `+strconv.Itoa(batch)+`)`, before)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		return int(n), err
	case "slot_conn_clients", "slot_perf_clients":
		// A row per client and place (and AP) of a slot: a batch at a
		// time, oldest slot first (the key's order).
		key := "slot, customer_id, mac, location_id, ssid, band"
		if table == "slot_perf_clients" {
			key += ", ap_box_id"
		}
		res, err := s.tw.ExecContext(ctx, `DELETE FROM `+table+` WHERE (`+key+`) IN
			(SELECT `+key+` FROM `+table+` WHERE slot < $1 LIMIT `+strconv.Itoa(batch)+`)`, before)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		return int(n), err
	}
	col, ok := purgeColumns[table]
	if !ok {
		return 0, fmt.Errorf("no telemetry table %q", table)
	}
	key, lock := "id", ""
	if table == "clients" {
		key = "box_id"
		// A client row locked by a write is being brought up to date:
		// skip it rather than wait. Waiting, the purge (which takes its
		// rows in no particular order) and a write that waits for one of
		// them could each hold what the other needs, a deadlock
		// PostgreSQL ends by failing one.
		lock = skipLocked(s.dialect, "UPDATE")
	}
	res, err := s.tw.ExecContext(ctx, `DELETE FROM `+table+` WHERE `+key+` IN (SELECT `+key+` FROM `+table+
		` WHERE `+col+` < $1 LIMIT `+strconv.Itoa(batch)+lock+`)`, before)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// successAt is the condition on client_events of the customer's Success
// events at locs (nil: any) in [from, to).
func (s *Store) successAt(args *sqlArgs, customerID int64, locs []int64, from, to int64) string {
	where := "customer_id = " + args.add(customerID) + " AND event_type = " + args.add(wnms.Success) +
		" AND ts >= " + args.add(from) + " AND ts < " + args.add(to)
	if locs != nil {
		cond, arg := inList(s.dialect, "$"+strconv.Itoa(len(*args)+1), locs)
		*args = append(*args, arg)
		where += " AND location_id" + cond
	}
	return where
}

// DailyClients counts distinct clients a day (see telemetry.FootfallStore).
func (s *Store) DailyClients(ctx context.Context, customerID int64, locs []int64, from, to, offset int64) (map[int64]int64, error) {
	q, args := s.dailyClientsQuery(customerID, locs, from, to, offset)
	rows, err := s.tr.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var day, n int64
		if err := rows.Scan(&day, &n); err != nil {
			return nil, err
		}
		out[day] = n
	}
	return out, rows.Err()
}

// dailyClientsQuery is DailyClients' query and its arguments.
func (s *Store) dailyClientsQuery(customerID int64, locs []int64, from, to, offset int64) (string, sqlArgs) {
	var args sqlArgs
	off := args.add(offset)
	where := s.successAt(&args, customerID, locs, from, to)
	return `SELECT (ts + ` + off + `) / 86400000 AS day, count(DISTINCT mac)
		FROM client_events WHERE ` + where + ` GROUP BY day`, args
}

// DistinctClients counts distinct clients in a window (see
// telemetry.FootfallStore).
func (s *Store) DistinctClients(ctx context.Context, customerID int64, locs []int64, from, to int64) (int64, error) {
	q, args := s.distinctClientsQuery(customerID, locs, from, to)
	var n int64
	err := s.tr.QueryRowContext(ctx, q, args...).Scan(&n)
	return n, err
}

// distinctClientsQuery is DistinctClients' query and its arguments.
func (s *Store) distinctClientsQuery(customerID int64, locs []int64, from, to int64) (string, sqlArgs) {
	var args sqlArgs
	where := s.successAt(&args, customerID, locs, from, to)
	return `SELECT count(DISTINCT mac) FROM client_events WHERE ` + where, args
}
