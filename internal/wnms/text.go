package wnms

import (
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // every zone id loads, even on a host without zoneinfo
	"unicode"
	"unicode/utf8"
)

// CheckText checks a one-line text field: valid UTF-8, no control
// characters, and min to max characters (runes). A min of 1 makes the field
// required, and an empty value says so.
func CheckText(field, v string, min, max int) error {
	if !utf8.ValidString(v) {
		return Invalid(field, "must be valid UTF-8")
	}
	n := utf8.RuneCountInString(v)
	if n < min {
		if min == 1 {
			return Invalid(field, "required")
		}
		return Invalid(field, "must be at least %d characters", min)
	}
	if n > max {
		return Invalid(field, "must be at most %d characters", max)
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return Invalid(field, "must not contain control characters")
	}
	return nil
}

// CheckOctets checks a text field measured in octets (as SNMP and 802.11
// measure it): valid UTF-8, no control characters, min to max octets.
func CheckOctets(field, v string, min, max int) error {
	switch {
	case !utf8.ValidString(v):
		return Invalid(field, "must be valid UTF-8")
	case len(v) < min && min == 1:
		return Invalid(field, "required (1 to %d octets)", max)
	case len(v) < min:
		return Invalid(field, "must be at least %d octets", min)
	case len(v) > max:
		return Invalid(field, "must be at most %d octets", max)
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return Invalid(field, "must not contain control characters")
	}
	return nil
}

// CheckTimeZone checks an IANA time zone id such as "Europe/Berlin"; "UTC"
// is one, the host's "Local" is not (it would differ between servers).
func CheckTimeZone(field, id string) error {
	if id == "Local" || id == "" {
		return Invalid(field, "unknown time zone id %q", id)
	}
	if _, err := LoadLocation(id); err != nil {
		return Invalid(field, "unknown time zone id %q", id)
	}
	return nil
}

var zones sync.Map // name -> *time.Location

// LoadLocation is time.LoadLocation with the loaded zones kept: loading
// parses the embedded zone data each time, which costs microseconds a call.
func LoadLocation(name string) (*time.Location, error) {
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	zones.Store(name, l)
	return l, nil
}
