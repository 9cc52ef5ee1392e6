package radius

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"sync/atomic"
	"time"
)

// Upstream is a RADIUS server that wnms passes requests on to: the
// site's own authentication or accounting server.
type Upstream struct {
	Address   string `json:"address"`   // host:port
	Secret    string `json:"secret"`    // shared with that server
	TimeoutMs int    `json:"timeoutMs"` // how long to wait for its answer before failing over
}

// String describes u without its secret, for logs and errors.
func (u Upstream) String() string {
	return fmt.Sprintf("{address: %s, secret: ***, timeoutMs: %d}", u.Address, u.TimeoutMs)
}

// DefaultTimeout is an upstream's timeout when its TimeoutMs is zero.
const DefaultTimeout = 3 * time.Second

// timeout is how long to wait for u's answer.
func (u Upstream) timeout() time.Duration {
	if u.TimeoutMs <= 0 {
		return DefaultTimeout
	}
	return time.Duration(u.TimeoutMs) * time.Millisecond
}

// SourceConfig is an AP or controller that may send RADIUS packets to
// wnms, by address.
type SourceConfig struct {
	Name         string       `json:"name"`
	CIDR         netip.Prefix `json:"cidr"`
	RadiusSecret string       `json:"radiusSecret"`
}

// String describes s without its secret, for logs and errors.
func (s SourceConfig) String() string {
	return fmt.Sprintf("{name: %s, cidr: %s, radiusSecret: ***}", s.Name, s.CIDR)
}

// Config is the RADIUS part of the data source configuration (decisions
// §21): where requests go and who may send them.
// The API nests the first two under "radius"; a source there has more
// fields (locationId, syslog) that are the caller's.
type Config struct {
	Upstreams           []Upstream     `json:"upstreams"`
	AccountingUpstreams []Upstream     `json:"accountingUpstreams"`
	Sources             []SourceConfig `json:"sources"`
}

// Source is a configured source a packet came from, as the Sink is told.
// Its secret is not in it: nothing downstream needs it. Group is the
// configuration the source came from (see SetGroups; 0 with Set).
type Source struct {
	Group int64
	Name  string
	CIDR  netip.Prefix
}

// key names the source among every group's.
func (s Source) key() string { return strconv.FormatInt(s.Group, 10) + "/" + s.Name }

type source struct {
	Source
	secret []byte
	// upstreams and accounting are the upstreams of the source's group.
	upstreams, accounting []*upstream
}

type upstream struct {
	addr    *net.UDPAddr
	ap      netip.AddrPort // addr, IPv4 unmapped, to match answers
	secret  []byte
	timeout time.Duration
	text    string // the address as configured, for events and logs
	group   int64  // the group (customer) whose configuration names it
}

// settings is the validated configuration, swapped whole.
type settings struct {
	sources []source // longest prefix first
}

// Validate reports the first problem of c: a source without a name,
// secret or valid CIDR, or an upstream whose address does not resolve as
// host:port or has no secret. Error texts never hold a secret.
func (c Config) Validate() error {
	_, err := compile(c)
	return err
}

func compile(c Config) (*settings, error) {
	return compileGroups(map[int64]Config{0: c})
}

// compileGroups compiles every group's configuration into one: each
// source keeps its group's upstreams. A prefix two groups both claim is an
// error, as a packet from it could not be told apart.
func compileGroups(gs map[int64]Config) (*settings, error) {
	s := &settings{}
	claimed := map[netip.Prefix]int64{}
	groups := make([]int64, 0, len(gs))
	for g := range gs {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	for _, g := range groups {
		first := len(s.sources)
		if err := s.add(g, gs[g]); err != nil {
			return nil, err
		}
		for _, src := range s.sources[first:] {
			if other, ok := claimed[src.CIDR]; ok && other != g {
				return nil, fmt.Errorf("source %q: cidr %s is another configuration's", src.Name, src.CIDR)
			}
			claimed[src.CIDR] = g
		}
	}
	sort.SliceStable(s.sources, func(i, j int) bool { return s.sources[i].CIDR.Bits() > s.sources[j].CIDR.Bits() })
	return s, nil
}

// add compiles the configuration of group g into s.
func (s *settings) add(g int64, c Config) error {
	ups, err := compileUpstreams("upstreams", c.Upstreams)
	if err != nil {
		return err
	}
	acct, err := compileUpstreams("accountingUpstreams", c.AccountingUpstreams)
	if err != nil {
		return err
	}
	for _, u := range append(slices.Clip(ups), acct...) {
		u.group = g
	}
	for i, sc := range c.Sources {
		if sc.Name == "" {
			return fmt.Errorf("sources[%d]: a name is required", i)
		}
		if !sc.CIDR.IsValid() {
			return fmt.Errorf("sources[%d] %q: cidr is not a valid prefix", i, sc.Name)
		}
		if sc.RadiusSecret == "" {
			return fmt.Errorf("sources[%d] %q: radiusSecret is required", i, sc.Name)
		}
		p := sc.CIDR.Masked()
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		s.sources = append(s.sources, source{Source{g, sc.Name, p}, []byte(sc.RadiusSecret), ups, acct})
	}
	return nil
}

func compileUpstreams(field string, us []Upstream) ([]*upstream, error) {
	var out []*upstream
	for i, u := range us {
		if u.Secret == "" {
			return nil, fmt.Errorf("%s[%d] %q: secret is required", field, i, u.Address)
		}
		if u.TimeoutMs < 0 || u.TimeoutMs > 60_000 {
			return nil, fmt.Errorf("%s[%d] %q: timeoutMs must be 0 to 60000", field, i, u.Address)
		}
		a, err := net.ResolveUDPAddr("udp", u.Address)
		if err != nil {
			if e := errors.Unwrap(err); e != nil {
				err = e
			}
			return nil, fmt.Errorf("%s[%d] %q: %v", field, i, u.Address, err)
		}
		if a.Port == 0 {
			return nil, fmt.Errorf("%s[%d] %q: a port is required", field, i, u.Address)
		}
		ap := a.AddrPort()
		ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		out = append(out, &upstream{addr: a, ap: ap, secret: []byte(u.Secret), timeout: u.timeout(), text: u.Address})
	}
	return out, nil
}

// lookup returns the source whose CIDR holds a, the most specific first.
func (s *settings) lookup(a netip.Addr) (*source, bool) {
	a = a.Unmap()
	for i := range s.sources {
		if s.sources[i].CIDR.Contains(a) {
			return &s.sources[i], true
		}
	}
	return nil, false
}

// Settings holds the configuration the listeners use, swapped at run time
// as a whole (PUT /V5/datasources) without stopping them: a packet is
// handled with the configuration it found when it arrived.
type Settings struct {
	p atomic.Pointer[settings]
}

// NewSettings returns Settings holding c, or c's first problem (see
// Config.Validate).
func NewSettings(c Config) (*Settings, error) {
	s := &Settings{}
	return s, s.Set(c)
}

// Set replaces the configuration with c; on a problem (see
// Config.Validate) the current one stays.
func (s *Settings) Set(c Config) error {
	v, err := compile(c)
	if err != nil {
		return err
	}
	s.p.Store(v)
	return nil
}

// SetGroups replaces the configuration with several independent ones (a
// server's customers), each source answered with its own group's
// upstreams and told to the Sink with its group; on a problem the
// current configuration stays.
func (s *Settings) SetGroups(gs map[int64]Config) error {
	v, err := compileGroups(gs)
	if err != nil {
		return err
	}
	s.p.Store(v)
	return nil
}

func (s *Settings) load() *settings {
	if v := s.p.Load(); v != nil {
		return v
	}
	return &settings{}
}

// Lookup returns the source that address a belongs to, and whether there
// is one.
func (s *Settings) Lookup(a netip.Addr) (Source, bool) {
	src, ok := s.load().lookup(a)
	if !ok {
		return Source{}, false
	}
	return src.Source, true
}
