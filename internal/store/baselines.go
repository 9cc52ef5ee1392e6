package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"strconv"

	"github.com/wnms/wnms/internal/baseline"
	"github.com/wnms/wnms/internal/telemetry"
)

// dirtyRows are the baseline_dirty marks of the slots that events with
// connection attempts (Success, Failure) fall in.
func dirtyRows(customerID int64, events []*telemetry.Event) [][]any {
	var buf [8]byte
	rand.Read(buf[:])
	version := int64(binary.BigEndian.Uint64(buf[:]) >> 1)
	seen := map[int64]bool{}
	var rows [][]any
	for _, e := range events {
		if e.Type != telemetry.Success && e.Type != telemetry.Failure {
			continue
		}
		slot := baseline.SlotOf(e.Timestamp)
		if !seen[slot] {
			seen[slot] = true
			rows = append(rows, []any{customerID, slot, version})
		}
	}
	return rows
}

const dirtyConflict = "ON CONFLICT (customer_id, slot) DO UPDATE SET version = excluded.version"

// DirtySlots lists the customer's slots whose observations are out of
// date, oldest first.
func (s *Store) DirtySlots(ctx context.Context, customerID int64) ([]baseline.DirtySlot, error) {
	rows, err := s.tr.QueryContext(ctx, `SELECT slot, version FROM baseline_dirty WHERE customer_id = $1 ORDER BY slot`, customerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []baseline.DirtySlot
	for rows.Next() {
		var d baseline.DirtySlot
		if err := rows.Scan(&d.Slot, &d.Version); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// DirtyCustomers lists the customers with slots to refresh.
func (s *Store) DirtyCustomers(ctx context.Context) ([]int64, error) {
	rows, err := s.tr.QueryContext(ctx, `SELECT DISTINCT customer_id FROM baseline_dirty ORDER BY customer_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// SlotAttempts reads the connection attempts (Success and Failure
// events) of one slot of the customer.
func (s *Store) SlotAttempts(ctx context.Context, customerID, slot int64) ([]baseline.ScopedAttempt, error) {
	rows, err := s.tr.QueryContext(ctx, `SELECT mac, location_id, ssid, event_type, code, body FROM client_events
		WHERE customer_id = $1 AND ts >= $2 AND ts < $3 AND event_type IN ($4, $5)`,
		customerID, slot, slot+baseline.SlotDuration.Milliseconds(), telemetry.Success, telemetry.Failure)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []baseline.ScopedAttempt
	for rows.Next() {
		var a baseline.ScopedAttempt
		var typ, body string
		var code sql.NullInt64
		if err := rows.Scan(&a.MAC, &a.LocationID, &a.SSID, &typ, &code, &body); err != nil {
			return nil, err
		}
		var ch struct {
			Channel int `json:"channel"`
		}
		json.Unmarshal([]byte(body), &ch)
		a.Band = baseline.BandOfChannel(ch.Channel)
		if typ == telemetry.Failure {
			a.Failures[0] = true
			if code.Valid && code.Int64 >= 1 && code.Int64 <= 3 {
				a.Failures[code.Int64] = true
			}
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

var connObsColumns = []string{"customer_id", "location_id", "band", "ssid", "slot", "attempting", "failing", "assoc", "auth", "network"}

// ReplaceConnObs stores the observations of a slot in place of the old
// ones and clears the slot's mark if it is still version, in one
// transaction (serialized per slot across replicas).
func (s *Store) ReplaceConnObs(ctx context.Context, customerID, slot int64, obs []baseline.ConnObsRow, version int64) error {
	rows := make([][]any, len(obs))
	for i, o := range obs {
		rows[i] = []any{customerID, o.LocationID, o.Band, o.SSID, slot, int64(o.Attempting), int64(o.Failing),
			int64(o.Association), int64(o.Authentication), int64(o.Network)}
	}
	return s.bulk(ctx, s.tw, func(b *bulkTx) error {
		if s.dialect == Postgres {
			if _, err := b.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "baseline:"+strconv.FormatInt(customerID, 10)+":"+strconv.FormatInt(slot, 10)); err != nil {
				return err
			}
		}
		if _, err := b.Exec(ctx, `DELETE FROM conn_obs WHERE customer_id = $1 AND slot = $2`, customerID, slot); err != nil {
			return err
		}
		if len(rows) > 0 {
			if _, err := b.Insert(ctx, "conn_obs", connObsColumns, rows, ""); err != nil {
				return err
			}
		}
		_, err := b.Exec(ctx, `DELETE FROM baseline_dirty WHERE customer_id = $1 AND slot = $2 AND version = $3`, customerID, slot, version)
		return err
	})
}

// ConnObs reads the observations of one scope for the slots in [from,
// to], by slot.
func (s *Store) ConnObs(ctx context.Context, customerID, locationID int64, band, ssid string, from, to int64) (map[int64]baseline.Connectivity, error) {
	rows, err := s.tr.QueryContext(ctx, `SELECT slot, attempting, failing, assoc, auth, network FROM conn_obs
		WHERE customer_id = $1 AND location_id = $2 AND band = $3 AND ssid = $4 AND slot >= $5 AND slot <= $6`,
		customerID, locationID, band, ssid, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]baseline.Connectivity{}
	for rows.Next() {
		var slot int64
		var c baseline.Connectivity
		if err := rows.Scan(&slot, &c.Attempting, &c.Failing, &c.Association, &c.Authentication, &c.Network); err != nil {
			return nil, err
		}
		out[slot] = baseline.Complete(c)
	}
	return out, rows.Err()
}

// RecordAnomaly stores an anomaly unless it is known; inserted says
// whether this call stored it (so that it is announced once, whichever
// replica finds it first).
func (s *Store) RecordAnomaly(ctx context.Context, a baseline.Anomaly) (inserted bool, err error) {
	res, err := s.tw.ExecContext(ctx, `INSERT INTO anomalies (customer_id, location_id, kind, slot, observation, baseline, threshold, raised_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (customer_id, location_id, kind, slot) DO NOTHING`,
		a.CustomerID, a.LocationID, a.Kind, a.Slot, a.Observation, a.Baseline, a.Threshold, a.RaisedAt)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Anomalies lists the customer's anomalies with a slot in [from, to] at
// the given locations (nil: all), newest first.
func (s *Store) Anomalies(ctx context.Context, customerID int64, locations []int64, from, to int64) ([]baseline.Anomaly, error) {
	var args sqlArgs
	where := "customer_id = " + args.add(customerID) + " AND slot >= " + args.add(from) + " AND slot <= " + args.add(to)
	if locations != nil {
		cond, arg := inList(s.dialect, "$"+strconv.Itoa(len(args)+1), locations)
		args = append(args, arg)
		where += " AND location_id" + cond
	}
	rows, err := s.tr.QueryContext(ctx, `SELECT location_id, kind, slot, observation, baseline, threshold, raised_at
		FROM anomalies WHERE `+where+` ORDER BY slot DESC, location_id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []baseline.Anomaly{}
	for rows.Next() {
		a := baseline.Anomaly{CustomerID: customerID}
		if err := rows.Scan(&a.LocationID, &a.Kind, &a.Slot, &a.Observation, &a.Baseline, &a.Threshold, &a.RaisedAt); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// BaselineCustomers lists the customers with observations since since
// (Unix ms): those the anomaly evaluation looks at.
func (s *Store) BaselineCustomers(ctx context.Context, since int64) ([]int64, error) {
	rows, err := s.tr.QueryContext(ctx, `SELECT DISTINCT customer_id FROM conn_obs WHERE slot >= $1 ORDER BY customer_id`, since)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// CountAnomalies counts the anomalies of every customer with a slot at or
// after since (Unix ms).
func (s *Store) CountAnomalies(ctx context.Context, since int64) (int64, error) {
	var n int64
	err := s.tr.QueryRowContext(ctx, `SELECT count(*) FROM anomalies WHERE slot >= $1`, since).Scan(&n)
	return n, err
}
