package snmp

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// OID is an object identifier as its arcs.
type OID []uint32

// ParseOID reads a dotted OID, with or without the leading dot.
func ParseOID(s string) (OID, error) {
	s = strings.TrimPrefix(s, ".")
	if s == "" {
		return nil, fmt.Errorf("empty OID")
	}
	parts := strings.Split(s, ".")
	o := make(OID, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("OID %q: arc %q is not a number", s, p)
		}
		o[i] = uint32(n)
	}
	return o, nil
}

// MustOID is ParseOID for the constants of this package.
func MustOID(s string) OID {
	o, err := ParseOID(s)
	if err != nil {
		panic(err)
	}
	return o
}

// String is the dotted form with the leading dot, as gosnmp writes it.
func (o OID) String() string {
	var b strings.Builder
	for _, a := range o {
		b.WriteByte('.')
		b.WriteString(strconv.FormatUint(uint64(a), 10))
	}
	return b.String()
}

// Append returns o followed by arcs, in a new slice.
func (o OID) Append(arcs ...uint32) OID {
	out := make(OID, 0, len(o)+len(arcs))
	return append(append(out, o...), arcs...)
}

// Compare orders OIDs lexicographically by arc, as SNMP walks them.
func (o OID) Compare(p OID) int { return slices.Compare(o, p) }

// HasPrefix tells whether p is o or an ancestor of it.
func (o OID) HasPrefix(p OID) bool {
	return len(o) >= len(p) && slices.Equal(o[:len(p)], p)
}
