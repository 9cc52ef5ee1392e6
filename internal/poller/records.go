package poller

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// placeable reports whether wnms can place a radio: a channel and a band
// it knows (2.4 or 5 GHz; a 6 GHz radio's channel numbers repeat the
// 2.4 GHz ones, so such radios are left out).
func placeable(r Radio) bool {
	if r.Channel < 1 || r.Channel > telemetry.MaxChannel || r.BSSID == "" {
		return false
	}
	return r.FrequencyMHz == 0 || r.FrequencyMHz < 5925
}

// ingest stores one observation at now: the AP's heartbeat with its
// radios, the radios' samples and the clients' samples.
func (r *run) ingest(ctx context.Context, obs *Observation, now time.Time) error {
	var radios []Radio
	for _, x := range obs.Radios {
		if placeable(x) {
			radios = append(radios, x)
		}
	}
	if len(radios) == 0 {
		return errNoRadio
	}
	slices.SortFunc(radios, func(a, b Radio) int { return cmp.Compare(a.BSSID, b.BSSID) })
	byBSSID := map[string]Radio{}
	for _, x := range radios {
		byBSSID[x.BSSID] = x
	}
	ts := now.UnixMilli()

	// The AP, with its radios: its heartbeat.
	mac := obs.AP.MAC
	if mac == "" {
		mac = radios[0].BSSID
	}
	ap := telemetry.APInput{MacAddress: &mac, Name: &r.cfg.Name, Model: obs.AP.Model, SoftwareVersion: obs.AP.Software,
		VendorName: "OpenWrt"}
	if obs.AP.Name != "" {
		ap.Name = &obs.AP.Name
	}
	total := 0
	for _, x := range radios {
		n := 0
		for _, s := range obs.Stations {
			if s.BSSID == x.BSSID {
				n++
			}
		}
		total += n
		ap.Radios = append(ap.Radios, telemetry.RadioInput{MacAddress: wnms.Ptr(x.BSSID), Channel: x.Channel, SSID: x.SSID, NumAssocClients: n})
	}
	ap.NumAssocClients = &total
	res, err := r.m.Ingest.IngestSourceAPs(ctx, r.caller, []telemetry.APInput{ap}, r.cfg.LocationID.ID)
	if err != nil {
		return err
	}
	if len(res.Rejected) > 0 {
		// Without its AP, no record of the poll can be placed.
		return wnms.Errorf(wnms.ValidationFailed, "the AP was refused: %s", res.Rejected[0].Message)
	}

	// The radios' samples.
	rs := make([]wnms.RadioSampleRecord, 0, len(radios))
	for _, x := range radios {
		rec := wnms.RadioSampleRecord{BSSID: wnms.Ptr(x.BSSID), Timestamp: &ts, Channel: wnms.Ptr(x.Channel),
			UtilizationPct: x.Utilization, NoiseDBm: x.NoiseDBm, TxPowerDBm: x.TxPowerDBm, Clients: x.Clients}
		if rec.Clients == nil {
			n := 0
			for _, s := range obs.Stations {
				if s.BSSID == x.BSSID {
					n++
				}
			}
			rec.Clients = &n
		}
		rs = append(rs, rec)
	}
	res, err = r.m.Ingest.IngestSourceRadioSamples(ctx, r.caller, rs)
	if err != nil {
		return err
	}
	r.count("radio", res)

	// The clients' samples.
	stations := obs.Stations
	if len(stations) > maxStations {
		stations = stations[:maxStations]
	}
	seen := make(map[string]counters, len(stations))
	var samples []wnms.SampleRecord
	var heard []polled
	_, follows := r.driver.(Follower)
	r.mu.Lock()
	prev := r.counters
	r.mu.Unlock()
	for _, s := range stations {
		x, ok := byBSSID[s.BSSID]
		if !ok {
			continue
		}
		var rssi *int // the station's signal, if it is one wnms takes
		if s.SignalDBm != nil && *s.SignalDBm >= telemetry.MinRSSI && *s.SignalDBm <= 0 {
			rssi = s.SignalDBm
		}
		if !follows {
			heard = append(heard, polled{mac: s.MAC, bssid: s.BSSID, ssid: x.SSID, channel: x.Channel, rssi: rssi,
				inactiveMs: s.InactiveMs, connectedSeconds: s.ConnectedSeconds})
		}
		rec := wnms.SampleRecord{MacAddress: wnms.Ptr(s.MAC), Timestamp: &ts, BSSID: wnms.Ptr(s.BSSID), SSID: x.SSID, Channel: x.Channel}
		// The client's bytes since the last poll: what the AP received is
		// what the client sent. A counter that went back (the client
		// associated again) counts from zero.
		key := s.MAC + "/" + s.BSSID
		if s.RxBytes != nil && s.TxBytes != nil {
			seen[key] = counters{rx: *s.RxBytes, tx: *s.TxBytes}
			if p, ok := prev[key]; ok {
				rec.TxBytes, rec.RxBytes = delta(*s.RxBytes, p.rx), delta(*s.TxBytes, p.tx)
			}
		}
		if rssi != nil {
			rec.RSSI = rssi
			if x.NoiseDBm != nil && *x.NoiseDBm < *rssi+telemetry.MaxSNR {
				snr := min(*rssi-*x.NoiseDBm, telemetry.MaxSNR)
				if snr >= telemetry.MinSNR {
					rec.SNR = &snr
				}
			}
			rec.DataRateMbps = cmp.Or(s.TxRateMbps, s.RxRateMbps)
		}
		if rec.RSSI == nil || rec.DataRateMbps == nil {
			// No radio metrics: the sample carries the client's traffic
			// only, if the AP counted it.
			rec.RSSI, rec.SNR, rec.DataRateMbps = nil, nil, nil
			if rec.TxBytes == nil {
				continue
			}
		}
		samples = append(samples, rec)
	}
	r.mu.Lock()
	r.counters = seen
	r.lastPoll, r.radios, r.stations = now, len(radios), len(stations)
	r.mu.Unlock()
	if len(samples) > 0 {
		res, err = r.m.Ingest.IngestSourceSamples(ctx, r.caller, samples, r.cfg.LocationID.ID)
		if err != nil {
			return err
		}
		r.count("client", res)
	}
	// Roams, for an AP whose events the server does not follow: after the
	// samples, so that the roam's client has its new radio already.
	if roams := r.m.roams.observe(r.customer, ts, heard); len(roams) > 0 {
		res, err = r.m.Ingest.IngestSourceEvents(ctx, r.caller, roams, r.cfg.LocationID.ID)
		if err != nil {
			return err
		}
		r.count("roam", res)
	}
	return nil
}

// delta is a counter's growth since prev (the counter itself when it
// went back: it restarted).
func delta(cur, prev uint64) *int64 {
	d := cur
	if cur >= prev {
		d = cur - prev
	}
	if d > math.MaxInt64 {
		return nil
	}
	v := int64(d)
	return &v
}
