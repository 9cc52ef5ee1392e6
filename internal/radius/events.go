package radius

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	rad "layeh.com/radius"
)

// Record kinds, as the ingest API names them.
const (
	KindClientEvents = "clientevents" // records of POST /V5/ingest/clientevents
	KindClientStats  = "clientstats"  // records of POST /V5/ingest/clientstats
)

// Sink takes what the listeners observe. Emit stores records of one kind
// (KindClientEvents or KindClientStats) from one source through the
// ingest write path and returns once they are committed; an error means
// they may not be, and the accounting server then sends no
// Accounting-Response, so the NAS retries. Records are JSON objects in
// the ingest format, each with an eventId (events) or a timestamp
// (samples) derived from the observation, so a record emitted twice is a
// duplicate downstream.
//
// What RADIUS cannot know is absent: channel (events and samples), rssi
// and dataRateMbps (samples); bssid when Called-Station-Id holds no MAC.
// Each record carries two fields the ingest ignores, for the caller to
// place the record: "nasIdentifier" (NAS-Identifier) and "nasIpAddress"
// (NAS-IP-Address), and the source comes with the call; decisions §21:
// the AP is the BSSID's radio, else the NAS-Identifier, else the source's
// location. Emit is called from several goroutines at once.
type Sink interface {
	Emit(ctx context.Context, src Source, kind string, records []json.RawMessage) error
}

// SuccessHolder is a Sink that may keep an authentication's Success to
// store it later with what else it learns of the connection (a syslog
// view of it). The proxy offers it each Success before it passes the
// Access-Accept to the NAS, and before queueing the Success, so that it
// is held before the NAS can complete the connection; one it takes
// (true) is not emitted. For one it takes, it sends once on stored (a
// channel with room for one): true once what it holds is in the store
// (it survives a kill), false when it gave up on storing it. The proxy
// waits for that, a bounded time, before it answers the NAS.
// HoldSuccess must not wait on a store.
type SuccessHolder interface {
	HoldSuccess(src Source, record json.RawMessage, stored chan<- bool) bool
}

// record is a client event or sample in the ingest format, plus where it
// was seen.
type record struct {
	EventID    string `json:"eventId,omitempty"`
	MacAddress string `json:"macAddress"`
	BSSID      string `json:"bssid,omitempty"`
	SSID       string `json:"ssid,omitempty"`
	Timestamp  int64  `json:"timestamp"`
	EventType  string `json:"eventType,omitempty"`
	Username   string `json:"username,omitempty"`

	AuthenticationTimestamp int64   `json:"authenticationTimestamp,omitempty"`
	AAALatency              *int64  `json:"aaaLatency,omitempty"`
	FailureCode             *int    `json:"failureCode,omitempty"`
	SubFailureCode          *int    `json:"subFailureCode,omitempty"`
	CategoryCode            *int    `json:"categoryCode,omitempty"`
	TypeCode                *int    `json:"typeCode,omitempty"`
	SubTypeCode             int     `json:"subTypeCode,omitempty"`
	IP                      *string `json:"ip,omitempty"`
	RadiusPrimaryIP         *string `json:"radiusPrimaryIP,omitempty"`

	TxBytes *int64 `json:"txBytes,omitempty"`
	RxBytes *int64 `json:"rxBytes,omitempty"`

	NASIdentifier string `json:"nasIdentifier,omitempty"`
	NASIPAddress  string `json:"nasIpAddress,omitempty"`
}

// Failure causes of the catalogue (category 2, Authentication).
const (
	failAuthentication = 2
	failRejected       = 202 // Credentials rejected by RADIUS
	failUnreachable    = 203 // RADIUS server unreachable
	failEAPTimeout     = 204 // EAP exchange timed out
	failCertificate    = 205 // Client certificate rejected
)

// subject is who and where an observation is about, from a request's
// attributes.
type subject struct {
	mac, bssid, ssid, username, nasID, nasIP string
}

func subjectOf(p *rad.Packet) subject {
	s := subject{mac: parseMAC(string(p.Get(attrCallingStationID))), username: clean(string(p.Get(attrUserName))),
		nasID: clean(string(p.Get(attrNASIdentifier)))}
	s.bssid, s.ssid = parseCalled(string(p.Get(attrCalledStationID)))
	if ip, err := rad.IPAddr(p.Get(attrNASIPAddress)); err == nil {
		s.nasIP = ip.String()
	}
	return s
}

// record returns a record about s with the given id and time (ms).
func (s subject) record(id string, ts int64) record {
	return record{EventID: id, MacAddress: s.mac, BSSID: s.bssid, SSID: s.ssid, Timestamp: ts, Username: s.username,
		NASIdentifier: s.nasID, NASIPAddress: s.nasIP}
}

// clean keeps a text attribute printable and within the ingest's limits
// (256 characters).
func clean(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 256 {
		s = string(r[:256])
	}
	return s
}

// parseMAC reads a MAC address as NASes write it in Calling-Station-Id
// and Called-Station-Id: six hex octets separated by '-', ':' or '.', or
// none; it returns "AA:BB:CC:DD:EE:FF", or "" when s is none of those.
func parseMAC(s string) string {
	var hexd []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			hexd = append(hexd, c)
		case c == '-' || c == ':' || c == '.':
		default:
			return ""
		}
	}
	if len(hexd) != 12 {
		return ""
	}
	up := strings.ToUpper(string(hexd))
	var b strings.Builder
	for i := 0; i < 12; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(up[i : i+2])
	}
	return b.String()
}

// parseCalled reads Called-Station-Id, "AA-BB-CC-DD-EE-FF:SSID" (RFC
// 3580 §3.20), into the BSSID and SSID.
func parseCalled(s string) (bssid, ssid string) {
	for _, n := range []int{17, 14, 12} { // AA-BB-CC-DD-EE-FF, aabb.ccdd.eeff, aabbccddeeff
		if len(s) >= n {
			if m := parseMAC(s[:n]); m != "" && (len(s) == n || s[n] == ':') {
				if len(s) > n {
					ssid = s[n+1:]
				}
				if len(ssid) > 32 || !validText(ssid) {
					ssid = ""
				}
				return m, ssid
			}
		}
	}
	return "", ""
}

func validText(s string) bool { return clean(s) == s }

// eventID derives an event's id from what identifies the observation, so
// the same observation always gets the same id.
func eventID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return "radius-" + hex.EncodeToString(h.Sum(nil)[:16])
}

func ptr[T any](v T) *T { return &v }

func marshal(r record) json.RawMessage {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // a record of strings and numbers always encodes
	}
	return b
}
