package wnms

// The domain of the service levels (decisions §24): what each connection
// attempt counts as, and the hourly counts the store keeps of them. The
// arithmetic that makes the metrics is the servicelevel package's.

// ServiceLevelHour is the width of the store's service level counts: an
// attempt counts in the UTC hour holding its timestamp.
const ServiceLevelHour = int64(3600000)

// HourOf is the start (Unix ms) of the hour holding ms.
func HourOf(ms int64) int64 {
	h := ms - ms%ServiceLevelHour
	if ms < 0 && ms%ServiceLevelHour != 0 {
		h -= ServiceLevelHour
	}
	return h
}

// Outcomes of a connection attempt (a Success or Failure event), as the
// service level counts keep them: where a Failure failed, and which phase
// of a timed Success was the slow one.
const (
	OutcomeAssociation    = 1  // Failure, failureCode 1
	OutcomeAuthentication = 2  // Failure, failureCode 2
	OutcomeDHCP           = 3  // Failure, failureCode 3 except 303 (no offer, NAK, gateway, address conflict)
	OutcomeDNS            = 4  // Failure 3/303 DNS resolution failed
	OutcomeUntimed        = 10 // Success without a time to connect (no association timestamp, or none after it)
	OutcomeSlowAuth       = 11 // timed Success whose authentication took at least as long as its DHCP
	OutcomeSlowDHCP       = 12 // timed Success whose DHCP took longer than its authentication
)

// TargetStepMs and MaxTargetMs bound a time to connect target: a multiple
// of 500 ms, at most 60 s. The counts keep, for each such target, the
// Successes slower than it.
const (
	TargetStepMs = 500
	MaxTargetMs  = 60000
)

// AttemptOutcome is what a Success or Failure event counts as, and for a
// timed Success its time to connect (ms). ok is false for any other event.
//
// A Success's time to connect runs from its association to the network:
// associationTimestamp to networkTimestamp (to authenticationTimestamp
// when no DHCP exchange was seen: a static address, or a roaming client
// keeping its lease). Its phases are authentication (association to
// authentication; none on an open network) and DHCP (authentication to
// network). Each phase has half the target as its share, so a Success
// over the target has at least one phase over its share: the slow phase
// is the longer one (authentication when they are equal), the one
// further over its share, whatever the target. The association's own
// duration is not reported (its timestamp marks its end), so it is no
// phase of the time to connect. A Success without an association
// timestamp, without either later one, or whose timestamps run backwards
// is untimed.
func AttemptOutcome(e *ClientEvent) (outcome int, ttcMs int64, ok bool) {
	switch e.Type {
	case Failure:
		code, sub := 0, 0
		if e.Code != nil {
			code = *e.Code
		}
		if e.SubCode != nil {
			sub = *e.SubCode
		}
		switch {
		case code == CategoryAssociation:
			return OutcomeAssociation, 0, true
		case code == CategoryAuthentication:
			return OutcomeAuthentication, 0, true
		case sub == 303:
			return OutcomeDNS, 0, true
		default:
			return OutcomeDHCP, 0, true
		}
	case Success:
		o, ms := SuccessOutcome(e.AssociatedAt, e.AuthenticatedAt, e.NetworkAt)
		return o, ms, true
	}
	return 0, 0, false
}

// SuccessOutcome is AttemptOutcome of a Success with these phase
// timestamps (nil: not observed).
func SuccessOutcome(assoc, auth, network *int64) (outcome int, ttcMs int64) {
	if assoc == nil || (auth == nil && network == nil) {
		return OutcomeUntimed, 0
	}
	a := *assoc
	u := a
	if auth != nil {
		u = *auth
	}
	n := u
	if network != nil {
		n = *network
	}
	if u < a || n < u {
		return OutcomeUntimed, 0
	}
	if u-a >= n-u {
		return OutcomeSlowAuth, n - a
	}
	return OutcomeSlowDHCP, n - a
}

// ServicePlace is where an attempt counts: its hour, location, AP (0:
// none known), SSID and band.
type ServicePlace struct {
	Hour       int64
	LocationID int64
	APBoxID    int64
	SSID, Band string
}

// ServiceCounts are the attempts of a place or group: the Successes,
// the untimed ones among them, the failures by outcome, and (for one
// target) the timed Successes slower than it by slow phase.
type ServiceCounts struct {
	Successes, Untimed                     int64
	FailAssoc, FailAuth, FailDHCP, FailDNS int64
	SlowAuth, SlowDHCP                     int64
	// The radio's: client samples with radio metrics, those under the
	// coverage threshold, those whose radio's utilisation was known and
	// of those the ones on a busy radio; roams, slow and suboptimal.
	Samples, Weak, UtilKnown, Busy    int64
	Roams, SlowRoams, SuboptimalRoams int64
}

// Add adds c to s.
func (s *ServiceCounts) Add(c ServiceCounts) {
	s.Successes += c.Successes
	s.Untimed += c.Untimed
	s.FailAssoc += c.FailAssoc
	s.FailAuth += c.FailAuth
	s.FailDHCP += c.FailDHCP
	s.FailDNS += c.FailDNS
	s.SlowAuth += c.SlowAuth
	s.SlowDHCP += c.SlowDHCP
	s.Samples += c.Samples
	s.Weak += c.Weak
	s.UtilKnown += c.UtilKnown
	s.Busy += c.Busy
	s.Roams += c.Roams
	s.SlowRoams += c.SlowRoams
	s.SuboptimalRoams += c.SuboptimalRoams
}

// CountAttempt adds an attempt of outcome to s (the slow counts are
// the store's, by target).
func (s *ServiceCounts) CountAttempt(outcome int) {
	switch outcome {
	case OutcomeAssociation:
		s.FailAssoc++
	case OutcomeAuthentication:
		s.FailAuth++
	case OutcomeDHCP:
		s.FailDHCP++
	case OutcomeDNS:
		s.FailDNS++
	case OutcomeUntimed:
		s.Successes++
		s.Untimed++
	default:
		s.Successes++
	}
}

// Groupings of GET /servicelevels.
const (
	GroupNone  = "none"
	GroupFloor = "floor"
	GroupAP    = "ap"
	GroupSSID  = "ssid"
	GroupBand  = "band"
)

// ServiceLevelQuery selects the hourly counts of one customer: the hours
// from..to (the start of each, ms, inclusive), at Locations (nil: all),
// summed by GroupBy, with the timed Successes slower than TargetMs.
type ServiceLevelQuery struct {
	CustomerID int64
	From, To   int64
	Locations  []int64
	GroupBy    string
	TargetMs   int64
}

// ServiceLevelCount is the counts of one group: the location id, AP box
// id (0: none), SSID or band; "" ungrouped.
type ServiceLevelCount struct {
	Group string
	ServiceCounts
}

// ServiceLevelTargets are a location's targets: SuccessGoal % of
// attempts succeed; TTCGoal % of timed Successes connect within TTCMs;
// and the radio's goals: CoverageGoal % of client samples reach the
// coverage threshold, CapacityGoal % are on radios under the capacity
// threshold, RoamingGoal % of roams are neither slow nor suboptimal (the
// thresholds are fixed: the counts are kept against them at ingest).
type ServiceLevelTargets struct {
	SuccessGoal  float64
	TTCMs        int64
	TTCGoal      float64
	CoverageGoal float64
	CapacityGoal float64
	RoamingGoal  float64
}

// AuditView is the targets as the calls show them, for an audit record's
// field-level changes ("timeToConnect.seconds").
func (t ServiceLevelTargets) AuditView() map[string]any {
	return map[string]any{"successfulConnects": map[string]any{"goal": t.SuccessGoal},
		"timeToConnect": map[string]any{"seconds": float64(t.TTCMs) / 1000, "goal": t.TTCGoal},
		"coverage":      map[string]any{"goal": t.CoverageGoal}, "capacity": map[string]any{"goal": t.CapacityGoal},
		"roaming": map[string]any{"goal": t.RoamingGoal}}
}

// DefaultRadioGoal is the radio service levels' goal until a location
// sets its own: 90 %.
const DefaultRadioGoal = 90.0

// DefaultServiceLevelTargets apply where no location up the tree has its
// own: 95 % of attempts succeed, 90 % of Successes connect within 4 s,
// and 90 % for each of the radio's.
var DefaultServiceLevelTargets = ServiceLevelTargets{SuccessGoal: 95, TTCMs: 4000, TTCGoal: 90,
	CoverageGoal: DefaultRadioGoal, CapacityGoal: DefaultRadioGoal, RoamingGoal: DefaultRadioGoal}
