package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/wnms/wnms/internal/wnms"
)

// incidentSlotMs is a baseline slot (15 minutes); incidentGap is the
// furthest two anomalous slots of one incident may start apart (one slot
// between them).
const (
	incidentSlotMs = 900_000
	incidentGap    = 2 * incidentSlotMs
)

// AnomaliesRaisedAfter lists at most limit of the customer's anomalies
// raised after the cursor, in that order.
func (s *Store) AnomaliesRaisedAfter(ctx context.Context, customerID int64, after wnms.AnomalyCursor, limit int) ([]wnms.Anomaly, error) {
	rows, err := s.tr.QueryContext(ctx, `SELECT location_id, kind, slot, observation, baseline, threshold, raised_at, `+anomalyAPColumns+`
		FROM anomalies WHERE customer_id = $1 AND (raised_at, location_id, kind, slot) > ($2, $3, $4, $5)
		ORDER BY raised_at, location_id, kind, slot LIMIT $6`,
		customerID, after.RaisedAt, after.LocationID, after.Kind, after.Slot, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []wnms.Anomaly{}
	for rows.Next() {
		a := wnms.Anomaly{CustomerID: customerID}
		var ap anomalyAP
		if err := rows.Scan(append([]any{&a.LocationID, &a.Kind, &a.Slot, &a.Observation, &a.Baseline, &a.Threshold, &a.RaisedAt},
			ap.dest()...)...); err != nil {
			return nil, err
		}
		a.AP = ap.value()
		out = append(out, a)
	}
	return out, rows.Err()
}

// IncidentCustomers lists the customers with anomalies raised since since
// (Unix ms) or with open incidents: those the grouping looks at.
func (s *Store) IncidentCustomers(ctx context.Context, since int64) ([]int64, error) {
	a, err := queryIDs(ctx, s.tr, `SELECT DISTINCT customer_id FROM anomalies WHERE raised_at >= $1 ORDER BY customer_id`, since)
	if err != nil {
		return nil, err
	}
	b, err := queryIDs(ctx, s.r, `SELECT DISTINCT customer_id FROM incidents WHERE closed_at IS NULL ORDER BY customer_id`)
	if err != nil {
		return nil, err
	}
	for _, id := range b {
		found := false
		for _, x := range a {
			found = found || x == id
		}
		if !found {
			a = append(a, id)
		}
	}
	return a, nil
}

// incidentDetail is what the detail column holds.
type incidentDetail struct {
	Floors   []int64               `json:"floors"`
	Peak     wnms.IncidentPeak     `json:"peak"`
	Cause    *wnms.IncidentCause   `json:"cause"`
	Scope    wnms.IncidentScope    `json:"scope"`
	Evidence []wnms.IncidentFigure `json:"evidence"`
}

const incidentColumns = `id, customer_id, site_id, first_slot, last_slot, closed_at, kind, detail, acknowledged`

func scanIncident(row interface{ Scan(...any) error }) (*wnms.Incident, error) {
	var in wnms.Incident
	var closed sql.NullInt64
	var detail string
	if err := row.Scan(&in.ID, &in.CustomerID, &in.SiteLocationID, &in.From, &in.LastSlot, &closed, &in.Kind, &detail,
		&in.Acknowledged); err != nil {
		return nil, err
	}
	if closed.Valid {
		in.To = &closed.Int64
	}
	var d incidentDetail
	if err := json.Unmarshal([]byte(detail), &d); err != nil {
		return nil, err
	}
	in.Floors, in.Peak, in.Cause, in.Scope, in.Evidence = d.Floors, d.Peak, d.Cause, d.Scope, d.Evidence
	if in.Floors == nil {
		in.Floors = []int64{}
	}
	if in.Evidence == nil {
		in.Evidence = []wnms.IncidentFigure{}
	}
	return &in, nil
}

func queryIncidents(ctx context.Context, q querier, query string, args ...any) ([]*wnms.Incident, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*wnms.Incident{}
	for rows.Next() {
		in, err := scanIncident(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, rows.Err()
}

// Incidents lists the customer's incidents that overlap [from, to] (ms):
// begun by to and not closed before from, newest first.
func (s *Store) Incidents(ctx context.Context, customerID, from, to int64) ([]*wnms.Incident, error) {
	return queryIncidents(ctx, s.r, `SELECT `+incidentColumns+` FROM incidents
		WHERE customer_id = $1 AND first_slot <= $2 AND (closed_at IS NULL OR closed_at >= $3)
		ORDER BY first_slot DESC, id DESC`, customerID, to, from)
}

// Incident is one of the customer's incidents (RESOURCE_NOT_FOUND when the
// customer has none of that id).
func (s *Store) Incident(ctx context.Context, customerID, id int64) (*wnms.Incident, error) {
	in, err := scanIncident(s.r.QueryRowContext(ctx, `SELECT `+incidentColumns+` FROM incidents WHERE customer_id = $1 AND id = $2`,
		customerID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, wnms.NotFound("no incident %d", id)
	}
	return in, err
}

// OpenIncidents lists the customer's open incidents whose last anomalous
// slot started before before (Unix ms), oldest first.
func (s *Store) OpenIncidents(ctx context.Context, customerID, before int64) ([]*wnms.Incident, error) {
	return queryIncidents(ctx, s.r, `SELECT `+incidentColumns+` FROM incidents
		WHERE customer_id = $1 AND closed_at IS NULL AND last_slot < $2 ORDER BY last_slot, id`, customerID, before)
}

// AcknowledgeIncident marks one of the customer's incidents acknowledged
// (RESOURCE_NOT_FOUND when it has none of that id), with the call's audit
// record in the same transaction.
func (s *Store) AcknowledgeIncident(ctx context.Context, customerID, id int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE incidents SET acknowledged = $1 WHERE customer_id = $2 AND id = $3`, true, customerID, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return wnms.NotFound("no incident %d", id)
		}
		return nil
	})
}

// SaveIncident stores a group of anomalous slots of one site (in: its
// site, span, kind and detail), computed from the anomalies recorded so
// far: it joins the site's stored incidents it touches (within one slot),
// merging them into the oldest, or inserts a new one. The span only ever
// grows; the detail is replaced only by one computed over at least the
// stored span (another replica may have computed more meanwhile). The
// incident is closed (To = the end of its last slot) when its last slot
// started at least two slots before evaluatedThrough, the newest slot the
// evaluation covered (or when every incident it joins was closed: late
// anomalies extend a closed incident, they do not reopen it). Sites are taken one at a time (a lock on the site),
// so what each replica reports as opened or closed, only one does. in.ID,
// in.To and in.Acknowledged are set to what is stored.
func (s *Store) SaveIncident(ctx context.Context, in *wnms.Incident, evaluatedThrough int64) (wnms.IncidentChange, error) {
	b, err := json.Marshal(incidentDetail{Floors: in.Floors, Peak: in.Peak, Cause: in.Cause, Scope: in.Scope, Evidence: in.Evidence})
	if err != nil {
		return wnms.IncidentChange{}, err
	}
	var ch wnms.IncidentChange
	var id int64
	var to *int64
	var ack bool
	err = s.txSolo(ctx, func(tx *sql.Tx) error {
		ch, id, to, ack = wnms.IncidentChange{}, 0, nil, false
		key := "incident:" + strconv.FormatInt(in.CustomerID, 10) + ":" + strconv.FormatInt(in.SiteLocationID, 10)
		if err := lockKey(ctx, tx, s.dialect, key); err != nil {
			return err
		}
		known, err := queryIncidents(ctx, tx, `SELECT `+incidentColumns+` FROM incidents
			WHERE customer_id = $1 AND site_id = $2 AND last_slot >= $3 AND first_slot <= $4 ORDER BY id`,
			in.CustomerID, in.SiteLocationID, in.From-incidentGap, in.LastSlot+incidentGap)
		if err != nil {
			return err
		}
		first, last := in.From, in.LastSlot
		anyOpen := false
		for _, k := range known {
			first, last = min(first, k.From), max(last, k.LastSlot)
			ack = ack || k.Acknowledged
			anyOpen = anyOpen || k.To == nil
		}
		// Closed once the evaluation passed it; an incident that was closed
		// stays closed when late anomalies extend it.
		if last+incidentGap <= evaluatedThrough || (len(known) > 0 && !anyOpen) {
			end := last + incidentSlotMs
			to = &end
		}
		if len(known) == 0 {
			ch.Opened, ch.Closed = true, to != nil
			return tx.QueryRowContext(ctx, `INSERT INTO incidents (customer_id, site_id, first_slot, last_slot, closed_at, kind, detail,
				acknowledged, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
				in.CustomerID, in.SiteLocationID, first, last, to, in.Kind, string(b), false, s.nowMS()).Scan(&id)
		}
		id = known[0].ID
		ch.Closed = anyOpen && to != nil
		for _, k := range known[1:] {
			ch.Merged = append(ch.Merged, k.ID)
			if _, err := tx.ExecContext(ctx, `DELETE FROM incidents WHERE id = $1`, k.ID); err != nil {
				return err
			}
		}
		if in.From <= first && in.LastSlot >= last {
			_, err = tx.ExecContext(ctx, `UPDATE incidents SET first_slot = $1, last_slot = $2, closed_at = $3, kind = $4, detail = $5,
				acknowledged = $6, updated_at = $7 WHERE id = $8`, first, last, to, in.Kind, string(b), ack, s.nowMS(), id)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE incidents SET first_slot = $1, last_slot = $2, closed_at = $3, acknowledged = $4,
				updated_at = $5 WHERE id = $6`, first, last, to, ack, s.nowMS(), id)
		}
		return err
	})
	if err != nil {
		return wnms.IncidentChange{}, err
	}
	in.ID, in.To, in.Acknowledged = id, to, ack
	return ch, nil
}

// APNames are the MAC and name of the customer's APs of the given box ids.
func (s *Store) APNames(ctx context.Context, customerID int64, boxIDs []int64) (map[int64][2]string, error) {
	out := map[int64][2]string{}
	if len(boxIDs) == 0 {
		return out, nil
	}
	cond, arg := inList(s.dialect, "$2", boxIDs)
	rows, err := s.r.QueryContext(ctx, `SELECT box_id, mac, name FROM aps WHERE customer_id = $1 AND box_id`+cond, customerID, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var mac, name string
		if err := rows.Scan(&id, &mac, &name); err != nil {
			return nil, err
		}
		out[id] = [2]string{mac, name}
	}
	return out, rows.Err()
}

// tallyLimit is how many values of a dimension the counts keep.
const tallyLimit = 10

func scanTallies(ctx context.Context, q querier, query string, args ...any) ([]wnms.Tally, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []wnms.Tally{}
	for rows.Next() {
		var t wnms.Tally
		var key sql.NullString
		if err := rows.Scan(&key, &t.Affected, &t.Attempted); err != nil {
			return nil, err
		}
		t.Key = key.String
		out = append(out, t)
	}
	return out, rows.Err()
}

// ConnectivityCounts counts the clients that attempted to connect (Success
// or Failure events) in [from, to) at the locations, and those of them
// that failed, in all and by failure code pair (each client by its most
// frequent one), AP, SSID, band, RADIUS server (the radiusPrimaryIP of
// their Intermediate events) and location.
func (s *Store) ConnectivityCounts(ctx context.Context, customerID int64, locations []int64, from, to int64) (*wnms.IncidentCounts, error) {
	out := &wnms.IncidentCounts{}
	cond, arg := inList(s.dialect, "$4", locations)
	args := []any{customerID, from, to, arg}
	slotWhere := ` FROM slot_conn_clients WHERE customer_id = $1 AND slot >= $2 AND slot < $3 AND location_id` + cond
	failing := `(failures & 1) = 1`
	if err := s.tr.QueryRowContext(ctx, `SELECT COUNT(DISTINCT CASE WHEN `+failing+` THEN mac END), COUNT(DISTINCT mac)`+slotWhere,
		args...).Scan(&out.Affected, &out.Attempted); err != nil {
		return nil, err
	}
	if out.Affected == 0 {
		return out, nil
	}
	lim := " ORDER BY 2 DESC, 1 LIMIT " + strconv.Itoa(tallyLimit)
	dim := func(col string) ([]wnms.Tally, error) {
		return scanTallies(ctx, s.tr, `SELECT `+col+`, COUNT(DISTINCT CASE WHEN `+failing+` THEN mac END), COUNT(DISTINCT mac)`+
			slotWhere+` GROUP BY `+col+lim, args...)
	}
	var err error
	if out.SSIDs, err = dim("ssid"); err != nil {
		return nil, err
	}
	if out.Bands, err = dim("band"); err != nil {
		return nil, err
	}
	if out.Locs, err = dim("CAST(location_id AS TEXT)"); err != nil {
		return nil, err
	}
	evWhere := ` FROM client_events WHERE customer_id = $1 AND ts >= $2 AND ts < $3 AND location_id` + cond
	// Each failing client counts for its most frequent failure (ties: the
	// lower code pair), so that the reasons' clients add up to the failing
	// clients and a client that retried through two answers of one outage
	// (RADIUS unreachable, then rejected) counts once.
	if out.Reasons, err = scanTallies(ctx, s.tr, `SELECT reason, COUNT(*), 0 FROM (
			SELECT CAST(code AS TEXT) || '/' || CAST(sub_code AS TEXT) AS reason,
				ROW_NUMBER() OVER (PARTITION BY mac ORDER BY COUNT(*) DESC, code, sub_code) AS pick`+
		evWhere+` AND event_type = 'Failure' GROUP BY mac, code, sub_code) AS per_client
		WHERE pick = 1 GROUP BY reason`+lim, args...); err != nil {
		return nil, err
	}
	if out.APs, err = scanTallies(ctx, s.tr, `SELECT CAST(ap_box_id AS TEXT), COUNT(DISTINCT CASE WHEN event_type = 'Failure' THEN mac END),
		COUNT(DISTINCT mac)`+evWhere+` AND event_type IN ('Success', 'Failure') AND ap_box_id IS NOT NULL GROUP BY ap_box_id`+lim,
		args...); err != nil {
		return nil, err
	}
	radius := eventBodyText(s.dialect, "radiusPrimaryIP")
	if out.Radius, err = scanTallies(ctx, s.tr, `SELECT `+radius+`, COUNT(DISTINCT CASE WHEN mac IN (SELECT mac`+evWhere+
		` AND event_type = 'Failure') THEN mac END), COUNT(DISTINCT mac)`+evWhere+` AND event_type = 'Intermediate' AND `+radius+
		` IS NOT NULL GROUP BY `+radius+lim, args...); err != nil {
		return nil, err
	}
	return out, nil
}

// PerformanceCounts counts the clients with statistics samples in [from,
// to) at the locations, and those of them troubled (low data rate, high
// retry, low RSSI or sticky, by their mean over a slot and place as the
// performance observation counts them), in all and by reason, SSID, band,
// location, AP and channel.
func (s *Store) PerformanceCounts(ctx context.Context, customerID int64, locations []int64, from, to int64) (*wnms.IncidentCounts, error) {
	out := &wnms.IncidentCounts{}
	cond, arg := inList(s.dialect, "$4", locations)
	args := []any{customerID, from, to, arg}
	where := ` FROM slot_perf_clients WHERE customer_id = $1 AND slot >= $2 AND slot < $3 AND samples > 0 AND location_id` + cond
	reasons := []struct{ key, cond string }{
		{"lowDataRate", "rate_sum < " + strconv.FormatFloat(wnms.LowDataRateMbps, 'f', -1, 64) + " * samples"},
		{"highRetry", "retry_sum > " + strconv.FormatFloat(wnms.HighRetryPct, 'f', -1, 64) + " * samples"},
		{"lowRssi", "rssi_sum < " + strconv.FormatFloat(wnms.LowRSSI, 'f', -1, 64) + " * samples"},
		{"sticky", "(weak_all = 1 AND with_better > 0 AND better = with_better)"},
	}
	troubled := "("
	for i, r := range reasons {
		if i > 0 {
			troubled += " OR "
		}
		troubled += r.cond
	}
	troubled += ")"
	if err := s.tr.QueryRowContext(ctx, `SELECT COUNT(DISTINCT CASE WHEN `+troubled+` THEN mac END), COUNT(DISTINCT mac)`+where,
		args...).Scan(&out.Affected, &out.Attempted); err != nil {
		return nil, err
	}
	if out.Affected == 0 {
		return out, nil
	}
	for _, r := range reasons {
		t := wnms.Tally{Key: r.key, Attempted: out.Attempted}
		if err := s.tr.QueryRowContext(ctx, `SELECT COUNT(DISTINCT CASE WHEN `+r.cond+` THEN mac END)`+where, args...).Scan(&t.Affected); err != nil {
			return nil, err
		}
		if t.Affected > 0 {
			out.Reasons = append(out.Reasons, t)
		}
	}
	lim := " ORDER BY 2 DESC, 1 LIMIT " + strconv.Itoa(tallyLimit)
	var err error
	for _, d := range []struct {
		col string
		to  *[]wnms.Tally
	}{{"ssid", &out.SSIDs}, {"band", &out.Bands}, {"CAST(location_id AS TEXT)", &out.Locs}} {
		if *d.to, err = scanTallies(ctx, s.tr, `SELECT `+d.col+`, COUNT(DISTINCT CASE WHEN `+troubled+` THEN mac END), COUNT(DISTINCT mac)`+
			where+` GROUP BY `+d.col+lim, args...); err != nil {
			return nil, err
		}
	}
	// The AP and the channel a client was on are not in slot_perf_clients:
	// they are summed here from the span's samples the same way, per
	// client, slot and AP or channel (a client that moved counts on each).
	for _, d := range []struct {
		col string
		to  *[]wnms.Tally
	}{{"CAST(ap_box_id AS TEXT)", &out.APs}, {"CAST(channel AS TEXT)", &out.Channels}} {
		if *d.to, err = scanTallies(ctx, s.tr, `SELECT k, COUNT(DISTINCT CASE WHEN `+troubled+` THEN mac END), COUNT(DISTINCT mac) FROM (
				SELECT `+d.col+` AS k, mac, COUNT(*) AS samples, SUM(data_rate) AS rate_sum, SUM(retry_pct) AS retry_sum, SUM(rssi) AS rssi_sum,
				MIN(CASE WHEN rssi < `+strconv.Itoa(int(wnms.LowRSSI))+` THEN 1 ELSE 0 END) AS weak_all,
				SUM(CASE WHEN best_nbr_rssi IS NOT NULL AND best_nbr_rssi >= rssi + `+strconv.Itoa(int(wnms.StickyMarginDB))+` THEN 1 ELSE 0 END) AS better,
				COUNT(best_nbr_rssi) AS with_better
				FROM client_stats WHERE customer_id = $1 AND ts >= $2 AND ts < $3 AND rssi IS NOT NULL AND `+d.col+` IS NOT NULL
					AND location_id`+cond+`
				GROUP BY ts - ts % `+strconv.Itoa(int(wnms.SlotDuration.Milliseconds()))+`, mac, k) AS per_client
			GROUP BY k`+lim, args...); err != nil {
			return nil, err
		}
	}
	return out, nil
}
