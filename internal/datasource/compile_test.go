package datasource

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/wnms"
)

// Each customer's configuration is compiled on its own: one that cannot
// be put in force (here a prefix a customer of a lower id holds, stored
// before the rule that refuses it) is left out and named, and the
// others are in force; one whose upstream's name does not resolve is in
// force (the upstream is the RADIUS settings' concern, kept down there).
func TestCompileEachCustomerOnItsOwn(t *testing.T) {
	src := func(name, cidr string) wnms.DataSource {
		return wnms.DataSource{Name: name, CIDR: cidr, RadiusSecret: "s", LocationID: wnms.LocalID(1)}
	}
	ds := func(up string, sources ...wnms.DataSource) *wnms.DataSources {
		d := wnms.EmptyDataSources()
		if up != "" {
			d.Radius.Upstreams = []wnms.RadiusUpstream{{Address: up, Secret: "u"}}
		}
		d.Sources = sources
		return d
	}
	all := map[int64]*wnms.DataSources{
		1: ds("192.0.2.1:1812", src("a", "10.1.0.0/16")),
		2: ds("no-such-host.invalid:1812", src("b", "10.2.0.0/16")),
		3: ds("", src("c", "10.3.0.0/16"), src("c-clash", "10.1.0.0/16")),
	}
	tab, groups, problems := compile(all)
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), "customer 3") {
		t.Errorf("problems %v, want customer 3's only", problems)
	}
	if _, ok := groups[3]; ok {
		t.Error("customer 3's RADIUS configuration is in force")
	}
	for _, tc := range []struct {
		addr     string
		customer int64
		ok       bool
	}{{"10.1.2.3", 1, true}, {"10.2.2.3", 2, true}, {"10.3.2.3", 0, false}} {
		e, ok := tab.lookup(mustAddr(t, tc.addr))
		if ok != tc.ok || (ok && e.customer != tc.customer) {
			t.Errorf("%s: %+v %v, want customer %d %v", tc.addr, e, ok, tc.customer, tc.ok)
		}
	}
}

func mustAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
