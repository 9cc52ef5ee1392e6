package telemetry

import (
	"encoding/json"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// ActiveWindow is how recently a client must have been seen to be active,
// and how far back its observers are looked for.
const ActiveWindow = 15 * time.Minute

// Limits of a sample.
const (
	MaxObservedBy = 32
	MinRSSI       = -120
	MaxDataRate   = 100_000 // Mbps
)

// Observation is an AP radio that heard a client, and how strongly.
type Observation struct {
	BSSID string `json:"bssid"`
	RSSI  int    `json:"rssi"`
}

// Sample is a checked client statistics sample.
type Sample struct {
	MacAddress   string
	Timestamp    int64
	BSSID        string
	SSID         string
	Channel      int
	RSSI         int
	DataRateMbps float64
	RetryRatePct float64
	// NoRadio: the sample has no radio metrics (RSSI, data rate and retry
	// rate are unknown, not zero), only traffic: RADIUS accounting's.
	NoRadio        bool
	BestNeighbor   *int
	TxBytes        *int64
	RxBytes        *int64
	ObservedBy     []Observation
	ClientName     string
	Username       string
	LocationID     int64
	APBoxID        *int64
	APName         string
	observedByJSON []byte
}

type sampleInput struct {
	MacAddress       *string       `json:"macAddress"`
	Timestamp        *int64        `json:"timestamp"`
	BSSID            *string       `json:"bssid"`
	SSID             string        `json:"ssid"`
	FrequencyBand    string        `json:"frequencyBand"`
	Channel          int           `json:"channel"`
	RSSI             *int          `json:"rssi"`
	DataRateMbps     *float64      `json:"dataRateMbps"`
	RetryRatePct     *float64      `json:"retryRatePct"`
	BestNeighborRSSI *int          `json:"bestNeighborRssi"`
	TxBytes          *int64        `json:"txBytes"`
	RxBytes          *int64        `json:"rxBytes"`
	ObservedBy       []Observation `json:"observedBy"`
	ClientName       string        `json:"clientName"`
	Username         string        `json:"username"`
}

// ParseSample decodes and checks one ingested client statistics sample
// at time now.
func ParseSample(raw json.RawMessage, now time.Time) (*Sample, error) {
	return parseSample(raw, now, false)
}

// ParseTrafficSample is ParseSample for a sample that may carry traffic
// only (txBytes or rxBytes) and no radio metrics at all, as RADIUS
// accounting reports a client.
func ParseTrafficSample(raw json.RawMessage, now time.Time) (*Sample, error) {
	return parseSample(raw, now, true)
}

func parseSample(raw json.RawMessage, now time.Time, trafficOnly bool) (*Sample, error) {
	var in sampleInput
	if err := decodeRecord(raw, &in); err != nil {
		return nil, err
	}
	mac, bssid, ts, err := parseSubject(in.MacAddress, in.BSSID, in.Timestamp, now)
	if err != nil {
		return nil, err
	}
	if in.Channel < 1 || in.Channel > MaxChannel {
		return nil, wnms.Invalid("channel", "must be 1 to %d", MaxChannel)
	}
	if in.FrequencyBand != "" {
		b, err := checkEnum("frequencyBand", in.FrequencyBand, wnms.Band24GHz, wnms.Band5GHz)
		if err != nil {
			return nil, err
		}
		if b != wnms.BandOf(in.Channel) {
			return nil, wnms.Invalid("frequencyBand", "channel %d is in %s, not %s", in.Channel, wnms.BandOf(in.Channel), b)
		}
	}
	if err := wnms.CheckOctets("ssid", in.SSID, 0, MaxSSIDLen); err != nil {
		return nil, err
	}
	s := &Sample{MacAddress: mac, Timestamp: ts, BSSID: bssid, SSID: in.SSID, Channel: in.Channel,
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
		s.ObservedBy = append(s.ObservedBy, Observation{BSSID: b, RSSI: o.RSSI})
	}
	for _, f := range []struct{ name, v string }{{"clientName", in.ClientName}, {"username", in.Username}} {
		if err := wnms.CheckText(f.name, f.v, 0, MaxEventText); err != nil {
			return nil, err
		}
	}
	if s.ObservedBy != nil {
		s.observedByJSON, _ = json.Marshal(s.ObservedBy)
	}
	return s, nil
}

// ObservedByJSON is the sample's observations as stored (nil: none).
func (s *Sample) ObservedByJSON() []byte { return s.observedByJSON }

// Place sets the sample's location and AP from its BSSID's AP.
func (s *Sample) Place(ap *RadioAP) {
	s.LocationID = wnms.UnknownLocation
	if ap != nil {
		box := ap.BoxID
		s.LocationID, s.APBoxID, s.APName = ap.LocationID, &box, ap.Name
	}
}

// Client is a client of the client lists: its latest state.
type Client struct {
	Type                  string          `json:"type"`
	BoxID                 int64           `json:"boxId"`
	Name                  string          `json:"name"`
	MacAddress            string          `json:"macAddress"`
	Username              string          `json:"username"`
	LastSeen              int64           `json:"lastSeen"`
	Active                bool            `json:"active"`
	LastEventType         string          `json:"lastEventType"`
	BSSID                 string          `json:"bssid"`
	AssociatedAPName      string          `json:"associatedAPName"`
	AssociatedAPBoxID     *int64          `json:"associatedAPBoxId"`
	SSID                  string          `json:"ssid"`
	FrequencyBand         string          `json:"frequencyBand"`
	Channel               int             `json:"channel"`
	Protocol              string          `json:"protocol"`
	LocationID            wnms.LocationID `json:"locationId"`
	RSSI                  *int            `json:"rssi"`
	DataRateMbps          *float64        `json:"dataRateMbps"`
	TroubleshootingStatus int             `json:"troubleshootingStatus"`
}

// Derive fills what is computed on read.
func (c *Client) Derive(now time.Time) {
	c.Type = "client"
	c.FrequencyBand = wnms.BandOf(c.Channel)
	c.Active = now.Sub(time.UnixMilli(c.LastSeen)) < ActiveWindow
	if c.Name == "" {
		c.Name = c.MacAddress
	}
}

// ClientUpdate is what one event or sample says of its client; the store
// keeps the latest (see Coalesce).
type ClientUpdate struct {
	MacAddress string
	Timestamp  int64
	Name       string // "" keeps the stored one
	Username   string // "" keeps the stored one
	EventType  string // "" keeps the stored one (samples)
	BSSID      string
	SSID       string
	Channel    int
	Protocol   string
	LocationID int64
	APBoxID    *int64
	APName     string
	RSSI       *int
	DataRate   *float64
	// When the name, username, event type and signal (RSSI and data
	// rate) were reported, for an update coalesced from several records
	// (see Coalesce); 0: at Timestamp.
	NameTS, UsernameTS, EventTypeTS, SignalTS int64
}

// Coalesce is a client's state cur after the update u arrives: an update
// older than the state (by timestamp) changes nothing; a newer one (or one
// as old) gives where the client is (AP, BSSID, SSID, channel, protocol,
// location) and each of name, username, last event type, and RSSI with
// data rate that it has, the rest staying. An update coalesced from
// several records carries, for each of those four, the timestamp of the
// record that gave it (NameTS and so on), and gives it only if that
// record is no older than the state: so coalescing records in any
// grouping, in memory or in the database (store.UpdateClients applies the
// same rule), gives what applying them one by one in arrival order gives.
func Coalesce(cur, u ClientUpdate) ClientUpdate {
	cur, u = cur.Stamped(), u.Stamped()
	if u.Timestamp < cur.Timestamp {
		return cur
	}
	next := u
	if u.Name == "" || u.NameTS < cur.Timestamp {
		next.Name, next.NameTS = cur.Name, cur.NameTS
	}
	if u.Username == "" || u.UsernameTS < cur.Timestamp {
		next.Username, next.UsernameTS = cur.Username, cur.UsernameTS
	}
	if u.EventType == "" || u.EventTypeTS < cur.Timestamp {
		next.EventType, next.EventTypeTS = cur.EventType, cur.EventTypeTS
	}
	if u.RSSI == nil || u.SignalTS < cur.Timestamp {
		next.RSSI, next.DataRate, next.SignalTS = cur.RSSI, cur.DataRate, cur.SignalTS
	}
	return next
}

// Stamped is u with the timestamp of each of its name, username, event
// type and signal that has none (one record's update) set to u's.
func (u ClientUpdate) Stamped() ClientUpdate {
	for _, ts := range []*int64{&u.NameTS, &u.UsernameTS, &u.EventTypeTS, &u.SignalTS} {
		if *ts == 0 {
			*ts = u.Timestamp
		}
	}
	return u
}

// ClientProperties are what the filter language may test on clients.
var ClientProperties = Properties{
	"boxid": Number, "macaddress": Text, "name": Text, "username": Text, "ssid": Text,
	"frequencyband": Text, "troubleshootingstatus": Number, "apboxid": Number,
}

// ClientUpdate is what the sample says of its client.
func (s *Sample) ClientUpdate() ClientUpdate {
	protocol := "BG"
	if wnms.BandOf(s.Channel) == wnms.Band5GHz {
		protocol = "A"
	}
	u := ClientUpdate{MacAddress: s.MacAddress, Timestamp: s.Timestamp, Name: s.ClientName, Username: s.Username,
		BSSID: s.BSSID, SSID: s.SSID, Channel: s.Channel, Protocol: protocol, LocationID: s.LocationID,
		APBoxID: s.APBoxID, APName: s.APName}
	if !s.NoRadio {
		rssi, rate := s.RSSI, s.DataRateMbps
		u.RSSI, u.DataRate = &rssi, &rate
	}
	return u
}
