package telemetry

import (
	"context"
	"runtime"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// The kinds of ingest call: the last segment of POST /ingest/{kind}.
const (
	KindAPs    = "aps"
	KindEvents = "clientevents"
	KindStats  = "clientstats"
	// KindTrafficStats counts the samples of data sources that may carry
	// traffic only (RADIUS accounting's); no HTTP call takes them.
	KindTrafficStats = "trafficstats"
)

// MaxLogBundle is the largest connection log bundle an ingest may attach.
const MaxLogBundle = MaxIngestBody

// Ingest stores the records of body, of kind, for the caller, and counts
// the result by kind.
func (s *Service) Ingest(ctx context.Context, c *wnms.Caller, kind string, body []byte) (*Result, error) {
	var store func(context.Context, *wnms.Caller, []byte) (*Result, error)
	switch kind {
	case KindAPs:
		store = s.IngestAPs
	case KindEvents:
		store = s.IngestEvents
	case KindStats:
		store = s.IngestStats
	case KindRadioStats:
		store = s.IngestRadioStats
	default:
		return nil, wnms.NotFound("no ingest of %q", kind)
	}
	res, err := store(ctx, c, body)
	if err != nil {
		return nil, err
	}
	s.count(kind, res)
	return res, nil
}

// IngestSourceEvents stores the client events a data source (RADIUS,
// syslog) observed, for the caller (the source: wnms.SourceCaller),
// through the same checks, writes and counts as an HTTP ingest. Unlike
// one, an event may name no BSSID and no channel (0: not known), and one
// whose BSSID is no known AP's radio is placed at location at, the
// source's, instead of the unknown location.
func (s *Service) IngestSourceEvents(ctx context.Context, c *wnms.Caller, recs []wnms.EventRecord, at int64) (*Result, error) {
	res, err := s.ingestEvents(ctx, c, len(recs), func(i int, now time.Time) (*Event, error) {
		return checkEvent(&recs[i], now, true)
	}, at)
	if err != nil {
		return nil, err
	}
	s.count(KindEvents, res)
	return res, nil
}

// IngestSourceSamples is IngestSourceEvents for client samples, which
// may carry traffic only (txBytes, rxBytes) and no radio metrics, as
// RADIUS accounting reports a client.
func (s *Service) IngestSourceSamples(ctx context.Context, c *wnms.Caller, recs []wnms.SampleRecord, at int64) (*Result, error) {
	res, err := s.ingestSamples(ctx, c, len(recs), func(i int, now time.Time) (*wnms.Sample, error) {
		return checkSample(recs[i], now, true)
	}, at)
	if err != nil {
		return nil, err
	}
	s.count(KindTrafficStats, res)
	return res, nil
}

// DefaultIngestTurns is how many ingest batches are worked on at once by
// default: one per core, at least two (one parsed while another writes).
func DefaultIngestTurns() int { return max(2, runtime.GOMAXPROCS(0)) }

// Admit waits for an ingest batch's turn (until ctx ends) and returns the
// function that ends it. Batches take turns: a few at a time are read,
// checked and written, the others wait (first come, first served) with
// their bodies still unread. So fifty senders share the engine's rate
// instead of dividing it among fifty half-parsed batches fighting for one
// writer, and memory holds a few bodies, not fifty.
func (s *Service) Admit(ctx context.Context) (func(), error) {
	s.turnsOnce.Do(func() {
		n := s.IngestTurns
		if n <= 0 {
			n = DefaultIngestTurns()
		}
		s.turns = make(chan struct{}, n)
	})
	select {
	case s.turns <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	n := s.inFlight.Add(1)
	for {
		peak := s.peakInFlight.Load()
		if n <= peak || s.peakInFlight.CompareAndSwap(peak, n) {
			break
		}
	}
	return func() { s.inFlight.Add(-1); <-s.turns }, nil
}

// PeakIngestInFlight is the most ingest batches that were ever worked on
// at once.
func (s *Service) PeakIngestInFlight() int64 { return s.peakInFlight.Load() }

// PutBundle keeps a connection log bundle in the store for failure events
// to name by the key it returns. It is the caller's customer's, and purged
// with telemetry.
func (s *Service) PutBundle(ctx context.Context, c *wnms.Caller, data []byte) (string, error) {
	f := &wnms.File{Key: newFileKey(), CustomerID: c.CustomerID(), UserID: c.User.UserID,
		Kind: wnms.FileBundle, LocationID: wnms.RootLocation, ContentType: "application/octet-stream", Data: data}
	if err := s.Store.PutExport(ctx, f); err != nil {
		return "", err
	}
	return f.Key, nil
}
