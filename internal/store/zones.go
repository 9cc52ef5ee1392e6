package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/wnms"
)

const zoneConfigColumns = `page_id, layout_length, layout_width, layout_unit, footfall_min, footfall_max, dwell_time
	FROM zone_configs WHERE location_id = $1 AND customer_id = $2`

// queryRower is what both *sql.DB and *sql.Tx offer for one-row reads.
type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func readZoneConfig(ctx context.Context, q queryRower, customerID, locationID int64) (*wnms.ZoneConfig, error) {
	c := &wnms.ZoneConfig{LocationID: locationID, CustomerID: customerID}
	var length, width sql.NullFloat64
	var unit, dwell sql.NullString
	var fmin, fmax sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT `+zoneConfigColumns, locationID, customerID).
		Scan(&c.PageID, &length, &width, &unit, &fmin, &fmax, &dwell)
	if err != nil {
		return nil, err
	}
	if length.Valid && width.Valid && unit.Valid {
		c.Layout = &wnms.ZoneLayout{Length: length.Float64, Width: width.Float64, Unit: unit.String}
	}
	if fmin.Valid && fmax.Valid {
		c.Footfall = &wnms.FootfallRange{Min: fmin.Int64, Max: fmax.Int64}
	}
	if dwell.Valid {
		if err := json.Unmarshal([]byte(dwell.String), &c.DwellTime); err != nil {
			return nil, fmt.Errorf("zone config of location %d: dwell_time: %w", locationID, err)
		}
	}
	return c, nil
}

// insertZoneConfig creates the configuration row, and so its page id, if
// it is missing. A location that does not exist is RESOURCE_NOT_FOUND.
func (s *Store) insertZoneConfig(ctx context.Context, ex interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}, customerID, locationID int64) error {
	_, err := ex.ExecContext(ctx, `INSERT INTO zone_configs (location_id, customer_id, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (location_id, customer_id) DO NOTHING`, locationID, customerID, s.nowMS())
	if isForeignKey(err) {
		return wnms.NotFound("no location %d", locationID)
	}
	return err
}

// ZoneConfig reads the zone configuration of a location for a customer,
// creating it with a new page id and no parts set on first read. An
// unknown location is RESOURCE_NOT_FOUND.
func (s *Store) ZoneConfig(ctx context.Context, customerID, locationID int64) (*wnms.ZoneConfig, error) {
	c, err := readZoneConfig(ctx, s.r, customerID, locationID)
	if !errors.Is(err, sql.ErrNoRows) {
		return c, err
	}
	// Concurrent first reads all insert; ON CONFLICT keeps the first row,
	// so every reader sees the one page id that won.
	if err := s.insertZoneConfig(ctx, s.w, customerID, locationID); err != nil {
		return nil, err
	}
	c, err = readZoneConfig(ctx, s.w, customerID, locationID)
	if errors.Is(err, sql.ErrNoRows) {
		// The location was deleted in between and took the row with it.
		return nil, wnms.NotFound("no location %d", locationID)
	}
	return c, err
}

// UpdateZoneConfig writes the given parts of c (a nil part clears it) in
// one transaction, creating the configuration if needed, and fills c with
// what is stored. An unknown location is RESOURCE_NOT_FOUND.
func (s *Store) UpdateZoneConfig(ctx context.Context, c *wnms.ZoneConfig, parts wnms.ZoneParts) error {
	// SQLite numbers $N parameters by first appearance, so the SET values
	// come first and the key last.
	set := []string{"updated_at = $1"}
	args := []any{s.nowMS()}
	add := func(col string, v any) {
		args = append(args, v)
		set = append(set, col+" = $"+strconv.Itoa(len(args)))
	}
	if parts&wnms.ZoneLayoutPart != 0 {
		var length, width, unit any
		if c.Layout != nil {
			length, width, unit = c.Layout.Length, c.Layout.Width, c.Layout.Unit
		}
		add("layout_length", length)
		add("layout_width", width)
		add("layout_unit", unit)
	}
	if parts&wnms.ZoneFootfallPart != 0 {
		var fmin, fmax any
		if c.Footfall != nil {
			fmin, fmax = c.Footfall.Min, c.Footfall.Max
		}
		add("footfall_min", fmin)
		add("footfall_max", fmax)
	}
	if parts&wnms.ZoneDwellTimePart != 0 {
		var dwell any
		if c.DwellTime != nil {
			b, err := json.Marshal(c.DwellTime)
			if err != nil {
				return err
			}
			dwell = string(b)
		}
		add("dwell_time", dwell)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.insertZoneConfig(ctx, tx, c.CustomerID, c.LocationID); err != nil {
			return err
		}
		before, err := readZoneConfig(ctx, tx, c.CustomerID, c.LocationID)
		if err != nil {
			return err
		}
		n := len(args)
		if _, err := tx.ExecContext(ctx, `UPDATE zone_configs SET `+strings.Join(set, ", ")+
			` WHERE location_id = $`+strconv.Itoa(n+1)+` AND customer_id = $`+strconv.Itoa(n+2),
			append(args, c.LocationID, c.CustomerID)...); err != nil {
			return err
		}
		stored, err := readZoneConfig(ctx, tx, c.CustomerID, c.LocationID)
		if err != nil {
			return err
		}
		auditChange(ctx, locationName(ctx, tx, c.LocationID), auditZone(before), auditZone(stored))
		*c = *stored
		return nil
	})
}

// FloorCount counts the customer's floor locations at or below the
// location whose materialized path is path.
func (s *Store) FloorCount(ctx context.Context, customerID int64, path string) (int, error) {
	var n int
	lo, hi := subtreeBounds(path)
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM locations
		WHERE type = $1 AND customer_id = $2 AND `+subtreeMatch(s.dialect, "path", "$3", "$4"),
		wnms.FloorLocation, customerID, lo, hi).Scan(&n)
	return n, err
}

// auditZone is a zone configuration as its audit record compares it.
func auditZone(c *wnms.ZoneConfig) any {
	return struct {
		Layout    *wnms.ZoneLayout    `json:"layout"`
		Footfall  *wnms.FootfallRange `json:"footfall"`
		DwellTime []int               `json:"dwellTime"`
	}{c.Layout, c.Footfall, c.DwellTime}
}
