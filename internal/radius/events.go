package radius

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/wnms/wnms/internal/wnms"
	rad "layeh.com/radius"
)

// Sink takes what the listeners observe. Emit stores the observations
// of one source, all client events or all client samples, through the
// ingest write path and returns once they are committed; an error means
// they may not be, and the accounting server then sends no
// Accounting-Response, so the NAS retries. Each event has an eventId
// and each sample a timestamp derived from the observation, so one
// emitted twice is a duplicate downstream.
//
// What RADIUS cannot know is absent: channel (events and samples), rssi
// and dataRateMbps (samples); bssid when Called-Station-Id holds no MAC.
// Each observation says where the NAS said it was (NAS-Identifier,
// NAS-IP-Address) for the sink to place it, and the source comes with
// the call; decisions §21: the AP is the BSSID's radio, else the
// NAS-Identifier, else the source's location. Emit is called from
// several goroutines at once.
type Sink interface {
	Emit(ctx context.Context, src Source, obs []Observation) error
}

// Observation is a record the listeners made: a client event or a
// client sample, and where the NAS that reported it said it was.
type Observation struct {
	Event         *wnms.EventRecord  // a client event, or
	Sample        *wnms.SampleRecord // a client's traffic (accounting)
	NASIdentifier string             // "" when the request had none
	NASIPAddress  string
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
	HoldSuccess(src Source, success Observation, stored chan<- bool) bool
}

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

// event returns an event about s of the given type, id and time (ms).
func (s subject) event(typ, id string, ts int64) Observation {
	r := &wnms.EventRecord{EventID: &id, MacAddress: &s.mac, EventType: &typ, SSID: s.ssid, Timestamp: &ts, Username: s.username}
	if s.bssid != "" {
		r.BSSID = &s.bssid
	}
	return Observation{Event: r, NASIdentifier: s.nasID, NASIPAddress: s.nasIP}
}

// intermediate returns an Intermediate event of the Association
// category about s, of type typ and subtype sub.
func (s subject) intermediate(id string, ts int64, typ, sub int) Observation {
	o := s.event(wnms.Intermediate, id, ts)
	o.Event.CategoryCode, o.Event.TypeCode, o.Event.SubTypeCode = wnms.Ptr(wnms.CategoryAssociation), &typ, sub
	return o
}

// sample returns a sample of the client's traffic (bytes since the
// previous sample) at time ts (ms).
func (s subject) sample(ts, tx, rx int64) Observation {
	r := &wnms.SampleRecord{MacAddress: &s.mac, SSID: s.ssid, Timestamp: &ts, Username: s.username, TxBytes: &tx, RxBytes: &rx}
	if s.bssid != "" {
		r.BSSID = &s.bssid
	}
	return Observation{Sample: r, NASIdentifier: s.nasID, NASIPAddress: s.nasIP}
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
