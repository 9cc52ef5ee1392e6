package wnms

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
)

// DataSourcesType is the policy type the data source configuration is
// stored under, one per customer, beside the global policies.
const DataSourcesType = "DATASOURCES"

// Limits of the data source configuration.
const (
	MaxDataSources       = 1000
	MaxRadiusUpstreams   = 8
	MaxRadiusSecret      = 128
	MaxUpstreamTimeoutMs = 60_000
	maxSourceName        = 64
	maxUpstreamAddress   = 261 // a host name and a port
)

// DataSources is where a customer's network data comes from
// (GET|PUT /V5/datasources): the RADIUS servers wnms passes
// authentication and accounting on to, and the APs and controllers, by
// address, that may send it RADIUS packets and syslog lines. Secrets are
// kept in clear (wnms must sign with them) and leave only masked.
type DataSources struct {
	Radius  RadiusUpstreams `json:"radius"`
	Sources []DataSource    `json:"sources"`
	Pollers []Poller        `json:"pollers"`
}

// RadiusUpstreams are the site's own RADIUS servers, tried in order.
type RadiusUpstreams struct {
	Upstreams           []RadiusUpstream `json:"upstreams"`
	AccountingUpstreams []RadiusUpstream `json:"accountingUpstreams"`
}

// RadiusUpstream is one RADIUS server: host:port, the secret shared with
// it, and how long to wait for its answer before the next one
// (0: 3000 ms).
type RadiusUpstream struct {
	Address   string `json:"address"`
	Secret    string `json:"secret"`
	TimeoutMs int    `json:"timeoutMs"`
}

// DataSource is an AP, controller or DHCP server by address. RADIUS
// packets from it are checked with RadiusSecret (none: it sends no
// RADIUS), and its Access-Requests must carry a Message-Authenticator
// unless RequireMessageAuthenticator is false (absent: true); Syslog
// says its syslog lines are taken. What it reports is placed at its APs,
// which must lie at or below LocationID.
type DataSource struct {
	Name                        string     `json:"name"`
	CIDR                        string     `json:"cidr"`
	RadiusSecret                string     `json:"radiusSecret"`
	RequireMessageAuthenticator *bool      `json:"requireMessageAuthenticator"`
	LocationID                  LocationID `json:"locationId"`
	Syslog                      bool       `json:"syslog"`
}

// RequiresMessageAuthenticator reports whether the source's
// Access-Requests must carry a Message-Authenticator: unless it was
// turned off (decisions §21, against BlastRADIUS).
func (s DataSource) RequiresMessageAuthenticator() bool {
	return s.RequireMessageAuthenticator == nil || *s.RequireMessageAuthenticator
}

// EmptyDataSources is the configuration of a customer that has stored
// none: no upstream, no source.
func EmptyDataSources() *DataSources {
	return &DataSources{Radius: RadiusUpstreams{Upstreams: []RadiusUpstream{}, AccountingUpstreams: []RadiusUpstream{}},
		Sources: []DataSource{}, Pollers: []Poller{}}
}

// Prefix is the source's CIDR, masked (a bare address is a /32 or /128).
func (s DataSource) Prefix() netip.Prefix {
	p, err := parseCIDR(s.CIDR)
	if err != nil {
		return netip.Prefix{}
	}
	return p
}

func parseCIDR(v string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(v)
	if err != nil {
		a, aerr := netip.ParseAddr(v)
		if aerr != nil || a.Zone() != "" {
			return netip.Prefix{}, err
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	a := p.Addr()
	if a.Is4In6() {
		p = netip.PrefixFrom(a.Unmap(), max(p.Bits()-96, 0))
	}
	return p.Masked(), nil
}

// Masked returns a copy of d with every secret masked.
func (d *DataSources) Masked() *DataSources {
	out := d.clone()
	mask := func(s *string) {
		if *s != "" {
			*s = SecretMask
		}
	}
	for _, ups := range [][]RadiusUpstream{out.Radius.Upstreams, out.Radius.AccountingUpstreams} {
		for i := range ups {
			mask(&ups[i].Secret)
		}
	}
	for i := range out.Sources {
		mask(&out.Sources[i].RadiusSecret)
		// Shown as it is in force, also when it was never set.
		v := out.Sources[i].RequiresMessageAuthenticator()
		out.Sources[i].RequireMessageAuthenticator = &v
	}
	for i := range out.Pollers {
		mask(&out.Pollers[i].Password)
		out.Pollers[i].IntervalSeconds = out.Pollers[i].Interval() // shown as in force
	}
	return out
}

func (d *DataSources) clone() *DataSources {
	out := &DataSources{Radius: RadiusUpstreams{
		Upstreams:           append([]RadiusUpstream{}, d.Radius.Upstreams...),
		AccountingUpstreams: append([]RadiusUpstream{}, d.Radius.AccountingUpstreams...)},
		Sources: append([]DataSource{}, d.Sources...), Pollers: append([]Poller{}, d.Pollers...)}
	return out
}

// ParseDataSources reads a PUT /V5/datasources body against the stored
// configuration: a secret sent back masked keeps the stored one of the
// upstream of the same address, or the source of the same name. The
// whole configuration is checked; the first problem is returned.
func ParseDataSources(body []byte, current *DataSources) (*DataSources, error) {
	var in struct {
		Radius *struct {
			Upstreams           *[]RadiusUpstream `json:"upstreams"`
			AccountingUpstreams *[]RadiusUpstream `json:"accountingUpstreams"`
		} `json:"radius"`
		Sources *[]DataSource `json:"sources"`
		Pollers *[]Poller     `json:"pollers"`
	}
	if err := DecodeJSONObject(body, &in); err != nil {
		return nil, err
	}
	if in.Radius == nil {
		return nil, Invalid("radius", "required")
	}
	if in.Sources == nil {
		return nil, Invalid("sources", "required")
	}
	d := &DataSources{Sources: *in.Sources, Pollers: []Poller{}}
	if in.Pollers != nil { // absent: none (a client of the version before pollers)
		d.Pollers = *in.Pollers
	}
	if in.Radius.Upstreams != nil {
		d.Radius.Upstreams = *in.Radius.Upstreams
	}
	if in.Radius.AccountingUpstreams != nil {
		d.Radius.AccountingUpstreams = *in.Radius.AccountingUpstreams
	}
	if current == nil {
		current = &DataSources{}
	}
	if err := d.resolveSecrets(current); err != nil {
		return nil, err
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if d.Radius.Upstreams == nil {
		d.Radius.Upstreams = []RadiusUpstream{}
	}
	if d.Radius.AccountingUpstreams == nil {
		d.Radius.AccountingUpstreams = []RadiusUpstream{}
	}
	return d, nil
}

// resolveSecrets replaces masked secrets by the stored ones: an
// upstream's of the same address, a source's or poller's of the same name.
func (d *DataSources) resolveSecrets(cur *DataSources) error {
	ups := func(u *RadiusUpstream) (string, *string) { return u.Address, &u.Secret }
	for _, err := range []error{
		keepMasked(d.Radius.Upstreams, cur.Radius.Upstreams, ups, "radius.upstreams", "secret", "upstream has address"),
		keepMasked(d.Radius.AccountingUpstreams, cur.Radius.AccountingUpstreams, ups, "radius.accountingUpstreams", "secret", "upstream has address"),
		keepMasked(d.Sources, cur.Sources, func(s *DataSource) (string, *string) { return s.Name, &s.RadiusSecret },
			"sources", "radiusSecret", "source is named"),
		keepMasked(d.Pollers, cur.Pollers, func(p *Poller) (string, *string) { return p.Name, &p.Password },
			"pollers", "password", "poller is named"),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// keepMasked gives each entry of list whose secret is SecretMask the
// secret of the entry of prev with the same key; one no stored entry
// matches is refused, naming field[i].secret.
func keepMasked[T any](list, prev []T, of func(*T) (key string, secret *string), field, secret, missing string) error {
	for i := range list {
		k, sec := of(&list[i])
		if *sec != SecretMask {
			continue
		}
		found := false
		for j := range prev {
			if pk, ps := of(&prev[j]); pk == k {
				*sec, found = *ps, true
				break
			}
		}
		if !found {
			return Invalid(fmt.Sprintf("%s[%d].%s", field, i, secret), "masked, but no stored %s %q", missing, k)
		}
	}
	return nil
}

// Validate reports the first problem of d. Texts never hold a secret.
func (d *DataSources) Validate() error {
	for _, l := range []struct {
		field string
		ups   []RadiusUpstream
	}{{"radius.upstreams", d.Radius.Upstreams}, {"radius.accountingUpstreams", d.Radius.AccountingUpstreams}} {
		if len(l.ups) > MaxRadiusUpstreams {
			return Invalid(l.field, "at most %d upstreams", MaxRadiusUpstreams)
		}
		seen := map[string]bool{}
		for i, u := range l.ups {
			f := fmt.Sprintf("%s[%d]", l.field, i)
			if err := checkHostPort(u.Address); err != nil {
				return Invalid(f+".address", "%s", err)
			}
			if seen[u.Address] {
				return Invalid(f+".address", "%q is listed twice", u.Address)
			}
			seen[u.Address] = true
			if u.Secret == "" || len(u.Secret) > MaxRadiusSecret {
				return Invalid(f+".secret", "1 to %d octets", MaxRadiusSecret)
			}
			if u.TimeoutMs < 0 || u.TimeoutMs > MaxUpstreamTimeoutMs {
				return Invalid(f+".timeoutMs", "must be 0 to %d", MaxUpstreamTimeoutMs)
			}
		}
	}
	if len(d.Sources) > MaxDataSources {
		return Invalid("sources", "at most %d sources", MaxDataSources)
	}
	names := map[string]bool{}
	prefixes := map[netip.Prefix]string{}
	for i, s := range d.Sources {
		f := fmt.Sprintf("sources[%d]", i)
		if err := CheckText(f+".name", s.Name, 1, maxSourceName); err != nil {
			return err
		}
		if names[s.Name] {
			return Invalid(f+".name", "%q is used twice", s.Name)
		}
		names[s.Name] = true
		p, err := parseCIDR(s.CIDR)
		if err != nil {
			return Invalid(f+".cidr", "an address or a prefix such as 10.1.0.0/16")
		}
		if other, ok := prefixes[p]; ok {
			return Invalid(f+".cidr", "%s is source %q's already", p, other)
		}
		prefixes[p] = s.Name
		if len(s.RadiusSecret) > MaxRadiusSecret {
			return Invalid(f+".radiusSecret", "at most %d octets", MaxRadiusSecret)
		}
		if s.RadiusSecret == "" && !s.Syslog {
			return Invalid(f, "sends nothing: give a radiusSecret, or syslog true")
		}
		if s.LocationID.Type != LocalLocationID || s.LocationID.ChildID != nil {
			return Invalid(f+".locationId", "a %s of this server", LocalLocationID)
		}
	}
	if len(d.Pollers) > MaxPollers {
		return Invalid("pollers", "at most %d pollers", MaxPollers)
	}
	for i := range d.Pollers {
		p := &d.Pollers[i]
		if err := checkPoller(i, p); err != nil {
			return err
		}
		if names[p.Name] {
			return Invalid(fmt.Sprintf("pollers[%d].name", i), "%q is used twice (sources and pollers share names)", p.Name)
		}
		names[p.Name] = true
	}
	return nil
}

// checkHostPort checks a host:port address without resolving it.
func checkHostPort(v string) error {
	if v == "" || len(v) > maxUpstreamAddress {
		return fmt.Errorf("host:port required")
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || host == "" {
		return fmt.Errorf("host:port required")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port must be 1 to 65535")
	}
	return nil
}

// SourceAP is an AP as data sources' reports are placed at it: by a
// radio's BSSID, by its name (a RADIUS NAS-Identifier) or by its address
// (the packet's or line's source).
type SourceAP struct {
	BoxID      int64
	Name       string
	IPAddress  string
	LocationID int64
	Radios     []SourceRadio
}

// SourceRadio is one radio of a SourceAP.
type SourceRadio struct {
	BSSID   string `json:"macaddress"`
	Channel int    `json:"channel"`
	SSID    string `json:"ssid"`
}

// Split returns the part of d a caller who sees only some locations
// deals with (the radius block, and the sources and pollers at locations
// seen says it sees) and the sources and pollers it does not see.
func (d *DataSources) Split(seen func(location int64) bool) (view, hidden *DataSources) {
	view, hidden = d.clone(), &DataSources{}
	view.Sources, view.Pollers = view.Sources[:0], view.Pollers[:0]
	for _, s := range d.Sources {
		if seen(s.LocationID.ID) {
			view.Sources = append(view.Sources, s)
		} else {
			hidden.Sources = append(hidden.Sources, s)
		}
	}
	for _, p := range d.Pollers {
		if seen(p.LocationID.ID) {
			view.Pollers = append(view.Pollers, p)
		} else {
			hidden.Pollers = append(hidden.Pollers, p)
		}
	}
	return view, hidden
}

// Locations are the locations of d's sources and pollers.
func (d *DataSources) Locations() []int64 {
	ids := make([]int64, 0, len(d.Sources)+len(d.Pollers))
	for _, s := range d.Sources {
		ids = append(ids, s.LocationID.ID)
	}
	for _, p := range d.Pollers {
		ids = append(ids, p.LocationID.ID)
	}
	return ids
}

// SameUpstreams reports whether d and o have the same radius block,
// secrets included.
func (d *DataSources) SameUpstreams(o *DataSources) bool {
	return slices.Equal(d.Radius.Upstreams, o.Radius.Upstreams) &&
		slices.Equal(d.Radius.AccountingUpstreams, o.Radius.AccountingUpstreams)
}

// Keep adds to d, a configuration parsed from a caller who sees only some
// locations, the stored sources it does not see (hidden), which its PUT
// neither shows nor removes. A source of d may not take the name or the
// prefix of a hidden one (VALIDATION_FAILED on that source, naming
// neither the hidden source nor its location).
func (d *DataSources) Keep(hidden *DataSources) error {
	names := map[string]bool{}
	prefixes := map[netip.Prefix]bool{}
	for _, h := range hidden.Sources {
		names[h.Name] = true
		prefixes[h.Prefix()] = true
	}
	for _, h := range hidden.Pollers {
		names[h.Name] = true
	}
	for i, s := range d.Sources {
		f := fmt.Sprintf("sources[%d]", i)
		if names[s.Name] {
			return Invalid(f+".name", "%q is the name of a source or poller outside your locations", s.Name)
		}
		if prefixes[s.Prefix()] {
			return Invalid(f+".cidr", "%s is the cidr of a source outside your locations", s.Prefix())
		}
	}
	for i, p := range d.Pollers {
		if names[p.Name] {
			return Invalid(fmt.Sprintf("pollers[%d].name", i), "%q is the name of a source or poller outside your locations", p.Name)
		}
	}
	if len(d.Sources)+len(hidden.Sources) > MaxDataSources {
		return Invalid("sources", "at most %d sources, %d of them outside your locations", MaxDataSources, len(hidden.Sources))
	}
	if len(d.Pollers)+len(hidden.Pollers) > MaxPollers {
		return Invalid("pollers", "at most %d pollers, %d of them outside your locations", MaxPollers, len(hidden.Pollers))
	}
	d.Sources = append(d.Sources, hidden.Sources...)
	d.Pollers = append(d.Pollers, hidden.Pollers...)
	return nil
}
