package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/simulate"
)

// slotMs is a baseline slot (decisions §10).
const slotMs = 15 * 60 * 1000

// lateSlots is how late a detection may come: a flagged slot that starts
// before an incident's end plus this many slots still belongs to it.
const lateSlots = 2

// Truth is one injected incident, as the simulator's summary gives it.
type Truth = simulate.IncidentSummary

// Flags are the anomalous site-slots of one run: site location id → the
// start (ms) of each flagged slot, ascending, without repeats.
type Flags map[int64][]int64

// Add flags a slot of a site.
func (f Flags) Add(site, slot int64) {
	s := f[site]
	i, ok := slices.BinarySearch(s, slot)
	if !ok {
		f[site] = slices.Insert(s, i, slot)
	}
}

// Count is the number of flagged site-slots.
func (f Flags) Count() int {
	n := 0
	for _, s := range f {
		n += len(s)
	}
	return n
}

// slotOf is the start of the slot holding ms.
func slotOf(ms int64) int64 { return ms - ((ms%slotMs)+slotMs)%slotMs }

// near says whether the slot starting at slot overlaps the incident's
// window [From, To) stretched by lateSlots at its end.
func near(t Truth, slot int64) bool {
	return slot+slotMs > t.FromMs && slot < t.ToMs+lateSlots*slotMs
}

// Detect answers whether an incident is found (a flagged slot at its site
// near its window) and the delay in slots from the slot holding its start
// to the first such slot.
func Detect(t Truth, f Flags) (found bool, delay int) {
	for _, s := range f[t.SiteID] {
		if near(t, s) {
			return true, int((s - slotOf(t.FromMs)) / slotMs)
		}
	}
	return false, 0
}

// Belongs says whether a flagged site-slot belongs to one of the truths.
func Belongs(site, slot int64, truths []Truth) bool {
	return slices.ContainsFunc(truths, func(t Truth) bool { return t.SiteID == site && near(t, slot) })
}

// flexID is an id served as a JSON string or number.
type flexID string

func (f *flexID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexID(s)
		return nil
	}
	*f = flexID(strings.Trim(string(b), "\""))
	if *f == "null" {
		*f = ""
	}
	return nil
}

// Served is an incident as GET /V5/incidents serves it (decisions §24),
// the fields the score reads.
type Served struct {
	ID             flexID `json:"id"`
	SiteLocationID int64  `json:"siteLocationId"`
	From           int64  `json:"from"`
	To             *int64 `json:"to"` // null while open
	Kind           string `json:"kind"`
	Cause          struct {
		Stage  string `json:"stage"`
		Reason struct {
			FailureCode    int    `json:"failureCode"`
			SubFailureCode int    `json:"subFailureCode"`
			Text           string `json:"text"`
		} `json:"reason"`
		Share float64 `json:"share"`
	} `json:"cause"`
	Scope struct {
		Type  string  `json:"type"`
		ID    flexID  `json:"id"`
		Name  string  `json:"name"`
		Share float64 `json:"share"`
	} `json:"scope"`
}

// end is the served incident's end, or far ahead while it is open.
func (s Served) end() int64 {
	if s.To == nil {
		return 1 << 62
	}
	return *s.To
}

// Match answers the served incident of the truth: at its site, overlapping
// its window stretched by lateSlots, the one that overlaps it most (the
// first served on a tie); nil when none.
func Match(t Truth, served []Served) *Served {
	var best *Served
	var most int64 = -1
	for i := range served {
		s := &served[i]
		lo, hi := max(s.From, t.FromMs), min(s.end(), t.ToMs+lateSlots*slotMs)
		if s.SiteLocationID != t.SiteID || hi <= lo && !(s.From == s.end() && s.From >= t.FromMs && s.From < t.ToMs+lateSlots*slotMs) {
			continue
		}
		if hi-lo > most {
			best, most = s, hi-lo
		}
	}
	return best
}

// CauseRight says whether a served incident names the truth's cause: the
// same stage, and for a failure (not performance) the same failure and
// sub-failure codes.
func CauseRight(t Truth, s Served) bool {
	if !strings.EqualFold(s.Cause.Stage, t.Cause.Stage) {
		return false
	}
	if t.Cause.Stage == "performance" {
		return true
	}
	return s.Cause.Reason.FailureCode == t.Cause.FailureCode && s.Cause.Reason.SubFailureCode == t.Cause.SubFailureCode
}

// ScopeRight says whether a served incident's scope is the truth's or one
// the truth lists as equivalent: the same type and the same id or the same
// name (case-insensitive; the simulator's names are unique: an AP's name,
// a site's, an SSID).
func ScopeRight(t Truth, s Served) bool {
	for _, want := range append([]simulate.Scope{t.Scope}, t.Equivalent...) {
		if !strings.EqualFold(s.Scope.Type, want.Type) {
			continue
		}
		if id := string(s.Scope.ID); id != "" && strings.EqualFold(id, want.ID) || s.Scope.Name != "" && strings.EqualFold(s.Scope.Name, want.Name) {
			return true
		}
	}
	return false
}

// Run is what one seed gave: its incidents, the flagged site-slots of the
// run with them and of the quiet run, and the incidents served (nil when
// the server has no GET /V5/incidents).
type Run struct {
	Seed          uint64
	Truths        []Truth
	Flags, Quiet  Flags
	QuietSiteDays int
	Served        []Served
	QuietServed   []Served
}

// KindScore is the score of one kind over every run.
type KindScore struct {
	Kind      string  `json:"kind"`
	Incidents int     `json:"incidents"`
	Found     int     `json:"found"`
	Recall    float64 `json:"recall"`
	// Precision is over the site-days holding an incident of the kind:
	// of their flagged slots, the share that belong to an incident.
	Precision  *float64 `json:"precision"`
	DelayMean  *float64 `json:"delayMeanSlots"`
	DelayMax   *int     `json:"delayMaxSlots"`
	CauseRight *float64 `json:"causeAccuracy"` // over every injected incident; nil without incidents served
	ScopeRight *float64 `json:"scopeAccuracy"`
}

// Report is the score over every run.
type Report struct {
	Kinds []KindScore `json:"kinds"`
	// Precision: of every flagged site-slot of the runs with incidents,
	// the share that belong to one.
	Precision             *float64 `json:"precision"`
	Flagged               int      `json:"flaggedSiteSlots"`
	QuietFlagged          int      `json:"quietFlaggedSiteSlots"`
	QuietSiteDays         int      `json:"quietSiteDays"`
	FalseAlarmsPerSiteDay float64  `json:"falseAlarmsPerQuietSiteDay"`
	IncidentsServed       bool     `json:"incidentsServed"`
	ServedIncidents       int      `json:"servedIncidents"`
	// ServedQuietIncidents counts the incidents served for the quiet
	// runs: each is a false alarm.
	ServedQuietIncidents int `json:"servedQuietIncidents"`
}

func ratio(a, b int) *float64 {
	if b == 0 {
		return nil
	}
	r := float64(a) / float64(b)
	return &r
}

// siteDay names the UTC day of a site.
type siteDay struct {
	site int64
	day  int64
}

func dayOf(ms int64) int64 { return ms / (24 * time.Hour.Milliseconds()) }

// Score scores the runs, kinds in the order given. served says whether
// the server answered GET /V5/incidents (then Run.Served is its answer).
func Score(runs []Run, kinds []string, served bool) Report {
	rep := Report{IncidentsServed: served}
	belong := 0
	for _, r := range runs {
		for site, slots := range r.Flags {
			for _, s := range slots {
				rep.Flagged++
				if Belongs(site, s, r.Truths) {
					belong++
				}
			}
		}
		rep.QuietFlagged += r.Quiet.Count()
		rep.QuietSiteDays += r.QuietSiteDays
		rep.ServedIncidents += len(r.Served)
		rep.ServedQuietIncidents += len(r.QuietServed)
	}
	rep.Precision = ratio(belong, rep.Flagged)
	if rep.QuietSiteDays > 0 {
		rep.FalseAlarmsPerSiteDay = float64(rep.QuietFlagged) / float64(rep.QuietSiteDays)
	}
	for _, k := range kinds {
		ks := KindScore{Kind: k}
		var delays []int
		cause, scope, near, flagged := 0, 0, 0, 0
		for _, r := range runs {
			days := map[siteDay]bool{}
			for _, t := range r.Truths {
				if t.Kind != k {
					continue
				}
				ks.Incidents++
				days[siteDay{t.SiteID, dayOf(t.FromMs)}] = true
				if ok, d := Detect(t, r.Flags); ok {
					ks.Found++
					delays = append(delays, d)
				}
				if m := Match(t, r.Served); m != nil {
					if CauseRight(t, *m) {
						cause++
					}
					if ScopeRight(t, *m) {
						scope++
					}
				}
			}
			for site, slots := range r.Flags {
				for _, s := range slots {
					if days[siteDay{site, dayOf(s)}] {
						flagged++
						if Belongs(site, s, r.Truths) {
							near++
						}
					}
				}
			}
		}
		if ks.Incidents > 0 {
			ks.Recall = float64(ks.Found) / float64(ks.Incidents)
		}
		ks.Precision = ratio(near, flagged)
		if len(delays) > 0 {
			sum := 0
			for _, d := range delays {
				sum += d
			}
			mean, mx := float64(sum)/float64(len(delays)), slices.Max(delays)
			ks.DelayMean, ks.DelayMax = &mean, &mx
		}
		if served {
			ks.CauseRight, ks.ScopeRight = ratio(cause, ks.Incidents), ratio(scope, ks.Incidents)
		}
		rep.Kinds = append(rep.Kinds, ks)
	}
	return rep
}

// Markdown is the report as a markdown table, then its totals.
func (rep Report) Markdown(title string) string {
	var b strings.Builder
	f := func(p *float64, digits int) string {
		if p == nil {
			return "–"
		}
		return strconv.FormatFloat(*p, 'f', digits, 64)
	}
	b.WriteString("#### " + title + "\n\n")
	b.WriteString("| kind | incidents | recall | precision (its site-days) | delay mean (slots) | delay max | cause accuracy | scope accuracy |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, k := range rep.Kinds {
		mx := "–"
		if k.DelayMax != nil {
			mx = strconv.Itoa(*k.DelayMax)
		}
		r := k.Recall
		b.WriteString("| " + k.Kind + " | " + strconv.Itoa(k.Incidents) + " | " + f(&r, 2) + " | " + f(k.Precision, 2) + " | " +
			f(k.DelayMean, 2) + " | " + mx + " | " + f(k.CauseRight, 2) + " | " + f(k.ScopeRight, 2) + " |\n")
	}
	b.WriteString("\nprecision of anomalous site-slots: " + f(rep.Precision, 3) + " (" + strconv.Itoa(rep.Flagged) + " flagged)")
	fa := rep.FalseAlarmsPerSiteDay
	b.WriteString("; false alarms per quiet site-day: " + f(&fa, 2) + " (" + strconv.Itoa(rep.QuietFlagged) + " flagged site-slots in " +
		strconv.Itoa(rep.QuietSiteDays) + " quiet site-days)\n")
	if rep.IncidentsServed {
		b.WriteString("incidents served: " + strconv.Itoa(rep.ServedIncidents) + " in the runs with incidents, " +
			strconv.Itoa(rep.ServedQuietIncidents) + " in the quiet runs\n")
	}
	return b.String()
}
