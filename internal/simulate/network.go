// Package simulate is the simulated network of `wnms simulate` and
// `wnms serve --demo`: sites, floors, APs and clients whose days follow a
// daily curve, roam, fail now and then, and live through incidents. It
// reaches a server only through its public HTTP API, as sensors and APs do.
//
// Everything it sends is a function of the seed, the sizes and the time:
// a client's day is drawn from (seed, client, local date) alone, so the
// same flags give the same records with the same eventIds, and a re-run
// over the same window is answered with duplicates.
package simulate

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"
)

// Limits of the sizes: enough for a large campus, small enough that a
// typing mistake does not start a run of days.
const (
	MaxSites       = 100
	MaxFloors      = 50
	MaxAPsPerFloor = 64
	MaxClients     = 100_000
	MaxDays        = 30
)

// SSIDs the simulated network offers.
const (
	SSIDCorp  = "corp"
	SSIDGuest = "guest"
	SSIDIoT   = "iot"
)

// Channels of the radios: AP i of a floor has 2.4 GHz channel
// channels24[i%3] and 5 GHz channel channels5[i%4], a common plan that
// stays off DFS channels.
var (
	channels24 = []int{1, 6, 11}
	channels5  = []int{36, 40, 44, 48}
)

// InterferenceChannel is the 5 GHz channel an interference incident hits.
const InterferenceChannel = 36

// Network is the simulated network: its sites and clients.
type Network struct {
	Seed    uint64
	Sites   []*Site
	Clients []*Client
	// OpenWeekends makes Saturdays and Sundays working days (a hospital,
	// a shop): the people come as on any other day.
	OpenWeekends bool
}

// Site is a folder "Sim Site N" with its floors. Local time (the daily
// curve) is in the site's time zone.
type Site struct {
	Index  int // 0-based
	Name   string
	TZ     *time.Location
	LocID  int64 // the folder's location id on the server, once known
	Floors []*Floor
}

// Floor is a floor "Floor M" of a site, with its APs in a row: AP i's
// neighbours are i-1 and i+1.
type Floor struct {
	Site  *Site
	Index int
	Name  string
	LocID int64
	APs   []*AP
}

// AP is an access point with a 2.4 GHz and a 5 GHz radio.
type AP struct {
	Floor   *Floor
	Index   int
	Name    string
	MAC     string
	IP      string
	Radio24 Radio
	Radio5  Radio
}

// Radio is one radio of an AP, named by its BSSID.
type Radio struct {
	BSSID   string
	Channel int
}

// Radio answers the AP's radio on a band.
func (a *AP) Radio(band5 bool) Radio {
	if band5 {
		return a.Radio5
	}
	return a.Radio24
}

// Kind is what a client is: it decides its SSID, its day and its radio.
type Kind int

const (
	Laptop Kind = iota // corp, 802.1X, office hours
	Phone              // corp, 802.1X, office hours, out at lunch
	Guest              // guest, now and then for a few hours
	IoT                // iot, always there, 2.4 GHz
)

func (k Kind) String() string {
	return [...]string{"laptop", "phone", "guest", "iot"}[k]
}

// Client is a simulated client: who it is, where it lives and its habits.
type Client struct {
	Index    int
	MAC      string
	Kind     Kind
	SSID     string
	Name     string
	Username string // the 802.1X identity on corp
	Home     *Floor
	HomeAP   int  // index of its usual AP on the home floor
	Band5    bool // uses the 5 GHz radio
	// Habits, in minutes after local midnight, and the signal at its
	// usual AP (dBm).
	Arrive, Leave int
	BaseRSSI      int
	// Flaky: an old driver that usually fails its first connection of
	// the day and now and then another.
	Flaky  bool
	offset int64
	// desk is where it sits, in its usual AP's cell, at the distance
	// where that AP gives it BaseRSSI.
	desk spot
}

// Sizes are the sizes of a simulated network.
type Sizes struct {
	Sites, Floors, APsPerFloor, Clients int
}

// Check refuses sizes out of range.
func (s Sizes) Check() error {
	for _, c := range []struct {
		name   string
		v, max int
	}{{"sites", s.Sites, MaxSites}, {"floors", s.Floors, MaxFloors}, {"aps-per-floor", s.APsPerFloor, MaxAPsPerFloor},
		{"clients", s.Clients, MaxClients}} {
		if c.v < 1 || c.v > c.max {
			return fmt.Errorf("--%s must be 1 to %d, not %d", c.name, c.max, c.v)
		}
	}
	return nil
}

// rng is a random source for one purpose, fixed by the seed and the keys:
// the same keys always draw the same numbers.
func rng(seed uint64, keys ...uint64) *rand.Rand {
	h := fnv.New64a()
	var b [8]byte
	for _, k := range append([]uint64{seed}, keys...) {
		for i := range b {
			b[i] = byte(k >> (8 * i))
		}
		h.Write(b[:])
	}
	s := h.Sum64()
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}

// NewNetwork lays out the network of seed and sizes; every site is in tz.
// A client's traits depend on the seed and its index only, so adding
// clients keeps the others as they were.
func NewNetwork(seed uint64, sz Sizes, tz *time.Location) *Network {
	n := &Network{Seed: seed}
	tag := rng(seed, 0).Uint32() // MACs of different seeds differ
	t1, t2 := byte(tag), byte(tag>>8)
	for s := range sz.Sites {
		site := &Site{Index: s, Name: fmt.Sprintf("Sim Site %d", s+1), TZ: tz}
		for f := range sz.Floors {
			fl := &Floor{Site: site, Index: f, Name: fmt.Sprintf("Floor %d", f+1)}
			for i := range sz.APsPerFloor {
				mac := func(first byte) string {
					return fmt.Sprintf("%02X:%02X:%02X:%02X:%02X:%02X", first, t1, t2, s, f, i)
				}
				fl.APs = append(fl.APs, &AP{Floor: fl, Index: i,
					Name: fmt.Sprintf("S%d-F%d-AP%d", s+1, f+1, i+1), MAC: mac(0x16),
					IP:      fmt.Sprintf("10.%d.%d.%d", s+1, f+1, i+10),
					Radio24: Radio{BSSID: mac(0x1A), Channel: channels24[i%len(channels24)]},
					Radio5:  Radio{BSSID: mac(0x1E), Channel: channels5[i%len(channels5)]}})
			}
			site.Floors = append(site.Floors, fl)
		}
		n.Sites = append(n.Sites, site)
	}
	var floors []*Floor
	for _, s := range n.Sites {
		floors = append(floors, s.Floors...)
	}
	for i := range sz.Clients {
		r := rng(seed, 1, uint64(i))
		c := &Client{Index: i, MAC: fmt.Sprintf("02:%02X:%02X:%02X:%02X:%02X", t1, t2, byte(i>>16), byte(i>>8), byte(i)),
			Home: floors[i%len(floors)]}
		c.HomeAP = r.IntN(len(c.Home.APs))
		switch x := r.Float64(); {
		case x < 0.40:
			c.Kind, c.SSID, c.Band5 = Laptop, SSIDCorp, r.Float64() < 0.9
			c.Name = fmt.Sprintf("laptop-%04d", i+1)
		case x < 0.65:
			c.Kind, c.SSID, c.Band5 = Phone, SSIDCorp, r.Float64() < 0.8
			c.Name = fmt.Sprintf("phone-%04d", i+1)
		case x < 0.82:
			c.Kind, c.SSID, c.Band5 = Guest, SSIDGuest, r.Float64() < 0.6
			c.Name = fmt.Sprintf("guest-%04d", i+1)
		default:
			c.Kind, c.SSID, c.Band5 = IoT, SSIDIoT, false
			c.Name = fmt.Sprintf("sensor-%04d", i+1)
		}
		if c.SSID == SSIDCorp {
			c.Username = fmt.Sprintf("user%04d@corp.example", i+1)
		}
		c.Arrive = 7*60 + 30 + r.IntN(150) // 07:30–10:00
		c.Leave = 16*60 + 30 + r.IntN(150) // 16:30–19:00
		c.BaseRSSI = -42 - r.IntN(28)      // -42 to -69 dBm
		if r.Float64() < 0.06 {
			c.BaseRSSI = -76 - r.IntN(5) // a far corner
		}
		c.Flaky = r.Float64() < 0.04
		c.offset = int64(r.IntN(300)) * 1000 // its place in the 5-minute sample cycle
		// Its own draw, so that the traits above stay what they were.
		c.desk = placeNear(c.Home.APs[c.HomeAP], c.Band5, float64(c.BaseRSSI), rng(seed, 8, uint64(i)))
		n.Clients = append(n.Clients, c)
	}
	return n
}

// APs lists every AP of the network.
func (n *Network) APs() []*AP {
	var out []*AP
	for _, s := range n.Sites {
		for _, f := range s.Floors {
			out = append(out, f.APs...)
		}
	}
	return out
}

// Floors counts the floors of the network.
func (n *Network) Floors() int {
	k := 0
	for _, s := range n.Sites {
		k += len(s.Floors)
	}
	return k
}
