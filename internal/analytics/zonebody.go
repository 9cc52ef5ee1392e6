package analytics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/wnms"
)

// zoneChange is a valid PUT body: the parts of the zone configuration to
// write (a nil part named in Parts clears it).
type zoneChange struct {
	Parts     wnms.ZoneParts
	Layout    *wnms.ZoneLayout
	Footfall  *wnms.FootfallRange
	DwellTime []int
}

// zoneBody is the PUT body as sent. Raw parts tell an absent part (no
// bytes) from an explicit null, which resets the part to its default.
type zoneBody struct {
	ServerID   json.RawMessage `json:"server_id"`
	LocationID json.RawMessage `json:"location_id"`
	NodeType   json.RawMessage `json:"node_type"`
	Config     json.RawMessage `json:"config"`
}

type zoneConfigBody struct {
	Layout json.RawMessage `json:"layout"`
	Range  json.RawMessage `json:"range"`
}

type zoneRangeBody struct {
	Footfall  json.RawMessage `json:"footfall"`
	DwellTime json.RawMessage `json:"dwell_time"`
}

type zoneLayoutBody struct {
	Length *float64 `json:"length"`
	Width  *float64 `json:"width"`
	Unit   *string  `json:"unit"`
}

type zoneFootfallBody struct {
	Min *int64 `json:"min"`
	Max *int64 `json:"max"`
}

// decodeZoneChange decodes and validates a PUT body for the query q:
//
//	{"server_id", "location_id", "node_type",
//	 "config"?: {"layout"?: {"length", "width", "unit"},
//	             "range"?: {"footfall"?: {"min", "max"}, "dwell_time"?: [int, ...]}}}
//
// server_id, location_id and node_type are required and must equal the
// query's (server_id and location_id may be numbers or numeric strings, as
// in the interface's sample). A layout, footfall or dwell_time given as
// null resets that part; config or range null or absent change nothing.
// Unknown fields are ignored. Malformed JSON or a wrong type is
// INVALID_REQUEST_BODY; a broken rule is VALIDATION_FAILED naming the
// field.
func decodeZoneChange(body []byte, q zoneQuery) (zoneChange, error) {
	var ch zoneChange
	var b zoneBody
	if err := decodeObject(body, &b, ""); err != nil {
		return ch, err
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		want int64
	}{{"server_id", b.ServerID, q.ServerID}, {"location_id", b.LocationID, q.LocationID}} {
		n, err := flexInt(f.name, f.raw)
		if err != nil {
			return ch, err
		}
		if n != f.want {
			return ch, wnms.Invalid(f.name, "must equal the query parameter %s (%d), not %d", f.name, f.want, n)
		}
	}
	if isAbsent(b.NodeType) {
		return ch, wnms.Invalid("node_type", "is required")
	}
	var nt string
	if err := decodeValue(b.NodeType, &nt, "node_type"); err != nil {
		return ch, err
	}
	canon, ok := wnms.ParseNodeType(nt)
	if !ok {
		return ch, wnms.Invalid("node_type", "must be location, zone or data, not %q", nt)
	}
	if canon != q.NodeType {
		return ch, wnms.Invalid("node_type", "must equal the query parameter node_type (%s), not %q", q.NodeType, nt)
	}

	if isAbsent(b.Config) {
		return ch, nil
	}
	var cfg zoneConfigBody
	if err := decodeObject(b.Config, &cfg, "config"); err != nil {
		return ch, err
	}
	if isNull(cfg.Layout) {
		ch.Parts |= wnms.ZoneLayoutPart
	} else if !isAbsent(cfg.Layout) {
		var l zoneLayoutBody
		if err := decodeObject(cfg.Layout, &l, "config.layout"); err != nil {
			return ch, err
		}
		switch {
		case l.Length == nil:
			return ch, wnms.Invalid("config.layout.length", "is required")
		case l.Width == nil:
			return ch, wnms.Invalid("config.layout.width", "is required")
		case l.Unit == nil:
			return ch, wnms.Invalid("config.layout.unit", "is required")
		}
		ch.Layout = &wnms.ZoneLayout{Length: *l.Length, Width: *l.Width, Unit: *l.Unit}
		if err := ch.Layout.Validate("config.layout."); err != nil {
			return ch, err
		}
		ch.Parts |= wnms.ZoneLayoutPart
	}

	if isAbsent(cfg.Range) {
		return ch, nil
	}
	var rg zoneRangeBody
	if err := decodeObject(cfg.Range, &rg, "config.range"); err != nil {
		return ch, err
	}
	if isNull(rg.Footfall) {
		ch.Parts |= wnms.ZoneFootfallPart
	} else if !isAbsent(rg.Footfall) {
		var f zoneFootfallBody
		if err := decodeObject(rg.Footfall, &f, "config.range.footfall"); err != nil {
			return ch, err
		}
		switch {
		case f.Min == nil:
			return ch, wnms.Invalid("config.range.footfall.min", "is required")
		case f.Max == nil:
			return ch, wnms.Invalid("config.range.footfall.max", "is required")
		}
		ch.Footfall = &wnms.FootfallRange{Min: *f.Min, Max: *f.Max}
		if err := ch.Footfall.Validate("config.range.footfall."); err != nil {
			return ch, err
		}
		ch.Parts |= wnms.ZoneFootfallPart
	}
	if isNull(rg.DwellTime) {
		ch.Parts |= wnms.ZoneDwellTimePart
	} else if !isAbsent(rg.DwellTime) {
		var d []int64
		if err := decodeValue(rg.DwellTime, &d, "config.range.dwell_time"); err != nil {
			return ch, err
		}
		ch.DwellTime = make([]int, len(d))
		for i, v := range d {
			if v < math.MinInt32 || v > math.MaxInt32 {
				return ch, wnms.Invalid("config.range.dwell_time", "values must be minutes from 1 to %d, not %d", wnms.MaxDwellTimeMinutes, v)
			}
			ch.DwellTime[i] = int(v)
		}
		if err := wnms.ValidateDwellTime("config.range.dwell_time", ch.DwellTime); err != nil {
			return ch, err
		}
		ch.Parts |= wnms.ZoneDwellTimePart
	}
	return ch, nil
}

// isAbsent reports whether a raw part was not given (or given as null).
func isAbsent(raw json.RawMessage) bool { return len(raw) == 0 || isNull(raw) }

// isNull reports whether a raw part was given as JSON null.
func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// decodeObject decodes raw, which must be one JSON object, into v. field
// names raw in error messages ("" for the whole body).
func decodeObject(raw []byte, v any, field string) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return wnms.Errorf(wnms.InvalidRequestBody, "the request body is empty")
	}
	if t[0] != '{' {
		what := "the body"
		if field != "" {
			what = field
		}
		return &wnms.Error{Code: wnms.InvalidRequestBody, MoreInfo: field, Message: what + ": expected an object"}
	}
	return decodeValue(t, v, field)
}

// decodeValue decodes exactly one JSON value from raw into v; field
// prefixes the field names of type errors.
func decodeValue(raw []byte, v any, field string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		return wnms.JSONError(err, field)
	}
	if _, err := dec.Token(); err != io.EOF {
		return wnms.Errorf(wnms.InvalidRequestBody, "the body holds more than one JSON value")
	}
	return nil
}

// flexInt reads a required integer field given as a JSON number or a
// string of digits.
func flexInt(field string, raw json.RawMessage) (int64, error) {
	if isAbsent(raw) {
		return 0, wnms.Invalid(field, "is required")
	}
	t := bytes.TrimSpace(raw)
	if t[0] == '"' {
		var s string
		if err := decodeValue(t, &s, field); err != nil {
			return 0, err
		}
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return 0, &wnms.Error{Code: wnms.InvalidRequestBody, MoreInfo: field,
				Message: fmt.Sprintf("%s: expected an integer, got %q", field, s)}
		}
		return n, nil
	}
	var n int64
	if err := decodeValue(t, &n, field); err != nil {
		return 0, err
	}
	return n, nil
}
