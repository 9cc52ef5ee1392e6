package telemetry

import (
	"encoding/json"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// Limits of a sample.
const (
	MaxObservedBy = 32
	MinRSSI       = -120
	MaxDataRate   = 100_000 // Mbps
	// A client's SNR (dB): its signal over the noise floor; below 0 is a
	// signal under the noise, which a radio can still decode briefly.
	MinSNR = -20
	MaxSNR = 100
)

// ParseSample decodes and checks one ingested client statistics sample
// at time now.
func ParseSample(raw json.RawMessage, now time.Time) (*wnms.Sample, error) {
	return parseSample(raw, now, false)
}

func parseSample(raw json.RawMessage, now time.Time, trafficOnly bool) (*wnms.Sample, error) {
	var in wnms.SampleRecord
	if err := decodeRecord(raw, &in); err != nil {
		return nil, err
	}
	return checkSample(in, now, trafficOnly)
}

// checkSample checks a client statistics sample record at time now and
// makes the sample to store. A data source's sample (trafficOnly) may
// carry traffic only (txBytes or rxBytes) and no radio metrics at all, as
// RADIUS accounting reports a client.
func checkSample(in wnms.SampleRecord, now time.Time, trafficOnly bool) (*wnms.Sample, error) {
	// Traffic-only samples come from RADIUS accounting, which may not
	// say where the client is (see checkEvent).
	mac, bssid, ts, err := parseSubject(in.MacAddress, in.BSSID, in.Timestamp, now, trafficOnly)
	if err != nil {
		return nil, err
	}
	if err := checkChannel(in.Channel, trafficOnly); err != nil {
		return nil, err
	}
	if in.FrequencyBand != "" {
		b, err := checkEnum("frequencyBand", in.FrequencyBand, wnms.Band24GHz, wnms.Band5GHz)
		if err != nil {
			return nil, err
		}
		if in.Channel != 0 && b != wnms.BandOf(in.Channel) {
			return nil, wnms.Invalid("frequencyBand", "channel %d is in %s, not %s", in.Channel, wnms.BandOf(in.Channel), b)
		}
	}
	if err := wnms.CheckOctets("ssid", in.SSID, 0, MaxSSIDLen); err != nil {
		return nil, err
	}
	s := &wnms.Sample{MacAddress: mac, Timestamp: ts, BSSID: bssid, SSID: in.SSID, Channel: in.Channel,
		BestNeighbor: in.BestNeighborRSSI, TxBytes: in.TxBytes, RxBytes: in.RxBytes,
		ClientName: in.ClientName, Username: in.Username}
	if trafficOnly && in.RSSI == nil && in.DataRateMbps == nil && in.RetryRatePct == nil {
		if in.TxBytes == nil && in.RxBytes == nil {
			return nil, wnms.Invalid("txBytes", "required without radio metrics")
		}
		s.NoRadio = true
		in.RSSI, in.DataRateMbps = new(int), new(float64) // checked as zeros, stored as NULL
	}
	if in.RSSI == nil {
		return nil, wnms.Invalid("rssi", "required (dBm)")
	}
	s.RSSI = *in.RSSI
	for _, r := range []struct {
		name string
		v    *int
	}{{"rssi", in.RSSI}, {"bestNeighborRssi", in.BestNeighborRSSI}} {
		if r.v != nil && (*r.v < MinRSSI || *r.v > 0) {
			return nil, wnms.Invalid(r.name, "must be %d to 0 dBm", MinRSSI)
		}
	}
	if in.SNR != nil {
		if *in.SNR < MinSNR || *in.SNR > MaxSNR {
			return nil, wnms.Invalid("snr", "must be %d to %d dB", MinSNR, MaxSNR)
		}
		if !s.NoRadio {
			s.SNR = in.SNR
		}
	}
	if in.DataRateMbps == nil {
		return nil, wnms.Invalid("dataRateMbps", "required")
	}
	if s.DataRateMbps = *in.DataRateMbps; s.DataRateMbps < 0 || s.DataRateMbps > MaxDataRate {
		return nil, wnms.Invalid("dataRateMbps", "must be 0 to %d", MaxDataRate)
	}
	if in.RetryRatePct != nil {
		if s.RetryRatePct = *in.RetryRatePct; s.RetryRatePct < 0 || s.RetryRatePct > 100 {
			return nil, wnms.Invalid("retryRatePct", "must be 0 to 100")
		}
	}
	for _, b := range []struct {
		name string
		v    *int64
	}{{"txBytes", in.TxBytes}, {"rxBytes", in.RxBytes}} {
		if b.v != nil && *b.v < 0 {
			return nil, wnms.Invalid(b.name, "must not be negative")
		}
	}
	if len(in.ObservedBy) > MaxObservedBy {
		return nil, wnms.Invalid("observedBy", "at most %d observations", MaxObservedBy)
	}
	for i, o := range in.ObservedBy {
		b, ok := ParseMAC(o.BSSID)
		if !ok {
			return nil, wnms.Invalid("observedBy", "observation %d: %q is not a BSSID", i, o.BSSID)
		}
		if o.RSSI < MinRSSI || o.RSSI > 0 {
			return nil, wnms.Invalid("observedBy", "observation %d: rssi must be %d to 0 dBm", i, MinRSSI)
		}
		s.ObservedBy = append(s.ObservedBy, wnms.Observation{BSSID: b, RSSI: o.RSSI})
	}
	for _, f := range []struct{ name, v string }{{"clientName", in.ClientName}, {"username", in.Username}} {
		if err := wnms.CheckText(f.name, f.v, 0, MaxEventText); err != nil {
			return nil, err
		}
	}
	if s.ObservedBy != nil {
		s.ObservedByJSON, _ = json.Marshal(s.ObservedBy)
	}
	return s, nil
}

// ClientProperties are what the filter language may test on clients.
var ClientProperties = Properties{
	"boxid": wnms.FilterNumber, "macaddress": wnms.FilterText, "name": wnms.FilterText, "username": wnms.FilterText, "ssid": wnms.FilterText,
	"frequencyband": wnms.FilterText, "troubleshootingstatus": wnms.FilterNumber, "apboxid": wnms.FilterNumber,
}
