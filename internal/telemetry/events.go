package telemetry

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// Event protocols, as the reads answer and filter them.
var EventProtocols = []string{"UNKNOWN", "A", "B", "BG"}

// Limits of a client event.
const (
	MaxEventID    = 128
	MaxEventText  = 256
	maxFutureSkew = 24 * time.Hour
)

// eventCommon are the fields of every client event.
type eventCommon struct {
	EventID          string          `json:"eventId,omitempty"`
	MacAddress       string          `json:"macAddress"`
	Protocol         string          `json:"protocol"`
	LocationID       wnms.LocationID `json:"locationId"`
	EventType        string          `json:"eventType"`
	BSSID            string          `json:"bssid"`
	Channel          *int            `json:"channel"` // null: not known (a data source's record at no AP's radio)
	SSID             string          `json:"ssid"`
	Timestamp        int64           `json:"timestamp"`
	AssociatedAPName string          `json:"associatedAPName"`
}

// connection are the fields of Success and Failure events (the connection
// logs). What was not observed is null, never 0 (decisions §21): a
// connection whose association no one saw has no associationTimestamp,
// one without a DHCP exchange no networkTimestamp; a client's 802.1X
// identity (username), address (ip) and DHCP host name (hostName) are
// null when not known.
type connection struct {
	wnms.ConnectionSteps
	Username *string `json:"username"`
	IP       *string `json:"ip"`
	HostName *string `json:"hostName"`
}

// Latencies are null when not measured (a Success without a DHCP line
// has no dhcpLatency).
type successEvent struct {
	eventCommon
	connection
	DHCPLatency *int64 `json:"dhcpLatency"`
	AAALatency  *int64 `json:"aaaLatency"`
	DNSLatency  *int64 `json:"dnsLatency"`
}

type failureEvent struct {
	eventCommon
	connection
	FailureCode    int     `json:"failureCode"`
	Failure        string  `json:"failure"`
	SubFailureCode int     `json:"subFailureCode"`
	SubFailure     string  `json:"subFailure"`
	FileID         *string `json:"fileId"`
}

type intermediateEvent struct {
	eventCommon
	CategoryCode        int    `json:"categoryCode"`
	TypeCode            int    `json:"typeCode"`
	SubTypeCode         int    `json:"subTypeCode"`
	Category            string `json:"category"`
	EventDescription    string `json:"eventDescription"`
	SubEventDescription string `json:"subEventDescription"`
	wnms.EventDetail
}

// Event is a checked client event, ready to store once its AP is known
// (Place).
type Event struct {
	wnms.ClientEvent
	// What finding roams reads of the record: the client's signal, and
	// whether it joined with a fast transition.
	RSSI           *int
	FastTransition bool
	out            any    // the event as the reads answer it, without the location
	stored         []byte // out, placed, as it is stored
}

// ParseEvent decodes and checks one ingested client event at time now.
func ParseEvent(raw json.RawMessage, now time.Time) (*Event, error) {
	return parseEvent(raw, now, false)
}

func parseEvent(raw json.RawMessage, now time.Time, fromSource bool) (*Event, error) {
	var in wnms.EventRecord
	if err := decodeRecord(raw, &in); err != nil {
		return nil, err
	}
	return checkEvent(&in, now, fromSource)
}

// checkEvent checks a client event record at time now and makes the
// event to store. A data source's event (fromSource: RADIUS, syslog) may
// name no BSSID ("") and no channel (0: unknown, no band): it was seen at
// no AP wnms knows.
func checkEvent(in *wnms.EventRecord, now time.Time, fromSource bool) (*Event, error) {
	// An empty optional string means the field is absent, as many APs
	// send "" for "none" (a fileId with no bundle, no eventId).
	fileID := in.FileID
	if fileID != nil && *fileID == "" {
		fileID = nil
	}
	e := &Event{}
	if in.EventID != nil && *in.EventID != "" {
		if err := wnms.CheckText("eventId", *in.EventID, 1, MaxEventID); err != nil {
			return nil, err
		}
		e.EventID = *in.EventID
	}
	mac, bssid, ts, err := parseSubject(in.MacAddress, in.BSSID, in.Timestamp, now, fromSource)
	if err != nil {
		return nil, err
	}
	if in.EventType == nil {
		return nil, wnms.Invalid("eventType", "required: Success, Failure or Intermediate")
	}
	typ, err := checkEnum("eventType", *in.EventType, wnms.Success, wnms.Failure, wnms.Intermediate)
	if err != nil {
		return nil, err
	}
	if err := checkChannel(in.Channel, fromSource); err != nil {
		return nil, err
	}
	if err := wnms.CheckOctets("ssid", in.SSID, 0, MaxSSIDLen); err != nil {
		return nil, err
	}
	protocol := wnms.ProtocolOf(in.Channel)
	if in.Protocol != "" {
		if protocol, err = checkEnum("protocol", in.Protocol, EventProtocols...); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct{ name, v string }{{"associatedAPName", in.AssociatedAPName},
		{"clientName", in.ClientName}, {"username", in.Username}} {
		if err := wnms.CheckText(f.name, f.v, 0, MaxEventText); err != nil {
			return nil, err
		}
	}
	e.MacAddress, e.BSSID, e.Timestamp, e.Type, e.SSID, e.Protocol = mac, bssid, ts, typ, in.SSID, protocol
	e.Channel, e.APName = in.Channel, in.AssociatedAPName
	e.ClientName, e.Username, e.IP = in.ClientName, in.Username, deref(in.IP)
	e.FastTransition = in.FastTransition != nil && *in.FastTransition
	if r := in.RSSI; r != nil && *r >= MinRSSI && *r <= 0 {
		e.RSSI = r
	}
	var channel *int // 0 is a data source's "not known"
	if in.Channel != 0 {
		channel = &in.Channel
	}
	common := eventCommon{EventID: e.EventID, MacAddress: mac, Protocol: protocol, EventType: typ, BSSID: bssid,
		Channel: channel, SSID: in.SSID, Timestamp: e.Timestamp, AssociatedAPName: in.AssociatedAPName}
	var conn connection
	if typ != wnms.Intermediate {
		c := in
		for _, f := range []struct {
			name string
			v    *int64
		}{{"associationTimestamp", c.AssociationTimestamp}, {"authenticationTimestamp", c.AuthenticationTimestamp},
			{"networkTimestamp", c.NetworkTimestamp}} {
			if f.v != nil && *f.v < 0 {
				return nil, wnms.Invalid(f.name, "must not be negative")
			}
		}
		if c.AutoTestStatus != nil {
			if err := wnms.CheckText("autoTestStatus", *c.AutoTestStatus, 0, MaxEventText); err != nil {
				return nil, err
			}
		}
		for _, f := range []struct{ name, v string }{{"hostName", c.HostName}, {"ip", deref(in.IP)}} {
			if err := wnms.CheckText(f.name, f.v, 0, MaxEventText); err != nil {
				return nil, err
			}
		}
		steps := c.ConnectionSteps
		steps.AssociationTimestamp, steps.AuthenticationTimestamp, steps.NetworkTimestamp =
			known(c.AssociationTimestamp), known(c.AuthenticationTimestamp), known(c.NetworkTimestamp)
		conn = connection{ConnectionSteps: steps, Username: given(in.Username), IP: given(deref(in.IP)), HostName: given(c.HostName)}
		e.AssociatedAt, e.AuthenticatedAt, e.NetworkAt = conn.AssociationTimestamp, conn.AuthenticationTimestamp, conn.NetworkTimestamp
	}
	switch typ {
	case wnms.Success:
		for _, f := range []struct {
			name string
			v    *int64
		}{{"dhcpLatency", in.DHCPLatency}, {"aaaLatency", in.AAALatency}, {"dnsLatency", in.DNSLatency}} {
			if f.v != nil && *f.v < 0 {
				return nil, wnms.Invalid(f.name, "must not be negative")
			}
		}
		e.out = &successEvent{eventCommon: common, connection: conn,
			DHCPLatency: in.DHCPLatency, AAALatency: in.AAALatency, DNSLatency: in.DNSLatency}
	case wnms.Failure:
		if in.FailureCode == nil || in.SubFailureCode == nil {
			return nil, wnms.Invalid("failureCode", "a Failure event needs failureCode and subFailureCode")
		}
		failure, sub, ok := failureNames(*in.FailureCode, *in.SubFailureCode)
		if !ok {
			return nil, wnms.Invalid("subFailureCode", "no failure %d/%d in the catalogue (1xx Association, 2xx Authentication, 3xx Network)",
				*in.FailureCode, *in.SubFailureCode)
		}
		if fileID != nil {
			if err := wnms.CheckText("fileId", *fileID, 1, MaxEventID); err != nil {
				return nil, err
			}
		}
		e.Code, e.SubCode = in.FailureCode, in.SubFailureCode
		if fileID != nil {
			e.FileID = *fileID
		}
		e.out = &failureEvent{eventCommon: common, connection: conn, FailureCode: *in.FailureCode,
			Failure: failure, SubFailureCode: *in.SubFailureCode, SubFailure: sub, FileID: fileID}
	case wnms.Intermediate:
		if in.CategoryCode == nil || in.TypeCode == nil {
			return nil, wnms.Invalid("categoryCode", "an Intermediate event needs categoryCode and typeCode")
		}
		cat, desc, subDesc, ok := eventNames(*in.CategoryCode, *in.TypeCode, in.SubTypeCode)
		if !ok {
			return nil, wnms.Invalid("typeCode", "no intermediate event %d/%d/%d in the catalogue (GET devices/clientevents/metadata)",
				*in.CategoryCode, *in.TypeCode, in.SubTypeCode)
		}
		d := in.EventDetail
		if d.RoamDetail, err = checkRoam(*in.CategoryCode, d.RoamDetail, d.RSSI); err != nil {
			return nil, err
		}
		for _, f := range []struct {
			name string
			v    *string
		}{{"ip", d.IP}, {"radiusPrimaryIP", d.RadiusPrimaryIP}, {"radiusSecondaryIP", d.RadiusSecondaryIP},
			{"detailedRole", d.DetailedRole}, {"detailedGoogleOU", d.DetailedGoogleOU}, {"bwSource", d.BwSource},
			{"bstNbrMac", d.BstNbrMac}} {
			if f.v != nil {
				if err := wnms.CheckText(f.name, *f.v, 0, MaxEventText); err != nil {
					return nil, err
				}
			}
		}
		e.Code, e.SubCode = in.CategoryCode, in.TypeCode
		if *in.CategoryCode == wnms.CategoryRoaming {
			e.Roam = &wnms.RoamTally{Slow: d.Slow != nil && *d.Slow, Suboptimal: d.Suboptimal != nil && *d.Suboptimal}
		}
		e.out = &intermediateEvent{eventCommon: common, CategoryCode: *in.CategoryCode, TypeCode: *in.TypeCode,
			SubTypeCode: in.SubTypeCode, Category: cat, EventDescription: desc, SubEventDescription: subDesc,
			EventDetail: d}
	}
	return e, nil
}

// known is a timestamp as stored: 0 (1970) is not known, null.
func known(ts *int64) *int64 {
	if ts == nil || *ts == 0 {
		return nil
	}
	return ts
}

// given is an optional text as stored: "" is absent, null.
func given(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Place sets the event's location and AP from its BSSID's AP (ap), or
// the unknown location when the BSSID belongs to no known AP, and returns
// the event as the reads will answer it.
func (e *Event) Place(ap *wnms.RadioAP) ([]byte, error) {
	return e.PlaceAt(ap, wnms.UnknownLocation)
}

// PlaceAt is Place with the location an event at no known AP takes: a
// data source's events take the source's.
func (e *Event) PlaceAt(ap *wnms.RadioAP, at int64) ([]byte, error) {
	e.LocationID = at
	var common *eventCommon
	switch o := e.out.(type) {
	case *successEvent:
		common = &o.eventCommon
	case *failureEvent:
		common = &o.eventCommon
	case *intermediateEvent:
		common = &o.eventCommon
	}
	if ap != nil {
		box := ap.BoxID
		e.LocationID, e.APBoxID, e.Dot11AC = ap.LocationID, &box, ap.Dot11AC
		common.AssociatedAPName, e.APName = ap.Name, ap.Name
	}
	common.LocationID = wnms.LocalID(e.LocationID)
	return json.Marshal(e.out)
}

// IsConnection reports whether the event is a connection log (Success or
// Failure).
func (e *Event) IsConnection() bool { return e.Type != wnms.Intermediate }

// NormalizeType reads an event type filter in any case.
func NormalizeType(v string) (string, bool) {
	for _, t := range []string{wnms.Success, wnms.Failure, wnms.Intermediate} {
		if strings.EqualFold(v, t) {
			return t, true
		}
	}
	return "", false
}

// ClientUpdate is what the event says of its client.
func (e *Event) ClientUpdate() wnms.ClientUpdate {
	return wnms.ClientUpdate{MacAddress: e.MacAddress, Timestamp: e.Timestamp, Name: e.ClientName, Username: e.Username,
		IP: e.IP, EventType: e.Type, BSSID: e.BSSID, SSID: e.SSID, Channel: e.Channel, Protocol: e.Protocol,
		LocationID: e.LocationID, APBoxID: e.APBoxID, APName: e.APName}
}

// checkRoam checks the details of a roam (an Intermediate event of
// category Roaming) and derives whether it was slow or suboptimal; an
// event of another category keeps none.
func checkRoam(category int, d wnms.RoamDetail, rssi *int) (wnms.RoamDetail, error) {
	if category != wnms.CategoryRoaming {
		return wnms.RoamDetail{}, nil
	}
	if d.FromBSSID == nil {
		return d, wnms.Invalid("fromBssid", "required in a roam: the radio the client left")
	}
	from, ok := ParseMAC(*d.FromBSSID)
	if !ok {
		return d, wnms.Invalid("fromBssid", "%q is not a BSSID (six hex octets separated by ':' or '-')", *d.FromBSSID)
	}
	d.FromBSSID = &from
	if d.RoamLatencyMs != nil && *d.RoamLatencyMs < 0 {
		return d, wnms.Invalid("roamLatencyMs", "must not be negative")
	}
	if d.RSSIAfter == nil {
		d.RSSIAfter = rssi
	}
	for _, r := range []struct {
		name string
		v    *int
	}{{"rssiBefore", d.RSSIBefore}, {"rssiAfter", d.RSSIAfter}} {
		if r.v != nil && (*r.v < MinRSSI || *r.v > 0) {
			return d, wnms.Invalid(r.name, "must be %d to 0 dBm", MinRSSI)
		}
	}
	d.Slow, d.Suboptimal = nil, nil
	if d.RoamLatencyMs != nil {
		ft := d.FastTransition != nil && *d.FastTransition
		slow := *d.RoamLatencyMs > wnms.SlowRoamMs || (ft && *d.RoamLatencyMs > wnms.SlowRoamFastMs)
		d.Slow = &slow
	}
	if d.RSSIAfter != nil {
		sub := *d.RSSIAfter < wnms.CoverageRSSI || (d.RSSIBefore != nil && *d.RSSIAfter <= *d.RSSIBefore-wnms.SuboptimalDropDB)
		d.Suboptimal = &sub
	}
	return d, nil
}
