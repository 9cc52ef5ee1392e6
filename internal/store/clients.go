package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/wnms"
)

// ClientBoxIDs gives each client MAC its boxId (see
// telemetry.ClientStore): new MACs get a row in devices, in the main
// database, in one transaction.
func (s *Store) ClientBoxIDs(ctx context.Context, customerID int64, macs []string) (map[string]int64, error) {
	out := make(map[string]int64, len(macs))
	if len(macs) == 0 {
		return out, nil
	}
	read := func(q querier) error {
		from, cond, arg := keysIn(s.dialect, "$2", "d.mac", macs)
		rows, err := q.QueryContext(ctx, `SELECT d.mac, d.box_id FROM `+from+
			`devices d WHERE d.customer_id = $1 AND d.kind = 'client' AND `+cond, customerID, arg)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var mac string
			var box int64
			if err := rows.Scan(&mac, &box); err != nil {
				return err
			}
			out[mac] = box
		}
		return rows.Err()
	}
	if err := read(s.r); err != nil {
		return nil, err
	}
	var missing []string
	for _, m := range macs {
		if _, ok := out[m]; !ok {
			missing = append(missing, m)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	slices.Sort(missing) // one insertion order for concurrent batches: no deadlock
	err := s.bulk(ctx, s.w, func(b *bulkTx) error {
		rows := make([][]any, len(missing))
		for i, m := range missing {
			rows[i] = []any{customerID, "client", m}
		}
		_, err := b.Insert(ctx, "devices", []string{"customer_id", "kind", "mac"}, rows,
			"ON CONFLICT (customer_id, kind, mac) DO NOTHING")
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, read(s.w)
}

var sampleColumns = []string{"customer_id", "mac", "ts", "location_id", "ap_box_id", "bssid", "ssid", "channel", "rssi",
	"data_rate", "retry_pct", "best_nbr_rssi", "tx_bytes", "rx_bytes", "observed_by", "snr", "busy"}

// InsertClientStats stores samples through the bulk path on the
// telemetry database, and in the same transaction what they add to their
// clients' rows of the baseline slots (slotclients.go); what they say of
// their clients, and which slots are out of date, is written behind
// (derived.go). A sample
// of a client at a timestamp already stored is skipped; the answer is how
// many were stored.
func (s *Store) InsertClientStats(ctx context.Context, customerID int64, samples []*wnms.Sample, clients map[int64]wnms.ClientUpdate) (int, error) {
	rows := make([][]any, len(samples))
	for i, x := range samples {
		var box, nbr, tx, rx, obs any
		if x.APBoxID != nil {
			box = *x.APBoxID
		}
		if x.BestNeighbor != nil {
			nbr = int64(*x.BestNeighbor)
		}
		if x.TxBytes != nil {
			tx = *x.TxBytes
		}
		if x.RxBytes != nil {
			rx = *x.RxBytes
		}
		if b := x.ObservedByJSON; b != nil {
			obs = string(b)
		}
		var rssi, rate, retry any = int64(x.RSSI), x.DataRateMbps, x.RetryRatePct
		if x.NoRadio {
			rssi, rate, retry = nil, nil, nil
		}
		rows[i] = []any{customerID, x.MacAddress, x.Timestamp, x.LocationID, box, x.BSSID, x.SSID, int64(x.Channel),
			rssi, rate, retry, nbr, tx, rx, obs, nullInt(x.SNR), nullBool(x.Busy)}
	}
	d := derivedOf(clients)
	for _, x := range samples {
		// The slot wnms.ChangeSpan later is marked too: what its clients
		// hear on each AP is compared with what they heard in this one
		// (wnms.APPerformance).
		d.slots[wnms.SlotOf(x.Timestamp)] = true
		d.slots[wnms.SlotOf(x.Timestamp)+wnms.ChangeSpan.Milliseconds()] = true
	}
	var n int
	err := s.withDays(ctx, len(samples), func(i int) int64 { return samples[i].Timestamp }, func() error {
		var err error
		n, err = s.writeDerived(ctx, customerID, d, func(b *bulkTx) (int64, error) {
			n, err := b.Insert(ctx, "client_stats", sampleColumns, rows, "ON CONFLICT (customer_id, mac, ts) DO NOTHING")
			if err != nil {
				return 0, err
			}
			if err := keepSlotSamples(ctx, b, customerID, samples, n); err != nil {
				return 0, err
			}
			return n, keepRadioLevels(ctx, b, customerID, samples, n)
		})
		return err
	})
	return n, err
}

var clientColumns = []string{"box_id", "customer_id", "mac", "name", "username", "last_seen", "last_event_type", "bssid",
	"ap_name", "ap_box_id", "ssid", "channel", "protocol", "location_id", "rssi", "data_rate",
	"name_ts", "username_ts", "event_type_ts", "signal_ts", "ip_address", "ip_ts"}

// UpdateClients upserts the latest state of clients now, after what is
// pending, coalescing each update with the stored state as
// wnms.Coalesce does: the direct form of what ingest writes behind (the
// store's tests write clients with it). It takes the customer's lock on
// its clients shared, as every write of them but UpdateScopedClients
// does.
func (s *Store) UpdateClients(ctx context.Context, customerID int64, updates map[int64]wnms.ClientUpdate) error {
	if len(updates) == 0 {
		return nil
	}
	if err := s.settleClients(ctx); err != nil {
		return err
	}
	return s.bulk(ctx, s.tw, func(b *bulkTx) error {
		if err := lockClientsShared(ctx, b, []int64{customerID}); err != nil {
			return err
		}
		return upsertClients(ctx, b, customerID, updates)
	})
}

// upsertClients coalesces each update with its client's stored state in
// b's transaction by wnms.Coalesce's rule: an update older than the
// state changes nothing; a newer one gives where the client is, and each
// of name, username, IP, last event type, and RSSI with data rate that it
// has from a record no older than the state.
func upsertClients(ctx context.Context, b *bulkTx, customerID int64, updates map[int64]wnms.ClientUpdate) error {
	if len(updates) == 0 {
		return nil
	}
	// Rows go in boxId order: concurrent upserts then lock the rows they
	// share in one order and wait for each other instead of deadlocking.
	rows := make([][]any, 0, len(updates))
	for _, box := range slices.Sorted(maps.Keys(updates)) {
		u := updates[box].Stamped()
		var ap, rssi, rate any
		if u.APBoxID != nil {
			ap = *u.APBoxID
		}
		if u.RSSI != nil {
			rssi = int64(*u.RSSI)
		}
		if u.DataRate != nil {
			rate = *u.DataRate
		}
		rows = append(rows, []any{box, customerID, u.MacAddress, u.Name, u.Username, u.Timestamp, u.EventType, u.BSSID,
			u.APName, ap, u.SSID, int64(u.Channel), u.Protocol, u.LocationID, rssi, rate,
			u.NameTS, u.UsernameTS, u.EventTypeTS, u.SignalTS, u.IP, u.IPTS})
	}
	// newer: the update is no older than the stored state; given(col,
	// ts): the update has col, from a record no older than the state.
	const newer = "excluded.last_seen >= clients.last_seen"
	given := func(has, ts string) string {
		return "excluded." + has + " AND excluded." + ts + " >= clients.last_seen"
	}
	set := func(col, when string, also ...string) string {
		out := col + " = CASE WHEN " + when + " THEN excluded." + col + " ELSE clients." + col + " END"
		for _, c := range also {
			out += ", " + c + " = CASE WHEN " + when + " THEN excluded." + c + " ELSE clients." + c + " END"
		}
		return out
	}
	sets := []string{
		set("name", given("name <> ''", "name_ts"), "name_ts"),
		set("username", given("username <> ''", "username_ts"), "username_ts"),
		set("ip_address", given("ip_address <> ''", "ip_ts"), "ip_ts"),
		set("last_event_type", given("last_event_type <> ''", "event_type_ts"), "event_type_ts"),
		set("rssi", given("rssi IS NOT NULL", "signal_ts"), "data_rate", "signal_ts"),
		set("bssid", newer, "ap_name", "ap_box_id", "ssid", "channel", "protocol", "location_id", "last_seen"),
	}
	_, err := b.Insert(ctx, "clients", clientColumns, rows, `ON CONFLICT (box_id) DO UPDATE SET `+strings.Join(sets, ", "))
	return err
}

// ClientLocations tells where each of the customer's clients boxes was
// last seen; a client never seen is absent.
func (s *Store) ClientLocations(ctx context.Context, customerID int64, boxes []int64) (map[int64]int64, error) {
	if err := s.settleClients(ctx); err != nil {
		return nil, err
	}
	out := make(map[int64]int64, len(boxes))
	if len(boxes) == 0 {
		return out, nil
	}
	query, arg := clientLocationsQuery(s.dialect, boxes)
	rows, err := s.tr.QueryContext(ctx, query, customerID, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var box, loc int64
		if err := rows.Scan(&box, &loc); err != nil {
			return nil, err
		}
		out[box] = loc
	}
	return out, rows.Err()
}

// clientLocationsQuery is ClientLocations' query of boxes, and its
// second argument (the customer is the first).
func clientLocationsQuery(d Dialect, boxes []int64) (string, any) {
	from, cond, arg := keysIn(d, "$2", "c.box_id", boxes)
	return `SELECT c.box_id, c.location_id FROM ` + from + `clients c WHERE c.customer_id = $1 AND ` + cond, arg
}

// UpdateScopedClients records the updates of a caller scoped below the
// root (see telemetry.ClientStore): in one transaction it reads where
// each client is, asks moved which of them came from where the caller
// may not see, updates them all, and gives those that moved in the name,
// username and IP of their update only. It holds the customer's lock on its
// clients (on PostgreSQL an advisory lock, across replicas; on SQLite the
// one writer) from before the read to the commit, and every other write
// of the customer's clients takes that lock shared (UpdateClients, the
// flush of state written behind): a write landing between the read and
// the update could otherwise move a client elsewhere with another site's
// name, which this update would then keep.
//
// moved must not use the store: it runs inside the transaction, which
// holds a connection and the lock. An error from it ends the transaction
// with nothing written and is returned as is.
func (s *Store) UpdateScopedClients(ctx context.Context, customerID int64, updates map[int64]wnms.ClientUpdate,
	moved func(where map[int64]int64) (map[int64]wnms.ClientUpdate, error)) error {
	if len(updates) == 0 {
		return nil
	}
	if err := s.settleClients(ctx); err != nil {
		return err
	}
	boxes := slices.Sorted(maps.Keys(updates))
	query, arg := clientLocationsQuery(s.dialect, boxes)
	return s.bulk(ctx, s.tw, func(b *bulkTx) error {
		if err := b.LockKey(ctx, clientsLock(customerID)); err != nil {
			return err
		}
		where := make(map[int64]int64, len(boxes))
		if err := b.Query(ctx, query, []any{customerID, arg}, func(scan func(...any) error) error {
			var box, loc int64
			if err := scan(&box, &loc); err != nil {
				return err
			}
			where[box] = loc
			return nil
		}); err != nil {
			return err
		}
		fresh, err := moved(where)
		if err != nil {
			return err
		}
		if err := upsertClients(ctx, b, customerID, updates); err != nil {
			return err
		}
		for _, box := range slices.Sorted(maps.Keys(fresh)) {
			u := fresh[box]
			if _, err := b.Exec(ctx, `UPDATE clients SET name = $1, username = $2, ip_address = $3
				WHERE customer_id = $4 AND box_id = $5 AND last_seen = $6 AND location_id = $7`,
				u.Name, u.Username, u.IP, customerID, box, u.Timestamp, u.LocationID); err != nil {
				return err
			}
		}
		return nil
	})
}

// clientsLock is the key of the customer's lock on its clients: taken
// by UpdateScopedClients, shared by every other write of them
// (lockClientsShared).
func clientsLock(customerID int64) string {
	return "scoped-clients:" + strconv.FormatInt(customerID, 10)
}

// clientFilterColumns maps the filter properties of clients to their
// columns (the band follows from the channel).
var clientFilterColumns = map[string]string{
	"boxid": "box_id", "macaddress": "mac", "name": "CASE WHEN name = '' THEN mac ELSE name END", "username": "username",
	"ssid": "ssid", "frequencyband": bandOf("channel"),
	"troubleshootingstatus": "0", "apboxid": "ap_box_id",
}

// Clients lists the clients q selects (see telemetry.ClientStore).
func (s *Store) Clients(ctx context.Context, q wnms.ClientQuery) ([]wnms.Client, int, error) {
	if err := s.settle(ctx); err != nil {
		return nil, 0, err
	}
	var args sqlArgs
	where := []string{"customer_id = " + args.add(q.CustomerID)}
	if q.Locations != nil {
		cond, arg := inList(s.dialect, "$"+strconv.Itoa(len(args)+1), q.Locations)
		args = append(args, arg)
		where = append(where, "location_id"+cond)
	}
	if q.SSID != "" {
		where = append(where, "ssid = "+args.add(q.SSID))
	}
	if q.Active != nil {
		op := " >= "
		if !*q.Active {
			op = " < "
		}
		where = append(where, "last_seen"+op+args.add(q.ActiveSince))
	}
	if q.Filter != nil {
		f, err := compileFilter(*q.Filter, clientFilterColumns, &args)
		if err != nil {
			return nil, 0, err
		}
		where = append(where, f)
	}
	cond := strings.Join(where, " AND ")
	return snapshotPage(ctx, s.tr, `SELECT count(*) FROM clients WHERE `+cond, args,
		`SELECT box_id, mac, name, username, ip_address, last_seen, last_event_type, bssid, ap_name,
		ap_box_id, ssid, channel, protocol, location_id, rssi, data_rate FROM clients WHERE `+cond+
			` ORDER BY last_seen DESC, box_id DESC LIMIT `+strconv.Itoa(q.Limit)+` OFFSET `+strconv.Itoa(q.Offset), args, scanClient)
}

// scanClient scans a row of clients (Clients' columns).
func scanClient(sc scanner) (wnms.Client, error) {
	var c wnms.Client
	var ap, rssi sql.NullInt64
	var rate sql.NullFloat64
	var loc int64
	var ip string
	if err := sc.Scan(&c.BoxID, &c.MacAddress, &c.Name, &c.Username, &ip, &c.LastSeen, &c.LastEventType, &c.BSSID,
		&c.AssociatedAPName, &ap, &c.SSID, &c.Channel, &c.Protocol, &loc, &rssi, &rate); err != nil {
		return c, err
	}
	c.LocationID = wnms.LocalID(loc)
	if ip != "" {
		c.IPAddress = &ip
	}
	if ap.Valid {
		c.AssociatedAPBoxID = &ap.Int64
	}
	if rssi.Valid {
		v := int(rssi.Int64)
		c.RSSI = &v
	}
	if rate.Valid {
		c.DataRateMbps = &rate.Float64
	}
	return c, nil
}

// RecentSamples lists a client's samples since since, oldest first.
func (s *Store) RecentSamples(ctx context.Context, customerID int64, mac string, since int64) ([]wnms.Sample, error) {
	rows, err := s.tr.QueryContext(ctx, `SELECT ts, bssid, ap_box_id, rssi, observed_by FROM client_stats
		WHERE customer_id = $1 AND mac = $2 AND ts >= $3 AND rssi IS NOT NULL ORDER BY ts, id`, customerID, mac, since)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []wnms.Sample
	for rows.Next() {
		var x wnms.Sample
		var ap sql.NullInt64
		var obs sql.NullString
		if err := rows.Scan(&x.Timestamp, &x.BSSID, &ap, &x.RSSI, &obs); err != nil {
			return nil, err
		}
		if ap.Valid {
			x.APBoxID = &ap.Int64
		}
		if obs.Valid {
			if err := json.Unmarshal([]byte(obs.String), &x.ObservedBy); err != nil {
				return nil, err
			}
		}
		x.MacAddress = mac
		out = append(out, x)
	}
	return out, rows.Err()
}

// ClientRadios reads where the clients of macs were last heard, as their
// stored state says (see telemetry's roams): the radio, SSID, when, and
// the RSSI last reported. A MAC with no state is left out.
func (s *Store) ClientRadios(ctx context.Context, customerID int64, macs []string) ([]wnms.ClientRadio, error) {
	if len(macs) == 0 {
		return nil, nil
	}
	from, cond, arg := keysIn(s.dialect, "$2", "c.mac", macs)
	rows, err := s.tr.QueryContext(ctx, `SELECT c.mac, c.bssid, c.ssid, c.last_seen, c.rssi FROM `+from+
		`clients c WHERE c.customer_id = $1 AND `+cond+` ORDER BY c.mac, c.last_seen`, customerID, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []wnms.ClientRadio
	for rows.Next() {
		var c wnms.ClientRadio
		var rssi sql.NullInt64
		if err := rows.Scan(&c.MacAddress, &c.BSSID, &c.SSID, &c.LastSeen, &rssi); err != nil {
			return nil, err
		}
		c.RSSI = intOf(rssi)
		if n := len(out); n > 0 && out[n-1].MacAddress == c.MacAddress {
			out[n-1] = c // the newest
			continue
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
