package datasource

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wnms/wnms/internal/radius"
	"github.com/wnms/wnms/internal/wnms"
)

func sources(cidrs ...string) *wnms.DataSources {
	d := wnms.EmptyDataSources()
	for _, c := range cidrs {
		d.Sources = append(d.Sources, wnms.DataSource{Name: c, CIDR: c, Syslog: true})
	}
	return d
}

// A prefix that holds, or lies within, a prefix of another customer is
// found on both sides, IPv4-mapped IPv6 read as IPv4; nesting inside one
// customer is no overlap.
func TestCrossCustomerOverlaps(t *testing.T) {
	tests := []struct {
		name        string
		victim, own []string // customer 1's and customer 2's prefixes
		want1       []string // customer 1's sources found
		want2       []string // customer 2's sources found
	}{
		{"a /32 inside a /24", []string{"127.0.1.0/24"}, []string{"127.0.1.10/32"}, []string{"127.0.1.0/24"}, []string{"127.0.1.10/32"}},
		{"a /24 around a /32", []string{"127.0.1.10/32"}, []string{"127.0.1.0/24"}, []string{"127.0.1.10/32"}, []string{"127.0.1.0/24"}},
		{"a /8 around a /24", []string{"127.0.1.0/24"}, []string{"127.0.0.0/8"}, []string{"127.0.1.0/24"}, []string{"127.0.0.0/8"}},
		{"everything", []string{"127.0.1.0/24", "10.0.0.0/8"}, []string{"0.0.0.0/0"}, []string{"127.0.1.0/24", "10.0.0.0/8"}, []string{"0.0.0.0/0"}},
		{"IPv4-mapped", []string{"127.0.1.0/24"}, []string{"::ffff:127.0.1.10/128"}, []string{"127.0.1.0/24"}, []string{"::ffff:127.0.1.10/128"}},
		{"IPv4-mapped around", []string{"127.0.1.10"}, []string{"::ffff:127.0.0.0/104"}, []string{"127.0.1.10"}, []string{"::ffff:127.0.0.0/104"}},
		{"the same prefix", []string{"10.1.0.0/16"}, []string{"10.1.255.255/16"}, []string{"10.1.0.0/16"}, []string{"10.1.255.255/16"}},
		{"IPv6 inside", []string{"2001:db8::/32"}, []string{"2001:db8:1::5"}, []string{"2001:db8::/32"}, []string{"2001:db8:1::5"}},
		{"a deeper holder after a sibling", []string{"10.0.0.0/8"}, []string{"10.1.0.0/16", "10.2.0.0/16"}, []string{"10.0.0.0/8"}, []string{"10.1.0.0/16", "10.2.0.0/16"}},
		{"neighbours", []string{"127.0.1.0/24", "10.0.0.0/9"}, []string{"127.0.2.0/24", "10.128.0.0/9", "::/96"}, nil, nil},
		{"IPv6 all and IPv4", []string{"127.0.1.0/24"}, []string{"::/0"}, nil, nil},
		{"nested inside one customer", []string{"10.0.0.0/8", "10.1.0.0/16", "10.1.2.3"}, []string{"192.168.0.0/16", "192.168.1.0/24"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[int64]map[string]bool{1: {}, 2: {}}
			for _, o := range crossCustomerOverlaps(map[int64]*wnms.DataSources{1: sources(tt.victim...), 2: sources(tt.own...)}) {
				if o[0].customer == o[1].customer {
					t.Errorf("a pair of one customer: %+v", o)
				}
				for _, side := range o {
					got[side.customer][side.name] = true
				}
			}
			names := func(m map[string]bool) []string {
				var out []string
				for _, c := range append(append([]string{}, tt.victim...), tt.own...) {
					if m[c] {
						out = append(out, c)
					}
				}
				return out
			}
			if diff := cmp.Diff(tt.want1, names(got[1])); diff != "" {
				t.Errorf("customer 1 (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want2, names(got[2])); diff != "" {
				t.Errorf("customer 2 (-want +got):\n%s", diff)
			}
		})
	}
}

// Inside one customer the most specific prefix holds an address, on the
// syslog table and the RADIUS listeners alike; a customer with a source
// that overlaps a source of a customer of a lower id (a configuration
// stored before overlaps were refused) is left out and named.
func TestCompileMostSpecificAndOverlapsLeftOut(t *testing.T) {
	one := sources("10.0.0.0/8", "10.1.0.0/16", "10.1.2.3", "::ffff:192.168.0.0/112")
	one.Sources[0].Syslog = false
	two := sources("172.16.0.0/12", "192.168.0.7")
	for _, d := range []*wnms.DataSources{one, two} {
		for i := range d.Sources {
			d.Sources[i].RadiusSecret = "s"
		}
	}
	tab, groups, problems := compile(map[int64]*wnms.DataSources{1: one, 2: two})
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), "customer 2") || !strings.Contains(problems[0].Error(), "192.168.0.7") {
		t.Errorf("problems %v, want customer 2's source 192.168.0.7", problems)
	}
	var rs radius.Settings
	if err := rs.SetGroups(groups); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		addr, want string // "" for none
	}{
		{"10.9.9.9", "1/10.0.0.0/8"},
		{"10.1.9.9", "1/10.1.0.0/16"},
		{"10.1.2.3", "1/10.1.2.3"},
		{"::ffff:10.1.2.3", "1/10.1.2.3"},
		{"172.16.5.5", ""}, // customer 2 is left out
		{"192.168.0.7", "1/::ffff:192.168.0.0/112"},
		{"::ffff:192.168.0.8", "1/::ffff:192.168.0.0/112"},
		{"192.169.0.1", ""},
	} {
		got := ""
		if e, ok := tab.lookup(netip.MustParseAddr(tc.addr)); ok {
			got = key(e.customer, e.src.Name)
		}
		if got != tc.want {
			t.Errorf("lookup(%s) = %q, want %q", tc.addr, got, tc.want)
		}
		// The RADIUS listeners hold the same sources.
		got = ""
		if src, ok := rs.Lookup(netip.MustParseAddr(tc.addr)); ok {
			got = key(src.Group, src.Name)
		}
		if got != tc.want {
			t.Errorf("RADIUS Lookup(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
	if _, ok := tab.byName[key(2, "192.168.0.7")]; ok {
		t.Error("an overlapping source of the customer left out is in force")
	}
}

// The syslog assembler's owner of an address is the customer of the
// source that holds it.
func TestSyslogOwner(t *testing.T) {
	tab, _, problems := compile(map[int64]*wnms.DataSources{1: sources("10.0.0.0/8"), 2: sources("192.168.1.0/24")})
	if problems != nil {
		t.Fatal(problems)
	}
	b := &Bridge{}
	b.init()
	b.table.Store(tab)
	for addr, want := range map[string]int64{"10.1.1.1": 1, "192.168.1.9": 2, "::ffff:192.168.1.9": 2, "172.16.0.1": -1} {
		if got := b.SyslogOwner(netip.MustParseAddr(addr)); got != want {
			t.Errorf("SyslogOwner(%s) = %d, want %d", addr, got, want)
		}
	}
}

// BenchmarkCrossCustomerOverlaps checks 100 customers of 1,000 sources
// each (a /24 and its /32s), what every PUT checks against.
func BenchmarkCrossCustomerOverlaps(b *testing.B) {
	all := map[int64]*wnms.DataSources{}
	for c := range 100 {
		d := wnms.EmptyDataSources()
		d.Sources = append(d.Sources, wnms.DataSource{Name: "net", CIDR: fmt.Sprintf("10.%d.0.0/16", c)})
		for i := range 999 {
			d.Sources = append(d.Sources, wnms.DataSource{Name: strconv.Itoa(i), CIDR: fmt.Sprintf("10.%d.%d.%d", c, i/250, i%250+1)})
		}
		all[int64(c)] = d
	}
	b.ResetTimer()
	for b.Loop() {
		if n := len(crossCustomerOverlaps(all)); n != 0 {
			b.Fatalf("%d customers overlap", n)
		}
	}
}
