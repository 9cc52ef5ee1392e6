package wnms

import (
	"context"
	"math"
	"strings"
)

// ZoneConfig is the stored zone configuration of a location for location
// analytics (api.md §13). It is kept per location and customer, so
// the shared root and unknown locations carry one configuration per
// customer. A nil part has not been set and falls back to its default:
// the floor layout (or zeros), the measured footfall, DefaultDwellTime.
type ZoneConfig struct {
	LocationID int64
	CustomerID int64
	// PageID is the system-generated id of the location's active landing
	// page: assigned when the configuration is first read, then stable.
	PageID    int64
	Layout    *ZoneLayout
	Footfall  *FootfallRange
	DwellTime []int
}

// ZoneLayout is the size of a location's area.
type ZoneLayout struct {
	Length float64 `json:"length"`
	Width  float64 `json:"width"`
	Unit   string  `json:"unit"`
}

// FootfallRange is the least and most distinct clients per day.
type FootfallRange struct {
	Min int64 `json:"min"`
	Max int64 `json:"max"`
}

// Layout units: the floor layout's length units.
const (
	UnitFeet  = "FEET"
	UnitMeter = "METER"
)

// DefaultDwellTime is the dwell time interval list, in minutes, of a
// location whose list was never set.
var DefaultDwellTime = []int{5, 15, 30, 60, 120}

// Zone configuration limits.
const (
	MaxDwellTimeEntries = 20
	MaxDwellTimeMinutes = 1440
	// MaxFootfall keeps footfall values exact in every JSON client
	// (far below 2^53).
	MaxFootfall = 1_000_000_000
)

// NodeTypes are the node_type values of the zone configuration calls.
var NodeTypes = []string{"location", "zone", "data"}

// ParseNodeType reads a node_type case-insensitively and returns its
// canonical (lower case) form.
func ParseNodeType(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, t := range NodeTypes {
		if s == t {
			return t, true
		}
	}
	return "", false
}

// ParseUnit reads a layout unit case-insensitively and returns its
// canonical form, FEET or METER.
func ParseUnit(s string) (string, bool) {
	switch u := strings.ToUpper(strings.TrimSpace(s)); u {
	case UnitFeet, UnitMeter:
		return u, true
	}
	return "", false
}

// Validate checks a layout: length and width finite and above zero, the
// unit FEET or METER (any case; Validate makes it canonical). A broken
// rule is VALIDATION_FAILED naming the field under prefix.
func (l *ZoneLayout) Validate(prefix string) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"length", l.Length}, {"width", l.Width}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v <= 0 {
			return Invalid(prefix+f.name, "must be a finite number above 0")
		}
	}
	u, ok := ParseUnit(l.Unit)
	if !ok {
		return Invalid(prefix+"unit", "must be FEET or METER, not %q", l.Unit)
	}
	l.Unit = u
	return nil
}

// Validate checks a footfall range: 0 ≤ min ≤ max ≤ MaxFootfall. A broken
// rule is VALIDATION_FAILED naming the field under prefix.
func (f FootfallRange) Validate(prefix string) error {
	switch {
	case f.Min < 0 || f.Min > MaxFootfall:
		return Invalid(prefix+"min", "must be between 0 and %d", MaxFootfall)
	case f.Max < 0 || f.Max > MaxFootfall:
		return Invalid(prefix+"max", "must be between 0 and %d", MaxFootfall)
	case f.Min > f.Max:
		return Invalid(prefix+"min", "must not be above max (%d > %d)", f.Min, f.Max)
	}
	return nil
}

// ValidateDwellTime checks a dwell time list: 1 to MaxDwellTimeEntries
// minutes values, each 1 to MaxDwellTimeMinutes, strictly increasing. A
// broken rule is VALIDATION_FAILED naming field.
func ValidateDwellTime(field string, d []int) error {
	if len(d) < 1 || len(d) > MaxDwellTimeEntries {
		return Invalid(field, "must hold 1 to %d values, not %d", MaxDwellTimeEntries, len(d))
	}
	for i, v := range d {
		if v < 1 || v > MaxDwellTimeMinutes {
			return Invalid(field, "values must be minutes from 1 to %d, not %d", MaxDwellTimeMinutes, v)
		}
		if i > 0 && v <= d[i-1] {
			return Invalid(field, "values must be strictly increasing (%d after %d)", v, d[i-1])
		}
	}
	return nil
}

// ZoneParts names parts of a zone configuration.
type ZoneParts uint8

// The parts of a zone configuration that a change may write.
const (
	ZoneLayoutPart ZoneParts = 1 << iota
	ZoneFootfallPart
	ZoneDwellTimePart
)

// ZoneStore keeps zone configurations.
type ZoneStore interface {
	// ZoneConfig reads the zone configuration of a location for a
	// customer, creating it (with its page id and no parts set) on first
	// read. An unknown location is RESOURCE_NOT_FOUND.
	ZoneConfig(ctx context.Context, customerID, locationID int64) (*ZoneConfig, error)
	// UpdateZoneConfig writes the given parts of c (a nil part clears it)
	// in one transaction and fills c with the stored configuration,
	// PageID included. An unknown location is RESOURCE_NOT_FOUND.
	UpdateZoneConfig(ctx context.Context, c *ZoneConfig, parts ZoneParts) error
	// FloorCount counts the customer's floor locations at or below the
	// location with materialized path path.
	FloorCount(ctx context.Context, customerID int64, path string) (int, error)
}
