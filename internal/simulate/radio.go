package simulate

// The radio side of the network: where a client is on its floor, the
// signal an AP gives it there, and what each AP radio reports every
// SampleEvery (channel, utilisation, noise floor, clients, transmit
// power).

import (
	"math"
	"math/rand/v2"
)

// The floor plan (layoutOf): a floor FloorWidth m deep with its APs in a
// row along the corridor, APSpacing m apart, the first 6 m from the end
// wall.
const (
	APSpacing  = 12.0
	FloorWidth = 20.0
	corridorY  = 16.0
)

// Transmit power of the radios (dBm): the 2.4 GHz radio lower, so that
// both bands' cells are about the same size, as WLAN designs set them.
const (
	TxPower5  = 20
	TxPower24 = 14
)

// The path loss is log-distance: lossAt1m at 1 m (46 dB at 5 GHz, 40 dB
// at 2.4 GHz), then lossExponent·10 dB a decade (an office's walls and
// people). With the powers above a client hears an AP at −26 dBm at 1 m,
// −69 dBm at 14.5 m.
const (
	lossAt1m5, lossAt1m24 = 46.0, 40.0
	lossExponent          = 3.7
)

// Position is an AP's place on its floor (m).
func (a *AP) Position() (x, y float64) {
	return 6 + APSpacing*float64(a.Index), corridorY
}

// floorLength is the length of a floor's layout (m).
func floorLength(f *Floor) float64 { return float64(max(20, 12*len(f.APs))) }

// spot is where a client is on its floor (m), and what the walls around
// it take from every signal (dB).
type spot struct {
	X, Y, Loss float64
}

// txPower is a radio's usual transmit power.
func txPower(band5 bool) float64 {
	if band5 {
		return TxPower5
	}
	return TxPower24
}

// signalAt is the signal (dBm) a radio of transmit power tx gives at d m.
func signalAt(tx float64, band5 bool, d float64) float64 {
	loss := lossAt1m24
	if band5 {
		loss = lossAt1m5
	}
	return tx - loss - 10*lossExponent*math.Log10(max(d, 1))
}

// distanceFor is the distance at which a radio of transmit power tx gives
// rssi.
func distanceFor(tx float64, band5 bool, rssi float64) float64 {
	return math.Pow(10, (signalAt(tx, band5, 1)-rssi)/(10*lossExponent))
}

// signal is the signal the client at s hears from a's radio on the band,
// sent at tx dBm.
func (s spot) signal(a *AP, band5 bool, tx float64) float64 {
	x, y := a.Position()
	return signalAt(tx, band5, math.Hypot(s.X-x, s.Y-y)) - s.Loss
}

// placeNear draws a spot where a's radio on the band gives rssi: at the
// distance the path loss says, in a's cell (the part of the row nearer a
// than any other AP) when it fits there, else anywhere on the floor (a
// client in a far corner, nearer another AP than its own); when the floor
// is too small for the distance, at its corner farthest from a, with the
// walls taking the rest.
func placeNear(a *AP, band5 bool, rssi float64, r *rand.Rand) spot {
	d := distanceFor(txPower(band5), band5, rssi)
	x0, y0 := a.Position()
	length := floorLength(a.Floor)
	inside := func(x, y, lo, hi float64) bool { return x >= lo && x <= hi && y >= 0.5 && y <= FloorWidth-0.5 }
	for try := range 64 {
		lo, hi := max(0.5, x0-APSpacing/2), min(length-0.5, x0+APSpacing/2)
		if try >= 32 {
			lo, hi = 0.5, length-0.5
		}
		a := 2 * math.Pi * r.Float64()
		if x, y := x0+d*math.Cos(a), y0+d*math.Sin(a); inside(x, y, lo, hi) {
			return spot{X: x, Y: y}
		}
	}
	var far spot
	for _, c := range [][2]float64{{0.5, 0.5}, {length - 0.5, 0.5}, {0.5, FloorWidth - 0.5}, {length - 0.5, FloorWidth - 0.5}} {
		if s := (spot{X: c[0], Y: c[1]}); math.Hypot(s.X-x0, s.Y-y0) > math.Hypot(far.X-x0, far.Y-y0) {
			far = s
		}
	}
	far.Loss = max(0, far.signal(a, band5, txPower(band5))-rssi)
	return far
}

// spotAt is where the client is while on AP a from t: at its desk near
// its usual AP, else in a room near a (a meeting, a guest's seat) where a
// gives it 6 dB less than its desk gets from its own AP.
func (n *Network) spotAt(c *Client, a *AP, t int64) spot {
	if a.Index == c.HomeAP && a.Floor == c.Home {
		return c.desk
	}
	return placeNear(a, c.Band5, float64(c.BaseRSSI-6), rng(n.Seed, 10, uint64(c.Index), uint64(t)))
}

// RadioSample is an AP radio's sample in the shape ingest takes
// (docs/api.md §26).
type RadioSample struct {
	BSSID          string  `json:"bssid"`
	Timestamp      int64   `json:"timestamp"`
	Channel        int     `json:"channel"`
	FrequencyBand  string  `json:"frequencyBand"`
	UtilizationPct float64 `json:"utilizationPct"`
	NoiseDBm       int     `json:"noiseDbm"`
	Clients        int     `json:"clients"`
	TxPowerDBm     int     `json:"txPowerDbm"`
}

// radioKey names a radio in the draws.
func radioKey(a *AP, band5 bool) uint64 {
	k := uint64(a.Floor.Site.Index)<<24 | uint64(a.Floor.Index)<<12 | uint64(a.Index)<<1
	if band5 {
		k |= 1
	}
	return k
}

// bucket is the start of the SampleEvery a time is in.
func bucket(t int64) int64 { return t - ((t%SampleEvery)+SampleEvery)%SampleEvery }

// bandName names a band as ingest does.
func bandName(band5 bool) string {
	if band5 {
		return "BAND_5_GHZ"
	}
	return "BAND_2_4_GHZ"
}

// busy says whether an interference incident is on a's radio of the
// band at t: interference on InterferenceChannel at its site, or
// co-channel interference on its AP's 5 GHz radio.
func busy(in *Incident, a *AP, band5 bool, t int64) bool {
	if t < in.From || t >= in.To || !band5 {
		return false
	}
	switch in.Kind {
	case Interference:
		return a.Floor.Site == in.Site && a.Radio5.Channel == InterferenceChannel
	case CoChannel:
		return a == in.AP
	}
	return false
}

// noise is the noise floor of a's radio on the band at t (dBm), steady
// for a SampleEvery, and how much of it an incident adds: −95 to −90 dBm
// on a quiet channel, 6 to 10 dB more under interference, 8 to 14 under
// co-channel interference.
func (n *Network) noise(a *AP, band5 bool, t int64, incs []Incident) (floor, rise int) {
	key := radioKey(a, band5)
	base := -94 + rng(n.Seed, 7, key).IntN(4)
	r := rng(n.Seed, 7, key, uint64(bucket(t)))
	floor = base - 1 + r.IntN(3)
	for i := range incs {
		if in := &incs[i]; busy(in, a, band5, t) {
			if in.Kind == CoChannel {
				rise = max(rise, 8+r.IntN(7))
			} else {
				rise = max(rise, 6+r.IntN(5))
			}
		}
	}
	return floor + rise, rise
}

// power is the transmit power of a's radio on the band at t (dBm): its
// usual, less the drop of a coverage hole on a.
func power(a *AP, band5 bool, t int64, incs []Incident) float64 {
	p := txPower(band5)
	for _, in := range incs {
		if in.Kind == CoverageHole && in.AP == a && t >= in.From && t < in.To {
			p -= float64(in.PowerDrop)
		}
	}
	return p
}

// airtime is the share of a radio's airtime (percentage points at
// 5 GHz) a client of the kind takes with its traffic; at 2.4 GHz, with
// its lower rates, loadFactor24 times more.
var airtime = map[Kind]float64{Laptop: 3, Phone: 1, Guest: 1.5, IoT: 0.2}

const loadFactor24 = 2.2

// load is what a radio carries at a sample time: its clients and their
// airtime.
type load struct {
	clients int
	airtime float64
}

// radioSample is a's radio's sample at t (a SampleEvery boundary), with
// the clients associated to it then: channel and band, utilisation by
// load (a 2.4 GHz channel is busier: the neighbours' networks and its
// slower rates), plus what an interference incident adds; noise floor;
// clients; transmit power.
func (n *Network) radioSample(a *AP, band5 bool, t int64, l load, incs []Incident) RadioSample {
	r := rng(n.Seed, 9, radioKey(a, band5), uint64(t))
	util := 3 + 4*r.Float64() + l.airtime
	if !band5 {
		util = 12 + 6*r.Float64() + loadFactor24*l.airtime
	}
	util += gauss(r, 1.5)
	for i := range incs {
		if in := &incs[i]; busy(in, a, band5, t) {
			if in.Kind == CoChannel {
				util = max(util, 80+15*r.Float64())
			} else {
				util += 35 + 15*r.Float64()
			}
		}
	}
	noise, _ := n.noise(a, band5, t, incs)
	radio := a.Radio(band5)
	return RadioSample{BSSID: radio.BSSID, Timestamp: t, Channel: radio.Channel, FrequencyBand: bandName(band5),
		UtilizationPct: math.Round(10*max(0, min(100, util))) / 10, NoiseDBm: noise, Clients: l.clients,
		TxPowerDBm: int(math.Round(power(a, band5, t, incs)))}
}

// down says whether an ap-down incident has taken a at t.
func down(a *AP, t int64, incs []Incident) bool {
	for _, in := range incs {
		if in.Kind == APDown && in.AP == a && t >= in.From && t < in.To {
			return true
		}
	}
	return false
}
