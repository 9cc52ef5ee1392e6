package simulate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Incident kinds (decisions §24 lists them; docs/simulate.md says what
// each does).
const (
	RadiusDown     = "radius-down"             // the site's RADIUS server is unreachable (203, some 204) for 802.1X clients
	RadiusReject   = "radius-reject"           // the user store is broken: Access-Reject (202) for 802.1X clients
	WrongPSK       = "wrong-psk"               // the iot SSID's passphrase changed: its clients fail the 4-way handshake (201)
	DHCPExhaustion = "dhcp-exhaustion"         // no addresses (301/302) on one site
	SlowDHCP       = "slow-dhcp"               // DHCP answers take seconds; a share of clients time out (301)
	APDown         = "ap-down"                 // one AP stops; its clients move
	BadAP          = "one-bad-ap"              // one AP's 5 GHz radio rejects associations (101); its neighbours are fine
	Interference   = "interference"            // retries up, rates down on one channel
	CoverageHole   = "coverage-hole"           // one AP's transmit power drops: its clients' signal falls, some roam away
	CoChannel      = "co-channel-interference" // another network on one AP's 5 GHz channel: busy, noisy, slow
)

// IncidentKinds are the incidents the simulator knows.
var IncidentKinds = []string{RadiusDown, RadiusReject, WrongPSK, DHCPExhaustion, SlowDHCP, APDown, BadAP, Interference,
	CoverageHole, CoChannel}

// IncidentLength is how long an incident lasts.
const IncidentLength = 45 * time.Minute

// IncidentGap is the least time between two incidents at one site: the
// end of one and the start of the next are at least two slots apart, so
// that a detection up to two slots late is never taken for the next.
const IncidentGap = 30 * time.Minute

// PSKSSID is the SSID a wrong-psk incident changes the passphrase of: the
// SSID of the IoT devices, which authenticate with a pre-shared key.
const PSKSSID = SSIDIoT

// RadiusServer is the address of the RADIUS server the simulated APs ask.
const RadiusServer = "10.0.0.11"

// Incident is a trouble at one site, [From, To) in ms.
type Incident struct {
	Kind string
	Ago  time.Duration // before the end of the backfill
	Site *Site
	// AP is the AP an incident hits: ap-down the AP that goes; one-bad-ap
	// the AP whose 5 GHz radio is broken; coverage-hole the AP whose
	// power drops; co-channel-interference the AP whose 5 GHz channel
	// another network shares.
	AP       *AP
	From, To int64
	// PowerDrop is how much a coverage hole takes from its AP's transmit
	// power (dB, 15 to 20).
	PowerDrop int
}

// ParseIncident parses KIND@AGO, AGO a Go duration (radius-down@3h); the
// kind is matched without regard to case (one-bad-AP).
func ParseIncident(s string) (Incident, error) {
	kind, ago, ok := strings.Cut(s, "@")
	if !ok {
		return Incident{}, fmt.Errorf("--incident %q: expected KIND@AGO, such as radius-down@3h", s)
	}
	kind = strings.ToLower(kind)
	if !slices.Contains(IncidentKinds, kind) {
		return Incident{}, fmt.Errorf("--incident %q: the kind must be one of %s", s, strings.Join(IncidentKinds, ", "))
	}
	d, err := time.ParseDuration(ago)
	if err != nil || d <= 0 {
		return Incident{}, fmt.Errorf("--incident %q: AGO must be a positive duration such as 90m or 3h", s)
	}
	return Incident{Kind: kind, Ago: d}, nil
}

// Place fixes the incidents on the network, for a backfill ending at end:
// the i-th incident (0-based) hits site i modulo the number of sites, or
// the next site where it keeps IncidentGap from every incident placed
// before it (when none does, it stays on site i: Clashes tells); an
// ap-down takes that site's first AP, a one-bad-ap the middle AP of its
// last floor, a coverage-hole the middle AP of its first floor, a
// co-channel-interference the AP before the middle of its last floor;
// interference is on InterferenceChannel.
func (n *Network) Place(incs []Incident, end time.Time) []Incident {
	out := make([]Incident, len(incs))
	for i, in := range incs {
		in.From = end.Add(-in.Ago).UnixMilli()
		in.To = in.From + IncidentLength.Milliseconds()
		in.Site = n.Sites[i%len(n.Sites)]
		for k := range n.Sites {
			s := n.Sites[(i+k)%len(n.Sites)]
			if !slices.ContainsFunc(out[:i], func(o Incident) bool { return o.Site == s && near(o, in) }) {
				in.Site = s
				break
			}
		}
		switch in.Kind {
		case APDown:
			in.AP = in.Site.Floors[0].APs[0]
		case BadAP:
			f := in.Site.Floors[len(in.Site.Floors)-1]
			in.AP = f.APs[len(f.APs)/2]
		case CoverageHole:
			f := in.Site.Floors[0]
			in.AP = f.APs[len(f.APs)/2]
			in.PowerDrop = 15 + rng(n.Seed, 11, uint64(in.From)).IntN(6)
		case CoChannel:
			f := in.Site.Floors[len(in.Site.Floors)-1]
			in.AP = f.APs[(len(f.APs)-1)/2]
		}
		out[i] = in
	}
	return out
}

// near says whether two incidents are less than IncidentGap apart.
func near(a, b Incident) bool {
	gap := IncidentGap.Milliseconds()
	return a.From < b.To+gap && b.From < a.To+gap
}

// Clashes answers the first two placed incidents (by index) at one site
// that are less than IncidentGap apart, or -1, -1.
func Clashes(placed []Incident) (int, int) {
	for i := range placed {
		for j := range i {
			if placed[i].Site == placed[j].Site && near(placed[i], placed[j]) {
				return j, i
			}
		}
	}
	return -1, -1
}

// active is the incident of kind at the client's site at t, or nil.
func active(kind string, c *Client, t int64, incs []Incident) *Incident {
	for i := range incs {
		if in := &incs[i]; in.Kind == kind && in.Site == c.Home.Site && t >= in.From && t < in.To {
			return in
		}
	}
	return nil
}

// Event is a client event in the shape ingest takes (docs/api.md §16).
type Event struct {
	EventID                 string  `json:"eventId"`
	MacAddress              string  `json:"macAddress"`
	EventType               string  `json:"eventType"`
	BSSID                   string  `json:"bssid"`
	Channel                 int     `json:"channel"`
	SSID                    string  `json:"ssid"`
	Timestamp               int64   `json:"timestamp"`
	ClientName              string  `json:"clientName,omitempty"`
	Username                string  `json:"username,omitempty"`
	AssociationTimestamp    int64   `json:"associationTimestamp,omitempty"`
	AuthenticationTimestamp int64   `json:"authenticationTimestamp,omitempty"`
	NetworkTimestamp        int64   `json:"networkTimestamp,omitempty"`
	DHCPLatency             int64   `json:"dhcpLatency,omitempty"`
	AAALatency              int64   `json:"aaaLatency,omitempty"`
	DNSLatency              int64   `json:"dnsLatency,omitempty"`
	FailureCode             int     `json:"failureCode,omitempty"`
	SubFailureCode          int     `json:"subFailureCode,omitempty"`
	CategoryCode            int     `json:"categoryCode,omitempty"`
	TypeCode                int     `json:"typeCode,omitempty"`
	SubTypeCode             int     `json:"subTypeCode,omitempty"`
	RSSI                    *int    `json:"rssi,omitempty"`
	IP                      *string `json:"ip,omitempty"`
	Vlan                    *int    `json:"vlan,omitempty"`
	RadiusPrimaryIP         *string `json:"radiusPrimaryIP,omitempty"`
	DetailedRole            *string `json:"detailedRole,omitempty"`
	BwUpload                *int    `json:"bwUpload,omitempty"`
	BwDownload              *int    `json:"bwDownload,omitempty"`
	// FastTransition says how a roam's joining Success got its keys:
	// 802.11r (true) or a full authentication (false).
	FastTransition *bool `json:"fastTransition,omitempty"`
}

// Sample is a client statistics sample in the shape ingest takes
// (docs/api.md §17), every optional field filled.
type Sample struct {
	MacAddress       string        `json:"macAddress"`
	Timestamp        int64         `json:"timestamp"`
	BSSID            string        `json:"bssid"`
	SSID             string        `json:"ssid"`
	FrequencyBand    string        `json:"frequencyBand"`
	Channel          int           `json:"channel"`
	RSSI             int           `json:"rssi"`
	SNR              int           `json:"snr"`
	DataRateMbps     float64       `json:"dataRateMbps"`
	RetryRatePct     float64       `json:"retryRatePct"`
	BestNeighborRSSI *int          `json:"bestNeighborRssi"`
	TxBytes          int64         `json:"txBytes"`
	RxBytes          int64         `json:"rxBytes"`
	ObservedBy       []Observation `json:"observedBy"`
	ClientName       string        `json:"clientName"`
	Username         string        `json:"username,omitempty"`
}

// Observation is a radio that hears a client.
type Observation struct {
	BSSID string `json:"bssid"`
	RSSI  int    `json:"rssi"`
}

const (
	second = int64(1000)
	minute = 60 * second
	// SampleEvery is how often a present client sends a sample.
	SampleEvery = 5 * minute
)

// seg is a stretch of a client's day on one AP.
type seg struct {
	start, end int64
	ap         *AP
	connect    bool // it begins with a connection attempt
	roam       bool // that attempt is a roam from the previous AP
	leave      bool // it ends with a disassociation
	// Before it connects to ap, the client fails fails attempts on
	// failOn with failure (failCode, failSub): an AP that went away, or
	// a broken radio.
	failOn            *AP
	fails             int
	failCode, failSub int
	at                spot // where the client is
}

// conn is a stretch during which the client is connected, sending
// samples.
type conn struct {
	from, to int64
	ap       *AP
	at       spot
}

// day is one client's local day: its events, and when and where it was
// connected.
type day struct {
	events []Event
	conns  []conn
}

// dayKey names a local date.
func dayKey(t time.Time) uint64 {
	y, m, d := t.Date()
	return uint64(y*10000 + int(m)*100 + d)
}

// neighbour is the AP next to a on its floor (a itself on a floor of one).
func neighbour(a *AP, r *rand.Rand) *AP {
	aps := a.Floor.APs
	switch {
	case len(aps) == 1:
		return a
	case a.Index == 0:
		return aps[1]
	case a.Index == len(aps)-1 || r.IntN(2) == 0:
		return aps[a.Index-1]
	}
	return aps[a.Index+1]
}

// gauss is a normal draw, mean 0, of standard deviation sd, cut at ±3 sd.
func gauss(r *rand.Rand, sd float64) float64 {
	return max(-3*sd, min(3*sd, r.NormFloat64()*sd))
}

// plan lays out a client's local day starting at midnight: where it is,
// from when to when. The draw depends on the seed, the client and the
// date only.
func (n *Network) plan(c *Client, midnight time.Time) []seg {
	r := rng(n.Seed, 2, uint64(c.Index), dayKey(midnight))
	y, mo, d := midnight.Date()
	at := func(min float64) int64 {
		return time.Date(y, mo, d, 0, 0, int(min*60), 0, midnight.Location()).UnixMilli()
	}
	next := time.Date(y, mo, d+1, 0, 0, 0, 0, midnight.Location()).UnixMilli()
	wd := midnight.Weekday()
	weekend := !n.OpenWeekends && (wd == time.Saturday || wd == time.Sunday)
	home := c.Home.APs[c.HomeAP]

	if c.Kind == IoT {
		// Always there, from the night before; now and then it
		// reconnects.
		segs := []seg{{start: at(0), ap: home}}
		for k := r.IntN(3); k > 0; k-- {
			t := at(float64(r.IntN(24 * 60)))
			last := &segs[len(segs)-1]
			if t <= last.start+minute {
				continue
			}
			last.end, last.leave = t, true
			segs = append(segs, seg{start: t + 5*second, ap: home, connect: true})
		}
		segs[len(segs)-1].end = next
		return n.placed(c, segs)
	}

	var from, to float64
	var moves int
	switch c.Kind {
	case Guest:
		if p := r.Float64(); weekend && p > 0.03 || !weekend && p > 0.25 {
			return nil
		}
		from = float64(9*60 + r.IntN(6*60))
		to = from + float64(60+r.IntN(180))
		home = c.Home.APs[r.IntN(len(c.Home.APs))]
		moves = r.IntN(2)
	default:
		if p := r.Float64(); weekend && p > 0.06 || !weekend && p > 0.92 {
			return nil
		}
		from = float64(c.Arrive) + gauss(r, 15)
		to = float64(c.Leave) + gauss(r, 20)
		if weekend {
			from, to = float64(10*60+r.IntN(120)), float64(13*60+r.IntN(180))
		}
		moves = r.IntN(4)
	}
	// Away for lunch: phones go along, laptops sometimes close.
	type span struct{ a, b int64 }
	present := []span{{at(from), at(to)}}
	if p := r.Float64(); !weekend && (c.Kind == Phone && p < 0.5 || c.Kind == Laptop && p < 0.15) {
		out := float64(12*60+r.IntN(60)) + gauss(r, 5)
		back := out + float64(30+r.IntN(30))
		if at(out) > present[0].a && at(back) < present[0].b {
			present = []span{{present[0].a, at(out)}, {at(back), present[0].b}}
		}
	}
	// Meetings: a stretch at a neighbouring AP, then back.
	type move struct {
		at int64
		ap *AP
	}
	var ms []move
	for range moves {
		start := from + 30 + r.Float64()*max(0, to-from-90)
		length := float64(30 + r.IntN(60))
		nb := neighbour(home, r)
		if nb == home {
			continue
		}
		ms = append(ms, move{at(start), nb}, move{at(start + length), home})
	}
	slices.SortFunc(ms, func(a, b move) int { return int(a.at - b.at) })

	var segs []seg
	for _, p := range present {
		cur := seg{start: p.a, ap: home, connect: true}
		for _, m := range ms {
			if m.at <= p.a || m.at >= p.b || m.ap == cur.ap || m.at-cur.start < 2*minute {
				continue
			}
			cur.end = m.at
			segs = append(segs, cur)
			cur = seg{start: m.at, ap: m.ap, connect: true, roam: true}
		}
		cur.end, cur.leave = p.b, true
		segs = append(segs, cur)
	}
	return n.placed(c, segs)
}

// placed puts the client of each segment where it is: at its desk on its
// usual AP, near the AP elsewhere.
func (n *Network) placed(c *Client, segs []seg) []seg {
	for i := range segs {
		segs[i].at = n.spotAt(c, segs[i].ap, segs[i].start)
	}
	return segs
}

// incidentsOn applies the incidents to a client's segments: an AP that
// goes drops its clients, which find a neighbour after trying the AP
// they knew; a broken radio drops its clients and fails every
// association until they try a neighbour; RADIUS, passphrase and DHCP
// troubles force the clients they touch to connect again during the
// incident.
func (n *Network) incidentsOn(c *Client, segs []seg, incs []Incident, r *rand.Rand) []seg {
	for _, in := range incs {
		if in.Site != c.Home.Site {
			continue
		}
		var out []seg
		for _, s := range segs {
			if s.end <= in.From || s.start >= in.To {
				out = append(out, s)
				continue
			}
			switch in.Kind {
			case APDown, BadAP:
				if s.ap != in.AP || in.Kind == BadAP && !c.Band5 {
					out = append(out, s)
					continue
				}
				nb := neighbour(s.ap, r)
				code, sub, fails := 1, 102, 0 // association timed out: the AP is gone
				if in.Kind == BadAP {
					code, sub, fails = 1, 101, 1+r.IntN(3) // rejected by the broken radio, again and again
				}
				if s.start >= in.From {
					// It arrives or roams while the AP is gone: an AP
					// that is down sends no beacons, so it goes to the
					// neighbour at once; a broken radio still beacons,
					// and is tried first.
					s.ap, s.roam = nb, false
					if in.Kind == BadAP && s.connect {
						s.failOn, s.fails, s.failCode, s.failSub = in.AP, fails, code, sub
					}
					out = append(out, s)
					continue
				}
				// Dropped when the AP goes (or the radio hangs); it tries
				// again at the AP it knew (once or twice: its scan is
				// stale), then at the neighbour.
				kick := in.From + int64(r.IntN(60))*second
				if in.Kind == BadAP {
					kick = in.From + int64(r.IntN(600))*second
				}
				if kick >= s.end-10*second || kick >= in.To {
					out = append(out, s)
					continue
				}
				if in.Kind == APDown {
					fails = 1 + r.IntN(2)
				}
				first := s
				first.end, first.leave = kick, false
				out = append(out, first, seg{start: kick + 3*second, end: s.end, ap: nb, connect: true, leave: s.leave,
					failOn: in.AP, fails: fails, failCode: code, failSub: sub, at: s.at})
			case RadiusDown, RadiusReject, WrongPSK, DHCPExhaustion, SlowDHCP:
				switch {
				case (in.Kind == RadiusDown || in.Kind == RadiusReject) && c.SSID != SSIDCorp,
					in.Kind == WrongPSK && c.SSID != PSKSSID,
					(in.Kind == DHCPExhaustion || in.Kind == SlowDHCP) && r.IntN(2) == 0:
					out = append(out, s)
					continue
				}
				// 802.1X re-authentication, a lease renewal, or the
				// APs re-keying the SSID with its new passphrase: the
				// client must connect again.
				t := max(in.From, s.start+minute) + int64(r.IntN(12*60))*second
				if in.Kind == WrongPSK {
					t = max(in.From, s.start+minute) + int64(r.IntN(120))*second
				}
				if t >= s.end-minute || t >= in.To {
					out = append(out, s)
					continue
				}
				first := s
				first.end, first.leave = t, false
				out = append(out, first, seg{start: t, end: s.end, ap: s.ap, connect: true, leave: s.leave, at: s.at})
			case CoverageHole:
				out = append(out, n.coverageHole(c, s, in)...)
			default:
				out = append(out, s)
			}
		}
		segs = out
	}
	return segs
}

// Roaming: a client roams when its AP's signal falls under roamBelow and
// another AP is heard roamMargin better; an association to an AP heard
// under assocBelow times out.
const (
	roamBelow  = -75.0
	roamMargin = 8.0
	assocBelow = -82.0
)

// strongest is the AP of a's floor, a aside, that the client at s hears
// best on the band, and its signal (nil on a floor of one AP).
func strongest(s spot, a *AP, band5 bool) (*AP, float64) {
	var best *AP
	sig := math.Inf(-1)
	for _, o := range a.Floor.APs {
		if v := s.signal(o, band5, txPower(band5)); o != a && v > sig {
			best, sig = o, v
		}
	}
	return best, sig
}

// coverageHole is a segment s of client c under a coverage hole in: on
// another AP, untouched; on the weak AP when its power drops, the client
// roams to the AP it hears best if that is clearly better (most clients
// do, some drivers stick, IoT devices never roam); arriving while the AP
// is weak, a client too far to reach it fails to associate once and goes
// to that AP.
func (n *Network) coverageHole(c *Client, s seg, in Incident) []seg {
	if s.ap != in.AP {
		return []seg{s}
	}
	r := rng(n.Seed, 12, uint64(c.Index), uint64(in.From), uint64(s.start))
	weak := s.at.signal(in.AP, c.Band5, txPower(c.Band5)-float64(in.PowerDrop))
	nb, heard := strongest(s.at, in.AP, c.Band5)
	escape := nb != nil && weak < roamBelow && heard >= weak+roamMargin
	if s.start >= in.From {
		if escape && weak < assocBelow {
			s.ap, s.roam = nb, false
			if s.connect {
				s.failOn, s.fails, s.failCode, s.failSub = in.AP, 1, 1, 102 // association timed out
			}
		}
		return []seg{s}
	}
	if !escape || c.Kind == IoT || r.Float64() < 0.3 {
		return []seg{s}
	}
	at := in.From + int64(30+r.IntN(600))*second
	if at >= s.end-10*second || at >= in.To {
		return []seg{s}
	}
	first := s
	first.end, first.leave = at, false
	return []seg{first, {start: at, end: s.end, ap: nb, connect: true, roam: true, leave: s.leave, at: s.at}}
}

// Background failures: even on a network where nothing is wrong a few
// clients an hour fail to connect at a busy site (a wrong or stale
// password, a laptop that walks out of range, a phone with a stale
// profile, an old driver).
const (
	// failRate is the chance that any connection attempt fails.
	failRate = 0.05
	// flakyFirst is the chance that a flaky client's first attempt of the
	// day fails, and flakyRate that another does.
	flakyFirst, flakyRate = 0.5, 0.05
)

// failure is why a connection attempt at t fails (0, 0: it does not);
// first says it is the client's first attempt of the day.
func (n *Network) failure(c *Client, t int64, first bool, incs []Incident, r *rand.Rand) (code, sub int) {
	for _, in := range incs {
		if in.Site != c.Home.Site || t < in.From || t >= in.To {
			continue
		}
		switch {
		case in.Kind == RadiusDown && c.SSID == SSIDCorp:
			if r.Float64() < 0.7 {
				return 2, 203
			}
			return 2, 204 // the EAP exchange times out first
		case in.Kind == RadiusReject && c.SSID == SSIDCorp:
			if r.Float64() < 0.9 {
				return 2, 202
			}
			return 2, 204
		case in.Kind == WrongPSK && c.SSID == PSKSSID:
			return 2, 201
		case in.Kind == DHCPExhaustion:
			if r.Float64() < 0.75 {
				return 3, 301
			}
			return 3, 302
		case in.Kind == SlowDHCP:
			if r.Float64() < 0.45 {
				return 3, 301 // gave up waiting for the offer
			}
		}
	}
	p := failRate
	switch {
	case c.Flaky && first:
		p = flakyFirst
	case c.Flaky:
		p = flakyRate
	}
	if r.Float64() >= p {
		return 0, 0
	}
	x := r.Float64()
	if c.SSID == SSIDCorp {
		for _, f := range []struct {
			p         float64
			code, sub int
		}{{0.25, 2, 204}, {0.50, 1, 102}, {0.60, 2, 202}, {0.75, 3, 301}, {0.85, 3, 303}, {0.90, 1, 101}, {0.95, 2, 205}} {
			if x < f.p {
				return f.code, f.sub
			}
		}
		return 3, 304
	}
	for _, f := range []struct {
		p         float64
		code, sub int
	}{{0.40, 2, 201}, {0.70, 1, 102}, {0.80, 1, 103}, {0.90, 3, 301}} {
		if x < f.p {
			return f.code, f.sub
		}
	}
	return 3, 303
}

// dayOf builds a client's day from its plan and the incidents.
func (n *Network) dayOf(c *Client, midnight time.Time, incs []Incident) *day {
	r := rng(n.Seed, 4, uint64(c.Index), dayKey(midnight))
	segs := n.incidentsOn(c, n.plan(c, midnight), incs, r)
	d := &day{}
	last := int64(0)
	add := func(e Event) {
		e.Timestamp = max(e.Timestamp, last+1) // a client's events keep their order
		last = e.Timestamp
		e.EventID = fmt.Sprintf("sim%d-%d-%d", n.Seed, c.Index, e.Timestamp)
		e.MacAddress, e.SSID, e.ClientName, e.Username = c.MAC, c.SSID, c.Name, c.Username
		d.events = append(d.events, e)
	}
	corp := c.SSID == SSIDCorp
	attempts := 0
	for i, s := range segs {
		radio := s.ap.Radio(c.Band5)
		base := Event{BSSID: radio.BSSID, Channel: radio.Channel}
		inter := func(t int64, cat, typ, sub int) Event {
			e := base
			e.EventType, e.Timestamp, e.CategoryCode, e.TypeCode, e.SubTypeCode = "Intermediate", t, cat, typ, sub
			return e
		}
		connected := s.start
		if s.connect {
			connected = -1
			t := s.start
			roam := s.roam
			for tries := 0; tries < 1000 && t < s.end; tries++ {
				var code, sub int
				if tries < s.fails {
					// The AP it tries first is gone or broken.
					radio := s.failOn.Radio(c.Band5)
					base = Event{BSSID: radio.BSSID, Channel: radio.Channel}
					code, sub, roam = s.failCode, s.failSub, false
				} else {
					base = Event{BSSID: radio.BSSID, Channel: radio.Channel}
					code, sub = n.failure(c, t, attempts == 0, incs, r)
				}
				attempts++
				assoc := t + 5 + int64(r.IntN(40))
				// A roam that goes through: the client left its AP at t
				// and joins this one (roamTimes); what it sends first
				// here is the Success, which the server takes for the
				// roam.
				through := roam && code == 0
				var rAuth int64
				if through {
					assoc, rAuth = n.roamTimes(c, t)
				}
				if !roam && c.Band5 && r.Float64() < 0.1 {
					add(inter(t, 4, 21, 1)) // steered to 5 GHz
				}
				switch {
				case code == 1, through: // never associated, or said so in the Success
				case roam:
					ft := 0
					if fastTransition(c) {
						ft = 1
					}
					add(inter(assoc, 1, 2, ft))
				default:
					add(inter(assoc, 1, 1, 0))
				}
				auth := assoc
				if code == 1 {
					e := base
					e.EventType, e.Timestamp, e.FailureCode, e.SubFailureCode = "Failure", assoc+int64(r.IntN(900)), code, sub
					e.AssociationTimestamp = assoc
					add(e)
				} else {
					if corp && !(roam && c.Kind == Laptop) {
						if !through {
							add(inter(assoc+3, 2, 10, 0))
						}
						auth = assoc + 40 + int64(r.IntN(300))
						if code == 2 && (sub == 203 || sub == 204) {
							auth += 5000 + int64(r.IntN(5000)) // the wait for an answer that does not come
						}
					}
					if through {
						auth = rAuth
					}
					switch {
					case code == 2:
						e := base
						e.EventType, e.Timestamp, e.FailureCode, e.SubFailureCode = "Failure", auth, code, sub
						e.AssociationTimestamp = assoc
						if corp && sub != 201 {
							e.RadiusPrimaryIP = ptr(RadiusServer) // the server the AP asked
						}
						add(e)
					default:
						if corp && !(roam && c.Kind == Laptop) && !through {
							e := inter(auth, 2, 11, 0)
							e.RadiusPrimaryIP = ptr(RadiusServer)
							add(e)
							e = inter(auth+1, 2, 12, 0)
							e.DetailedRole, e.Vlan, e.BwUpload, e.BwDownload = ptr("employee"), ptr(20), ptr(50000), ptr(200000)
							add(e)
						}
						dhcp := int64(0)
						slow := active(SlowDHCP, c, t, incs) != nil
						if !roam {
							dhcp = 20 + int64(r.IntN(200))
							if slow {
								dhcp = 2500 + int64(r.IntN(6000)) // the DHCP server answers late
							}
						}
						net := auth + dhcp
						if code == 3 {
							wait := 3000 + int64(r.IntN(4000))
							if slow {
								wait = 10000 + int64(r.IntN(20000)) // the client waited for an offer
							}
							e := base
							e.EventType, e.Timestamp, e.FailureCode, e.SubFailureCode = "Failure", net+wait, code, sub
							e.AssociationTimestamp, e.AuthenticationTimestamp = assoc, auth
							add(e)
							break
						}
						if !roam {
							e := inter(net, 3, 30, 0)
							e.IP = ptr(fmt.Sprintf("10.%d.%d.%d", 100+c.Home.Site.Index, c.Index>>8&255, c.Index&255))
							e.Vlan = ptr(map[string]int{SSIDCorp: 20, SSIDGuest: 30, SSIDIoT: 40}[c.SSID])
							add(e)
						}
						dns := 2 + int64(r.IntN(40))
						e := base
						e.EventType, e.Timestamp = "Success", net+dns
						e.AssociationTimestamp, e.AuthenticationTimestamp, e.NetworkTimestamp = assoc, auth, net
						e.AAALatency, e.DHCPLatency, e.DNSLatency = auth-assoc, dhcp, dns
						e.RSSI = ptr(n.rssi(c, s, e.Timestamp, incs))
						if roam {
							e.FastTransition = ptr(fastTransition(c))
						}
						add(e)
						connected = e.Timestamp
					}
				}
				if connected >= 0 {
					break
				}
				// Failed: it tries again, as a new association (soon, at
				// another AP, when the one it tried is gone or broken).
				roam = false
				t = last + 45*second + int64(r.IntN(105))*second
				if tries < s.fails {
					t = last + 3*second + int64(r.IntN(20))*second
				}
			}
			base = Event{BSSID: radio.BSSID, Channel: radio.Channel}
		}
		if connected < 0 || connected >= s.end {
			continue
		}
		d.conns = append(d.conns, conn{from: connected, to: s.end, ap: s.ap, at: s.at})
		switch {
		case s.leave:
			reason := 8 // leaving the BSS
			if c.Kind == IoT {
				reason = 4 // inactivity
			}
			add(inter(s.end, 1, 3, reason))
		case i+1 < len(segs) && segs[i+1].roam && segs[i+1].start == s.end:
			// It walks to the next AP: it leaves this one where that
			// one is, with the signal this one gives there.
			e := inter(s.end, 1, 3, 8)
			e.RSSI = ptr(n.rssi(c, seg{ap: s.ap, at: segs[i+1].at}, s.end, incs))
			add(e)
		}
	}
	return d
}

// fastTransition says whether the client roams with 802.11r: the corp
// SSID offers it, and its laptops use it.
func fastTransition(c *Client) bool { return c.Kind == Laptop }

// roamTimes are when a client that leaves its AP at t for another
// associates there and is authorized: with a fast transition 50 to
// 150 ms later; else after a scan, with a full 802.1X exchange on corp
// (0.5 to 1.5 s) or a 4-way handshake (0.4 to 1.2 s). Its own draw, so
// that the rest of the client's day is drawn as it was.
func (n *Network) roamTimes(c *Client, t int64) (assoc, auth int64) {
	r := rng(n.Seed, 13, uint64(c.Index), uint64(t))
	switch {
	case fastTransition(c):
		assoc = t + 20 + r.Int64N(40)
		return assoc, assoc + 30 + r.Int64N(60)
	case c.SSID == SSIDCorp:
		assoc = t + 300 + r.Int64N(500)
		return assoc, assoc + 200 + r.Int64N(500)
	}
	assoc = t + 400 + r.Int64N(700)
	return assoc, assoc + 30 + r.Int64N(60)
}

// rssi is the signal (dBm) the client, where segment s puts it, has on
// s's AP at t.
func (n *Network) rssi(c *Client, s seg, t int64, incs []Incident) int {
	v := s.at.signal(s.ap, c.Band5, power(s.ap, c.Band5, t, incs))
	return max(-95, min(-30, int(math.Round(v))))
}

func ptr[T any](v T) *T { return &v }

// sample is the client's sample at t on its connection cn (a client
// samples every five minutes, at its own offset): its signal by its
// distance to the AP and the AP's power, heard by the neighbours by
// theirs; its SNR over the radio's noise floor; a rate by the signal, less
// what an incident's noise takes; retries; traffic.
func (n *Network) sample(c *Client, cn conn, t int64, incs []Incident) Sample {
	r := rng(n.Seed, 5, uint64(c.Index), uint64(t))
	a := cn.ap
	radio := a.Radio(c.Band5)
	rssi := n.rssi(c, seg{ap: a, at: cn.at}, t, incs) + int(gauss(r, 2))
	rssi = max(-95, min(-30, rssi))
	jitter := gauss(r, 2)
	var heard []Observation
	for _, o := range a.Floor.APs {
		if o == a {
			continue
		}
		v := n.rssi(c, seg{ap: o, at: cn.at}, t, incs) + int(jitter)
		if v >= -92 {
			heard = append(heard, Observation{BSSID: o.Radio(c.Band5).BSSID, RSSI: max(-95, min(-30, v))})
		}
	}
	slices.SortStableFunc(heard, func(x, y Observation) int { return y.RSSI - x.RSSI })
	noise, rise := n.noise(a, c.Band5, t, incs)
	rate := rateFor(rssi-rise, c.Band5, r)
	retry := 2 + r.Float64()*6
	if rssi < -72 {
		retry += 8 + r.Float64()*6
	}
	if c.Kind == IoT {
		rate = max(24, min(rate, 72))
	}
	for _, in := range incs {
		if in.Kind == Interference && in.Site == c.Home.Site && radio.Channel == InterferenceChannel && t >= in.From && t < in.To {
			retry = min(95, retry+25+r.Float64()*15)
			rate *= 0.12
		}
	}
	traffic := map[Kind]int64{Laptop: 40 << 20, Phone: 10 << 20, Guest: 15 << 20, IoT: 100 << 10}[c.Kind]
	tx := r.Int64N(traffic) / 4
	for i := range incs {
		if in := &incs[i]; in.Kind == CoChannel && busy(in, a, c.Band5, t) {
			// The other network takes most of the airtime, and frames
			// collide with its.
			retry = min(95, retry+20+r.Float64()*15)
			rate *= 0.2 + 0.15*r.Float64()
		}
	}
	s := Sample{MacAddress: c.MAC, Timestamp: t, BSSID: radio.BSSID, SSID: c.SSID, Channel: radio.Channel,
		FrequencyBand: bandName(c.Band5), RSSI: rssi, SNR: rssi - noise, DataRateMbps: float64(int(rate*10)) / 10,
		RetryRatePct: float64(int(retry*10)) / 10, TxBytes: tx, RxBytes: tx * 3,
		ClientName: c.Name, Username: c.Username}
	if len(heard) > 0 {
		s.BestNeighborRSSI = &heard[0].RSSI
		s.ObservedBy = heard[:min(3, len(heard))]
	}
	return s
}

// rateFor is a data rate for a signal on a band, in Mbps.
func rateFor(rssi int, band5 bool, r *rand.Rand) float64 {
	var lo, hi float64
	switch {
	case rssi >= -50:
		lo, hi = 600, 866
	case rssi >= -60:
		lo, hi = 300, 600
	case rssi >= -67:
		lo, hi = 150, 300
	case rssi >= -72:
		lo, hi = 50, 150
	case rssi >= -77:
		lo, hi = 12, 50
	default:
		lo, hi = 6, 12
	}
	rate := lo + r.Float64()*(hi-lo)
	if !band5 {
		rate = max(6, min(144, rate/4))
	}
	return rate
}
