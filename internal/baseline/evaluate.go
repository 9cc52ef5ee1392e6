package baseline

import (
	"context"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/wnms/wnms/internal/every"
	"github.com/wnms/wnms/internal/wnms"
)

// The anomaly kinds the evaluation records: one definition of an anomaly
// (the rule of Evaluate) for both.
const (
	KindConnectivity = "clientsconnectivity"
	KindPerformance  = "clientsperformance"
)

// refreshPerRun is how many marked slots one evaluation recomputes.
const refreshPerRun = 200

// evaluatePerRun is how many changed slots one evaluation looks at (four
// days): a large import is absorbed over a few runs, newest first.
const evaluatePerRun = 4 * SlotsPerDay

// announceWithin is how recent an anomaly's slot must be to be announced
// (trap, event stream) as well as recorded: late data of the last day is,
// an import of older history is listed without paging anyone for it.
const announceWithin = int64(24 * time.Hour / time.Millisecond)

// EvaluateEvery evaluates anomalies every period until ctx ends.
func (s *Service) EvaluateEvery(ctx context.Context, customers func(ctx context.Context) ([]int64, error), period time.Duration) {
	every.Period(ctx, period, func(ctx context.Context) {
		ids, err := customers(ctx)
		if err == nil {
			for _, id := range ids {
				if err = s.EvaluateCustomer(ctx, id); err != nil {
					break
				}
			}
		}
		if err != nil && ctx.Err() == nil && s.Log != nil {
			s.Log.Error("baseline evaluation failed", "err", err)
		}
	})
}

// EvaluateCustomer evaluates the connectivity and the performance (every
// SSID, band ANY) of each of the customer's floors for the closed slots
// whose observations were stored since it last looked at them (the store
// marks each slot it stores: new data, late data, imported history), at
// most evaluatePerRun of them, newest first, records what is anomalous,
// and announces each anomaly this call recorded (another replica's are
// its own to announce) when its slot is of the last day.
//
// A recorded anomaly stays as it was announced: a slot whose data changed
// is evaluated again, and an anomaly it no longer shows (data corrected)
// is not taken back, nor is one it still shows recorded again.
//
// Once no closed slot is left to recompute or evaluate, the newest closed
// slot becomes the customer's EvaluatedThrough.
func (s *Service) EvaluateCustomer(ctx context.Context, customerID int64) error {
	_, err := s.evaluate(ctx, customerID)
	return err
}

// evaluate is EvaluateCustomer, answering whether closed slots are left
// for a later run.
func (s *Service) evaluate(ctx context.Context, customerID int64) (left bool, err error) {
	s.evaluating.Lock()
	defer s.evaluating.Unlock()
	if err := s.Store.FlushDerived(ctx); err != nil {
		return false, err
	}
	// Catch up on marked slots a bounded number at a time, newest first,
	// so that a large import is absorbed over a few minutes without one
	// long transaction; reads refresh what they need themselves.
	if err := s.Refresh(ctx, customerID, 0, math.MaxInt64, refreshPerRun); err != nil {
		return false, err
	}
	now := s.Now().UnixMilli()
	newest := wnms.SlotOf(now) - slotMs // the last closed slot
	pending, err := s.Store.PendingAnomalySlots(ctx, customerID, newest, evaluatePerRun)
	if err != nil {
		return false, err
	}
	if len(pending) > 0 {
		locs, err := s.Store.Locations(ctx, customerID)
		if err != nil {
			return false, err
		}
		for _, l := range locs {
			if l.Type != wnms.FloorLocation || (l.CustomerID != customerID && l.CustomerID != 0) {
				continue
			}
			if err := s.evaluateFloor(ctx, customerID, l, pending, now); err != nil {
				return false, err
			}
		}
		if err := s.Store.ClearPendingAnomalySlots(ctx, customerID, pending); err != nil {
			return false, err
		}
	}
	// Done when nothing closed is left to recompute or to look at.
	dirty, err := s.Store.DirtySlots(ctx, customerID, 0, newest, 1)
	if err != nil || len(dirty) > 0 {
		return len(dirty) > 0, err
	}
	rest, err := s.Store.PendingAnomalySlots(ctx, customerID, newest, 1)
	if err != nil || len(rest) > 0 {
		return len(rest) > 0, err
	}
	key := evaluatedKey(customerID)
	if v, ok, err := s.Store.Setting(ctx, key); err != nil {
		return false, err
	} else if last, perr := strconv.ParseInt(v, 10, 64); ok && perr == nil && last >= newest {
		return false, nil
	}
	return false, s.Store.PutSetting(ctx, key, strconv.FormatInt(newest, 10))
}

// evaluateFloor evaluates the floor's connectivity and performance for
// the slots of pending, a day's span of them at a time.
func (s *Service) evaluateFloor(ctx context.Context, customerID int64, l *wnms.Location, pending []wnms.DirtySlot, now int64) error {
	slots := make([]int64, len(pending))
	for i, d := range pending {
		slots[i] = d.Slot
	}
	slices.Sort(slots)
	for start := 0; start < len(slots); {
		end := start
		for end+1 < len(slots) && slots[end+1]-slots[start] < SlotsPerDay*slotMs {
			end++
		}
		from, to := slots[start], slots[end]
		want := slots[start : end+1]
		start = end + 1

		conn, err := s.Connectivity(ctx, customerID, l, wnms.BandAny, "", from, to)
		if err != nil {
			return err
		}
		for _, p := range conn {
			if p.Anomalous && p.Baseline != nil && slices.Contains(want, p.Timestamp) {
				a := wnms.Anomaly{CustomerID: customerID, LocationID: l.ID.ID, Kind: KindConnectivity, Slot: p.Timestamp,
					Observation: p.Observation, Baseline: *p.Baseline, Threshold: *p.Threshold,
					Affected: p.AbsoluteObservation, Attempting: p.NoOfSamplesForObservation}
				if err := s.record(ctx, a, l, now); err != nil {
					return err
				}
			}
		}
		perf, err := s.Performance(ctx, customerID, l, wnms.BandAny, "", "", from, to)
		if err != nil {
			return err
		}
		for _, p := range perf {
			if p.Anomalous && p.Baseline != nil && p.Threshold != nil && slices.Contains(want, p.Timestamp) {
				a := wnms.Anomaly{CustomerID: customerID, LocationID: l.ID.ID, Kind: KindPerformance, Slot: p.Timestamp,
					Observation: p.Observation, Baseline: *p.Baseline, Threshold: float64(*p.Threshold),
					Affected: p.AbsoluteObservation, Attempting: p.NoOfSamplesForObservation, AP: p.AP}
				if err := s.record(ctx, a, l, now); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// record records an anomaly once across replicas and announces it when
// this call recorded it and its slot is recent.
func (s *Service) record(ctx context.Context, a wnms.Anomaly, l *wnms.Location, now int64) error {
	a.RaisedAt = now
	inserted, err := s.Store.RecordAnomaly(ctx, a)
	if err != nil {
		return err
	}
	if inserted && s.OnAnomaly != nil && a.Slot >= now-announceWithin {
		path, _ := s.Store.LocationNamePath(ctx, l.ID.ID)
		s.OnAnomaly(a, path)
	}
	return nil
}

// EvaluateUntilDone runs the customer's evaluation until no closed slot
// is left to recompute or evaluate, at most runs times: what a freshly
// imported history needs before its anomalies are all listed.
func (s *Service) EvaluateUntilDone(ctx context.Context, customerID int64, runs int) error {
	for range runs {
		left, err := s.evaluate(ctx, customerID)
		if err != nil || !left {
			return err
		}
	}
	return nil
}

func evaluatedKey(customerID int64) string {
	return "anomaly_evaluated_slot:" + strconv.FormatInt(customerID, 10)
}

// EvaluatedThrough is the newest closed slot (Unix ms) the customer's
// evaluation has covered: every slot at or before it has been evaluated,
// with all data that had arrived before that evaluation ran, late data
// and imported history included. 0 when the customer has not been
// evaluated to the end yet.
func (s *Service) EvaluatedThrough(ctx context.Context, customerID int64) (int64, error) {
	v, ok, err := s.Store.Setting(ctx, evaluatedKey(customerID))
	if err != nil || !ok {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, nil // not written by the evaluation: as if never evaluated
	}
	return n, nil
}
