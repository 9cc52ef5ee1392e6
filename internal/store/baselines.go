package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"slices"
	"strconv"

	"github.com/wnms/wnms/internal/wnms"
)

// dirtySlots are the baseline_dirty marks of the slots of n times, all
// with one new random version, in slot order: concurrent batches upsert
// the marks they share in one order and wait for each other instead of
// deadlocking.
func dirtySlots(customerID int64, n int, at func(i int) int64) [][]any {
	var buf [8]byte
	rand.Read(buf[:])
	version := int64(binary.BigEndian.Uint64(buf[:]) >> 1)
	seen := map[int64]bool{}
	var slots []int64
	for i := 0; i < n; i++ {
		slot := wnms.SlotOf(at(i))
		if !seen[slot] {
			seen[slot] = true
			slots = append(slots, slot)
		}
	}
	slices.Sort(slots)
	rows := make([][]any, len(slots))
	for i, slot := range slots {
		rows[i] = []any{customerID, slot, version}
	}
	return rows
}

const dirtyConflict = "ON CONFLICT (customer_id, slot) DO UPDATE SET version = excluded.version"

// DirtySlots lists the customer's slots in [from, to] whose observations
// are out of date, newest first, at most limit of them.
func (s *Store) DirtySlots(ctx context.Context, customerID, from, to int64, limit int) ([]wnms.DirtySlot, error) {
	if err := s.settle(ctx); err != nil {
		return nil, err
	}
	rows, err := s.tr.QueryContext(ctx, `SELECT slot, version FROM baseline_dirty
		WHERE customer_id = $1 AND slot >= $2 AND slot <= $3 ORDER BY slot DESC LIMIT `+strconv.Itoa(limit), customerID, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []wnms.DirtySlot
	for rows.Next() {
		var d wnms.DirtySlot
		if err := rows.Scan(&d.Slot, &d.Version); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// DirtyCustomers lists the customers with slots to refresh.
func (s *Store) DirtyCustomers(ctx context.Context) ([]int64, error) {
	if err := s.settle(ctx); err != nil {
		return nil, err
	}
	return queryIDs(ctx, s.tr, `SELECT DISTINCT customer_id FROM baseline_dirty ORDER BY customer_id`)
}

// bandOf is SQL for the band of channel (an expression), as wnms.BandOf:
// 1–14 are 2.4 GHz, higher 5 GHz, and 0 (not known) no band (empty).
func bandOf(channel string) string {
	return `CASE WHEN ` + channel + ` BETWEEN 1 AND 14 THEN '` + wnms.Band24GHz + `' WHEN ` + channel + ` > 14 THEN '` +
		wnms.Band5GHz + `' ELSE '` + wnms.BandUnknown + `' END`
}

// slotAttemptsQuery aggregates one slot's Success and Failure events
// ($2 ≤ ts < $3; $4 Success, $5 Failure) per client, location, band and
// SSID. +customer_id keeps SQLite off the (customer_id, mac, ts) index,
// which would walk every event of the customer to find one slot's: the ts
// index reads just the slot.
func slotAttemptsQuery(d Dialect) string {
	band := bandOf(eventChannel(d))
	return `SELECT mac, location_id, ssid, band,
		MAX(failed), MAX(CASE WHEN failed = 1 AND code = 1 THEN 1 ELSE 0 END),
		MAX(CASE WHEN failed = 1 AND code = 2 THEN 1 ELSE 0 END), MAX(CASE WHEN failed = 1 AND code = 3 THEN 1 ELSE 0 END)
		FROM (SELECT mac, location_id, ssid, ` + band + ` AS band, CASE WHEN event_type = $5 THEN 1 ELSE 0 END AS failed, code
			FROM client_events WHERE +customer_id = $1 AND ts >= $2 AND ts < $3 AND event_type IN ($4, $5)) e
		GROUP BY mac, location_id, ssid, band
		ORDER BY mac`
}

// SlotAttempts calls f with the connection attempts (Success and Failure
// events) of one slot of the customer, aggregated in SQL into one row per
// client, location, band and SSID with the categories it failed in, and
// ordered by client (see baseline.Store). Nothing is held but the row at
// hand.
func (s *Store) SlotAttempts(ctx context.Context, customerID, slot int64, f func(wnms.ScopedAttempt) error) error {
	rows, err := s.tr.QueryContext(ctx, slotAttemptsQuery(s.dialect),
		customerID, slot, slot+wnms.SlotDuration.Milliseconds(), wnms.Success, wnms.Failure)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var a wnms.ScopedAttempt
		var fl [4]int64
		if err := rows.Scan(&a.MAC, &a.LocationID, &a.SSID, &a.Band, &fl[0], &fl[1], &fl[2], &fl[3]); err != nil {
			return err
		}
		for i := range fl {
			a.Failures[i] = fl[i] == 1
		}
		if err := f(a); err != nil {
			return err
		}
	}
	return rows.Err()
}

var (
	connObsColumns = []string{"customer_id", "location_id", "band", "ssid", "slot", "attempting", "failing", "assoc", "auth", "network"}
	perfObsColumns = []string{"customer_id", "location_id", "band", "ssid", "slot", "clients", "troubled", "low_rate", "high_retry",
		"low_rssi", "sticky"}
)

// ReplaceSlotObs stores the observations of a slot in place of the old
// ones and clears the slot's mark if it is still version, in one
// transaction (serialized per slot across replicas).
func (s *Store) ReplaceSlotObs(ctx context.Context, customerID, slot int64, conn []wnms.ConnObsRow, perf []wnms.PerfObsRow, version int64) error {
	connRows := make([][]any, len(conn))
	for i, o := range conn {
		connRows[i] = []any{customerID, o.LocationID, o.Band, o.SSID, slot, int64(o.Attempting), int64(o.Failing),
			int64(o.Association), int64(o.Authentication), int64(o.Network)}
	}
	perfRows := make([][]any, len(perf))
	for i, o := range perf {
		perfRows[i] = []any{customerID, o.LocationID, o.Band, o.SSID, slot, int64(o.Clients), int64(o.Troubled),
			int64(o.LowDataRate), int64(o.HighRetry), int64(o.LowRSSI), int64(o.Sticky)}
	}
	return s.withDays(ctx, 1, func(int) int64 { return slot }, func() error {
		return s.bulk(ctx, s.tw, func(b *bulkTx) error {
			if err := b.LockKey(ctx, "baseline:"+strconv.FormatInt(customerID, 10)+":"+strconv.FormatInt(slot, 10)); err != nil {
				return err
			}
			for _, t := range []struct {
				table string
				cols  []string
				rows  [][]any
			}{{"conn_obs", connObsColumns, connRows}, {"perf_obs", perfObsColumns, perfRows}} {
				if _, err := b.Exec(ctx, `DELETE FROM `+t.table+` WHERE customer_id = $1 AND slot = $2`, customerID, slot); err != nil {
					return err
				}
				if len(t.rows) > 0 {
					if _, err := b.Insert(ctx, t.table, t.cols, t.rows, ""); err != nil {
						return err
					}
				}
			}
			_, err := b.Exec(ctx, `DELETE FROM baseline_dirty WHERE customer_id = $1 AND slot = $2 AND version = $3`, customerID, slot, version)
			return err
		})
	})
}

// slotSumsQuery sums one slot's samples ($2 ≤ ts < $3; $4 the low RSSI,
// $5 the sticky margin) per client, location, band and SSID, through the
// ts index (see slotAttemptsQuery). Samples of traffic only (no radio
// metrics) do not count.
var slotSumsQuery = `SELECT mac, location_id, ssid, ` + bandOf("channel") + ` AS band,
	COUNT(*), SUM(data_rate), SUM(retry_pct), SUM(rssi),
	MIN(CASE WHEN rssi < $4 THEN 1 ELSE 0 END),
	SUM(CASE WHEN best_nbr_rssi IS NOT NULL AND best_nbr_rssi >= rssi + $5 THEN 1 ELSE 0 END),
	COUNT(best_nbr_rssi)
	FROM client_stats WHERE +customer_id = $1 AND ts >= $2 AND ts < $3 AND rssi IS NOT NULL
	GROUP BY mac, location_id, ssid, band
	ORDER BY mac`

// SlotSampleSums calls f with the client statistics samples of one slot
// of the customer, summed in SQL per client, location, band and SSID (see
// wnms.ClientSums) and ordered by client. Nothing is held but the row
// at hand.
func (s *Store) SlotSampleSums(ctx context.Context, customerID, slot int64, f func(wnms.ScopedSums) error) error {
	rows, err := s.tr.QueryContext(ctx, slotSumsQuery,
		customerID, slot, slot+wnms.SlotDuration.Milliseconds(), int64(wnms.LowRSSI), int64(wnms.StickyMarginDB))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var x wnms.ScopedSums
		var rssi, weakAll int64
		if err := rows.Scan(&x.MAC, &x.LocationID, &x.SSID, &x.Band, &x.N, &x.Rate, &x.Retry, &rssi, &weakAll,
			&x.Better, &x.WithBetter); err != nil {
			return err
		}
		x.RSSI, x.WeakAll = float64(rssi), weakAll == 1
		if err := f(x); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ClientSamples reads one client's samples in [from, to).
func (s *Store) ClientSamples(ctx context.Context, customerID int64, mac string, from, to int64) ([]wnms.ScopedSample, error) {
	return s.samples(ctx, `customer_id = $1 AND mac = $4 AND ts >= $2 AND ts < $3`, customerID, from, to, mac)
}

// ClientRates reads one client's samples in [from, to) with only what a
// data-rate baseline needs (time, location, SSID, band, data rate), from
// the index that holds those columns (client_stats_rate).
func (s *Store) ClientRates(ctx context.Context, customerID int64, mac string, from, to int64) ([]wnms.ScopedSample, error) {
	rows, err := s.tr.QueryContext(ctx, `SELECT ts, location_id, ssid, channel, data_rate FROM client_stats
		WHERE customer_id = $1 AND mac = $4 AND ts >= $2 AND ts < $3 AND data_rate IS NOT NULL ORDER BY ts`, customerID, from, to, mac)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []wnms.ScopedSample
	for rows.Next() {
		var x wnms.ScopedSample
		x.MAC = mac
		var ch int64
		if err := rows.Scan(&x.Time, &x.LocationID, &x.SSID, &ch, &x.DataRateMbps); err != nil {
			return nil, err
		}
		x.Band = wnms.BandOf(int(ch))
		out = append(out, x)
	}
	return out, rows.Err()
}

func (s *Store) samples(ctx context.Context, where string, args ...any) ([]wnms.ScopedSample, error) {
	rows, err := s.tr.QueryContext(ctx, `SELECT mac, ts, location_id, ssid, channel, rssi, data_rate, retry_pct, best_nbr_rssi
		FROM client_stats WHERE `+where+` AND rssi IS NOT NULL ORDER BY ts`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []wnms.ScopedSample
	for rows.Next() {
		var x wnms.ScopedSample
		var ch, rssi int64
		var best sql.NullInt64
		if err := rows.Scan(&x.MAC, &x.Time, &x.LocationID, &x.SSID, &ch, &rssi, &x.DataRateMbps, &x.RetryRatePct, &best); err != nil {
			return nil, err
		}
		x.Band, x.RSSI = wnms.BandOf(int(ch)), float64(rssi)
		if best.Valid {
			v := float64(best.Int64)
			x.BestNeighborRSSI = &v
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// PerfObs reads the performance observations of one scope for the slots
// in [from, to], by slot.
func (s *Store) PerfObs(ctx context.Context, customerID, locationID int64, band, ssid string, from, to int64) (map[int64]wnms.Performance, error) {
	rows, err := s.tr.QueryContext(ctx, `SELECT slot, clients, troubled, low_rate, high_retry, low_rssi, sticky FROM perf_obs
		WHERE customer_id = $1 AND location_id = $2 AND band = $3 AND ssid = $4 AND slot >= $5 AND slot <= $6`,
		customerID, locationID, band, ssid, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]wnms.Performance{}
	for rows.Next() {
		var slot int64
		var p wnms.Performance
		if err := rows.Scan(&slot, &p.Clients, &p.Troubled, &p.LowDataRate, &p.HighRetry, &p.LowRSSI, &p.Sticky); err != nil {
			return nil, err
		}
		out[slot] = wnms.CompletePerformance(p)
	}
	return out, rows.Err()
}

// ConnObs reads the observations of one scope for the slots in [from,
// to], by slot.
func (s *Store) ConnObs(ctx context.Context, customerID, locationID int64, band, ssid string, from, to int64) (map[int64]wnms.Connectivity, error) {
	rows, err := s.tr.QueryContext(ctx, `SELECT slot, attempting, failing, assoc, auth, network FROM conn_obs
		WHERE customer_id = $1 AND location_id = $2 AND band = $3 AND ssid = $4 AND slot >= $5 AND slot <= $6`,
		customerID, locationID, band, ssid, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]wnms.Connectivity{}
	for rows.Next() {
		var slot int64
		var c wnms.Connectivity
		if err := rows.Scan(&slot, &c.Attempting, &c.Failing, &c.Association, &c.Authentication, &c.Network); err != nil {
			return nil, err
		}
		out[slot] = wnms.CompleteConnectivity(c)
	}
	return out, rows.Err()
}

// RecordAnomaly stores an anomaly unless it is known; inserted says
// whether this call stored it (so that it is announced once, whichever
// replica finds it first).
func (s *Store) RecordAnomaly(ctx context.Context, a wnms.Anomaly) (inserted bool, err error) {
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
func (s *Store) Anomalies(ctx context.Context, customerID int64, locations []int64, from, to int64) ([]wnms.Anomaly, error) {
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
	out := []wnms.Anomaly{}
	for rows.Next() {
		a := wnms.Anomaly{CustomerID: customerID}
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
	return queryIDs(ctx, s.tr, `SELECT DISTINCT customer_id FROM conn_obs WHERE slot >= $1 ORDER BY customer_id`, since)
}

// CountAnomalies counts the anomalies of every customer with a slot at or
// after since (Unix ms).
func (s *Store) CountAnomalies(ctx context.Context, since int64) (int64, error) {
	var n int64
	err := s.tr.QueryRowContext(ctx, `SELECT count(*) FROM anomalies WHERE slot >= $1`, since).Scan(&n)
	return n, err
}
