package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/wnms"
)

const apColumns = `box_id, customer_id, mac, name, model, ip_address, location_id, software_version, vendor_name,
	device_capability, ap_template_name, placed, num_assoc_clients, troubleshooting_status, grp, up_since, last_seen,
	active, radios, pos_x, pos_y`

// apFilterColumns maps the filter properties of APs to their columns.
var apFilterColumns = map[string]string{
	"boxid": "box_id", "name": "name", "macaddress": "mac", "ipaddress": "ip_address", "model": "model",
	"group": "grp", "troubleshootingstatus": "troubleshooting_status", "devicecapability": "device_capability",
	"locationid": "location_id", "numassocclients": "num_assoc_clients", "lastseen": "last_seen",
	"upsince": "up_since", "softwareversion": "software_version", "vendorname": "vendor_name",
}

var apSortColumns = map[string]string{
	"devicename": "name", "boxid": "box_id", "macaddress": "mac", "ipaddress": "ip_address", "lastseen": "last_seen",
}

// collectAPs scans every row of rows and closes them.
func collectAPs(rows *sql.Rows) ([]wnms.AP, error) {
	defer rows.Close()
	out := []wnms.AP{}
	for rows.Next() {
		a, err := scanAP(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *a)
	}
	return out, rows.Err()
}

func scanAP(sc scanner) (*wnms.AP, error) {
	var a wnms.AP
	var loc int64
	var radios string
	var x, y sql.NullFloat64
	if err := sc.Scan(&a.BoxID, &a.CustomerID, &a.MacAddress, &a.Name, &a.Model, &a.IPAddress, &loc,
		&a.SoftwareVersion, &a.VendorName, &a.DeviceCapability, &a.APTemplateName, &a.Placed, &a.NumAssocClients,
		&a.TroubleshootingStatus, &a.Group, &a.UpSince, &a.LastSeen, &a.Announced, &radios, &x, &y); err != nil {
		return nil, err
	}
	if x.Valid && y.Valid {
		a.Position = &wnms.Position{X: x.Float64, Y: y.Float64}
	}
	a.LocationID = wnms.LocalID(loc)
	if err := json.Unmarshal([]byte(radios), &a.Radios); err != nil {
		return nil, fmt.Errorf("ap %d radios: %w", a.BoxID, err)
	}
	return &a, nil
}

// UpsertAPs stores APs as seen at now, in one transaction (see
// telemetry.Store).
func (s *Store) UpsertAPs(ctx context.Context, customerID int64, aps []*wnms.AP, now int64) ([]wnms.AP, error) {
	// APs go in MAC order: concurrent heartbeats of the same APs then lock
	// them in one order and wait for each other instead of deadlocking.
	sorted := slices.Clone(aps)
	slices.SortFunc(sorted, func(a, b *wnms.AP) int { return cmp.Compare(a.MacAddress, b.MacAddress) })
	var up []wnms.AP
	audited := wnms.AuditFrom(ctx) != nil
	err := s.tx(ctx, func(tx *sql.Tx) error {
		up = up[:0]
		// The audit record lists what changed of the APs' inventory (name,
		// model, address, location, software): a heartbeat that changes
		// none of it lists nothing.
		was, is := map[string]any{}, map[string]any{}
		defer func() {
			if audited {
				auditChange(ctx, apsName(sorted), was, is)
			}
		}()
		for _, a := range sorted {
			radios, err := json.Marshal(a.Radios)
			if err != nil {
				return err
			}
			// A heartbeat without a position keeps the stored one, unless
			// the AP moved to another location.
			var posX, posY sql.NullFloat64
			if a.Position != nil {
				posX, posY = sql.NullFloat64{Float64: a.Position.X, Valid: true}, sql.NullFloat64{Float64: a.Position.Y, Valid: true}
			}
			var box int64
			err = tx.QueryRowContext(ctx, `INSERT INTO devices (customer_id, kind, mac) VALUES ($1, 'ap', $2)
				ON CONFLICT (customer_id, kind, mac) DO UPDATE SET mac = excluded.mac RETURNING box_id`,
				customerID, a.MacAddress).Scan(&box)
			if err != nil {
				return err
			}
			// wasUp is the liveness announced before this heartbeat; a new
			// AP counts as coming up.
			var wasUp sql.NullBool
			var prevSeen sql.NullInt64
			var inv apInventory
			err = tx.QueryRowContext(ctx, `SELECT active, last_seen, name, model, ip_address, location_id, software_version
				FROM aps WHERE box_id = $1`+forUpdate(s.dialect, "aps"), box).Scan(&wasUp, &prevSeen,
				&inv.Name, &inv.Model, &inv.IPAddress, &inv.LocationID, &inv.SoftwareVersion)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if next := (apInventory{a.Name, a.Model, a.IPAddress, a.LocationID.ID, a.SoftwareVersion}); !wasUp.Valid || next != inv {
				if wasUp.Valid {
					was[a.MacAddress] = inv
				}
				is[a.MacAddress] = next
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO aps (box_id, customer_id, mac, name, model, ip_address, location_id,
				software_version, vendor_name, device_capability, ap_template_name, placed, num_assoc_clients,
				troubleshooting_status, grp, up_since, last_seen, active, radios, pos_x, pos_y)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16, $17, $18, $19, $20)
				ON CONFLICT (box_id) DO UPDATE SET name = excluded.name, model = excluded.model,
				ip_address = excluded.ip_address, location_id = excluded.location_id,
				software_version = excluded.software_version, vendor_name = excluded.vendor_name,
				device_capability = excluded.device_capability, ap_template_name = excluded.ap_template_name,
				placed = excluded.placed, num_assoc_clients = excluded.num_assoc_clients,
				troubleshooting_status = excluded.troubleshooting_status, grp = excluded.grp,
				up_since = CASE WHEN aps.active THEN aps.up_since ELSE excluded.up_since END,
				last_seen = excluded.last_seen, active = excluded.active, radios = excluded.radios,
				pos_x = CASE WHEN excluded.pos_x IS NOT NULL THEN excluded.pos_x WHEN excluded.location_id = aps.location_id THEN aps.pos_x END,
				pos_y = CASE WHEN excluded.pos_x IS NOT NULL THEN excluded.pos_y WHEN excluded.location_id = aps.location_id THEN aps.pos_y END`,
				box, customerID, a.MacAddress, a.Name, a.Model, a.IPAddress, a.LocationID.ID, a.SoftwareVersion,
				a.VendorName, a.DeviceCapability, a.APTemplateName, a.Placed, a.NumAssocClients,
				a.TroubleshootingStatus, a.Group, now, true, string(radios), posX, posY)
			if isForeignKey(err) {
				return wnms.RuleBroken("no location %d", a.LocationID.ID)
			}
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM ap_radios WHERE box_id = $1`, box); err != nil {
				return err
			}
			// A BSSID that another AP holds stays with it: an AP never takes
			// another's radio (the service refuses such a record first; this
			// keeps the rule under a race too).
			for _, r := range a.Radios {
				if _, err := tx.ExecContext(ctx, `INSERT INTO ap_radios (customer_id, bssid, box_id) VALUES ($1, $2, $3)
					ON CONFLICT (customer_id, bssid) DO NOTHING`,
					customerID, r.MacAddress, box); err != nil {
					return err
				}
			}
			a.BoxID, a.CustomerID, a.LastSeen = box, customerID, now
			a.PrevSeen = prevSeen.Int64
			if !wasUp.Valid || !wasUp.Bool {
				a.UpSince = now
				up = append(up, *a)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return up, nil
}

// APsByMAC tells, for each of macs that is one of the customer's APs,
// its boxId and location (see telemetry.Store).
func (s *Store) APsByMAC(ctx context.Context, customerID int64, macs []string) (map[string]wnms.RadioAP, error) {
	out := make(map[string]wnms.RadioAP, len(macs))
	if len(macs) == 0 {
		return out, nil
	}
	// Through devices, whose (customer, kind, MAC) is indexed: aps has no
	// index on its MAC.
	from, cond, arg := keysIn(s.dialect, "$2", "d.mac", macs)
	rows, err := s.r.QueryContext(ctx, `SELECT d.mac, a.box_id, a.name, a.location_id FROM `+from+`devices d
		JOIN aps a ON a.box_id = d.box_id WHERE d.customer_id = $1 AND d.kind = 'ap' AND `+cond, customerID, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var mac string
		var r wnms.RadioAP
		if err := rows.Scan(&mac, &r.BoxID, &r.Name, &r.LocationID); err != nil {
			return nil, err
		}
		out[mac] = r
	}
	return out, rows.Err()
}

// APs lists the APs q selects (see telemetry.Store).
func (s *Store) APs(ctx context.Context, q wnms.APQuery) ([]wnms.AP, int, error) {
	var args sqlArgs
	where := []string{"customer_id = " + args.add(q.CustomerID)}
	for _, subtrees := range [][]string{q.Scope, q.Locations} {
		if subtrees == nil {
			continue
		}
		if len(subtrees) == 0 {
			return []wnms.AP{}, 0, nil
		}
		or := make([]string, len(subtrees))
		for i, p := range subtrees {
			lo, hi := subtreeBounds(p)
			or[i] = subtreeMatch(s.dialect, "path", args.add(lo), args.add(hi))
		}
		where = append(where, "location_id IN (SELECT id FROM locations WHERE "+strings.Join(or, " OR ")+")")
	}
	if len(q.MACs) > 0 {
		ph := make([]string, len(q.MACs))
		for i, m := range q.MACs {
			ph[i] = args.add(m)
		}
		where = append(where, "mac IN ("+strings.Join(ph, ", ")+")")
	}
	if q.Capability != 0 {
		where = append(where, "(device_capability & "+args.add(int64(q.Capability))+") <> 0")
	}
	if q.Active != nil {
		op := " >= "
		if !*q.Active {
			op = " < "
		}
		where = append(where, "last_seen"+op+args.add(q.ActiveSince))
	}
	if q.Name != "" {
		where = append(where, "lower(name) LIKE '%' || lower("+args.add(likeEscape(q.Name))+") || '%' ESCAPE '\\'")
	}
	if q.Filter != nil {
		f, err := compileFilter(*q.Filter, apFilterColumns, &args)
		if err != nil {
			return nil, 0, err
		}
		where = append(where, f)
	}
	cond := strings.Join(where, " AND ")
	col, ok := apSortColumns[q.Sort]
	if !ok {
		col = "box_id"
	}
	dir := " DESC"
	if q.Ascending {
		dir = " ASC"
	}
	order := col + dir
	if col != "box_id" {
		order += ", box_id" + dir
	}
	query := `SELECT ` + apColumns + ` FROM aps WHERE ` + cond + ` ORDER BY ` + order +
		` LIMIT ` + strconv.Itoa(q.Limit) + ` OFFSET ` + strconv.Itoa(q.Offset)
	return snapshotPage(ctx, s.r, `SELECT count(*) FROM aps WHERE `+cond, args, query, args, func(sc scanner) (wnms.AP, error) {
		a, err := scanAP(sc)
		if err != nil {
			return wnms.AP{}, err
		}
		return *a, nil
	})
}

// MarkAPsDown records as down the APs announced up but silent since
// staleBefore (see telemetry.Store). The conditional UPDATE makes one
// replica, the first, return each AP.
func (s *Store) MarkAPsDown(ctx context.Context, staleBefore int64) ([]wnms.AP, error) {
	var out []wnms.AP
	err := s.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `UPDATE aps SET active = $1 WHERE active = $2 AND last_seen < $3 RETURNING `+apColumns,
			false, true, staleBefore)
		if err != nil {
			return err
		}
		out, err = collectAPs(rows)
		return err
	})
	slices.SortFunc(out, func(a, b wnms.AP) int { return cmp.Compare(a.BoxID, b.BoxID) })
	return out, err
}

// TouchAPs records a heartbeat at now of the customer's APs boxIDs (see
// telemetry.Store): lastSeen moves forward, never back, and an AP
// announced down comes up (upSince now), returned once whichever replica
// touches it first.
func (s *Store) TouchAPs(ctx context.Context, customerID int64, boxIDs []int64, now int64) ([]wnms.AP, error) {
	if len(boxIDs) == 0 {
		return nil, nil
	}
	var up []wnms.AP
	err := s.tx(ctx, func(tx *sql.Tx) error {
		in, arg := inList(s.dialect, "$2", boxIDs)
		rows, err := tx.QueryContext(ctx, `UPDATE aps SET last_seen = $3, up_since = $3, active = $4
			WHERE customer_id = $1 AND box_id`+in+` AND active = $5 AND last_seen < $3 RETURNING `+apColumns,
			customerID, arg, now, true, false)
		if err != nil {
			return err
		}
		if up, err = collectAPs(rows); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE aps SET last_seen = $3 WHERE customer_id = $1 AND box_id`+in+` AND last_seen < $3`,
			customerID, arg, now)
		return err
	})
	slices.SortFunc(up, func(a, b wnms.AP) int { return cmp.Compare(a.BoxID, b.BoxID) })
	return up, err
}

// APsForSources returns the customer's APs that have a radio of one of
// bssids, or are named one of names, or have one of ips as their
// address: where what a data source reports is placed.
func (s *Store) APsForSources(ctx context.Context, customerID int64, bssids, names, ips []string) ([]wnms.SourceAP, error) {
	if len(bssids)+len(names)+len(ips) == 0 {
		return nil, nil
	}
	none := []string{}
	or := func(v []string) []string {
		if v == nil {
			return none
		}
		return v
	}
	inB, argB := inList(s.dialect, "$2", or(bssids))
	inN, argN := inList(s.dialect, "$3", or(names))
	inI, argI := inList(s.dialect, "$4", or(ips))
	rows, err := s.r.QueryContext(ctx, `SELECT a.box_id, a.name, a.ip_address, a.location_id, a.radios FROM aps a
		WHERE a.customer_id = $1 AND (a.box_id IN (SELECT r.box_id FROM ap_radios r WHERE r.customer_id = $1 AND r.bssid`+inB+`)
		OR a.name`+inN+` OR a.ip_address`+inI+`) ORDER BY a.box_id LIMIT 1000`, customerID, argB, argN, argI)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []wnms.SourceAP
	for rows.Next() {
		var ap wnms.SourceAP
		var radios string
		if err := rows.Scan(&ap.BoxID, &ap.Name, &ap.IPAddress, &ap.LocationID, &radios); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(radios), &ap.Radios); err != nil {
			return nil, fmt.Errorf("radios of AP %q: %w", ap.Name, err)
		}
		out = append(out, ap)
	}
	return out, rows.Err()
}

// apInventory is what the audit log compares of an AP.
type apInventory struct {
	Name            string `json:"name"`
	Model           string `json:"model"`
	IPAddress       string `json:"ipAddress"`
	LocationID      int64  `json:"locationId"`
	SoftwareVersion string `json:"softwareVersion"`
}

// apsName names the APs of a heartbeat in the audit log: "name (mac)" for
// one, the first three and a count for more.
func apsName(aps []*wnms.AP) string {
	var b strings.Builder
	for i, a := range aps {
		if i == 3 {
			fmt.Fprintf(&b, " and %d more", len(aps)-3)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if a.Name != "" {
			b.WriteString(a.Name + " (" + a.MacAddress + ")")
		} else {
			b.WriteString(a.MacAddress)
		}
	}
	return b.String()
}

// ClaimPoller takes or renews the lease of the customer's poller name for
// holder until expires (ms), if it is free, run out at now, or holder's
// already, and records the poller's state st; it reports whether holder
// has it. One server polls each poller at a time.
func (s *Store) ClaimPoller(ctx context.Context, customerID int64, name, holder string, now, expires int64, st wnms.PollerState) (bool, error) {
	res, err := s.w.ExecContext(ctx, `INSERT INTO poller_leases (customer_id, name, holder, expires_at, state, last_poll, last_error, radios, stations)
		VALUES ($1, $2, $3, $4, $6, $7, $8, $9, $10)
		ON CONFLICT (customer_id, name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,
			state = excluded.state, last_poll = excluded.last_poll, last_error = excluded.last_error,
			radios = excluded.radios, stations = excluded.stations
		WHERE poller_leases.holder = excluded.holder OR poller_leases.expires_at < $5`,
		customerID, name, holder, expires, now, st.State, st.LastPoll, st.LastError, st.Radios, st.Stations)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ReleasePoller gives up holder's lease of a poller (a poller removed, or
// a server stopping), so another server may take it at once.
func (s *Store) ReleasePoller(ctx context.Context, customerID int64, name, holder string) error {
	_, err := s.w.ExecContext(ctx, `DELETE FROM poller_leases WHERE customer_id = $1 AND name = $2 AND holder = $3`, customerID, name, holder)
	return err
}

// PollerStates reads the state of the customer's pollers as their
// holders last recorded it, by name, with when their leases run out.
func (s *Store) PollerStates(ctx context.Context, customerID int64) (map[string]wnms.PollerState, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT name, holder, expires_at, state, last_poll, last_error, radios, stations
		FROM poller_leases WHERE customer_id = $1`, customerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]wnms.PollerState{}
	for rows.Next() {
		var name string
		var st wnms.PollerState
		if err := rows.Scan(&name, &st.Holder, &st.Expires, &st.State, &st.LastPoll, &st.LastError, &st.Radios, &st.Stations); err != nil {
			return nil, err
		}
		out[name] = st
	}
	return out, rows.Err()
}

// PlaceAP sets where AP boxID of the customer is on its floor's layout, or
// takes it off the plan (pos nil), and answers whether the AP exists. It
// changes nothing else of the AP: placing is not a heartbeat.
func (s *Store) PlaceAP(ctx context.Context, customerID, boxID int64, pos *wnms.Position) (bool, error) {
	found := false
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var name string
		var x, y sql.NullFloat64
		err := tx.QueryRowContext(ctx, `SELECT name, pos_x, pos_y FROM aps WHERE box_id = $1 AND customer_id = $2`+
			forUpdate(s.dialect, "aps"), boxID, customerID).Scan(&name, &x, &y)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		var was, is *wnms.Position
		if x.Valid && y.Valid {
			was = &wnms.Position{X: x.Float64, Y: y.Float64}
		}
		var nx, ny sql.NullFloat64
		if pos != nil {
			is = pos
			nx, ny = sql.NullFloat64{Float64: pos.X, Valid: true}, sql.NullFloat64{Float64: pos.Y, Valid: true}
		}
		auditChange(ctx, name, map[string]any{"position": was}, map[string]any{"position": is})
		_, err = tx.ExecContext(ctx, `UPDATE aps SET pos_x = $1, pos_y = $2 WHERE box_id = $3`, nx, ny, boxID)
		return err
	})
	return found, err
}
