package store

import (
	"cmp"
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
// are out of date, newest first, at most limit of them: those marked in
// baseline_dirty, and those of batches this store acknowledged whose
// marks are still pending (derived.go), without writing them first. The
// rows a refresh reads (slot_conn_clients, slot_perf_clients) are written
// with the records, so a refresh sees every acknowledged batch either
// way. A pending slot's version is the negative of the newest pending
// journal row's id: it changes with every batch, and matches no stored
// mark. The marks a flush under way has taken out of pending count as
// pending until it commits, so that a read never waits for a flush (on
// PostgreSQL one flush can take a few hundred milliseconds under load).
func (s *Store) DirtySlots(ctx context.Context, customerID, from, to int64, limit int) ([]wnms.DirtySlot, error) {
	w := &s.behind
	// The marks not in baseline_dirty yet: those pending, and those a
	// flush under way took out of pending and has not committed (read
	// before the query, so that a flush committing meanwhile leaves them
	// in one place or the other, never in neither).
	w.mu.Lock()
	pending := map[int64]int64{}
	if d := w.flushing[customerID]; d != nil {
		for slot := range d.slots {
			if slot >= from && slot <= to {
				pending[slot] = w.flushingVersion
			}
		}
	}
	if d := w.pending[customerID]; d != nil && len(w.journal) > 0 {
		version := -w.journal[len(w.journal)-1]
		for slot := range d.slots {
			if slot >= from && slot <= to {
				pending[slot] = version // newer than a flush's
			}
		}
	}
	w.mu.Unlock()
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
		if v, ok := pending[d.Slot]; ok {
			// Marked, and changed again since: the pending version, which
			// leaves the mark for a refresh after the next flush.
			d.Version = v
			delete(pending, d.Slot)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for slot, version := range pending {
		out = append(out, wnms.DirtySlot{Slot: slot, Version: version})
	}
	slices.SortFunc(out, func(a, b wnms.DirtySlot) int { return cmp.Compare(b.Slot, a.Slot) })
	return out[:min(len(out), limit)], nil
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

// slotAttemptsQuery reads a slot's rows of slot_conn_clients ($1
// customer, $2 slot) in key order.
const slotAttemptsQuery = `SELECT mac, location_id, ssid, band, failures FROM slot_conn_clients
	WHERE customer_id = $1 AND slot = $2 ORDER BY slot, customer_id, mac, location_id, ssid, band`

// attemptTypes is the condition on client events of the connection
// attempts, word for word as the partial index client_events_connlog
// states it (a planner proves a query may use a
// partial index only from such a condition, never from a parameter).
const attemptTypes = `event_type IN ('` + wnms.Success + `', '` + wnms.Failure + `')`

// SlotAttempts calls f with the connection attempts (Success and Failure
// events) of one slot of the customer, one row per client, location,
// band and SSID with the categories it failed in, every row of a client
// before the next client's (see baseline.Store). It reads the slot's rows
// of slot_conn_clients in key order, which ingest keeps up to date
// (slotclients.go): one row per client and place, however many events the
// slot holds, and nothing held but the row at hand.
func (s *Store) SlotAttempts(ctx context.Context, customerID, slot int64, f func(wnms.ScopedAttempt) error) error {
	rows, err := s.tr.QueryContext(ctx, slotAttemptsQuery, customerID, slot)
	if err != nil {
		return err
	}
	defer rows.Close()
	// One row to scan into for the whole read (f gets a copy): a row
	// scanned into would escape, one allocation a row.
	var a wnms.ScopedAttempt
	var bits int64
	for rows.Next() {
		if err := rows.Scan(&a.MAC, &a.LocationID, &a.SSID, &a.Band, &bits); err != nil {
			return err
		}
		for i := range a.Failures {
			a.Failures[i] = bits&(1<<i) != 0
		}
		if err := f(a); err != nil {
			return err
		}
	}
	return rows.Err()
}

// slotFailingQuery lists one slot's failing clients in a scope, first by
// MAC: the slot's rows of slot_conn_clients with a failure, in key order
// (client order, no sort), at the locations $3, with the SSID and band
// when given, grouped per client as they come, at most limit clients.
func slotFailingQuery(d Dialect, locations []int64, band, ssid string, limit int) (string, []any) {
	bit := func(b int) string { return `MAX(CASE WHEN failures & ` + strconv.Itoa(b) + ` <> 0 THEN 1 ELSE 0 END)` }
	q := `SELECT mac, ` + bit(2) + `, ` + bit(4) + `, ` + bit(8) + ` FROM slot_conn_clients
		WHERE customer_id = $1 AND slot = $2 AND failures <> 0`
	cond, arg := inList(d, "$3", locations)
	q += ` AND location_id` + cond
	args := []any{arg}
	if ssid != "" {
		args = append(args, ssid)
		q += ` AND ssid = $` + strconv.Itoa(2+len(args))
	}
	if band != wnms.BandAny {
		args = append(args, band)
		q += ` AND band = $` + strconv.Itoa(2+len(args))
	}
	return q + ` GROUP BY slot, customer_id, mac ORDER BY slot, customer_id, mac LIMIT ` + strconv.Itoa(limit), args
}

// SlotFailingClients lists the first limit clients, by MAC, with a
// Failure event in the slot at one of locations, in band (or
// wnms.BandAny) and on ssid ("" for all), each with the categories it
// failed in there (Failures). It reads the slot's clients in client order
// from slot_conn_clients and stops at the limit: its memory is the page,
// whatever the slot holds.
func (s *Store) SlotFailingClients(ctx context.Context, customerID, slot int64, locations []int64, band, ssid string, limit int) ([]wnms.ConnAttempt, error) {
	out := []wnms.ConnAttempt{}
	if len(locations) == 0 || limit < 1 {
		return out, nil
	}
	q, extra := slotFailingQuery(s.dialect, locations, band, ssid, limit)
	rows, err := s.tr.QueryContext(ctx, q, append([]any{customerID, slot}, extra...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		a := wnms.ConnAttempt{}
		var fl [3]int64
		if err := rows.Scan(&a.MAC, &fl[0], &fl[1], &fl[2]); err != nil {
			return nil, err
		}
		a.Failures[0] = true
		for i, v := range fl {
			a.Failures[i+1] = v == 1
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

var (
	connObsColumns = []string{"customer_id", "location_id", "band", "ssid", "slot", "attempting", "failing", "assoc", "auth", "network"}
	perfObsColumns = []string{"customer_id", "location_id", "band", "ssid", "slot", "clients", "troubled", "low_rate", "high_retry",
		"low_rssi", "sticky"}
	apObsColumns = []string{"customer_id", "location_id", "slot", "ap_box_id", "band", "clients", "troubled", "low_rssi", "high_retry",
		"paired", "rssi_change_sum", "retry_change_sum"}
)

// ReplaceSlotObs stores the observations of a slot (connectivity and
// performance by scope, performance by AP) in place of the old ones and
// clears the slot's mark if it is still version, in one transaction
// (serialized per slot across replicas).
func (s *Store) ReplaceSlotObs(ctx context.Context, customerID, slot int64, conn []wnms.ConnObsRow, perf []wnms.PerfObsRow,
	aps []wnms.APObsRow, version int64) error {
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
	apRows := make([][]any, len(aps))
	for i, o := range aps {
		apRows[i] = []any{customerID, o.LocationID, slot, o.APBoxID, o.Band, int64(o.Clients), int64(o.Troubled), int64(o.LowRSSI),
			int64(o.HighRetry), int64(o.Paired), o.RSSIChangeSum, o.RetryChangeSum}
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
			}{{"conn_obs", connObsColumns, connRows}, {"perf_obs", perfObsColumns, perfRows}, {"perf_ap_obs", apObsColumns, apRows}} {
				if _, err := b.Exec(ctx, `DELETE FROM `+t.table+` WHERE customer_id = $1 AND slot = $2`, customerID, slot); err != nil {
					return err
				}
				if len(t.rows) > 0 {
					if _, err := b.Insert(ctx, t.table, t.cols, t.rows, ""); err != nil {
						return err
					}
				}
			}
			if _, err := b.Exec(ctx, `DELETE FROM baseline_dirty WHERE customer_id = $1 AND slot = $2 AND version = $3`, customerID, slot, version); err != nil {
				return err
			}
			// The anomaly evaluation looks at the slot again (PendingAnomalySlots).
			_, err := b.Exec(ctx, `INSERT INTO anomaly_pending (customer_id, slot, version) VALUES ($1, $2, $3)
				ON CONFLICT (customer_id, slot) DO UPDATE SET version = excluded.version`, customerID, slot, version)
			return err
		})
	})
}

// PendingAnomalySlots lists the customer's slots at or before to (Unix ms)
// whose observations were stored since the anomaly evaluation last looked
// at them, newest first, at most limit of them.
func (s *Store) PendingAnomalySlots(ctx context.Context, customerID, to int64, limit int) ([]wnms.DirtySlot, error) {
	rows, err := s.tr.QueryContext(ctx, `SELECT slot, version FROM anomaly_pending WHERE customer_id = $1 AND slot <= $2
		ORDER BY slot DESC LIMIT `+strconv.Itoa(max(limit, 0)), customerID, to)
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

// ClearPendingAnomalySlots clears the marks of slots the evaluation looked
// at, each only if it is still at the version looked at (a slot stored
// again since stays marked).
func (s *Store) ClearPendingAnomalySlots(ctx context.Context, customerID int64, slots []wnms.DirtySlot) error {
	if len(slots) == 0 {
		return nil
	}
	return s.bulk(ctx, s.tw, func(b *bulkTx) error {
		for _, d := range slots {
			if _, err := b.Exec(ctx, `DELETE FROM anomaly_pending WHERE customer_id = $1 AND slot = $2 AND version = $3`,
				customerID, d.Slot, d.Version); err != nil {
				return err
			}
		}
		return nil
	})
}

// slotSumsQuery reads a slot's rows of slot_perf_clients ($1 customer,
// $2 slot) in key order, each with the row of the same client, place and
// AP (a known one) in the slot wnms.ChangeSpan before ($3), looked up by
// its key.
func slotSumsQuery(d Dialect) string {
	return `SELECT c.mac, c.location_id, c.ssid, c.band, c.ap_box_id, c.samples, c.rate_sum, c.retry_sum, c.rssi_sum,
	c.weak_all, c.better, c.with_better, COALESCE(b.samples, 0), COALESCE(b.retry_sum, 0), COALESCE(b.rssi_sum, 0)
	FROM slot_perf_clients c ` + keyLookup(d, "slot_perf_clients", "b", "b.samples, b.retry_sum, b.rssi_sum",
		`b.slot = $3 AND b.customer_id = c.customer_id AND b.mac = c.mac AND b.location_id = c.location_id AND b.ssid = c.ssid
			AND b.band = c.band AND b.ap_box_id = c.ap_box_id AND c.ap_box_id <> 0`) + `
	WHERE c.customer_id = $1 AND c.slot = $2 ORDER BY c.slot, c.customer_id, c.mac, c.location_id, c.ssid, c.band, c.ap_box_id`
}

// SlotSampleSums calls f with the client statistics samples of one slot
// of the customer, summed per client, location, band, SSID and AP (see
// wnms.ClientSums) and ordered by client, each with the same client's
// sums at the same place and AP wnms.ChangeSpan before (Before): the
// slot's rows of slot_perf_clients, which ingest keeps up to date
// (slotclients.go), in key order, each with the row of that earlier slot
// by its key. Nothing is held but the row at hand.
func (s *Store) SlotSampleSums(ctx context.Context, customerID, slot int64, f func(wnms.ScopedSums) error) error {
	rows, err := s.tr.QueryContext(ctx, slotSumsQuery(s.dialect), customerID, slot, slot-wnms.ChangeSpan.Milliseconds())
	if err != nil {
		return err
	}
	defer rows.Close()
	var x wnms.ScopedSums // one for the read, as SlotAttempts
	var rssi, weakAll, beforeRSSI int64
	for rows.Next() {
		if err := rows.Scan(&x.MAC, &x.LocationID, &x.SSID, &x.Band, &x.APBoxID, &x.N, &x.Rate, &x.Retry, &rssi, &weakAll,
			&x.Better, &x.WithBetter, &x.Before.N, &x.Before.Retry, &beforeRSSI); err != nil {
			return err
		}
		x.RSSI, x.WeakAll = float64(rssi), weakAll == 1
		x.Before.MAC, x.Before.RSSI = x.MAC, float64(beforeRSSI)
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

// PerfAPObs reads the performance of the clients of each AP's radio at
// the locations, in band (or wnms.BandAny: both) for the slots in [from,
// to], by slot, each slot's rows by location, AP and band.
func (s *Store) PerfAPObs(ctx context.Context, customerID int64, locations []int64, band string, from, to int64) (map[int64][]wnms.APObsRow, error) {
	out := map[int64][]wnms.APObsRow{}
	if len(locations) == 0 {
		return out, nil
	}
	cond, arg := inList(s.dialect, "$4", locations)
	args := []any{customerID, from, to, arg}
	q := `SELECT location_id, slot, ap_box_id, band, clients, troubled, low_rssi, high_retry, paired, rssi_change_sum, retry_change_sum
		FROM perf_ap_obs
		WHERE customer_id = $1 AND slot >= $2 AND slot <= $3 AND location_id` + cond
	if band != wnms.BandAny {
		q += ` AND band = $5`
		args = append(args, band)
	}
	rows, err := s.tr.QueryContext(ctx, q+` ORDER BY slot, location_id, ap_box_id, band`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var r wnms.APObsRow
		if err := rows.Scan(&r.LocationID, &r.Slot, &r.APBoxID, &r.Band, &r.Clients, &r.Troubled, &r.LowRSSI, &r.HighRetry,
			&r.Paired, &r.RSSIChangeSum, &r.RetryChangeSum); err != nil {
			return nil, err
		}
		out[r.Slot] = append(out[r.Slot], r)
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
	var ap [6]any // NULL unless an AP's clients made it an anomaly
	if a.AP != nil {
		ap = [6]any{a.AP.BoxID, a.AP.Band, a.AP.Reason, a.AP.Observation, a.AP.Baseline, a.AP.Threshold}
	}
	res, err := s.tw.ExecContext(ctx, `INSERT INTO anomalies (customer_id, location_id, kind, slot, observation, baseline, threshold, raised_at,
		affected, attempting, ap_box_id, ap_band, ap_reason, ap_observation, ap_baseline, ap_threshold)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
		ON CONFLICT (customer_id, location_id, kind, slot) DO NOTHING`,
		a.CustomerID, a.LocationID, a.Kind, a.Slot, a.Observation, a.Baseline, a.Threshold, a.RaisedAt, int64(a.Affected), int64(a.Attempting),
		ap[0], ap[1], ap[2], ap[3], ap[4], ap[5])
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
	rows, err := s.tr.QueryContext(ctx, `SELECT location_id, kind, slot, observation, baseline, threshold, raised_at, affected, attempting,
		`+anomalyAPColumns+` FROM anomalies WHERE `+where+` ORDER BY slot DESC, location_id, kind`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []wnms.Anomaly{}
	for rows.Next() {
		a := wnms.Anomaly{CustomerID: customerID}
		var ap anomalyAP
		if err := rows.Scan(append([]any{&a.LocationID, &a.Kind, &a.Slot, &a.Observation, &a.Baseline, &a.Threshold, &a.RaisedAt,
			&a.Affected, &a.Attempting}, ap.dest()...)...); err != nil {
			return nil, err
		}
		a.AP = ap.value()
		out = append(out, a)
	}
	return out, rows.Err()
}

// anomalyAPColumns are the columns of the AP an anomaly names (NULL for
// none), as anomalyAP scans them.
const anomalyAPColumns = `ap_box_id, ap_band, ap_reason, ap_observation, ap_baseline, ap_threshold`

// anomalyAP scans anomalyAPColumns.
type anomalyAP struct {
	box                  sql.NullInt64
	band, reason         sql.NullString
	obs, base, threshold sql.NullFloat64
}

func (x *anomalyAP) dest() []any {
	return []any{&x.box, &x.band, &x.reason, &x.obs, &x.base, &x.threshold}
}

// value is the AP scanned (its name and MAC not filled), nil for none.
func (x *anomalyAP) value() *wnms.AnomalyAP {
	if !x.box.Valid {
		return nil
	}
	return &wnms.AnomalyAP{BoxID: x.box.Int64, Band: x.band.String, Reason: x.reason.String, Observation: x.obs.Float64,
		Baseline: x.base.Float64, Threshold: x.threshold.Float64}
}

// BaselineCustomers lists the customers with observations since since
// (Unix ms) or slots the anomaly evaluation has yet to look at: those it
// looks at.
func (s *Store) BaselineCustomers(ctx context.Context, since int64) ([]int64, error) {
	return queryIDs(ctx, s.tr, `SELECT customer_id FROM conn_obs WHERE slot >= $1
		UNION SELECT customer_id FROM anomaly_pending ORDER BY customer_id`, since)
}

// CountAnomalies counts the anomalies of every customer with a slot at or
// after since (Unix ms).
func (s *Store) CountAnomalies(ctx context.Context, since int64) (int64, error) {
	var n int64
	err := s.tr.QueryRowContext(ctx, `SELECT count(*) FROM anomalies WHERE slot >= $1`, since).Scan(&n)
	return n, err
}
