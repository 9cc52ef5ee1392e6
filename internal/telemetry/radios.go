package telemetry

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// KindRadioStats is the ingest of AP radio samples (POST
// /ingest/radiostats).
const KindRadioStats = "radiostats"

// Limits of a radio sample.
const (
	MinNoise   = -130 // dBm
	MaxNoise   = 0
	MaxClients = 4096  // on one radio
	MaxTxPower = 40    // dBm
	MinTxPower = -10   // dBm
	maxUtilPct = 100.0 // %
)

// ParseRadioSample decodes and checks one ingested AP radio sample at
// time now.
func ParseRadioSample(raw []byte, now time.Time) (*wnms.RadioSample, error) {
	var in wnms.RadioSampleRecord
	if err := decodeRecord(raw, &in); err != nil {
		return nil, err
	}
	return checkRadioSample(&in, now)
}

// checkRadioSample checks an AP radio sample record at time now and
// makes the sample to place. The band is the channel's when the record
// gives a channel; a band that does not fit it is refused.
func checkRadioSample(in *wnms.RadioSampleRecord, now time.Time) (*wnms.RadioSample, error) {
	if in.BSSID == nil {
		return nil, wnms.Invalid("bssid", "required: the radio's BSSID")
	}
	bssid, ok := ParseMAC(*in.BSSID)
	if !ok {
		return nil, wnms.Invalid("bssid", "%q is not a BSSID (six hex octets separated by ':' or '-')", *in.BSSID)
	}
	if in.Timestamp == nil || *in.Timestamp <= 0 {
		return nil, wnms.Invalid("timestamp", "required: epoch milliseconds")
	}
	if time.UnixMilli(*in.Timestamp).After(now.Add(maxFutureSkew)) {
		return nil, wnms.Invalid("timestamp", "more than a day in the future")
	}
	r := &wnms.RadioSample{BSSID: bssid, Timestamp: *in.Timestamp}
	if in.Channel != nil {
		if err := checkChannel(*in.Channel, false); err != nil {
			return nil, err
		}
		r.Channel, r.Band = in.Channel, wnms.BandOf(*in.Channel)
	}
	if in.FrequencyBand != "" {
		b, err := checkEnum("frequencyBand", in.FrequencyBand, wnms.Band24GHz, wnms.Band5GHz)
		if err != nil {
			return nil, err
		}
		if r.Band != "" && b != r.Band {
			return nil, wnms.Invalid("frequencyBand", "channel %d is in %s, not %s", *in.Channel, r.Band, b)
		}
		r.Band = b
	}
	if in.UtilizationPct != nil {
		if u := *in.UtilizationPct; !(u >= 0 && u <= maxUtilPct) { // NaN fails both
			return nil, wnms.Invalid("utilizationPct", "must be 0 to 100")
		}
		r.Utilization = in.UtilizationPct
	}
	for _, f := range []struct {
		name     string
		v        *int
		min, max int
		unit     string
		to       **int
	}{{"noiseDbm", in.NoiseDBm, MinNoise, MaxNoise, " dBm", &r.Noise},
		{"clients", in.Clients, 0, MaxClients, "", &r.Clients},
		{"txPowerDbm", in.TxPowerDBm, MinTxPower, MaxTxPower, " dBm", &r.TxPower}} {
		if f.v == nil {
			continue
		}
		if *f.v < f.min || *f.v > f.max {
			return nil, wnms.Invalid(f.name, "must be %d to %d%s", f.min, f.max, f.unit)
		}
		*f.to = f.v
	}
	if r.Channel == nil && r.Utilization == nil && r.Noise == nil && r.Clients == nil && r.TxPower == nil {
		return nil, wnms.Invalid("utilizationPct", "the sample measures nothing: send channel, utilizationPct, noiseDbm, clients or txPowerDbm")
	}
	return r, nil
}

// IngestRadioStats stores the AP radio samples of an ingest body for the
// caller's customer. A sample takes the location of the AP whose radio
// its BSSID names, which the caller must see; a BSSID that is no known
// AP's radio is refused (register the AP and its radios first).
func (s *Service) IngestRadioStats(ctx context.Context, c *wnms.Caller, body []byte) (*Result, error) {
	recs, err := SplitRecords(body)
	if err != nil {
		return nil, err
	}
	return s.ingestRadioSamples(ctx, c, len(recs), func(i int, now time.Time) (*wnms.RadioSample, error) {
		return ParseRadioSample(recs[i], now)
	})
}

// IngestSourceRadioSamples stores the AP radio samples a data source
// (a poller) measured, for the caller (the source), through the same
// checks, writes and counts as an HTTP ingest.
func (s *Service) IngestSourceRadioSamples(ctx context.Context, c *wnms.Caller, recs []wnms.RadioSampleRecord) (*Result, error) {
	res, err := s.ingestRadioSamples(ctx, c, len(recs), func(i int, now time.Time) (*wnms.RadioSample, error) {
		return checkRadioSample(&recs[i], now)
	})
	if err != nil {
		return nil, err
	}
	s.count(KindRadioStats, res)
	return res, nil
}

// ingestRadioSamples stores n radio samples, the i-th made by check.
func (s *Service) ingestRadioSamples(ctx context.Context, c *wnms.Caller, n int, check func(i int, now time.Time) (*wnms.RadioSample, error)) (*Result, error) {
	res := &Result{Rejected: []Rejection{}}
	now := s.Now()
	parsed := make([]*wnms.RadioSample, n)
	var bssids []string
	named := map[string]bool{}
	for i := range n {
		r, err := check(i, now)
		if err != nil {
			res.reject(i, err)
			continue
		}
		parsed[i] = r
		if !named[r.BSSID] {
			named[r.BSSID] = true
			bssids = append(bssids, r.BSSID)
		}
	}
	radios, err := s.Store.RadiosByBSSID(ctx, c.CustomerID(), bssids)
	if err != nil {
		return nil, err
	}
	seen := map[int64]error{}
	var good []*wnms.RadioSample
	for i, r := range parsed {
		if r == nil {
			continue
		}
		ap, ok := radios[r.BSSID]
		if !ok {
			res.reject(i, wnms.Invalid("bssid", "%s is no radio of a known AP: register the AP with its radios (POST ingest/aps)", r.BSSID))
			continue
		}
		if err := s.sees(ctx, c, ap.LocationID, seen); err != nil {
			res.reject(i, err)
			continue
		}
		r.BoxID, r.LocationID = ap.BoxID, ap.LocationID
		good = append(good, r)
	}
	if len(good) > 0 {
		n, err := s.Store.InsertRadioStats(ctx, c.CustomerID(), good)
		if err != nil {
			return nil, err
		}
		res.Accepted, res.Duplicates = n, len(good)-n
		for _, r := range good {
			if k, ok := macKey(c.CustomerID(), r.BSSID); ok && r.Utilization != nil {
				s.utils.put(k, radioUtil{pct: *r.Utilization, ts: r.Timestamp})
			}
		}
	}
	slices.SortFunc(res.Rejected, func(a, b Rejection) int { return a.Index - b.Index })
	return res, nil
}

// RadioStatsQuery asks for an AP's radio samples in 5-minute buckets.
type RadioStatsQuery struct {
	BoxID    int64
	From, To int64
}

// RadioSeries is one radio's buckets, oldest first.
type RadioSeries struct {
	BSSID         string       `json:"bssid"`
	FrequencyBand *string      `json:"frequencyBand"`
	Samples       []RadioPoint `json:"samples"`
}

// RadioPoint is a radio's 5-minute bucket: the channel of its newest
// sample, the mean utilisation and noise, the most clients and the last
// transmit power (null where no sample of the bucket said).
type RadioPoint struct {
	Time           int64    `json:"time"`
	Channel        *int     `json:"channel"`
	UtilizationPct *float64 `json:"utilizationPct"`
	NoiseDBm       *float64 `json:"noiseDbm"`
	Clients        *int     `json:"clients"`
	TxPowerDBm     *int     `json:"txPowerDbm"`
}

// RadioStats is an AP's radios over a window.
type RadioStats struct {
	BoxID  int64         `json:"boxId"`
	Radios []RadioSeries `json:"radios"`
}

// RadioStats answers an AP's radio samples in 5-minute buckets, radio
// by radio (by BSSID); the AP must be one the caller sees.
func (s *Service) RadioStats(ctx context.Context, c *wnms.Caller, q RadioStatsQuery) (*RadioStats, error) {
	if err := s.seesAP(ctx, c, q.BoxID); err != nil {
		return nil, err
	}
	buckets, err := s.Store.RadioTrend(ctx, c.CustomerID(), q.BoxID, q.From, q.To)
	if err != nil {
		return nil, err
	}
	out := &RadioStats{BoxID: q.BoxID, Radios: []RadioSeries{}}
	for _, b := range buckets {
		if n := len(out.Radios); n == 0 || out.Radios[n-1].BSSID != b.BSSID {
			var band *string
			if b.Band != "" {
				band = &b.Band
			}
			out.Radios = append(out.Radios, RadioSeries{BSSID: b.BSSID, FrequencyBand: band, Samples: []RadioPoint{}})
		}
		r := &out.Radios[len(out.Radios)-1]
		r.Samples = append(r.Samples, RadioPoint{Time: b.Time, Channel: b.Channel, UtilizationPct: b.Utilization,
			NoiseDBm: b.Noise, Clients: b.Clients, TxPowerDBm: b.TxPower})
	}
	return out, nil
}

// A client sample counts for the capacity service level when its radio's
// utilisation is known: a radio sample of its BSSID that this process
// ingested within utilFresh of it (a poller sends the radio's before its
// clients'). Kept for at most maxRadioCache radios.
const utilFresh = 5 * 60 * 1000 // ms

// radioUtil is a radio's last utilisation, and when.
type radioUtil struct {
	pct float64
	ts  int64
}

type utilCache struct {
	mu sync.Mutex
	m  macMap[radioUtil]
}

func (u *utilCache) put(k boxKey, v radioUtil) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if cur, ok := u.m.get(k); ok && cur.ts > v.ts {
		return
	}
	u.m.put(k, v, maxRadioCache)
}

// busy says whether the sample's radio was busy when it was taken (nil:
// not known).
func (u *utilCache) busy(customer int64, x *wnms.Sample) *bool {
	k, ok := macKey(customer, x.BSSID)
	if !ok {
		return nil
	}
	u.mu.Lock()
	v, ok := u.m.get(k)
	u.mu.Unlock()
	if !ok || x.Timestamp-v.ts > utilFresh || v.ts-x.Timestamp > utilFresh {
		return nil
	}
	b := v.pct >= wnms.BusyUtilizationPct
	return &b
}
