package telemetry

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/wnms"
)

// The vendor's filter language for device lists (docs/api.md §7): a
// URL-encoded JSON condition
//
//	{"property": "boxid", "value": [1, 2], "operator": "="}
//
// or a group of conditions {"value": [cond, cond], "operator": "OR"}.
// Several filter parameters combine by the query parameter operator (AND
// by default). Anything that cannot be applied is INVALID_FILTER.

// Properties names what a resource may be filtered on, in lower case.
type Properties map[string]wnms.FilterKind

// The comparison operators, and for each the kinds it applies to.
var operators = map[string][]wnms.FilterKind{
	"=":           {wnms.FilterNumber, wnms.FilterText, wnms.FilterBool},
	"!=":          {wnms.FilterNumber, wnms.FilterText, wnms.FilterBool},
	"<":           {wnms.FilterNumber},
	">":           {wnms.FilterNumber},
	"<=":          {wnms.FilterNumber},
	">=":          {wnms.FilterNumber},
	"contains":    {wnms.FilterText},
	"notcontains": {wnms.FilterText},
	"bitwise_and": {wnms.FilterNumber},
}

// Limits of a filter.
const (
	maxFilterDepth  = 8
	maxFilterTests  = 100
	maxFilterValues = 1000
	maxFilterText   = 256
)

func filterError(format string, args ...any) *wnms.Error {
	e := wnms.Errorf(wnms.InvalidFilter, format, args...)
	e.MoreInfo = "filter"
	return e
}

// ParseFilters reads the filter parameters of a list call against the
// resource's properties: each a JSON condition, combined by op (AND when
// empty, else AND or OR in any case). No filter is the zero Cond with ok
// false.
func ParseFilters(filters []string, op string, props Properties) (c wnms.Cond, ok bool, err error) {
	if len(filters) == 0 {
		return wnms.Cond{}, false, nil
	}
	switch strings.ToUpper(strings.TrimSpace(op)) {
	case "", "AND":
		op = "AND"
	case "OR":
		op = "OR"
	default:
		return wnms.Cond{}, false, wnms.ParamError("operator", "operator must be AND or OR, not %q", op)
	}
	p := filterParser{props: props}
	all := wnms.Cond{Op: op}
	for _, f := range filters {
		sub, err := p.parse([]byte(f))
		if err != nil {
			return wnms.Cond{}, false, err
		}
		all.Sub = append(all.Sub, sub)
	}
	if len(all.Sub) == 1 {
		return all.Sub[0], true, nil
	}
	return all, true, nil
}

type filterParser struct {
	props Properties
	tests int
}

type rawCond struct {
	Property *string           `json:"property"`
	Value    []json.RawMessage `json:"value"`
	Operator *string           `json:"operator"`
}

func (p *filterParser) parse(b []byte) (wnms.Cond, error) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		// Some clients quote the whole parameter.
		var s string
		if err := json.Unmarshal(b, &s); err == nil {
			b = []byte(s)
		}
	}
	return p.cond(b, 0)
}

func (p *filterParser) cond(b []byte, depth int) (wnms.Cond, error) {
	if depth >= maxFilterDepth {
		return wnms.Cond{}, filterError("filter nests deeper than %d levels", maxFilterDepth)
	}
	var r rawCond
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return wnms.Cond{}, filterError("filter is not a JSON condition {\"property\", \"value\": [...], \"operator\"}: %s", jsonProblem(err))
	}
	if dec.More() {
		return wnms.Cond{}, filterError("filter holds more than one JSON value")
	}
	if r.Operator == nil {
		return wnms.Cond{}, filterError("filter condition has no operator")
	}
	op := strings.TrimSpace(*r.Operator)
	if len(r.Value) == 0 {
		return wnms.Cond{}, filterError("filter condition has no values")
	}
	if r.Property == nil {
		up := strings.ToUpper(op)
		if up != "AND" && up != "OR" {
			return wnms.Cond{}, filterError("a condition without a property is a group: its operator must be AND or OR, not %q", op)
		}
		g := wnms.Cond{Op: up}
		for _, v := range r.Value {
			sub, err := p.cond(v, depth+1)
			if err != nil {
				return wnms.Cond{}, err
			}
			g.Sub = append(g.Sub, sub)
		}
		return g, nil
	}
	p.tests++
	if p.tests > maxFilterTests {
		return wnms.Cond{}, filterError("filter has more than %d conditions", maxFilterTests)
	}
	name := strings.ToLower(strings.TrimSpace(*r.Property))
	kind, ok := p.props[name]
	if !ok {
		return wnms.Cond{}, filterError("no property %q to filter on; the properties are %s", *r.Property, p.props.names())
	}
	op = strings.ToLower(op)
	kinds, ok := operators[op]
	if !ok {
		return wnms.Cond{}, filterError("unknown operator %q", *r.Operator)
	}
	if !slices.Contains(kinds, kind) {
		return wnms.Cond{}, filterError("operator %q does not apply to %s, a %s", op, name, kind)
	}
	if len(r.Value) > maxFilterValues {
		return wnms.Cond{}, filterError("at most %d values a condition", maxFilterValues)
	}
	c := wnms.Cond{Op: op, Property: name, Kind: kind}
	for _, raw := range r.Value {
		v, err := filterValue(name, kind, raw)
		if err != nil {
			return wnms.Cond{}, err
		}
		c.Values = append(c.Values, v)
	}
	return c, nil
}

// filterValue reads one value of a condition as the property's kind.
// Numbers may come as JSON numbers or numeric strings; MACs are read in
// any case and separator.
func filterValue(name string, kind wnms.FilterKind, raw json.RawMessage) (any, error) {
	var s string
	isString := json.Unmarshal(raw, &s) == nil
	switch kind {
	case wnms.FilterNumber:
		text := string(bytes.TrimSpace(raw))
		if isString {
			text = strings.TrimSpace(s)
		}
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, filterError("%s takes whole numbers, not %s", name, raw)
		}
		return n, nil
	case wnms.FilterBool:
		var b bool
		if err := json.Unmarshal(raw, &b); err == nil {
			return b, nil
		}
		if isString {
			if b, err := strconv.ParseBool(s); err == nil {
				return b, nil
			}
		}
		return nil, filterError("%s takes true or false, not %s", name, raw)
	}
	if !isString {
		return nil, filterError("%s takes strings, not %s", name, raw)
	}
	if len(s) > maxFilterText {
		return nil, filterError("a value of %s is longer than %d bytes", name, maxFilterText)
	}
	if strings.Contains(name, "mac") || name == "bssid" {
		if m, ok := ParseMAC(s); ok {
			return m, nil
		}
	}
	return s, nil
}

func (p Properties) names() string {
	var out []string
	for n := range p {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func jsonProblem(err error) string {
	msg := err.Error()
	return strings.TrimPrefix(msg, "json: ")
}
