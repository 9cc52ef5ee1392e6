package baseline

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/wnms/wnms/internal/every"
	"github.com/wnms/wnms/internal/wnms"
)

// KindConnectivity is the anomaly kind the evaluation records.
const KindConnectivity = "clientsconnectivity"

// refreshPerRun is how many marked slots one evaluation recomputes.
const refreshPerRun = 200

// maxCatchUp bounds how many closed slots one evaluation looks back at
// (4 hours: a server that was down a day does not flood receivers on
// start).
const maxCatchUp = 16

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

// EvaluateCustomer evaluates the connectivity (every SSID, band ANY) of
// each of the customer's floors for every slot closed since the last
// evaluation, records what is anomalous, and announces each anomaly this
// call recorded (another replica's are its own to announce).
func (s *Service) EvaluateCustomer(ctx context.Context, customerID int64) error {
	s.evaluating.Lock()
	defer s.evaluating.Unlock()
	// Catch up on marked slots a bounded number at a time, newest first,
	// so that a large import is absorbed over a few minutes without one
	// long transaction; reads refresh what they need themselves.
	if err := s.Refresh(ctx, customerID, 0, math.MaxInt64, refreshPerRun); err != nil {
		return err
	}
	newest := SlotOf(s.Now().UnixMilli()) - slotMs // the last closed slot
	key := evaluatedKey(customerID)
	first := newest
	if v, ok, err := s.Store.Setting(ctx, key); err != nil {
		return err
	} else if ok {
		last, _ := strconv.ParseInt(v, 10, 64)
		first = max(last+slotMs, newest-(maxCatchUp-1)*slotMs)
	}
	if first > newest {
		return nil
	}
	locs, err := s.Store.Locations(ctx, customerID)
	if err != nil {
		return err
	}
	for _, l := range locs {
		if l.Type != wnms.FloorLocation || (l.CustomerID != customerID && l.CustomerID != 0) {
			continue
		}
		points, err := s.Connectivity(ctx, customerID, l, wnms.BandAny, "", first, newest)
		if err != nil {
			return err
		}
		for _, p := range points {
			if !p.Anomalous {
				continue
			}
			a := Anomaly{CustomerID: customerID, LocationID: l.ID.ID, Kind: KindConnectivity, Slot: p.Timestamp,
				Observation: p.Observation, Baseline: *p.Baseline, Threshold: *p.Threshold, RaisedAt: s.Now().UnixMilli()}
			inserted, err := s.Store.RecordAnomaly(ctx, a)
			if err != nil {
				return err
			}
			if inserted && s.OnAnomaly != nil {
				path, _ := s.Store.LocationNamePath(ctx, l.ID.ID)
				s.OnAnomaly(a, path)
			}
		}
	}
	return s.Store.PutSetting(ctx, key, strconv.FormatInt(newest, 10))
}

func evaluatedKey(customerID int64) string {
	return "anomaly_evaluated_slot:" + strconv.FormatInt(customerID, 10)
}

// EvaluateSince makes the customer's next evaluation look back to the
// slot of since (at most the last 16 closed slots), as if nothing after
// it had been evaluated: history that was just imported gets its
// anomalies recorded. It never moves the evaluation forward.
func (s *Service) EvaluateSince(ctx context.Context, customerID int64, since time.Time) error {
	s.evaluating.Lock()
	defer s.evaluating.Unlock()
	last := SlotOf(since.UnixMilli()) - slotMs
	if v, ok, err := s.Store.Setting(ctx, evaluatedKey(customerID)); err != nil {
		return err
	} else if ok {
		if cur, err := strconv.ParseInt(v, 10, 64); err == nil && cur <= last {
			return nil
		}
	}
	return s.Store.PutSetting(ctx, evaluatedKey(customerID), strconv.FormatInt(last, 10))
}

// EvaluatedThrough is the start (Unix ms) of the newest closed slot the
// customer's evaluation has covered, 0 before its first evaluation.
func (s *Service) EvaluatedThrough(ctx context.Context, customerID int64) (int64, error) {
	v, ok, err := s.Store.Setting(ctx, evaluatedKey(customerID))
	if err != nil || !ok {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, nil
	}
	return n, nil
}
