package wnms

import "time"

// The domain of the baselines: what a slot's clients did, the observations
// made of it, and the anomalies found. The arithmetic that makes them is
// the baseline package's; these are what it and the store exchange.

// SlotDuration is the length of a baseline slot: observations, baselines
// and anomalies are by slot.
const SlotDuration = 15 * time.Minute

const slotMs = int64(SlotDuration / time.Millisecond)

// SlotOf is the start (Unix ms) of the slot holding ms.
func SlotOf(ms int64) int64 {
	s := ms - ms%slotMs
	if ms < 0 && ms%slotMs != 0 {
		s -= slotMs
	}
	return s
}

// ConnAttempt is one client's connection attempts in a slot and scope:
// it attempted (a Success or Failure event) and failed in the categories
// set (failureCode 1, 2, 3).
type ConnAttempt struct {
	MAC      string
	Failures [4]bool // index by category; [0] is any failure
}

// Connectivity is a slot's connectivity observation.
type Connectivity struct {
	Attempting, Failing                           int     // noOfSamplesForObservation, absoluteObservation
	Observation                                   float64 // 100 × failing / attempting
	Association, Authentication, Network          int     // clients failing in each category
	PctAssociation, PctAuthentication, PctNetwork float64
}

// SlotSample is one client statistics sample as a slot's performance
// observation reads it.
type SlotSample struct {
	MAC              string
	DataRateMbps     float64
	RetryRatePct     float64
	RSSI             float64
	BestNeighborRSSI *float64
}

// Performance thresholds of a client's means in a slot.
const (
	LowDataRateMbps = 12.0
	HighRetryPct    = 15.0
	LowRSSI         = -75.0
	StickyMarginDB  = 10.0
)

// Performance is a slot's performance observation.
type Performance struct {
	Clients, Troubled               int // noOfSamplesForObservation, absoluteObservation
	Observation                     float64
	LowDataRate, HighRetry, LowRSSI int
	Sticky                          int
	PctLowDataRate, PctHighRetry    float64
	PctLowRSSI, PctSticky           float64
}

// ClientSums are a client's samples of a slot in one place, summed: all
// the performance observation needs of them, whatever their number. Sums
// of the same client from several places add up (Add).
type ClientSums struct {
	MAC               string
	N                 int     // samples
	Rate, Retry, RSSI float64 // sums of dataRateMbps, retryRatePct, rssi
	// WeakAll: every sample had an RSSI below LowRSSI.
	WeakAll bool
	// WithBetter samples named a best neighbour; Better of them heard it at
	// least StickyMarginDB better than the client's own RSSI.
	Better, WithBetter int
}

// Add merges o, sums of the same client, into c.
func (c *ClientSums) Add(o ClientSums) {
	c.N += o.N
	c.Rate += o.Rate
	c.Retry += o.Retry
	c.RSSI += o.RSSI
	c.WeakAll = c.WeakAll && o.WeakAll
	c.Better += o.Better
	c.WithBetter += o.WithBetter
}

// CompletePerformance fills the observation and percentages of counts.
func CompletePerformance(p Performance) Performance {
	p.Observation, p.PctLowDataRate, p.PctHighRetry, p.PctLowRSSI, p.PctSticky = 0, 0, 0, 0, 0
	if p.Clients > 0 {
		n := float64(p.Clients)
		p.Observation = 100 * float64(p.Troubled) / n
		p.PctLowDataRate = 100 * float64(p.LowDataRate) / n
		p.PctHighRetry = 100 * float64(p.HighRetry) / n
		p.PctLowRSSI = 100 * float64(p.LowRSSI) / n
		p.PctSticky = 100 * float64(p.Sticky) / n
	}
	return p
}

// CompleteConnectivity fills the observation and percentages of counts.
func CompleteConnectivity(c Connectivity) Connectivity {
	c.Observation, c.PctAssociation, c.PctAuthentication, c.PctNetwork = 0, 0, 0, 0
	if c.Attempting > 0 {
		n := float64(c.Attempting)
		c.Observation = 100 * float64(c.Failing) / n
		c.PctAssociation = 100 * float64(c.Association) / n
		c.PctAuthentication = 100 * float64(c.Authentication) / n
		c.PctNetwork = 100 * float64(c.Network) / n
	}
	return c
}

// ScopedAttempt is a client's connection attempts of a slot at one
// location, band and SSID: whether it failed, and in which categories
// (the store aggregates a slot's events into these, one per client and
// place).
type ScopedAttempt struct {
	LocationID int64
	Band       string
	SSID       string
	ConnAttempt
}

// ConnObsRow is the connectivity observation of a slot in one scope: a
// location and its subtree, a band (or wnms.BandAny), an SSID ("" for all).
type ConnObsRow struct {
	LocationID int64
	Band       string
	SSID       string
	Slot       int64
	Connectivity
}

// DirtySlot is a slot whose observations are out of date; Version is the
// mark a refresh clears only if no newer one replaced it.
type DirtySlot struct {
	Slot    int64
	Version int64
}

// Anomaly is an anomalous slot recorded by the evaluation.
type Anomaly struct {
	CustomerID  int64   `json:"-"`
	LocationID  int64   `json:"-"`
	Kind        string  `json:"kind"`
	Slot        int64   `json:"timestamp"`
	Observation float64 `json:"observation"`
	Baseline    float64 `json:"baseline"`
	Threshold   float64 `json:"threshold"`
	RaisedAt    int64   `json:"-"`
	// Affected and Attempting are the slot's clients: failing (or in
	// trouble) and attempting (or with samples); 0 for anomalies recorded
	// before they were kept.
	Affected   int `json:"-"`
	Attempting int `json:"-"`
	// AP is the AP whose clients made a performance slot anomalous, nil
	// when the slot's share of troubled clients did.
	AP *AnomalyAP `json:"ap,omitempty"`
}

// ScopedSample is a client statistics sample with when and where it was
// taken.
type ScopedSample struct {
	Time       int64
	LocationID int64
	Band       string
	SSID       string
	SlotSample
}

// ScopedSums are a client's samples of a slot at one location, band,
// SSID and AP, summed (the store aggregates them, so a slot costs its
// clients, not its samples).
type ScopedSums struct {
	LocationID int64
	Band       string
	SSID       string
	// APBoxID is the AP the samples were taken at; 0 when not known.
	APBoxID int64
	ClientSums
	// Before are the client's samples at the same place and AP in the
	// slot ChangeSpan before, summed (N 0: none, or at no known AP).
	Before ClientSums
}

// ChangeSpan is how far apart the slots are whose clients APPerformance
// compares: two slots, so that a change that begins within a slot shows
// whole in the next, against a slot that had none of it (against the
// slot just before, it would be split between two slots).
const ChangeSpan = 2 * SlotDuration

// APPerformance is what the clients of one AP's radio (one band) went
// through in a slot: how many had samples there, how many of them were
// troubled (as Performance counts them), with a low RSSI and with a high
// retry rate; and of them, those paired (on the same radio, at the same
// place, ChangeSpan before too), the sums of how much their mean RSSI (dB)
// and mean retry rate (percentage points) changed since. The same clients
// on the same radio half an hour apart hear it as before unless something
// changed: what the change shows does not depend on which clients came (a
// far corner's or a desk's).
type APPerformance struct {
	Clients, Troubled, LowRSSI, HighRetry int
	Paired                                int
	RSSIChangeSum, RetryChangeSum         float64
}

// RSSIChange is the mean change of the paired clients' mean RSSI over
// ChangeSpan (dB); 0 without paired clients.
func (a APPerformance) RSSIChange() float64 {
	if a.Paired == 0 {
		return 0
	}
	return a.RSSIChangeSum / float64(a.Paired)
}

// RetryChange is the mean change of the paired clients' mean retry rate
// over ChangeSpan (percentage points); 0 without paired clients.
func (a APPerformance) RetryChange() float64 {
	if a.Paired == 0 {
		return 0
	}
	return a.RetryChangeSum / float64(a.Paired)
}

// APObsRow is the performance of the clients of one AP's radio at a
// location in a slot.
type APObsRow struct {
	LocationID int64
	APBoxID    int64
	Band       string
	Slot       int64
	APPerformance
}

// The reasons an AP's clients make a performance slot anomalous
// (AnomalyAP.Reason): their mean signal fell, or their mean retry rate
// rose, against the AP's own history.
const (
	APReasonLowRSSI   = "Low RSSI"
	APReasonHighRetry = "High retry rate"
)

// AnomalyAP is the AP a performance anomaly names: the clients of its
// radio on Band made the slot anomalous for Reason. Observation,
// Baseline and Threshold are the radio's, in the reason's unit: how much
// its clients' mean RSSI changed over ChangeSpan (dB; anomalous below the
// threshold) or their mean retry rate (percentage points; anomalous above
// it), and the usual change (the median of its history, 0 without one).
type AnomalyAP struct {
	BoxID       int64   `json:"boxId"`
	Name        string  `json:"name"`
	MacAddress  string  `json:"macAddress"`
	Band        string  `json:"frequencyBand"`
	Reason      string  `json:"reason"`
	Observation float64 `json:"observation"`
	Baseline    float64 `json:"baseline"`
	Threshold   float64 `json:"threshold"`
}

// PerfObsRow is the performance observation of a slot in one scope.
type PerfObsRow struct {
	LocationID int64
	Band       string
	SSID       string
	Slot       int64
	Performance
}

// Roaming (decisions on radio data): a client that joins another radio
// of the same SSID within RoamWindow of leaving, or last being heard on,
// the first has roamed. A roam is slow over SlowRoamFastMs with a fast
// transition and over SlowRoamMs without; suboptimal when the client is
// SuboptimalDropDB or more weaker after, or below CoverageRSSI.
const (
	RoamWindowMs     = 10_000
	SlowRoamFastMs   = 400
	SlowRoamMs       = 2_000
	SuboptimalDropDB = 6
	CoverageRSSI     = -72
	// BusyUtilizationPct: a radio whose channel is busy this share of the
	// time or more has no capacity to spare (the capacity service level).
	BusyUtilizationPct = 70.0
)
