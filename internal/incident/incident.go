// Package incident groups the anomalies of one site into incidents and
// says of each its cause, scope and evidence (decisions §24): anomalous
// slots of one site (the folder holding the floors) with at most one slot
// between them, across the site's floors and baselines, are one incident.
// The grouping runs after the anomaly evaluation, from the anomalies
// recorded since its last run whatever their slot (late data records
// anomalies of past slots), a bounded number at a time; every replica may
// run it, and only the one whose write opened or closed an incident
// announces it.
package incident

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/every"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// SlotMs is a baseline slot (15 minutes).
const SlotMs = 900_000

// Gap is the furthest apart two anomalous slots of one incident may start
// (one slot between them).
const Gap = 2 * SlotMs

// batch is how many recorded anomalies one run groups at most.
const batch = 500

// margin is how far behind now the cursor of recorded anomalies stays, so
// that an anomaly another replica raised just before and committed just
// after a run is still read by the next (grouping it twice is harmless).
const margin = 2 * time.Minute

// Store is what the grouping and the incident calls need.
type Store interface {
	AnomaliesRaisedAfter(ctx context.Context, customerID int64, after wnms.AnomalyCursor, limit int) ([]wnms.Anomaly, error)
	Anomalies(ctx context.Context, customerID int64, locations []int64, from, to int64) ([]wnms.Anomaly, error)
	IncidentCustomers(ctx context.Context, since int64) ([]int64, error)
	Incidents(ctx context.Context, customerID, from, to int64) ([]*wnms.Incident, error)
	Incident(ctx context.Context, customerID, id int64) (*wnms.Incident, error)
	OpenIncidents(ctx context.Context, customerID, before int64) ([]*wnms.Incident, error)
	AcknowledgeIncident(ctx context.Context, customerID, id int64) error
	SaveIncident(ctx context.Context, in *wnms.Incident, evaluatedThrough int64) (wnms.IncidentChange, error)
	APNames(ctx context.Context, customerID int64, boxIDs []int64) (map[int64][2]string, error)
	ConnectivityCounts(ctx context.Context, customerID int64, locations []int64, from, to int64) (*wnms.IncidentCounts, error)
	PerformanceCounts(ctx context.Context, customerID int64, locations []int64, from, to int64) (*wnms.IncidentCounts, error)
	ConnObs(ctx context.Context, customerID, locationID int64, band, ssid string, from, to int64) (map[int64]wnms.Connectivity, error)
	PerfObs(ctx context.Context, customerID, locationID int64, band, ssid string, from, to int64) (map[int64]wnms.Performance, error)
	PerfAPObs(ctx context.Context, customerID int64, locations []int64, band string, from, to int64) (map[int64][]wnms.APObsRow, error)
	Locations(ctx context.Context, customerID int64) ([]*wnms.Location, error)
	LocationPaths(ctx context.Context, ids []int64) (map[int64]string, error)
	Setting(ctx context.Context, name string) (string, bool, error)
	PutSetting(ctx context.Context, name, value string) error
}

// Service groups incidents and answers the incident calls.
type Service struct {
	Store Store
	Log   *slog.Logger
	Now   func() time.Time
	// EvaluatedThrough is the start of the newest slot the customer's
	// anomaly evaluation covered: an incident closes once it passed the
	// incident's last anomalous slot by more than one slot.
	EvaluatedThrough func(ctx context.Context, customerID int64) (int64, error)
	// OnOpened and OnClosed announce an incident this process opened or
	// closed (another replica's are its own to announce).
	OnOpened, OnClosed func(in *wnms.Incident)

	running sync.Mutex
}

// NewService returns a service on st.
func NewService(st Store, log *slog.Logger) *Service {
	return &Service{Store: st, Log: log, Now: time.Now}
}

// RunEvery groups the incidents of every customer with recent anomalies
// or open incidents every period until ctx ends.
func (s *Service) RunEvery(ctx context.Context, period time.Duration) {
	every.Period(ctx, period, func(ctx context.Context) {
		ids, err := s.Store.IncidentCustomers(ctx, s.Now().Add(-48*time.Hour).UnixMilli())
		if err == nil {
			for _, id := range ids {
				if err = s.Group(ctx, id); err != nil {
					break
				}
			}
		}
		if err != nil && ctx.Err() == nil && s.Log != nil {
			s.Log.Error("incident grouping failed", "err", err)
		}
	})
}

func cursorKey(customerID int64) string {
	return "incident_cursor:" + strconv.FormatInt(customerID, 10)
}

func parseCursor(v string) wnms.AnomalyCursor {
	var c wnms.AnomalyCursor
	p := strings.SplitN(v, ",", 4)
	if len(p) == 4 {
		c.RaisedAt, _ = strconv.ParseInt(p[0], 10, 64)
		c.LocationID, _ = strconv.ParseInt(p[1], 10, 64)
		c.Slot, _ = strconv.ParseInt(p[2], 10, 64)
		c.Kind = p[3]
	}
	return c
}

func formatCursor(c wnms.AnomalyCursor) string {
	return strconv.FormatInt(c.RaisedAt, 10) + "," + strconv.FormatInt(c.LocationID, 10) + "," +
		strconv.FormatInt(c.Slot, 10) + "," + c.Kind
}

// sites knows the customer's locations: each one's site (a floor's
// parent folder; a folder is its own site) and the locations of each
// site's subtree.
type sites struct {
	byID    map[int64]*wnms.Location
	subtree map[int64][]int64 // site → every location at or below it
}

func (s *Service) sitesOf(ctx context.Context, customerID int64) (*sites, error) {
	locs, err := s.Store.Locations(ctx, customerID)
	if err != nil {
		return nil, err
	}
	out := &sites{byID: map[int64]*wnms.Location{}, subtree: map[int64][]int64{}}
	for _, l := range locs {
		out.byID[l.ID.ID] = l
	}
	for _, l := range locs {
		// Every location belongs to the subtree of each folder above it.
		for _, seg := range strings.Split(strings.Trim(l.Path, "/"), "/") {
			if id, err := strconv.ParseInt(seg, 10, 64); err == nil {
				if a, ok := out.byID[id]; ok && a.Type == wnms.FolderLocation && id != wnms.RootLocation {
					out.subtree[id] = append(out.subtree[id], l.ID.ID)
				}
			}
		}
	}
	return out, nil
}

// siteOf is the site of a location: a floor's parent, a folder itself;
// ok is false for a location not known or at the root.
func (ss *sites) siteOf(id int64) (int64, bool) {
	l, ok := ss.byID[id]
	if !ok {
		return 0, false
	}
	if l.Type == wnms.FloorLocation {
		if l.ParentID == nil {
			return 0, false
		}
		return ss.siteOf(l.ParentID.ID)
	}
	if id == wnms.RootLocation {
		return 0, false
	}
	return id, true
}

// Group groups the customer's anomalies recorded since the last run (at
// most batch of them) into incidents, and closes the open incidents the
// evaluation has passed.
func (s *Service) Group(ctx context.Context, customerID int64) error {
	s.running.Lock()
	defer s.running.Unlock()
	through, err := s.EvaluatedThrough(ctx, customerID)
	if err != nil {
		return err
	}
	var cur wnms.AnomalyCursor
	if v, ok, err := s.Store.Setting(ctx, cursorKey(customerID)); err != nil {
		return err
	} else if ok {
		cur = parseCursor(v)
	}
	list, err := s.Store.AnomaliesRaisedAfter(ctx, customerID, cur, batch)
	if err != nil {
		return err
	}
	ss, err := s.sitesOf(ctx, customerID)
	if err != nil {
		return err
	}
	touched := map[int64][]int64{} // site → slots
	for _, a := range list {
		if site, ok := ss.siteOf(a.LocationID); ok {
			touched[site] = append(touched[site], a.Slot)
		}
	}
	for _, site := range sortedKeys(touched) {
		slots := touched[site]
		slices.Sort(slots)
		lo := slots[0]
		for i := 1; i <= len(slots); i++ {
			if i == len(slots) || slots[i]-slots[i-1] > Gap {
				if err := s.regroup(ctx, customerID, ss, site, lo, slots[i-1], through); err != nil {
					return err
				}
				if i < len(slots) {
					lo = slots[i]
				}
			}
		}
	}
	// Incidents the evaluation has passed close, with their detail
	// computed once more over all their slots.
	open, err := s.Store.OpenIncidents(ctx, customerID, through-Gap+1)
	if err != nil {
		return err
	}
	for _, in := range open {
		if err := s.regroup(ctx, customerID, ss, in.SiteLocationID, in.From, in.LastSlot, through); err != nil {
			return err
		}
	}
	if len(list) == 0 {
		return nil
	}
	last := list[len(list)-1]
	next := wnms.AnomalyCursor{RaisedAt: last.RaisedAt, LocationID: last.LocationID, Kind: last.Kind, Slot: last.Slot}
	if held := s.Now().Add(-margin).UnixMilli(); next.RaisedAt >= held {
		next = wnms.AnomalyCursor{RaisedAt: held - 1, LocationID: math.MaxInt64}
	}
	if next.RaisedAt < cur.RaisedAt || (next.RaisedAt == cur.RaisedAt && next.LocationID < cur.LocationID) {
		return nil // never back
	}
	return s.Store.PutSetting(ctx, cursorKey(customerID), formatCursor(next))
}

func sortedKeys[V any](m map[int64]V) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// regroup makes the incident of the site's anomalous slots that chain
// (at most one slot apart) with those in [lo, hi], and stores it.
func (s *Service) regroup(ctx context.Context, customerID int64, ss *sites, site, lo, hi, through int64) error {
	locs := ss.subtree[site]
	if len(locs) == 0 {
		return nil
	}
	var group []wnms.Anomaly
	// Read a window around [lo, hi], widening it while the chain reaches
	// its edge.
	pad := int64(16 * SlotMs)
	for {
		list, err := s.Store.Anomalies(ctx, customerID, locs, lo-pad, hi+pad)
		if err != nil {
			return err
		}
		slices.SortFunc(list, func(a, b wnms.Anomaly) int {
			if a.Slot != b.Slot {
				return int(sign(a.Slot - b.Slot))
			}
			return int(sign(a.LocationID - b.LocationID))
		})
		first, last := lo, hi
		// Extend down from lo and up from hi through slots within Gap.
		for i := len(list) - 1; i >= 0; i-- {
			if a := list[i]; a.Slot < first && first-a.Slot <= Gap {
				first = a.Slot
			}
		}
		for _, a := range list {
			if a.Slot > last && a.Slot-last <= Gap {
				last = a.Slot
			}
		}
		if first-Gap >= lo-pad && last+Gap <= hi+pad {
			group = group[:0]
			for _, a := range list {
				if a.Slot >= first && a.Slot <= last {
					group = append(group, a)
				}
			}
			break
		}
		lo, hi, pad = first, last, pad*2
	}
	if len(group) == 0 {
		return nil
	}
	in, err := s.describe(ctx, customerID, ss, site, group)
	if err != nil {
		return err
	}
	ch, err := s.Store.SaveIncident(ctx, in, through)
	if err != nil {
		return err
	}
	if ch.Opened && s.OnOpened != nil {
		s.OnOpened(in)
	}
	if ch.Closed && s.OnClosed != nil {
		s.OnClosed(in)
	}
	return nil
}

func sign(v int64) int64 {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}

// describe makes the incident of a group of anomalies of one site, oldest
// first: its span, floors, kind, peak, and its cause, scope and evidence
// from the counts of the site's clients over the span.
func (s *Service) describe(ctx context.Context, customerID int64, ss *sites, site int64, group []wnms.Anomaly) (*wnms.Incident, error) {
	in := &wnms.Incident{CustomerID: customerID, SiteLocationID: site, From: group[0].Slot, LastSlot: group[len(group)-1].Slot,
		Floors: []int64{}, Evidence: []wnms.IncidentFigure{}}
	kinds := map[string]bool{}
	peak := group[0]
	for _, a := range group {
		if !slices.Contains(in.Floors, a.LocationID) {
			in.Floors = append(in.Floors, a.LocationID)
		}
		kinds[a.Kind] = true
		if a.Observation > peak.Observation {
			peak = a
		}
	}
	slices.Sort(in.Floors)
	switch {
	case kinds[wnms.IncidentConnectivity] && kinds[wnms.IncidentPerformance]:
		in.Kind = wnms.IncidentMixed
	case kinds[wnms.IncidentPerformance]:
		in.Kind = wnms.IncidentPerformance
	default:
		in.Kind = wnms.IncidentConnectivity
	}
	in.Peak = wnms.IncidentPeak{Timestamp: peak.Slot, Observation: peak.Observation}
	if peak.Kind == wnms.IncidentPerformance {
		obs, err := s.Store.PerfObs(ctx, customerID, peak.LocationID, wnms.BandAny, "", peak.Slot, peak.Slot)
		if err != nil {
			return nil, err
		}
		in.Peak.AffectedClients, in.Peak.AttemptingClients = obs[peak.Slot].Troubled, obs[peak.Slot].Clients
	} else {
		obs, err := s.Store.ConnObs(ctx, customerID, peak.LocationID, wnms.BandAny, "", peak.Slot, peak.Slot)
		if err != nil {
			return nil, err
		}
		in.Peak.AffectedClients, in.Peak.AttemptingClients = obs[peak.Slot].Failing, obs[peak.Slot].Attempting
	}

	counts, err := s.counts(ctx, customerID, ss, site, in.From, in.LastSlot+SlotMs, in.Kind)
	if err != nil {
		return nil, err
	}
	counts.Usual = usual(group)
	var boxIDs []int64
	for _, t := range counts.APs {
		if id, err := strconv.ParseInt(t.Key, 10, 64); err == nil {
			boxIDs = append(boxIDs, id)
		}
	}
	aps, err := s.Store.APNames(ctx, customerID, boxIDs)
	if err != nil {
		return nil, err
	}
	name := func(typ, key string) (id, label string) {
		switch typ {
		case "ap":
			n, _ := strconv.ParseInt(key, 10, 64)
			if ap, ok := aps[n]; ok {
				return ap[0], ap[1]
			}
			return key, key
		case wnms.ScopeChannel:
			return key, ChannelName(key)
		case wnms.ScopeFloor, wnms.ScopeSite:
			n, _ := strconv.ParseInt(key, 10, 64)
			if l, ok := ss.byID[n]; ok {
				return key, l.Name
			}
			return key, key
		case "reason":
			return key, reasonText(key)
		}
		return key, key
	}

	in.Cause = cause(counts)
	siteName := strconv.FormatInt(site, 10)
	_, siteLabel := name(wnms.ScopeSite, siteName)
	in.Scope = wnms.IncidentScope{Type: wnms.ScopeSite, ID: siteName, Name: siteLabel, Share: 1}
	if counts.Affected == 0 {
		in.Scope.Share = 0
	}
	if box, reason, ok := NamedAP(group); ok {
		// The AP's own clients made the incident's anomalies (the AP test
		// of the baselines): its scope is the AP, and its cause what the
		// test found of them.
		key := strconv.FormatInt(box, 10)
		id, label := name(wnms.ScopeAP, key)
		in.Scope = wnms.IncidentScope{Type: wnms.ScopeAP, ID: id, Name: label}
		for _, t := range counts.APs {
			if t.Key == key && counts.Affected > 0 {
				in.Scope.Share = round(min(float64(t.Affected)/float64(counts.Affected), 1))
			}
		}
		share, err := s.apReasonShare(ctx, customerID, ss.subtree[site], box, reason, in.From, in.LastSlot)
		if err != nil {
			return nil, err
		}
		in.Cause = &wnms.IncidentCause{Stage: "performance", Reason: wnms.IncidentReason{Text: reason}, Share: round(share)}
	} else if c, ok := Scope(counts); ok {
		id, label := name(c.Type, c.Key)
		in.Scope = wnms.IncidentScope{Type: c.Type, ID: id, Name: label, Share: round(min(c.Share, 1))}
	}
	for _, d := range []struct {
		typ  string
		list []wnms.Tally
	}{{"reason", counts.Reasons}, {wnms.ScopeAP, counts.APs}, {wnms.ScopeChannel, counts.Channels}, {wnms.ScopeSSID, counts.SSIDs},
		{wnms.ScopeBand, counts.Bands}, {wnms.ScopeRadiusServer, counts.Radius}, {wnms.ScopeFloor, counts.Locs}} {
		n := 0
		for _, t := range d.list {
			if t.Affected == 0 || t.Key == "" || n == EvidencePerType {
				continue
			}
			id, label := name(d.typ, t.Key)
			in.Evidence = append(in.Evidence, wnms.IncidentFigure{Type: d.typ, ID: id, Name: label, Clients: t.Affected})
			n++
		}
	}
	return in, nil
}

// NamedAP is the AP that the anomalies of a group naming an AP all name
// (wnms.Anomaly.AP: the AP test of the baselines found its clients' signal
// or retries changed), with the reason most of them give (ties: the
// first); ok is false when none names one, or they name several (a
// trouble of several APs, such as interference on a channel they share).
func NamedAP(group []wnms.Anomaly) (box int64, reason string, ok bool) {
	reasons := map[string]int{}
	var order []string
	for _, a := range group {
		if a.AP == nil {
			continue
		}
		if ok && a.AP.BoxID != box {
			return 0, "", false
		}
		box, ok = a.AP.BoxID, true
		if reasons[a.AP.Reason] == 0 {
			order = append(order, a.AP.Reason)
		}
		reasons[a.AP.Reason]++
	}
	for _, r := range order {
		if reason == "" || reasons[r] > reasons[reason] {
			reason = r
		}
	}
	return box, reason, ok
}

// apReasonShare is the share of the troubled clients of the AP's radios
// at locations over the slots [from, last] (counted slot by slot) that have
// the reason: a low RSSI, or a high retry rate.
func (s *Service) apReasonShare(ctx context.Context, customerID int64, locations []int64, box int64, reason string, from, last int64) (float64, error) {
	obs, err := s.Store.PerfAPObs(ctx, customerID, locations, wnms.BandAny, from, last)
	if err != nil {
		return 0, err
	}
	troubled, with := 0, 0
	for _, rows := range obs {
		for _, r := range rows {
			if r.APBoxID != box {
				continue
			}
			troubled += r.Troubled
			if reason == wnms.APReasonLowRSSI {
				with += r.LowRSSI
			} else {
				with += r.HighRetry
			}
		}
	}
	if troubled == 0 {
		return 0, nil
	}
	return min(float64(with)/float64(troubled), 1), nil
}

// counts are the counts of the site's clients over [from, to): run over
// the whole site (so that a floor, an AP or an SSID can be seen to hold
// the affected clients while others of the site did not), connection
// attempts for a connectivity incident, statistics for a performance one,
// both for a mixed one; locations below a floor count as the floor.
func (s *Service) counts(ctx context.Context, customerID int64, ss *sites, site, from, to int64, kind string) (*wnms.IncidentCounts, error) {
	locs := ss.subtree[site]
	counts := &wnms.IncidentCounts{}
	if kind != wnms.IncidentPerformance {
		c, err := s.Store.ConnectivityCounts(ctx, customerID, locs, from, to)
		if err != nil {
			return nil, err
		}
		counts = c
	}
	if kind != wnms.IncidentConnectivity {
		p, err := s.Store.PerformanceCounts(ctx, customerID, locs, from, to)
		if err != nil {
			return nil, err
		}
		counts = merge(counts, p)
	}
	floorOf := func(id int64) int64 {
		for l := ss.byID[id]; l != nil; {
			if l.Type == wnms.FloorLocation {
				return l.ID.ID
			}
			if l.ParentID == nil {
				break
			}
			l = ss.byID[l.ParentID.ID]
		}
		return id
	}
	floors := map[string]wnms.Tally{}
	for _, t := range counts.Locs {
		id, _ := strconv.ParseInt(t.Key, 10, 64)
		k := strconv.FormatInt(floorOf(id), 10)
		f := floors[k]
		f.Key, f.Affected, f.Attempted = k, f.Affected+t.Affected, f.Attempted+t.Attempted
		floors[k] = f
	}
	counts.Locs = counts.Locs[:0]
	for _, f := range floors {
		counts.Locs = append(counts.Locs, f)
	}
	sortTallies(counts.Locs)
	return counts, nil
}

// Counts are the counts an incident of the kind at the site over [from,
// to) is described from (its cause, scope and evidence): for a benchmark
// that explains a scope with Candidates.
func (s *Service) Counts(ctx context.Context, customerID, site, from, to int64, kind string) (*wnms.IncidentCounts, error) {
	ss, err := s.sitesOf(ctx, customerID)
	if err != nil {
		return nil, err
	}
	counts, err := s.counts(ctx, customerID, ss, site, from, to, kind)
	if err != nil {
		return nil, err
	}
	group, err := s.Store.Anomalies(ctx, customerID, ss.subtree[site], from, to-1)
	if err != nil {
		return nil, err
	}
	counts.Usual = usual(group)
	return counts, nil
}

// usual is the share of clients usually affected where and when a group
// of anomalies was: the lowest of their baselines (a percentage), 0 for
// none.
func usual(group []wnms.Anomaly) float64 {
	out := math.Inf(1)
	for _, a := range group {
		out = min(out, a.Baseline/100)
	}
	if math.IsInf(out, 1) || out < 0 {
		return 0
	}
	return out
}

// ScopeShare is the share of affected clients a scope must hold.
const ScopeShare = 0.8

// ScopeLift is how many times the share of affected clients inside a
// scope must be that outside it (the rest of the site).
const ScopeLift = 4

// Candidate is the value of one dimension that could be an incident's
// scope: the dimension's value with the most affected clients, the share
// of the incident's affected clients it holds, and its lift (how many
// times as often its clients were affected as the site's others; +Inf
// when none of those was).
type Candidate struct {
	Type                string
	Key                 string
	Affected, Attempted int
	Share, Lift         float64
	// Excess is the share of the clients affected beyond the usual rate
	// (counts.Usual) that the value holds: its affected clients beyond
	// the usual rate of its own clients, of those of the site.
	Excess float64
	// Fits: holds at least ScopeShare of the clients affected beyond the
	// usual rate, is narrower than the site and has a lift of at least
	// ScopeLift.
	Fits bool
}

// Candidates are the candidate scopes of counts, narrowest first: AP,
// channel, SSID, band, RADIUS server, floor (dimensions without a value
// are left out). A RADIUS server is a candidate only when the cause is
// an authentication failure: it has no part in the other stages, and its
// clients (those that reached it: the 802.1X clients) are those that
// connect most often, so that a trouble of every client at a later stage
// (a slow DHCP server) hits them more often than the site's others.
func Candidates(counts *wnms.IncidentCounts) []Candidate {
	var out []Candidate
	radius := false
	if c := cause(counts); c != nil && c.Stage == "authentication" {
		radius = true
	}
	for _, d := range []struct {
		typ  string
		list []wnms.Tally
	}{{wnms.ScopeAP, counts.APs}, {wnms.ScopeChannel, counts.Channels}, {wnms.ScopeSSID, counts.SSIDs}, {wnms.ScopeBand, counts.Bands},
		{wnms.ScopeRadiusServer, counts.Radius}, {wnms.ScopeFloor, counts.Locs}} {
		if len(d.list) == 0 || counts.Affected == 0 || d.typ == wnms.ScopeRadiusServer && !radius {
			continue
		}
		top := d.list[0]
		c := Candidate{Type: d.typ, Key: top.Key, Affected: top.Affected, Attempted: top.Attempted,
			Share: float64(top.Affected) / float64(counts.Affected), Lift: lift(top, counts)}
		c.Excess = c.Share
		if all := float64(counts.Affected) - counts.Usual*float64(counts.Attempted); all > 0 {
			c.Excess = min(1, max(0, float64(top.Affected)-counts.Usual*float64(top.Attempted))/all)
		}
		// The value holds most affected clients and is narrower than the
		// site: some of the site's clients were elsewhere, and fared
		// clearly better there. Holding most affected clients alone is
		// not enough: a value most of the site's clients have (the staff
		// SSID) holds most of any site-wide trouble's too.
		c.Fits = top.Key != "" && c.Excess >= ScopeShare && top.Attempted < counts.Attempted && c.Lift >= ScopeLift
		out = append(out, c)
	}
	return out
}

// Scope is the scope counts give: the first candidate that fits; false
// when none does (the incident's scope is then its site).
func Scope(counts *wnms.IncidentCounts) (Candidate, bool) {
	for _, c := range Candidates(counts) {
		if c.Fits {
			return c, true
		}
	}
	return Candidate{}, false
}

// lift is how many times as often the clients of the value t were
// affected as the site's other clients (+Inf when none of those was, 0
// for a value without clients).
func lift(t wnms.Tally, all *wnms.IncidentCounts) float64 {
	if t.Attempted <= 0 {
		return 0
	}
	in := float64(t.Affected) / float64(t.Attempted)
	if all.Attempted-t.Attempted <= 0 {
		return math.Inf(1)
	}
	out := float64(all.Affected-t.Affected) / float64(all.Attempted-t.Attempted)
	if out <= 0 {
		return math.Inf(1)
	}
	return in / out
}

// ChannelName names a channel number as a scope: "5 GHz channel 36".
func ChannelName(key string) string {
	n, err := strconv.Atoi(key)
	switch {
	case err != nil:
		return key
	case n >= 1 && n <= 14:
		return "2.4 GHz channel " + key
	}
	return "5 GHz channel " + key
}

// EvidencePerType is how many reasons, APs, SSIDs, bands, RADIUS servers
// and floors the evidence names at most.
const EvidencePerType = 3

func round(f float64) float64 { return math.Round(f*10000) / 10000 }

// merge adds the performance counts p to the connectivity counts c (a
// mixed incident): the affected of both, per value.
func merge(c, p *wnms.IncidentCounts) *wnms.IncidentCounts {
	add := func(a, b []wnms.Tally) []wnms.Tally {
		m := map[string]wnms.Tally{}
		for _, t := range append(append([]wnms.Tally{}, a...), b...) {
			x := m[t.Key]
			x.Key, x.Affected, x.Attempted = t.Key, x.Affected+t.Affected, x.Attempted+t.Attempted
			m[t.Key] = x
		}
		out := []wnms.Tally{}
		for _, t := range m {
			out = append(out, t)
		}
		sortTallies(out)
		return out
	}
	return &wnms.IncidentCounts{Affected: c.Affected + p.Affected, Attempted: c.Attempted + p.Attempted,
		Reasons: add(c.Reasons, p.Reasons), APs: add(c.APs, p.APs), SSIDs: add(c.SSIDs, p.SSIDs),
		Bands: add(c.Bands, p.Bands), Radius: add(c.Radius, p.Radius), Locs: add(c.Locs, p.Locs), Channels: add(c.Channels, p.Channels)}
}

func sortTallies(list []wnms.Tally) {
	sort.Slice(list, func(i, j int) bool {
		if list[i].Affected != list[j].Affected {
			return list[i].Affected > list[j].Affected
		}
		return list[i].Key < list[j].Key
	})
}

// performanceReasons are the texts of the performance reasons.
var performanceReasons = map[string]string{
	"lowDataRate": "Low data rate", "highRetry": "High retry rate", "lowRssi": "Low RSSI", "sticky": "Sticky client",
}

// codes reads a connection failure reason's key "code/sub".
func codes(key string) (code, sub int, ok bool) {
	a, b, found := strings.Cut(key, "/")
	if !found {
		return 0, 0, false
	}
	c, err1 := strconv.Atoi(a)
	d, err2 := strconv.Atoi(b)
	return c, d, err1 == nil && err2 == nil
}

func reasonText(key string) string {
	if t, ok := performanceReasons[key]; ok {
		return t
	}
	if c, d, ok := codes(key); ok {
		return telemetry.FailureText(c, d)
	}
	return key
}

// stageOf is the stage a connection failure happened in: its category
// (failureCode 1 association, 2 authentication), and for a network
// failure (3) dns when the name did not resolve, dhcp otherwise (no
// offer, a NAK, no gateway, an address conflict: getting an address).
func stageOf(code, sub int) string {
	switch code {
	case 1:
		return "association"
	case 2:
		return "authentication"
	}
	if sub == 303 {
		return "dns"
	}
	return "dhcp"
}

// cause is the (stage, reason) of most affected clients, nil when no
// client was affected.
func cause(c *wnms.IncidentCounts) *wnms.IncidentCause {
	if c.Affected == 0 || len(c.Reasons) == 0 {
		return nil
	}
	sortTallies(c.Reasons)
	top := c.Reasons[0]
	out := &wnms.IncidentCause{Share: round(min(float64(top.Affected)/float64(c.Affected), 1))}
	if code, sub, ok := codes(top.Key); ok {
		out.Stage = stageOf(code, sub)
		out.Reason = wnms.IncidentReason{FailureCode: &code, SubFailureCode: &sub, Text: telemetry.FailureText(code, sub)}
	} else {
		out.Stage = "performance"
		out.Reason = wnms.IncidentReason{Text: reasonText(top.Key)}
	}
	return out
}
