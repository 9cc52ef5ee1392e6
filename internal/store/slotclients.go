package store

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/wnms"
)

// What each client did in each baseline slot (slot_conn_clients,
// slot_perf_clients), kept up to date by every ingest in the transaction
// that stores its records: recomputing a slot's observations then reads
// one row per client and place of the slot, however many events and
// samples the slot holds.
//
// Exactness. The rows are a function of the stored events and samples,
// changed in the same transaction as they are:
//   - A batch all of whose records were stored (nearly every batch) adds
//     them: a connection attempt's failure bits are ORed into its client's
//     row, a sample's sums added to its client's. Each record is stored
//     once (its key is unique), and so added once.
//   - A batch of which some records were not stored (a retry, a repeated
//     record) cannot tell which: the rows of each client and slot it
//     names are recomputed from what is stored instead (a retry of a
//     whole batch reads back only its own clients' records of its slots).
//
// On PostgreSQL ingests run side by side. Additions commute and take the
// rows' locks in one order (sorted), so they take the slot's advisory
// lock shared; a recomputation takes it exclusively, after the batch's
// records are written: it waits for every addition under way to commit,
// and reads them all, and an ingest that comes after it adds only its own
// records. Slots are locked in order. On SQLite the one writer makes all
// this one step at a time.

// slotPlace is a client's row of one slot; ap is the AP of its samples
// (slot_perf_clients; 0 when not known, and in slot_conn_clients).
type slotPlace struct {
	slot       int64
	mac        string
	loc        int64
	ssid, band string
	ap         int64
}

func comparePlaces(a, b slotPlace) int {
	return cmp.Or(cmp.Compare(a.slot, b.slot), strings.Compare(a.mac, b.mac), cmp.Compare(a.loc, b.loc),
		strings.Compare(a.ssid, b.ssid), strings.Compare(a.band, b.band), cmp.Compare(a.ap, b.ap))
}

// Failure bits of slot_conn_clients.failures: any Failure, and each
// failureCode (1 association, 2 authentication, 3 network) as 1 << code.
const failedBit = 1

// attemptBits is the failure bits of one connection attempt.
func attemptBits(e *wnms.ClientEvent) int64 {
	if e.Type != wnms.Failure {
		return 0
	}
	bits := int64(failedBit)
	if e.Code != nil && *e.Code >= 1 && *e.Code <= 3 {
		bits |= 1 << *e.Code
	}
	return bits
}

var (
	slotConnColumns = []string{"customer_id", "slot", "mac", "location_id", "ssid", "band", "failures"}
	slotPerfColumns = []string{"customer_id", "slot", "mac", "location_id", "ssid", "band", "ap_box_id", "samples", "rate_sum",
		"retry_sum", "rssi_sum", "weak_all", "better", "with_better"}
)

// slotClientsKey and slotPerfKey update a row of slot_conn_clients and of
// slot_perf_clients (whose key has the AP too) that is there already.
const (
	slotClientsKey = "ON CONFLICT (slot, customer_id, mac, location_id, ssid, band) DO UPDATE SET "
	slotPerfKey    = "ON CONFLICT (slot, customer_id, mac, location_id, ssid, band, ap_box_id) DO UPDATE SET "
)

// lockSlots takes the advisory lock of each slot of the customer, in
// order: shared to add, exclusive to recompute (PostgreSQL; SQLite's
// writer holds the database).
func lockSlots(ctx context.Context, b *bulkTx, customerID int64, slots []int64, exclusive bool) error {
	return b.LockEach(ctx, "slot clients "+strconv.FormatInt(customerID, 10)+" ", slots, exclusive)
}

// keepSlotAttempts brings slot_conn_clients up to date with a batch of
// events of which stored were stored (see above).
func keepSlotAttempts(ctx context.Context, b *bulkTx, customerID int64, events []*wnms.ClientEvent, stored int64) error {
	if stored == 0 {
		return nil
	}
	bits := map[slotPlace]int64{}
	for _, e := range events {
		if e.Type != wnms.Success && e.Type != wnms.Failure {
			continue
		}
		p := slotPlace{slot: wnms.SlotOf(e.Timestamp), mac: e.MacAddress, loc: e.LocationID, ssid: e.SSID, band: wnms.BandOf(e.Channel)}
		bits[p] |= attemptBits(e)
	}
	if len(bits) == 0 {
		return nil
	}
	places := slices.SortedFunc(func(yield func(slotPlace) bool) {
		for p := range bits {
			if !yield(p) {
				return
			}
		}
	}, comparePlaces)
	all := stored == int64(len(events))
	if err := lockSlots(ctx, b, customerID, slotsOf(places), !all); err != nil {
		return err
	}
	if !all {
		return recomputeSlotClients(ctx, b, customerID, places, "slot_conn_clients", recomputeAttempts)
	}
	rows := make([][]any, len(places))
	for i, p := range places {
		rows[i] = []any{customerID, p.slot, p.mac, p.loc, p.ssid, p.band, bits[p]}
	}
	// A client's row changes only when it fails in a way it had not yet
	// in the slot: most batches repeat what the row holds (a client
	// connecting again), and an update that changes nothing would still
	// write the row anew (on PostgreSQL a new row version, which every
	// read of the slot being filled then walks past until vacuum).
	_, err := b.Insert(ctx, "slot_conn_clients", slotConnColumns, rows,
		slotClientsKey+"failures = slot_conn_clients.failures | excluded.failures"+
			" WHERE slot_conn_clients.failures <> (slot_conn_clients.failures | excluded.failures)")
	return err
}

// keepSlotSamples brings slot_perf_clients up to date with a batch of
// samples of which stored were stored (see above), by client, place and
// AP (0 for a sample at no known AP). Samples without radio metrics do
// not count.
func keepSlotSamples(ctx context.Context, b *bulkTx, customerID int64, samples []*wnms.Sample, stored int64) error {
	if stored == 0 {
		return nil
	}
	sums := map[slotPlace]*wnms.ClientSums{}
	for _, x := range samples {
		if x.NoRadio {
			continue
		}
		p := slotPlace{slot: wnms.SlotOf(x.Timestamp), mac: x.MacAddress, loc: x.LocationID, ssid: x.SSID, band: wnms.BandOf(x.Channel)}
		if x.APBoxID != nil {
			p.ap = *x.APBoxID
		}
		c := wnms.ClientSums{N: 1, Rate: x.DataRateMbps, Retry: x.RetryRatePct, RSSI: float64(x.RSSI), WeakAll: float64(x.RSSI) < wnms.LowRSSI}
		if x.BestNeighbor != nil {
			c.WithBetter = 1
			if float64(*x.BestNeighbor) >= float64(x.RSSI)+wnms.StickyMarginDB {
				c.Better = 1
			}
		}
		if s := sums[p]; s != nil {
			s.Add(c)
		} else {
			sums[p] = &c
		}
	}
	if len(sums) == 0 {
		return nil
	}
	places := slices.SortedFunc(func(yield func(slotPlace) bool) {
		for p := range sums {
			if !yield(p) {
				return
			}
		}
	}, comparePlaces)
	all := stored == int64(len(samples))
	if err := lockSlots(ctx, b, customerID, slotsOf(places), !all); err != nil {
		return err
	}
	if !all {
		return recomputeSlotClients(ctx, b, customerID, places, "slot_perf_clients", recomputeSamples)
	}
	rows := make([][]any, len(places))
	for i, p := range places {
		s := sums[p]
		rows[i] = []any{customerID, p.slot, p.mac, p.loc, p.ssid, p.band, p.ap, int64(s.N), s.Rate, s.Retry, int64(s.RSSI),
			int64(boolByte(s.WeakAll)), int64(s.Better), int64(s.WithBetter)}
	}
	add := func(col string) string { return col + " = slot_perf_clients." + col + " + excluded." + col }
	_, err := b.Insert(ctx, "slot_perf_clients", slotPerfColumns, rows, slotPerfKey+strings.Join([]string{
		add("samples"), add("rate_sum"), add("retry_sum"), add("rssi_sum"),
		"weak_all = slot_perf_clients.weak_all & excluded.weak_all", add("better"), add("with_better")}, ", "))
	return err
}

// slotsOf is the slots of places (sorted by slot), each once.
func slotsOf(places []slotPlace) []int64 {
	var out []int64
	for _, p := range places {
		if len(out) == 0 || out[len(out)-1] != p.slot {
			out = append(out, p.slot)
		}
	}
	return out
}

// recomputeAttempts is the statement that makes a client's rows of a slot
// in slot_conn_clients from its stored events ($1 customer, $2 slot, $3
// the slot's end, $4 MAC), through the index client_events_mac.
func recomputeAttempts(d Dialect) string {
	failed := func(cond string) string {
		return `MAX(CASE WHEN event_type = '` + wnms.Failure + `'` + cond + ` THEN 1 ELSE 0 END)`
	}
	return `INSERT INTO slot_conn_clients (` + strings.Join(slotConnColumns, ", ") + `)
		SELECT customer_id, CAST($2 AS BIGINT), mac, location_id, ssid, ` + bandOf(eventChannel(d)) + ` AS band, ` + failed("") + ` + 2 * ` + failed(" AND code = 1") +
		` + 4 * ` + failed(" AND code = 2") + ` + 8 * ` + failed(" AND code = 3") + `
		FROM client_events WHERE customer_id = $1 AND mac = $4 AND ts >= $2 AND ts < $3
			AND event_type IN ('` + wnms.Success + `', '` + wnms.Failure + `')
		GROUP BY customer_id, mac, location_id, ssid, band`
}

// recomputeSamples is recomputeAttempts for slot_perf_clients, from the
// client's stored samples through the index client_stats_mac, by place
// and AP (0: not known).
func recomputeSamples(Dialect) string {
	return `INSERT INTO slot_perf_clients (` + strings.Join(slotPerfColumns, ", ") + `)
		SELECT customer_id, CAST($2 AS BIGINT), mac, location_id, ssid, ` + bandOf("channel") + ` AS band,
		COALESCE(ap_box_id, 0) AS ap, COUNT(*), SUM(data_rate), SUM(retry_pct), SUM(rssi),
		MIN(CASE WHEN rssi < ` + strconv.Itoa(int(wnms.LowRSSI)) + ` THEN 1 ELSE 0 END),
		SUM(CASE WHEN best_nbr_rssi IS NOT NULL AND best_nbr_rssi >= rssi + ` + strconv.Itoa(int(wnms.StickyMarginDB)) + ` THEN 1 ELSE 0 END),
		COUNT(best_nbr_rssi)
		FROM client_stats WHERE customer_id = $1 AND mac = $4 AND ts >= $2 AND ts < $3 AND rssi IS NOT NULL
		GROUP BY customer_id, mac, location_id, ssid, band, ap`
}

// recomputeSlotClients makes the rows of each client and slot of places
// (a table) again from what is stored, with the statement query makes.
func recomputeSlotClients(ctx context.Context, b *bulkTx, customerID int64, places []slotPlace, table string, query func(Dialect) string) error {
	q := query(b.d)
	ms := wnms.SlotDuration.Milliseconds()
	for i, p := range places {
		if i > 0 && places[i-1].slot == p.slot && places[i-1].mac == p.mac {
			continue
		}
		if _, err := b.Exec(ctx, `DELETE FROM `+table+` WHERE customer_id = $1 AND slot = $2 AND mac = $3`, customerID, p.slot, p.mac); err != nil {
			return err
		}
		if _, err := b.Exec(ctx, q, customerID, p.slot, p.slot+ms, p.mac); err != nil {
			return err
		}
	}
	return nil
}

// RebuildSlotClients makes the customer's rows of slot in
// slot_conn_clients and slot_perf_clients again from the stored events
// and samples: what the rows must equal. Benchmarks that write events
// around the ingest path, and the tests that check the rows, use it.
func (s *Store) RebuildSlotClients(ctx context.Context, customerID, slot int64) error {
	ms := wnms.SlotDuration.Milliseconds()
	return s.withDays(ctx, 1, func(int) int64 { return slot }, func() error {
		return s.bulk(ctx, s.tw, func(b *bulkTx) error {
			if err := lockSlots(ctx, b, customerID, []int64{slot}, true); err != nil {
				return err
			}
			for _, t := range []struct {
				table, source, cond string
				query               func(Dialect) string
			}{
				{"slot_conn_clients", "client_events", "event_type IN ('" + wnms.Success + "', '" + wnms.Failure + "')", recomputeAttempts},
				{"slot_perf_clients", "client_stats", "rssi IS NOT NULL", recomputeSamples},
			} {
				if _, err := b.Exec(ctx, `DELETE FROM `+t.table+` WHERE customer_id = $1 AND slot = $2`, customerID, slot); err != nil {
					return err
				}
				// The statement of one client, for every client of the slot.
				q := strings.Replace(t.query(b.d), "mac = $4", "mac IN (SELECT DISTINCT mac FROM "+t.source+
					" WHERE customer_id = $1 AND ts >= $2 AND ts < $3 AND "+t.cond+")", 1)
				if _, err := b.Exec(ctx, q, customerID, slot, slot+ms); err != nil {
					return err
				}
			}
			return nil
		})
	})
}
