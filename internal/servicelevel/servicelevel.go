// Package servicelevel answers the service levels (decisions §24, after
// Mist's service level expectations): of a location's connection attempts
// in a window, how many succeeded (successfulConnects) and how many of
// the Successes connected within the time to connect target
// (timeToConnect), each against the location's targets, with the
// classifiers that say where the rest failed or were slow.
//
// The counts come from the store's hourly counts (wnms.AttemptOutcome
// says what each attempt counts as), summed in SQL by group and outcome:
// a read's memory is its number of groups, never its number of events.
package servicelevel

import (
	"cmp"
	"context"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// MaxWindow is the longest fromtime–totime a call covers (as the
// baselines').
const MaxWindow = 31 * 24 * time.Hour

// DefaultWindow is the window when fromtime is absent: the 24 hours
// before totime.
const DefaultWindow = 24 * time.Hour

// MaxGroups is how many groups a grouped answer lists, those with the
// most attempts; the rest are summed into one group of type "other".
const MaxGroups = 50

// Metric names and classifier names.
const (
	SuccessfulConnects = "successfulConnects"
	TimeToConnect      = "timeToConnect"
	// From the radio (client samples and roams):
	Coverage = "coverage"
	Capacity = "capacity"
	Roaming  = "roaming"
)

// Store is what the service levels read and write.
type Store interface {
	Locations(ctx context.Context, customerID int64) ([]*wnms.Location, error)
	ServiceLevelCounts(ctx context.Context, q wnms.ServiceLevelQuery) ([]wnms.ServiceLevelCount, error)
	ServiceLevelTargets(ctx context.Context, customerID int64) (map[int64]wnms.ServiceLevelTargets, error)
	PutServiceLevelTargets(ctx context.Context, customerID, locationID int64, name string, before, t wnms.ServiceLevelTargets) error
	ServiceLevelAPNames(ctx context.Context, customerID int64, boxIDs []int64) (map[int64]string, error)
	// BackfillServiceLevels counts the next hour of attempts stored
	// before ingest kept the counts, at or after from (ms); hour is the
	// one counted (-1: none), done that nothing is left.
	BackfillServiceLevels(ctx context.Context, from int64) (hour int64, done bool, err error)
}

// Service answers the service level calls.
type Service struct {
	Store Store
}

// Backfill counts the service levels of the attempts a store held before
// ingest kept their counts (an upgraded store), an hour at a time from the
// oldest hour within retention, pausing between hours so that ingest and
// reads go on; it returns when nothing is left, or ctx ends. A store
// without such attempts returns at once.
func (s *Service) Backfill(ctx context.Context, retention time.Duration, log *slog.Logger) {
	hours := 0
	for {
		hour, done, err := s.Store.BackfillServiceLevels(ctx, time.Now().Add(-retention).UnixMilli())
		if err != nil {
			if ctx.Err() == nil {
				log.Error("service levels: counting the stored attempts failed; trying again in a minute", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Minute):
			}
			continue
		}
		if hour >= 0 {
			hours++
		}
		if done {
			if hours > 0 {
				log.Info("service levels counted from the stored attempts", "hours", hours)
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Classifier is one place attempts failed or were slow: how many, and
// their share (%) of all that failed or were slow (null when none were).
type Classifier struct {
	Name  string   `json:"name"`
	Count int64    `json:"count"`
	Share *float64 `json:"share"`
}

// Target is what a metric is measured against: goal, the % of attempts
// (or timed Successes) that should meet it, and for timeToConnect the
// time (seconds).
type Target struct {
	Goal    float64  `json:"goal"`
	Seconds *float64 `json:"seconds,omitempty"`
	// coverage: the signal a client sample must reach (dBm); capacity:
	// the utilisation its radio must stay under (%).
	RSSIDbm        *int     `json:"rssiDbm,omitempty"`
	UtilizationPct *float64 `json:"utilizationPct,omitempty"`
}

// Metric is one service level: value, the % of count that met it (null
// when count is 0), and whether that reaches the target's goal.
type Metric struct {
	Metric      string       `json:"metric"`
	Target      Target       `json:"target"`
	Value       *float64     `json:"value"`
	Met         *bool        `json:"met"`
	Count       int64        `json:"count"`
	Untimed     *int64       `json:"untimed,omitempty"`
	Classifiers []Classifier `json:"classifiers"`
}

// Group is the metrics of one floor, AP, SSID or band.
type Group struct {
	Type    string   `json:"type"`
	ID      any      `json:"id"`
	Name    string   `json:"name"`
	Metrics []Metric `json:"metrics"`
}

// Levels is the answer of GET /servicelevels.
type Levels struct {
	LocationID wnms.LocationID `json:"locationId"`
	From       int64           `json:"from"`
	To         int64           `json:"to"`
	GroupBy    string          `json:"groupBy"`
	Metrics    []Metric        `json:"metrics"`
	Groups     []Group         `json:"groups"`
}

// total is a group's attempts.
func total(c *wnms.ServiceCounts) int64 {
	return c.Successes + c.FailAssoc + c.FailAuth + c.FailDHCP + c.FailDNS
}

// Levels answers the service levels of location l (which the caller
// sees) for the hours from..to: the hours holding from, to and every one
// between (the counts are hourly), grouped by groupBy.
func (s *Service) Levels(ctx context.Context, customerID int64, l *wnms.Location, from, to int64, groupBy string) (*Levels, error) {
	locs, err := s.Store.Locations(ctx, customerID)
	if err != nil {
		return nil, err
	}
	t, _, err := s.applied(ctx, customerID, l)
	if err != nil {
		return nil, err
	}
	q := wnms.ServiceLevelQuery{CustomerID: customerID, From: wnms.HourOf(from), To: wnms.HourOf(to), GroupBy: groupBy,
		TargetMs: t.TTCMs}
	names := map[int64]string{}
	for _, x := range locs {
		names[x.ID.ID] = x.Name
		if l.ID.ID != wnms.RootLocation && strings.HasPrefix(x.Path, l.Path) {
			q.Locations = append(q.Locations, x.ID.ID)
		}
	}
	if l.ID.ID != wnms.RootLocation && q.Locations == nil {
		q.Locations = []int64{l.ID.ID}
	}
	counts, err := s.Store.ServiceLevelCounts(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &Levels{LocationID: wnms.LocalID(l.ID.ID), From: q.From, To: q.To + wnms.ServiceLevelHour, GroupBy: groupBy, Groups: []Group{}}
	var all wnms.ServiceCounts
	groups := map[string]*wnms.ServiceCounts{}
	for _, c := range counts {
		all.Add(c.ServiceCounts)
		if groupBy == wnms.GroupNone {
			continue
		}
		g := groups[c.Group]
		if g == nil {
			g = &wnms.ServiceCounts{}
			groups[c.Group] = g
		}
		g.Add(c.ServiceCounts)
	}
	out.Metrics = metrics(&all, t)
	if groupBy == wnms.GroupNone {
		return out, nil
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	// Most attempts first; ties by the group's key.
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(total(groups[b]), total(groups[a])), strings.Compare(a, b))
	})
	var rest *wnms.ServiceCounts
	if len(keys) > MaxGroups {
		rest = &wnms.ServiceCounts{}
		for _, k := range keys[MaxGroups:] {
			rest.Add(*groups[k])
		}
		keys = keys[:MaxGroups]
	}
	var aps map[int64]string
	if groupBy == wnms.GroupAP {
		ids := make([]int64, 0, len(keys))
		for _, k := range keys {
			if id, err := strconv.ParseInt(k, 10, 64); err == nil && id != 0 {
				ids = append(ids, id)
			}
		}
		if aps, err = s.Store.ServiceLevelAPNames(ctx, customerID, ids); err != nil {
			return nil, err
		}
	}
	for _, k := range keys {
		g := Group{Type: groupBy, ID: k, Name: k, Metrics: metrics(groups[k], t)}
		switch groupBy {
		case wnms.GroupFloor:
			id, _ := strconv.ParseInt(k, 10, 64)
			g.ID, g.Name = id, names[id]
		case wnms.GroupAP:
			id, _ := strconv.ParseInt(k, 10, 64)
			g.ID, g.Name = id, aps[id]
			if id == 0 {
				g.ID, g.Name = nil, "no known AP"
			}
		}
		out.Groups = append(out.Groups, g)
	}
	if rest != nil {
		out.Groups = append(out.Groups, Group{Type: "other", ID: nil, Name: strconv.Itoa(len(groups)-MaxGroups) + " more",
			Metrics: metrics(rest, t)})
	}
	return out, nil
}

// metrics are the two metrics of a group's counts against targets t.
func metrics(c *wnms.ServiceCounts, t wnms.ServiceLevelTargets) []Metric {
	failures := []Classifier{
		{Name: "association", Count: c.FailAssoc},
		{Name: "authentication", Count: c.FailAuth},
		{Name: "dhcp", Count: c.FailDHCP},
		{Name: "dns", Count: c.FailDNS},
	}
	timed := c.Successes - c.Untimed
	slow := []Classifier{{Name: "authentication", Count: c.SlowAuth}, {Name: "dhcp", Count: c.SlowDHCP}}
	seconds := float64(t.TTCMs) / 1000
	untimed := c.Untimed
	rssi, util := wnms.CoverageRSSI, wnms.BusyUtilizationPct
	return []Metric{
		metric(SuccessfulConnects, Target{Goal: t.SuccessGoal}, c.Successes, total(c), failures, nil),
		metric(TimeToConnect, Target{Goal: t.TTCGoal, Seconds: &seconds}, timed-c.SlowAuth-c.SlowDHCP, timed, slow, &untimed),
		metric(Coverage, Target{Goal: t.CoverageGoal, RSSIDbm: &rssi}, c.Samples-c.Weak, c.Samples,
			[]Classifier{{Name: "weakSignal", Count: c.Weak}}, nil),
		metric(Capacity, Target{Goal: t.CapacityGoal, UtilizationPct: &util}, c.UtilKnown-c.Busy, c.UtilKnown,
			[]Classifier{{Name: "busyRadio", Count: c.Busy}}, nil),
		metric(Roaming, Target{Goal: t.RoamingGoal}, c.Roams-c.SlowRoams-c.SuboptimalRoams, c.Roams,
			[]Classifier{{Name: "slowRoam", Count: c.SlowRoams}, {Name: "suboptimalRoam", Count: c.SuboptimalRoams}}, nil),
	}
}

// metric makes a metric of met out of count, with the classifiers of the
// rest.
func metric(name string, t Target, met, count int64, cls []Classifier, untimed *int64) Metric {
	m := Metric{Metric: name, Target: t, Count: count, Untimed: untimed, Classifiers: cls}
	if count > 0 {
		v := percent(met, count)
		ok := v >= t.Goal
		m.Value, m.Met = &v, &ok
	}
	var rest int64
	for _, c := range cls {
		rest += c.Count
	}
	if rest > 0 {
		for i := range m.Classifiers {
			v := percent(m.Classifiers[i].Count, rest)
			m.Classifiers[i].Share = &v
		}
	}
	return m
}

// percent is 100·n/d rounded to two decimals.
func percent(n, d int64) float64 {
	return math.Round(float64(n)*10000/float64(d)) / 100
}

// Targets are a location's applied targets as GET /servicelevels/targets
// answers them: DefinedAt is the location whose own targets they are
// (itself or its nearest ancestor that has some), null for the defaults.
type Targets struct {
	LocationID         wnms.LocationID  `json:"locationId"`
	DefinedAt          *wnms.LocationID `json:"definedAt"`
	SuccessfulConnects TargetGoal       `json:"successfulConnects"`
	TimeToConnect      TargetTime       `json:"timeToConnect"`
	Coverage           TargetRadio      `json:"coverage"`
	Capacity           TargetRadio      `json:"capacity"`
	Roaming            TargetRadio      `json:"roaming"`
}

// TargetRadio is a radio service level's target: the % of client samples
// (of roams, for roaming) that should meet its threshold. The thresholds
// are fixed (ingest counts against them): the signal of coverage, the
// utilisation of capacity; a PUT may send them back, not change them.
type TargetRadio struct {
	Goal           *float64 `json:"goal"`
	RSSIDbm        *int     `json:"rssiDbm,omitempty"`
	UtilizationPct *float64 `json:"utilizationPct,omitempty"`
}

// TargetGoal is successfulConnects' target: the % of attempts that should
// succeed.
type TargetGoal struct {
	Goal *float64 `json:"goal"`
}

// TargetTime is timeToConnect's target: the time (seconds) a Success
// should connect within, and the % of Successes that should.
type TargetTime struct {
	Seconds *float64 `json:"seconds"`
	Goal    *float64 `json:"goal"`
}

// TargetsInput is the body of PUT /servicelevels/targets: the connection
// targets are required; a radio goal left out keeps the one the location
// has applied.
type TargetsInput struct {
	SuccessfulConnects *TargetGoal  `json:"successfulConnects"`
	TimeToConnect      *TargetTime  `json:"timeToConnect"`
	Coverage           *TargetRadio `json:"coverage"`
	Capacity           *TargetRadio `json:"capacity"`
	Roaming            *TargetRadio `json:"roaming"`
}

// Check validates the input and returns the targets it sets; applied are
// the location's targets before, which the radio goals left out keep.
func (in *TargetsInput) Check(applied wnms.ServiceLevelTargets) (wnms.ServiceLevelTargets, error) {
	var t wnms.ServiceLevelTargets
	if err := in.checkRadio(&applied); err != nil {
		return t, err
	}
	if in.SuccessfulConnects == nil || in.SuccessfulConnects.Goal == nil {
		return t, wnms.Invalid("successfulConnects.goal", "required: a percentage 0-100")
	}
	if in.TimeToConnect == nil || in.TimeToConnect.Seconds == nil {
		return t, wnms.Invalid("timeToConnect.seconds", "required: seconds, more than 0 and at most 60")
	}
	if in.TimeToConnect.Goal == nil {
		return t, wnms.Invalid("timeToConnect.goal", "required: a percentage 0-100")
	}
	for _, g := range []struct {
		name string
		v    float64
	}{{"successfulConnects.goal", *in.SuccessfulConnects.Goal}, {"timeToConnect.goal", *in.TimeToConnect.Goal}} {
		if !(g.v >= 0 && g.v <= 100) {
			return t, wnms.Invalid(g.name, "must be a percentage 0-100, not %g", g.v)
		}
	}
	sec := *in.TimeToConnect.Seconds
	if !(sec > 0 && sec <= 60) {
		return t, wnms.Invalid("timeToConnect.seconds", "must be more than 0 and at most 60, not %g", sec)
	}
	ms := math.Round(sec * 1000)
	if math.Mod(ms, wnms.TargetStepMs) != 0 || math.Abs(ms-sec*1000) > 1e-6 {
		return t, wnms.Invalid("timeToConnect.seconds", "must be a multiple of 0.5 s, not %g", sec)
	}
	t = applied
	t.SuccessGoal, t.TTCMs, t.TTCGoal = *in.SuccessfulConnects.Goal, int64(ms), *in.TimeToConnect.Goal
	return t, nil
}

// checkRadio checks the radio goals given and sets them in t.
func (in *TargetsInput) checkRadio(t *wnms.ServiceLevelTargets) error {
	for _, r := range []struct {
		name string
		in   *TargetRadio
		goal *float64
	}{{Coverage, in.Coverage, &t.CoverageGoal}, {Capacity, in.Capacity, &t.CapacityGoal}, {Roaming, in.Roaming, &t.RoamingGoal}} {
		if r.in == nil {
			continue
		}
		if r.in.Goal == nil {
			return wnms.Invalid(r.name+".goal", "required: a percentage 0-100 (or leave %s out to keep its goal)", r.name)
		}
		if g := *r.in.Goal; !(g >= 0 && g <= 100) {
			return wnms.Invalid(r.name+".goal", "must be a percentage 0-100, not %g", g)
		}
		if v := r.in.RSSIDbm; v != nil && (r.name != Coverage || *v != wnms.CoverageRSSI) {
			return wnms.Invalid(r.name+".rssiDbm", "is fixed: coverage counts the samples reaching %d dBm", wnms.CoverageRSSI)
		}
		if v := r.in.UtilizationPct; v != nil && (r.name != Capacity || *v != wnms.BusyUtilizationPct) {
			return wnms.Invalid(r.name+".utilizationPct", "is fixed: capacity counts the samples on radios under %g %%", wnms.BusyUtilizationPct)
		}
		*r.goal = *r.in.Goal
	}
	return nil
}

// applied is the targets l has: its own, else its nearest ancestor's,
// else the defaults; at is the location whose they are (nil: defaults).
func (s *Service) applied(ctx context.Context, customerID int64, l *wnms.Location) (wnms.ServiceLevelTargets, *int64, error) {
	own, err := s.Store.ServiceLevelTargets(ctx, customerID)
	if err != nil {
		return wnms.ServiceLevelTargets{}, nil, err
	}
	ids := strings.Split(strings.Trim(l.Path, "/"), "/")
	for i := len(ids) - 1; i >= 0; i-- {
		id, err := strconv.ParseInt(ids[i], 10, 64)
		if err != nil {
			continue
		}
		if t, ok := own[id]; ok {
			return t, &id, nil
		}
	}
	return wnms.DefaultServiceLevelTargets, nil, nil
}

// Targets answers l's applied targets.
func (s *Service) Targets(ctx context.Context, customerID int64, l *wnms.Location) (*Targets, error) {
	t, at, err := s.applied(ctx, customerID, l)
	if err != nil {
		return nil, err
	}
	out := targetsOf(l, t)
	if at != nil {
		id := wnms.LocalID(*at)
		out.DefinedAt = &id
	}
	return out, nil
}

func targetsOf(l *wnms.Location, t wnms.ServiceLevelTargets) *Targets {
	sec := float64(t.TTCMs) / 1000
	rssi, util := wnms.CoverageRSSI, wnms.BusyUtilizationPct
	return &Targets{LocationID: wnms.LocalID(l.ID.ID), SuccessfulConnects: TargetGoal{Goal: &t.SuccessGoal},
		TimeToConnect: TargetTime{Seconds: &sec, Goal: &t.TTCGoal},
		Coverage:      TargetRadio{Goal: &t.CoverageGoal, RSSIDbm: &rssi}, Capacity: TargetRadio{Goal: &t.CapacityGoal, UtilizationPct: &util},
		Roaming: TargetRadio{Goal: &t.RoamingGoal}}
}

// SetTargets gives l targets of its own (in checked) and answers them.
func (s *Service) SetTargets(ctx context.Context, customerID int64, l *wnms.Location, in *TargetsInput) (*Targets, error) {
	before, _, err := s.applied(ctx, customerID, l)
	if err != nil {
		return nil, err
	}
	t, err := in.Check(before)
	if err != nil {
		return nil, err
	}
	if err := s.Store.PutServiceLevelTargets(ctx, customerID, l.ID.ID, "service level targets of "+l.Name, before, t); err != nil {
		return nil, err
	}
	return s.Targets(ctx, customerID, l)
}
