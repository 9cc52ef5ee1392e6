package radius

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"sync"
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
	// MessageAuthenticatorOptional takes its Access-Requests without a
	// Message-Authenticator too (the API's requireMessageAuthenticator
	// false). By default one is required on every Access-Request, as
	// FreeRADIUS does against BlastRADIUS (CVE-2024-3596): without it
	// nothing shows that the request came from a holder of the secret.
	MessageAuthenticatorOptional bool `json:"messageAuthenticatorOptional"`
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
	secret     []byte
	optionalMA bool // MessageAuthenticatorOptional
	// upstreams and accounting are the upstreams of the source's group.
	upstreams, accounting []*upstream
}

type upstream struct {
	addr    *net.UDPAddr   // nil: down, see down
	ap      netip.AddrPort // addr, IPv4 unmapped, to match answers
	secret  []byte
	timeout time.Duration
	text    string // the address as configured, for events and logs
	key     string // the group and text: its dead or alive state is its group's own
	down    string // why it cannot be used (its name does not resolve, a refused address)
	group   int64  // the group (customer) whose configuration names it
}

// settings is the validated configuration, swapped whole.
type settings struct {
	sources []source // longest prefix first
}

// Validate reports the first problem of c: a source without a name,
// secret or valid CIDR, or an upstream whose address does not resolve as
// host:port, is refused (see Settings.Check), or has no secret. Error
// texts never hold a secret.
func (c Config) Validate() error {
	_, err := compile(c, nil)
	return err
}

// compile compiles c as group 0, strictly: any problem is an error.
func compile(c Config, g *guard) (*settings, error) {
	s := &settings{}
	if err := s.add(0, c, g, true, resolve); err != nil {
		return nil, err
	}
	s.sort()
	return s, nil
}

// compileGroups compiles every group's configuration into one, each on
// its own: each source keeps its group's upstreams. A group that cannot
// be compiled is left out and its problem returned, the others are not
// touched by it; so is a group that claims a prefix a group of a lower
// number holds, as a packet from it could not be told apart. An upstream
// whose name does not resolve now, or resolves to a refused address, is
// kept down (its requests fail over to the next) and named in the
// problems; the group stays.
func compileGroups(gs map[int64]Config, g *guard) (*settings, []error) {
	s := &settings{}
	claimed := map[netip.Prefix]int64{}
	groups := make([]int64, 0, len(gs))
	for n := range gs {
		groups = append(groups, n)
	}
	slices.Sort(groups)
	res := resolveAll(gs)
	var problems []error
	for _, n := range groups {
		one := &settings{}
		if err := one.add(n, gs[n], g, false, res); err != nil {
			problems = append(problems, fmt.Errorf("configuration %d not in force: %w", n, err))
			continue
		}
		var clash error
		for _, src := range one.sources {
			if other, ok := claimed[src.CIDR]; ok && other != n {
				clash = fmt.Errorf("configuration %d not in force: source %q: cidr %s is another configuration's", n, src.Name, src.CIDR)
				break
			}
		}
		if clash != nil {
			problems = append(problems, clash)
			continue
		}
		for _, src := range one.sources {
			claimed[src.CIDR] = n
		}
		for _, u := range one.upstreamsDown() {
			problems = append(problems, fmt.Errorf("configuration %d: upstream %q is down: %s", n, u.text, u.down))
		}
		s.sources = append(s.sources, one.sources...)
	}
	s.sort()
	return s, problems
}

func (s *settings) sort() {
	sort.SliceStable(s.sources, func(i, j int) bool { return s.sources[i].CIDR.Bits() > s.sources[j].CIDR.Bits() })
}

// upstreamsDown lists the upstreams of s that are down, once each.
func (s *settings) upstreamsDown() []*upstream {
	var out []*upstream
	for _, src := range s.sources {
		for _, u := range append(slices.Clip(src.upstreams), src.accounting...) {
			if u.down != "" && !slices.Contains(out, u) {
				out = append(out, u)
			}
		}
	}
	return out
}

// add compiles the configuration of group n into s, resolving host names
// with res. When strict, an upstream that does not resolve or is refused
// is an error; else it is kept down.
func (s *settings) add(n int64, c Config, g *guard, strict bool, res resolver) error {
	ups, err := compileUpstreams(n, "upstreams", c.Upstreams, g, strict, res)
	if err != nil {
		return err
	}
	acct, err := compileUpstreams(n, "accountingUpstreams", c.AccountingUpstreams, g, strict, res)
	if err != nil {
		return err
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
			p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
		}
		s.sources = append(s.sources, source{Source{n, sc.Name, p}, []byte(sc.RadiusSecret), sc.MessageAuthenticatorOptional, ups, acct})
	}
	return nil
}

// resolveTimeout bounds the resolution of one upstream's host name.
const resolveTimeout = 2 * time.Second

func compileUpstreams(n int64, field string, us []Upstream, g *guard, strict bool, res resolver) ([]*upstream, error) {
	var out []*upstream
	for i, u := range us {
		if u.Secret == "" {
			return nil, fmt.Errorf("%s[%d] %q: secret is required", field, i, u.Address)
		}
		if u.TimeoutMs < 0 || u.TimeoutMs > 60_000 {
			return nil, fmt.Errorf("%s[%d] %q: timeoutMs must be 0 to 60000", field, i, u.Address)
		}
		host, port, err := net.SplitHostPort(u.Address)
		if err != nil {
			return nil, fmt.Errorf("%s[%d] %q: host:port required", field, i, u.Address)
		}
		pn, err := strconv.ParseUint(port, 10, 16)
		if err != nil || pn == 0 {
			return nil, fmt.Errorf("%s[%d] %q: a port 1 to 65535 is required", field, i, u.Address)
		}
		up := &upstream{secret: []byte(u.Secret), timeout: u.timeout(), text: u.Address,
			key: strconv.FormatInt(n, 10) + "/" + u.Address, group: n}
		a, err := res(host)
		if err == nil {
			err = g.check(netip.AddrPortFrom(a, uint16(pn)))
		}
		if err != nil {
			if strict {
				return nil, fmt.Errorf("%s[%d] %q: %v", field, i, u.Address, err)
			}
			up.down = err.Error()
			out = append(out, up)
			continue
		}
		up.ap = netip.AddrPortFrom(a, uint16(pn))
		up.addr = net.UDPAddrFromAddrPort(up.ap)
		out = append(out, up)
	}
	return out, nil
}

// A resolver returns a host's address (see resolve).
type resolver func(host string) (netip.Addr, error)

// resolvers bounds the names resolveAll resolves at once.
const resolvers = 32

// resolveAll resolves every host name of gs's upstreams at once (at most
// resolvers at a time), each once, so that names that time out delay a
// reload of many customers by a few resolveTimeouts, not one each; and
// returns a resolver that answers from what it found.
func resolveAll(gs map[int64]Config) resolver {
	type result struct {
		a   netip.Addr
		err error
	}
	found := map[string]*result{}
	for _, c := range gs {
		for _, u := range append(slices.Clip(c.Upstreams), c.AccountingUpstreams...) {
			if host, _, err := net.SplitHostPort(u.Address); err == nil {
				if _, err := netip.ParseAddr(host); err != nil {
					found[host] = &result{}
				}
			}
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, resolvers)
	for host, r := range found {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r.a, r.err = resolve(host)
		}()
	}
	wg.Wait()
	return func(host string) (netip.Addr, error) {
		if r, ok := found[host]; ok {
			return r.a, r.err
		}
		return resolve(host)
	}
}

// resolve returns host's address (IPv4 unmapped), the first the
// resolver gives for a name, within resolveTimeout.
func resolve(host string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return netip.Addr{}, errors.New("an address with a zone is not an upstream")
		}
		return a.Unmap(), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	as, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		var de *net.DNSError
		if errors.As(err, &de) {
			if de.IsNotFound {
				return netip.Addr{}, fmt.Errorf("host name %q does not resolve", host)
			}
			return netip.Addr{}, fmt.Errorf("host name %q: %s", host, de.Err)
		}
		return netip.Addr{}, err
	}
	if len(as) == 0 {
		return netip.Addr{}, fmt.Errorf("host name %q does not resolve", host)
	}
	// IPv4 first, as net.ResolveUDPAddr did.
	for _, a := range as {
		if a.Unmap().Is4() {
			return a.Unmap(), nil
		}
	}
	return as[0], nil
}

// metadataAddrs are the cloud metadata and host services reachable from
// a virtual machine, which no RADIUS server is: AWS, GCP, Azure, Oracle
// and OpenStack (169.254.169.254, and AWS's fd00:ec2::254), AWS ECS
// (169.254.170.2), Alibaba Cloud (100.100.100.200), Azure's host
// (168.63.129.16) and Oracle Cloud's older one (192.0.0.192).
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("169.254.170.2"), netip.MustParseAddr("100.100.100.200"),
	netip.MustParseAddr("168.63.129.16"), netip.MustParseAddr("192.0.0.192"),
}

// guard refuses the addresses an upstream may not have: wnms's own RADIUS
// listeners (a request sent there would loop), link-local, cloud
// metadata, unspecified and multicast addresses. A nil guard knows no
// listener.
type guard struct {
	own []netip.AddrPort // the listeners, IPv4 unmapped
	// local lists the host's own addresses, for a listener bound to all
	// of them.
	local func() []netip.Addr
}

func (g *guard) check(ap netip.AddrPort) error {
	a := ap.Addr().Unmap()
	switch {
	case slices.Contains(metadataAddrs, a):
		return fmt.Errorf("%s is a cloud metadata address, not an upstream", a)
	case a.IsLinkLocalUnicast():
		return fmt.Errorf("%s is a link-local address, not an upstream", a)
	case a.IsUnspecified() || a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return fmt.Errorf("%s is not an address to send to", a)
	}
	if g == nil {
		return nil
	}
	for _, l := range g.own {
		if l.Port() != ap.Port() {
			continue
		}
		if l.Addr() == a || (l.Addr().IsUnspecified() && g.isLocal(a)) {
			return fmt.Errorf("%s is one of wnms's own RADIUS listeners (%s), not an upstream", netip.AddrPortFrom(a, ap.Port()), l)
		}
	}
	return nil
}

// isLocal reports whether a is an address of this host.
func (g *guard) isLocal(a netip.Addr) bool {
	if a.IsLoopback() {
		return true
	}
	if g.local == nil {
		return false
	}
	return slices.Contains(g.local(), a)
}

// interfaceAddrs lists the addresses of the host's interfaces.
func interfaceAddrs() []netip.Addr {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range as {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap().WithZone(""))
		}
	}
	return out
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
	p  atomic.Pointer[settings]
	mu sync.Mutex
	g  *guard // the listeners told by SetListeners (s.mu)
}

// NewSettings returns Settings holding c, or c's first problem (see
// Config.Validate).
func NewSettings(c Config) (*Settings, error) {
	s := &Settings{}
	return s, s.Set(c)
}

// SetListeners tells s the addresses wnms's RADIUS listeners are bound
// to, which no upstream may have: a listener bound to all addresses
// (0.0.0.0 or ::) refuses every address of this host on its port.
// Configurations set before are not checked again.
func (s *Settings) SetListeners(addrs ...netip.AddrPort) {
	g := &guard{local: interfaceAddrs}
	for _, a := range addrs {
		g.own = append(g.own, netip.AddrPortFrom(a.Addr().Unmap(), a.Port()))
	}
	s.mu.Lock()
	s.g = g
	s.mu.Unlock()
}

func (s *Settings) guard() *guard {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.g
}

// Check reports the first problem of c as one group's configuration
// beside the listeners s knows (see Config.Validate and SetListeners),
// resolving its upstreams' names now. It changes nothing.
func (s *Settings) Check(c Config) error {
	_, err := compile(c, s.guard())
	return err
}

// Set replaces the configuration with c; on a problem (see
// Settings.Check) the current one stays.
func (s *Settings) Set(c Config) error {
	v, err := compile(c, s.guard())
	if err != nil {
		return err
	}
	s.p.Store(v)
	return nil
}

// SetGroups replaces the configuration with several independent ones (a
// server's customers), each source answered with its own group's
// upstreams and told to the Sink with its group. Each group is put in
// force on its own: one that cannot be (a bad field, a prefix a group of
// a lower number claims) is left out, and an upstream whose name does not
// resolve now or whose address is refused is kept down, without
// touching the other groups. It returns these problems, joined (nil:
// none); texts hold no secret.
func (s *Settings) SetGroups(gs map[int64]Config) error {
	v, problems := compileGroups(gs, s.guard())
	s.p.Store(v)
	return errors.Join(problems...)
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
