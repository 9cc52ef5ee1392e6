package wnms

import (
	"encoding/json"
	"time"
)

// The domain of telemetry: the AP and client records the ingest takes and
// the lists answer, the queries that select them, and the client state
// kept from them. The telemetry package checks and places them; the store
// keeps them.

// Device capability bits of an AP (deviceCapability).
const (
	Cap80211n  = 1
	Cap80211ac = 2
	Cap80211ax = 4
	CapAll     = Cap80211n | Cap80211ac | Cap80211ax
)

// AP is the AP record of the device lists.
type AP struct {
	Type                  string     `json:"type"`
	BoxID                 int64      `json:"boxId"`
	Name                  string     `json:"name"`
	MacAddress            string     `json:"macaddress"`
	Model                 string     `json:"model"`
	IPAddress             string     `json:"ipAddress"`
	LocationID            LocationID `json:"locationId"`
	ActiveStatus          bool       `json:"activeStatus"`
	UpSince               int64      `json:"upSince"`
	LastSeen              int64      `json:"lastSeen"`
	SoftwareVersion       string     `json:"softwareVersion"`
	VendorName            string     `json:"vendorName"`
	DeviceCapability      int        `json:"deviceCapability"`
	Dot11ACCapability     bool       `json:"dot11ACCapability"`
	APTemplateName        string     `json:"apTemplateName"`
	Placed                bool       `json:"placed"`
	NumAssocClients       int        `json:"numAssocClients"`
	TroubleshootingStatus int        `json:"troubleshootingStatus"`
	Group                 string     `json:"group"`
	Radios                []Radio    `json:"radios"`
	// Position is where the AP is on its floor's layout, when known.
	Position *Position `json:"position,omitempty"`

	// CustomerID owns the AP; Announced is the liveness last announced.
	CustomerID int64 `json:"-"`
	Announced  bool  `json:"-"`
	// TxBytes and RxBytes are what a heartbeat reports moved since the
	// previous one, if it does.
	TxBytes, RxBytes *int64 `json:"-"`
	// PrevSeen is the heartbeat before this one (0 for a new AP), set by
	// UpsertAPs.
	PrevSeen int64 `json:"-"`
}

// Radio is one radio of an AP; MacAddress is its BSSID.
type Radio struct {
	Type            string `json:"type"`
	MacAddress      string `json:"macaddress"`
	Protocol        string `json:"protocol"`
	Channel         int    `json:"channel"`
	SSID            string `json:"ssid"`
	FrequencyBand   string `json:"frequencyBand"`
	NumAssocClients int    `json:"numAssocClients"`
	Active          bool   `json:"active"`
}

// Derive fills what is computed on read: the record types, 802.11ac
// capability, and activeStatus (seen within timeout of now).
func (a *AP) Derive(now time.Time, timeout time.Duration) {
	a.Type = "ap"
	a.Dot11ACCapability = a.DeviceCapability&Cap80211ac != 0
	a.ActiveStatus = now.Sub(time.UnixMilli(a.LastSeen)) < timeout
	if a.Radios == nil {
		a.Radios = []Radio{}
	}
	for i := range a.Radios {
		a.Radios[i].Type = "apradio"
	}
}

// Position is a point on a floor layout, in the layout's unit (feet or
// meters), from its top left corner: x along its length, y along its width.
type Position struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// ClientActiveWindow is how recently a client must have been seen to be active,
// and how far back its observers are looked for.
const ClientActiveWindow = 15 * time.Minute

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
	SNR          *int // dB, nil: not known
	// Busy: the sample's radio was at or over BusyUtilizationPct when it
	// was taken (nil: its utilisation was not known).
	Busy *bool
	// NoRadio: the sample has no radio metrics (RSSI, data rate and retry
	// rate are unknown, not zero), only traffic: RADIUS accounting's.
	NoRadio      bool
	BestNeighbor *int
	TxBytes      *int64
	RxBytes      *int64
	ObservedBy   []Observation
	ClientName   string
	Username     string
	LocationID   int64
	APBoxID      *int64
	APName       string
	// ObservedByJSON is ObservedBy as stored (nil: none).
	ObservedByJSON []byte
}

// Place sets the sample's location and AP from its BSSID's AP.
func (s *Sample) Place(ap *RadioAP) { s.PlaceAt(ap, UnknownLocation) }

// PlaceAt is Place with the location a sample at no known AP takes: a
// data source's samples take the source's.
func (s *Sample) PlaceAt(ap *RadioAP, at int64) {
	s.LocationID = at
	if ap != nil {
		box := ap.BoxID
		s.LocationID, s.APBoxID, s.APName = ap.LocationID, &box, ap.Name
	}
}

// Client is a client of the client lists: its latest state.
type Client struct {
	Type       string `json:"type"`
	BoxID      int64  `json:"boxId"`
	Name       string `json:"name"`
	MacAddress string `json:"macAddress"`
	Username   string `json:"username"`
	// IPAddress is the address of the newest event that carried one (a
	// Success's DHCP ACK or Framed-IP-Address, an accounting Start's
	// Intermediate); nil: never observed (decisions §21).
	IPAddress             *string    `json:"ipAddress"`
	LastSeen              int64      `json:"lastSeen"`
	Active                bool       `json:"active"`
	LastEventType         string     `json:"lastEventType"`
	BSSID                 string     `json:"bssid"`
	AssociatedAPName      string     `json:"associatedAPName"`
	AssociatedAPBoxID     *int64     `json:"associatedAPBoxId"`
	SSID                  string     `json:"ssid"`
	FrequencyBand         string     `json:"frequencyBand"`
	Channel               int        `json:"channel"`
	Protocol              string     `json:"protocol"`
	LocationID            LocationID `json:"locationId"`
	RSSI                  *int       `json:"rssi"`
	DataRateMbps          *float64   `json:"dataRateMbps"`
	TroubleshootingStatus int        `json:"troubleshootingStatus"`
}

// MarshalJSON answers a channel not known (0: a data source saw the
// client at no AP's radio) and its band as null.
func (c Client) MarshalJSON() ([]byte, error) {
	type plain Client
	out := struct {
		plain
		Channel       *int    `json:"channel"`
		FrequencyBand *string `json:"frequencyBand"`
	}{plain: plain(c)}
	if c.Channel != 0 {
		out.Channel = &c.Channel
	}
	if c.FrequencyBand != "" {
		out.FrequencyBand = &c.FrequencyBand
	}
	return json.Marshal(out)
}

// Derive fills what is computed on read.
func (c *Client) Derive(now time.Time) {
	c.Type = "client"
	c.FrequencyBand = BandOf(c.Channel)
	c.Active = now.Sub(time.UnixMilli(c.LastSeen)) < ClientActiveWindow
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
	IP         string // "" keeps the stored one
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
	// When the name, username, IP, event type and signal (RSSI and data
	// rate) were reported, for an update coalesced from several records
	// (see Coalesce); 0: at Timestamp.
	NameTS, UsernameTS, IPTS, EventTypeTS, SignalTS int64
}

// Coalesce is a client's state cur after the update u arrives: an update
// older than the state (by timestamp) changes nothing; a newer one (or one
// as old) gives where the client is (AP, BSSID, SSID, channel, protocol,
// location) and each of name, username, IP, last event type, and RSSI
// with data rate that it has, the rest staying. An update coalesced from
// several records carries, for each of those five, the timestamp of the
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
	if u.IP == "" || u.IPTS < cur.Timestamp {
		next.IP, next.IPTS = cur.IP, cur.IPTS
	}
	if u.EventType == "" || u.EventTypeTS < cur.Timestamp {
		next.EventType, next.EventTypeTS = cur.EventType, cur.EventTypeTS
	}
	if u.RSSI == nil || u.SignalTS < cur.Timestamp {
		next.RSSI, next.DataRate, next.SignalTS = cur.RSSI, cur.DataRate, cur.SignalTS
	}
	return next
}

// Stamped is u with the timestamp of each of its name, username, IP,
// event type and signal that has none (one record's update) set to u's.
func (u ClientUpdate) Stamped() ClientUpdate {
	for _, ts := range []*int64{&u.NameTS, &u.UsernameTS, &u.IPTS, &u.EventTypeTS, &u.SignalTS} {
		if *ts == 0 {
			*ts = u.Timestamp
		}
	}
	return u
}

// ClientUpdate is what the sample says of its client.
func (s *Sample) ClientUpdate() ClientUpdate {
	u := ClientUpdate{MacAddress: s.MacAddress, Timestamp: s.Timestamp, Name: s.ClientName, Username: s.Username,
		BSSID: s.BSSID, SSID: s.SSID, Channel: s.Channel, Protocol: ProtocolOf(s.Channel), LocationID: s.LocationID,
		APBoxID: s.APBoxID, APName: s.APName}
	if !s.NoRadio {
		rssi, rate := s.RSSI, s.DataRateMbps
		u.RSSI, u.DataRate = &rssi, &rate
	}
	return u
}

// Client event types.
const (
	Success      = "Success"
	Failure      = "Failure"
	Intermediate = "Intermediate"
)

// ClientEvent is a client event as the store keeps it: checked, and once
// its AP is known, placed.
type ClientEvent struct {
	EventID    string // the client's, or "" for one the store makes
	MacAddress string
	BSSID      string
	Timestamp  int64
	Type       string
	SSID       string
	Channel    int
	Protocol   string
	APName     string
	Code       *int // failureCode or categoryCode
	SubCode    *int // subFailureCode or typeCode
	ClientName string
	Username   string
	IP         string // the client's address the event carries, if any
	FileID     string // the log bundle a Failure names, if any

	// The phase timestamps of a Success or Failure (ms; nil: not
	// observed): association, authentication and network (DHCP) done.
	AssociatedAt, AuthenticatedAt, NetworkAt *int64

	// Roam: a roam's judgements (category Roaming), for the service
	// levels; nil for any other event.
	Roam *RoamTally

	// Set by Place: the location and AP of the event's BSSID.
	LocationID int64
	APBoxID    *int64
	Dot11AC    bool
}

// RadioAP is what a BSSID tells about an event: its AP and where it is.
type RadioAP struct {
	BoxID      int64
	Name       string
	LocationID int64
	Dot11AC    bool
}

// APQuery selects APs of one customer for a list call.
type APQuery struct {
	CustomerID int64
	// Scope are the subtree paths the caller sees (nil: the whole tree);
	// Locations further narrows to the subtrees of the locationid
	// parameters (nil: no narrowing).
	Scope, Locations []string
	MACs             []string
	Capability       int    // bitwise AND with deviceCapability, 0: any
	Active           *bool  // seen since ActiveSince (true) or not (false)
	ActiveSince      int64  // ms
	Name             string // substring of the name, any case
	Filter           *Cond
	Sort             string // a key of APSortColumns
	Ascending        bool
	Offset, Limit    int
}

// EventQuery selects client events of one customer and client.
type EventQuery struct {
	CustomerID int64
	MAC        string
	// Locations are the location ids the events may be at (nil: any).
	Locations []int64
	From, To  int64    // ms, inclusive; -1: unbounded
	Types     []string // Success, Failure, Intermediate (nil: any)
	Code      *int     // failureCode or categoryCode
	SubCode   *int     // subFailureCode or typeCode
	Protocols []string
	SSIDs     []string
	// Dot11ACOnly keeps the events of APs with 802.11ac capability.
	Dot11ACOnly   bool
	Offset, Limit int
	// Count asks for the number of matching events too.
	Count bool
}

// ClientQuery selects clients of one customer.
type ClientQuery struct {
	CustomerID  int64
	Locations   []int64 // nil: any
	SSID        string
	Active      *bool
	ActiveSince int64
	Filter      *Cond
	Offset      int
	Limit       int
}

// DerivedEvent is an event the server derives from the records of a
// batch (a roam), stored with them and not counted as one of them.
type DerivedEvent struct {
	Event *ClientEvent
	Body  []byte // as the reads answer it
}

// RoamTally is what the roaming service level counts of a roam.
type RoamTally struct{ Slow, Suboptimal bool }

// ClientRadio is where a client was last heard, as its state says.
type ClientRadio struct {
	MacAddress  string
	BSSID, SSID string
	LastSeen    int64
	RSSI        *int
}

// RadioSample is an AP radio's sample, checked and placed at its AP.
type RadioSample struct {
	BSSID       string
	Timestamp   int64
	BoxID       int64 // the AP's
	LocationID  int64
	Channel     *int
	Band        string
	Utilization *float64 // % of the time the channel was busy
	Noise       *int     // dBm
	Clients     *int
	TxPower     *int // dBm
}

// RadioBucket is one radio's samples in one 5-minute bucket: the
// channel of its newest sample, the mean utilisation and noise, the most
// clients (nil where no sample of the bucket said).
type RadioBucket struct {
	BSSID       string
	Band        string
	Time        int64
	Channel     *int
	Utilization *float64
	Noise       *float64
	Clients     *int
	TxPower     *int
}

// ClientBucket is a client's samples in one 5-minute bucket.
type ClientBucket struct {
	Time       int64
	DataRate   float64  // mean, Mbps
	Retry      float64  // mean, %
	RSSI       float64  // mean, dBm
	SNR        *float64 // mean, dB (nil: no sample said)
	Bytes      int64
	HasTraffic bool
	HasRadio   bool // false: only samples of traffic, DataRate and Retry unknown
}

// APBucket is an AP's heartbeats in one 5-minute bucket.
type APBucket struct {
	Time       int64
	Bytes      int64
	CoveredMS  int64
	HasTraffic bool
	MaxClients int
}

// DroppedPartition is a day partition that retention dropped.
type DroppedPartition struct {
	Table string
	Day   time.Time
}

// FilterKind is the type of a filterable property.
type FilterKind int

// The kinds of properties.
const (
	FilterNumber FilterKind = iota
	FilterText
	FilterBool
)

// Cond is a parsed filter: a group (Op AND or OR over Sub) or a test of
// one property (Op one of the comparison operators, Values of the
// property's kind: int64, string or bool).
type Cond struct {
	Op       string
	Sub      []Cond
	Property string
	Kind     FilterKind
	Values   []any
}

// Group reports whether c is an AND or OR of conditions.
func (c Cond) Group() bool { return c.Op == "AND" || c.Op == "OR" }

// String names the kind as filter errors do.
func (k FilterKind) String() string {
	switch k {
	case FilterNumber:
		return "number"
	case FilterBool:
		return "boolean"
	}
	return "string"
}
