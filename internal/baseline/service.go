package baseline

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// Store is what baselines need of the store.
type Store interface {
	DirtyCustomers(ctx context.Context) ([]int64, error)
	DirtySlots(ctx context.Context, customerID int64) ([]DirtySlot, error)
	SlotAttempts(ctx context.Context, customerID, slot int64) ([]ScopedAttempt, error)
	ReplaceConnObs(ctx context.Context, customerID, slot int64, obs []ConnObsRow, version int64) error
	ConnObs(ctx context.Context, customerID, locationID int64, band, ssid string, from, to int64) (map[int64]Connectivity, error)
	RecordAnomaly(ctx context.Context, a Anomaly) (bool, error)
	Anomalies(ctx context.Context, customerID int64, locations []int64, from, to int64) ([]Anomaly, error)
	Location(ctx context.Context, id int64) (*wnms.Location, error)
	Locations(ctx context.Context, customerID int64) ([]*wnms.Location, error)
	LocationPaths(ctx context.Context, ids []int64) (map[int64]string, error)
	LocationNamePath(ctx context.Context, id int64) (string, error)
	Setting(ctx context.Context, name string) (string, bool, error)
	PutSetting(ctx context.Context, name, value string) error
}

// Service computes observations, answers the baseline calls, and
// evaluates anomalies.
type Service struct {
	Store Store
	Now   func() time.Time
	Log   *slog.Logger
	// K and MinSamples are --baseline-k and --baseline-min-samples.
	K          float64
	MinSamples int
	// OnAnomaly is where a recorded anomaly is announced (once, on the
	// replica that recorded it): the SNMP trap wnmsBaselineAnomaly. It must
	// not block.
	OnAnomaly func(a Anomaly, locationPath string)
}

// NewService returns a Service with the default k and minimum samples.
func NewService(st Store, log *slog.Logger) *Service {
	return &Service{Store: st, Now: time.Now, Log: log, K: DefaultK, MinSamples: DefaultMinSamples}
}

// Refresh recomputes the customer's out-of-date slots.
func (s *Service) Refresh(ctx context.Context, customerID int64) error {
	dirty, err := s.Store.DirtySlots(ctx, customerID)
	if err != nil || len(dirty) == 0 {
		return err
	}
	ancestors := map[int64][]int64{}
	for _, d := range dirty {
		attempts, err := s.Store.SlotAttempts(ctx, customerID, d.Slot)
		if err != nil {
			return err
		}
		if err := s.ancestorsOf(ctx, attempts, ancestors); err != nil {
			return err
		}
		if err := s.Store.ReplaceConnObs(ctx, customerID, d.Slot, scopeObservations(d.Slot, attempts, ancestors), d.Version); err != nil {
			return err
		}
	}
	return nil
}

// ancestorsOf fills, for every location of attempts not yet known, the
// location and every folder above it.
func (s *Service) ancestorsOf(ctx context.Context, attempts []ScopedAttempt, known map[int64][]int64) error {
	var ids []int64
	seen := map[int64]bool{}
	for _, a := range attempts {
		if _, ok := known[a.LocationID]; !ok && !seen[a.LocationID] {
			seen[a.LocationID] = true
			ids = append(ids, a.LocationID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	paths, err := s.Store.LocationPaths(ctx, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		var chain []int64
		for _, part := range strings.Split(strings.Trim(paths[id], "/"), "/") {
			if n, err := strconv.ParseInt(part, 10, 64); err == nil {
				chain = append(chain, n)
			}
		}
		if len(chain) == 0 {
			chain = []int64{id}
		}
		known[id] = chain
	}
	return nil
}

// scopeObservations computes the observation of every scope the slot's
// attempts touch: each location on the path of an attempt, each with the
// attempt's band and ANY, its SSID and all SSIDs.
func scopeObservations(slot int64, attempts []ScopedAttempt, ancestors map[int64][]int64) []ConnObsRow {
	type scope struct {
		loc        int64
		band, ssid string
	}
	by := map[scope][]ConnAttempt{}
	for _, a := range attempts {
		for _, loc := range ancestors[a.LocationID] {
			for _, band := range []string{BandAny, a.Band} {
				for _, ssid := range []string{"", a.SSID} {
					k := scope{loc, band, ssid}
					by[k] = append(by[k], a.ConnAttempt)
				}
			}
		}
	}
	out := make([]ConnObsRow, 0, len(by))
	for k, as := range by {
		out = append(out, ConnObsRow{LocationID: k.loc, Band: k.band, SSID: k.ssid, Slot: slot, Connectivity: ObserveConnectivity(as)})
	}
	return out
}

// ConnPoint is a connectivity data point.
type ConnPoint struct {
	Type                                string   `json:"type"`
	Baseline                            *float64 `json:"baseline"`
	StandardDeviation                   *float64 `json:"standardDeviation"`
	Anomalous                           bool     `json:"anomalous"`
	Timestamp                           int64    `json:"timestamp"`
	Observation                         float64  `json:"observation"`
	AbsoluteObservation                 int      `json:"absoluteObservation"`
	NoOfSamplesForObservation           int      `json:"noOfSamplesForObservation"`
	Threshold                           *float64 `json:"threshold"`
	PercentageClientsAuthFailure        float64  `json:"percentageClientsAuthFailure"`
	NoClientsAuthFailure                int      `json:"noClientsAuthFailure"`
	PercentageClientsNetworkFailure     float64  `json:"percentageClientsNetworkFailure"`
	NoClientsNetworkFailure             int      `json:"noClientsNetworkFailure"`
	PercentageClientsAssociationFailure float64  `json:"percentageClientsAssociationFailure"`
	NoClientsAssociationFailure         int      `json:"noClientsAssociationFailure"`
}

// history spans: the window's slots need 14 days of same-slot history
// and the 96 slots before.
const historySpan = int64(HistoryDays*24*time.Hour/time.Millisecond) + int64(time.Hour/time.Millisecond)

// Connectivity answers the connectivity data points of a scope for the
// slots in [from, to], oldest first.
func (s *Service) Connectivity(ctx context.Context, customerID int64, l *wnms.Location, band, ssid string, from, to int64) ([]ConnPoint, error) {
	if err := s.Refresh(ctx, customerID); err != nil {
		return nil, err
	}
	obs, err := s.Store.ConnObs(ctx, customerID, l.ID.ID, band, ssid, from-historySpan, to)
	if err != nil {
		return nil, err
	}
	loc := locationZone(l)
	hist := func(slot int64) Obs {
		c, ok := obs[slot]
		if !ok {
			return Obs{}
		}
		return Obs{Value: c.Observation, Samples: c.Attempting}
	}
	p := Params{K: s.K, MinSamples: s.MinSamples, Direction: HigherIsWorse}
	out := []ConnPoint{}
	for _, slot := range Slots(from, to) {
		c := obs[slot]
		r := Evaluate(slot, Obs{Value: c.Observation, Samples: c.Attempting}, loc, hist, p)
		out = append(out, ConnPoint{Type: "clientsconnectivity", Baseline: r.Baseline, StandardDeviation: r.StdDev,
			Anomalous: r.Anomalous, Timestamp: slot, Observation: c.Observation, AbsoluteObservation: c.Failing,
			NoOfSamplesForObservation: c.Attempting, Threshold: r.Threshold,
			PercentageClientsAuthFailure: c.PctAuthentication, NoClientsAuthFailure: c.Authentication,
			PercentageClientsNetworkFailure: c.PctNetwork, NoClientsNetworkFailure: c.Network,
			PercentageClientsAssociationFailure: c.PctAssociation, NoClientsAssociationFailure: c.Association})
	}
	return out, nil
}

// locationZone is the location's time zone (UTC when unset or unknown).
func locationZone(l *wnms.Location) *time.Location {
	if l.TimezoneID != "" {
		if z, err := time.LoadLocation(l.TimezoneID); err == nil {
			return z
		}
	}
	return time.UTC
}
