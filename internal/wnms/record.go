package wnms

// The records wnms takes in: what every way in (POST /V5/ingest, the
// RADIUS listeners, the syslog receiver) hands to the telemetry
// service's ingest, which checks each and stores it. Their fields and
// JSON names are the ingest format's (docs/api.md, "Ingest"), so that
// the HTTP body decodes straight into them; a data source fills them in
// Go. A nil pointer is a field not sent; where the format gives zero or
// "" the meaning "not known", the field is not a pointer.

// EventRecord is a client event as it is ingested: a connection's
// Success or Failure, or an Intermediate step (association, roam,
// session end, ...). What the server derives (the location, the
// catalogue's names, the AP's name when its radio is known) is ignored
// when sent.
type EventRecord struct {
	EventID    *string `json:"eventId"` // "" is none
	MacAddress *string `json:"macAddress"`
	EventType  *string `json:"eventType"` // Success, Failure or Intermediate
	BSSID      *string `json:"bssid"`     // a data source may send none
	Channel    int     `json:"channel"`   // 0: not known (a data source's)
	SSID       string  `json:"ssid"`
	Protocol   string  `json:"protocol"`
	Timestamp  *int64  `json:"timestamp"` // epoch ms

	AssociatedAPName string `json:"associatedAPName"`
	ClientName       string `json:"clientName"`
	Username         string `json:"username"` // the 802.1X identity

	// A connection's (Success and Failure): a timestamp of 0 is not known.
	ConnectionSteps
	HostName string `json:"hostName"`
	// A Success's latencies (ms): nil is not measured, 0 is.
	DHCPLatency *int64 `json:"dhcpLatency"`
	AAALatency  *int64 `json:"aaaLatency"`
	DNSLatency  *int64 `json:"dnsLatency"`
	// A Failure's cause (Fail* of the catalogue) and log bundle.
	FailureCode    *int    `json:"failureCode"`
	SubFailureCode *int    `json:"subFailureCode"`
	FileID         *string `json:"fileId"` // "" is none
	// An Intermediate event's kind (Category*, Type*).
	CategoryCode *int `json:"categoryCode"`
	TypeCode     *int `json:"typeCode"`
	SubTypeCode  int  `json:"subTypeCode"`
	EventDetail
}

// ConnectionSteps are when a connection's steps were seen (ms), and its
// automatic test's session and status, as a connection log has them.
type ConnectionSteps struct {
	AssociationTimestamp    *int64  `json:"associationTimestamp"`
	AuthenticationTimestamp *int64  `json:"authenticationTimestamp"`
	NetworkTimestamp        *int64  `json:"networkTimestamp"`
	AutoTestSessionID       *int64  `json:"autoTestSessionId"`
	AutoTestStatusCode      int     `json:"autoTestStatusCode"`
	AutoTestStatus          *string `json:"autoTestStatus"`
}

// EventDetail are the optional details of an event: an Intermediate
// event keeps them all; a connection takes its ip from here.
type EventDetail struct {
	Vlan              *int    `json:"vlan"`
	BwUpload          *int    `json:"bwUpload"`
	BwDownload        *int    `json:"bwDownload"`
	RSSI              *int    `json:"rssi"`
	BwPriority        *int    `json:"bwPriority"`
	AssocCount        *int    `json:"assocCount"`
	ThresholdRSSI     *int    `json:"thresholdRssi"`
	ClCount2Ghz       *int    `json:"clCount2Ghz"`
	ClCount5Ghz       *int    `json:"clCount5Ghz"`
	BstNbrRSSI        *int    `json:"bstNbrRssi"`
	BstNbrClCnt       *int    `json:"bstNbrClCnt"`
	DisTime           *int    `json:"disTime"`
	NbrCnt            *int    `json:"nbrCnt"`
	IP                *string `json:"ip"`
	RadiusPrimaryIP   *string `json:"radiusPrimaryIP"`
	RadiusSecondaryIP *string `json:"radiusSecondaryIP"`
	DetailedRole      *string `json:"detailedRole"`
	DetailedGoogleOU  *string `json:"detailedGoogleOU"`
	BwSource          *string `json:"bwSource"`
	BstNbrMac         *string `json:"bstNbrMac"`
	RoamDetail
}

// RoamDetail are a roam's details (an Intermediate event of category
// Roaming): the radio the client left (the event's bssid is the one it
// joined), how long it was without one (from leaving, or last being
// heard on, the first until authorized on the second), whether it used
// a fast transition (802.11r or opportunistic key caching: no full
// RADIUS exchange), its signal before and after, and, as the server
// derives them, whether the roam was slow or suboptimal. An event of
// another kind carries none of them.
type RoamDetail struct {
	FromBSSID      *string `json:"fromBssid,omitempty"`
	RoamLatencyMs  *int64  `json:"roamLatencyMs,omitempty"`
	FastTransition *bool   `json:"fastTransition,omitempty"`
	RSSIBefore     *int    `json:"rssiBefore,omitempty"`
	RSSIAfter      *int    `json:"rssiAfter,omitempty"`
	Slow           *bool   `json:"slowRoam,omitempty"`
	Suboptimal     *bool   `json:"suboptimalRoam,omitempty"`
}

// SampleRecord is a client statistics sample as it is ingested: the
// radio's view of a client (rssi and rate required), or, from a data
// source, its traffic alone (bytes, no radio metrics: RADIUS accounting).
type SampleRecord struct {
	MacAddress       *string       `json:"macAddress"`
	Timestamp        *int64        `json:"timestamp"`
	BSSID            *string       `json:"bssid"`
	SSID             string        `json:"ssid"`
	FrequencyBand    string        `json:"frequencyBand"`
	Channel          int           `json:"channel"`
	RSSI             *int          `json:"rssi"`
	SNR              *int          `json:"snr"` // dB: the signal over the radio's noise floor
	DataRateMbps     *float64      `json:"dataRateMbps"`
	RetryRatePct     *float64      `json:"retryRatePct"`
	BestNeighborRSSI *int          `json:"bestNeighborRssi"`
	TxBytes          *int64        `json:"txBytes"`
	RxBytes          *int64        `json:"rxBytes"`
	ObservedBy       []Observation `json:"observedBy"`
	ClientName       string        `json:"clientName"`
	Username         string        `json:"username"`
}

// RadioSampleRecord is an AP radio's sample as it is ingested: what the
// radio of the BSSID measured at one time. The BSSID must be a radio of
// a known AP (POST /V5/ingest/aps), whose location the sample takes; the
// rest is optional, and a field not sent is not known (not zero).
type RadioSampleRecord struct {
	BSSID          *string  `json:"bssid"`
	Timestamp      *int64   `json:"timestamp"`
	Channel        *int     `json:"channel"`
	FrequencyBand  string   `json:"frequencyBand"`
	UtilizationPct *float64 `json:"utilizationPct"` // the channel's busy time, 0-100
	NoiseDBm       *int     `json:"noiseDbm"`
	Clients        *int     `json:"clients"`
	TxPowerDBm     *int     `json:"txPowerDbm"`
}

// Ptr returns a pointer to v, for the optional fields of a record.
func Ptr[T any](v T) *T { return &v }

// Str is what an optional text field holds ("" when not sent).
func Str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// The catalogue's codes a data source names (the whole catalogue, with
// names, is GET devices/clientevents/metadata).
const (
	// The categories of both catalogues: a Failure's failureCode and an
	// Intermediate event's categoryCode.
	CategoryAssociation    = 1
	CategoryAuthentication = 2
	CategoryNetwork        = 3
	// An Intermediate event's category of roams (typeCode TypeRoam), with
	// the roam's RoamDetail.
	CategoryRoaming = 6

	// A Failure's cause (subFailureCode).
	FailAssocRejected    = 101 // Association rejected by AP
	FailAssocTimeout     = 102 // Association timed out
	FailAPFull           = 103 // AP at client capacity
	FailWrongPSK         = 201 // Wrong pre-shared key
	FailRadiusRejected   = 202 // Credentials rejected by RADIUS
	FailRadiusDown       = 203 // RADIUS server unreachable
	FailEAPTimeout       = 204 // EAP exchange timed out
	FailCertificate      = 205 // Client certificate rejected
	FailNoDHCPOffer      = 301 // No DHCP offer
	FailDHCPNak          = 302 // DHCP NAK
	FailDNS              = 303 // DNS resolution failed
	FailGatewayUnreached = 304 // Default gateway unreachable
	FailAddressConflict  = 305 // IP address conflict

	// An Intermediate event's type (typeCode).
	TypeAssociated    = 1  // category 1
	TypeRoamed        = 2  // category 1; subtype 1: fast transition
	TypeDisassociated = 3  // category 1; subtype: the 802.11 reason code
	TypeSessionEnded  = 4  // category 1; subtype: the Acct-Terminate-Cause
	TypeEAPStarted    = 10 // category 2
	TypeRadiusAccept  = 11 // category 2
	TypeDHCPLease     = 30 // category 3
	TypeRoam          = 40 // category 6; subtype 1: fast transition
)
