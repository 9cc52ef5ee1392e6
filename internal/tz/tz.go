// Package tz lists the time zone ids wnms offers: the canonical zones of
// the IANA tz database's zone.tab plus UTC. The zone data itself is
// embedded in the binary (wnms.LoadLocation), so every id loads on any
// machine.
package tz

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

//go:embed zones.txt
var zonesTxt string

// IDs returns the offered zone ids, sorted.
func IDs() []string {
	var out []string
	for _, l := range strings.Split(zonesTxt, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// Entry is one time zone entry of GET /system/timezoneids.
type Entry struct {
	DisplayString string `json:"displayString"`
	ID            string `json:"id"`
}

// Entries returns every zone with its current offset, ordered by offset
// then id, as "(UTC+05:30) Asia/Kolkata".
func Entries(now time.Time) ([]Entry, error) {
	type z struct {
		off int
		e   Entry
	}
	var zs []z
	for _, id := range IDs() {
		loc, err := wnms.LoadLocation(id)
		if err != nil {
			return nil, fmt.Errorf("zone %s: %w", id, err)
		}
		_, off := now.In(loc).Zone()
		zs = append(zs, z{off, Entry{DisplayString: "(" + Offset(off) + ") " + id, ID: id}})
	}
	sort.SliceStable(zs, func(i, j int) bool { return zs[i].off < zs[j].off })
	out := make([]Entry, len(zs))
	for i := range zs {
		out[i] = zs[i].e
	}
	return out, nil
}

// Offset formats an offset in seconds as UTC±hh:mm.
func Offset(sec int) string {
	sign := '+'
	if sec < 0 {
		sign, sec = '-', -sec
	}
	return fmt.Sprintf("UTC%c%02d:%02d", sign, sec/3600, sec%3600/60)
}
