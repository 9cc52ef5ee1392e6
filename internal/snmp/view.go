package snmp

import (
	"net"
	"slices"
	"sort"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/wnms/wnms/internal/wnms"
)

// A view is what the agent serves at one moment: every object with its
// value, in OID order, so that GET is a binary search and GETNEXT the
// entry after.
type view []entry

type entry struct {
	oid OID
	pdu gosnmp.SnmpPDU
}

func (v view) find(o OID) int {
	return sort.Search(len(v), func(i int) bool { return v[i].oid.Compare(o) >= 0 })
}

// get returns the object o.
func (v view) get(o OID) (entry, bool) {
	i := v.find(o)
	if i < len(v) && v[i].oid.Compare(o) == 0 {
		return v[i], true
	}
	return entry{}, false
}

// next returns the first object after o that v1 may see (SNMPv1 has no
// Counter64), or false at the end of the view.
func (v view) next(o OID, v1 bool) (entry, bool) {
	i := v.find(o)
	if i < len(v) && v[i].oid.Compare(o) == 0 {
		i++
	}
	for ; i < len(v); i++ {
		if !v1 || v[i].pdu.Type != gosnmp.Counter64 {
			return v[i], true
		}
	}
	return entry{}, false
}

// facts are the inputs of a view besides the host.
type facts struct {
	mibII, ifMIB, hostMIB bool
	sysName, sysContact   string
	sysLocation, sysDescr string
	agentUp               time.Duration
	dataDir               string
	loads                 []int
	counts                *wnms.SNMPCounts // nil when they could not be read
	openAnomalies         *int64           // nil when not served
}

// viewBuilder collects entries and sorts them once.
type viewBuilder struct{ v view }

func (b *viewBuilder) add(o OID, t gosnmp.Asn1BER, val any) {
	b.v = append(b.v, entry{o, gosnmp.SnmpPDU{Name: o.String(), Type: t, Value: val}})
}

func (b *viewBuilder) str(o OID, s string)   { b.add(o, gosnmp.OctetString, []byte(s)) }
func (b *viewBuilder) int(o OID, n int)      { b.add(o, gosnmp.Integer, n) }
func (b *viewBuilder) gauge(o OID, n uint64) { b.add(o, gosnmp.Gauge32, uint(min(n, 1<<32-1))) }
func (b *viewBuilder) c32(o OID, n uint64)   { b.add(o, gosnmp.Counter32, uint(n&(1<<32-1))) }
func (b *viewBuilder) c64(o OID, n uint64)   { b.add(o, gosnmp.Counter64, n) }
func (b *viewBuilder) ticks(o OID, d time.Duration) {
	b.add(o, gosnmp.TimeTicks, uint32(uint64(d/(10*time.Millisecond))&(1<<32-1)))
}

// buildView makes the view of the facts and the host.
func buildView(f facts) view {
	var b viewBuilder
	if f.mibII {
		sys := oidSystem
		b.str(sys.Append(1, 0), f.sysDescr)
		b.add(sys.Append(2, 0), gosnmp.ObjectIdentifier, SysObjectID.String())
		b.ticks(sys.Append(3, 0), f.agentUp)
		b.str(sys.Append(4, 0), f.sysContact)
		b.str(sys.Append(5, 0), f.sysName)
		b.str(sys.Append(6, 0), f.sysLocation)
		b.int(sys.Append(7, 0), 72) // application and end-to-end layers
	}
	if f.ifMIB {
		ifs := interfaces()
		b.int(oidInterfaces.Append(1, 0), len(ifs))
		entry := oidInterfaces.Append(2, 1)
		for _, i := range ifs {
			x := uint32(i.index)
			typ := 6 // ethernetCsmacd
			if i.loopback {
				typ = 24 // softwareLoopback
			}
			admin, oper := 2, 2
			if i.up {
				admin = 1
			}
			if i.operUp {
				oper = 1
			}
			b.int(entry.Append(1, x), i.index)
			b.str(entry.Append(2, x), i.name)
			b.int(entry.Append(3, x), typ)
			b.int(entry.Append(4, x), i.mtu)
			b.gauge(entry.Append(5, x), i.speedMbps*1_000_000)
			b.add(entry.Append(6, x), gosnmp.OctetString, []byte(net.HardwareAddr(i.mac)))
			b.int(entry.Append(7, x), admin)
			b.int(entry.Append(8, x), oper)
			b.c32(entry.Append(10, x), i.inOctets)
			b.c32(entry.Append(11, x), i.inPackets)
			b.c32(entry.Append(14, x), i.inErrors)
			b.c32(entry.Append(16, x), i.outOctets)
			b.c32(entry.Append(17, x), i.outPackets)
			b.c32(entry.Append(20, x), i.outErrors)
			b.str(oidIfMIBObj.Append(1, x), i.name)
			b.c64(oidIfMIBObj.Append(6, x), i.inOctets)
			b.c64(oidIfMIBObj.Append(10, x), i.outOctets)
			b.gauge(oidIfMIBObj.Append(15, x), i.speedMbps)
		}
	}
	if f.hostMIB {
		b.ticks(oidHrSystem.Append(1, 0), hostUptime())
		total, avail := memInfo()
		b.int(oidHrStorage.Append(2, 0), int(total))
		row := oidHrStorage.Append(3, 1)
		type storage struct {
			typ              OID
			descr            string
			unit, size, used uint64
		}
		var rows []storage
		if total > 0 {
			rows = append(rows, storage{oidHrStoreRAM, "Physical memory", 1024, total, total - avail})
		}
		if unit, size, used, ok := diskUsage(f.dataDir); ok && f.dataDir != "" {
			rows = append(rows, storage{oidHrStoreDisk, "wnms data directory " + f.dataDir, unit, size, used})
		}
		for n, r := range rows {
			x := uint32(n + 1)
			b.int(row.Append(1, x), n+1)
			b.add(row.Append(2, x), gosnmp.ObjectIdentifier, r.typ.String())
			b.str(row.Append(3, x), r.descr)
			b.int(row.Append(4, x), int(r.unit))
			b.int(row.Append(5, x), int(min(r.size, 1<<31-1)))
			b.int(row.Append(6, x), int(min(r.used, 1<<31-1)))
			b.c32(row.Append(7, x), 0)
		}
		for n, load := range f.loads {
			x := uint32(n + 1)
			b.add(oidHrProcessor.Append(1, x), gosnmp.ObjectIdentifier, ".0.0")
			b.int(oidHrProcessor.Append(2, x), load)
		}
	}
	if c := f.counts; c != nil {
		b.gauge(oidAPsUp, uint64(c.APsUp))
		b.gauge(oidAPsDown, uint64(c.APsDown))
		b.gauge(oidClients, uint64(c.Clients))
	}
	if f.openAnomalies != nil {
		b.gauge(oidOpenAnomalies, uint64(*f.openAnomalies))
	}
	slices.SortFunc(b.v, func(x, y entry) int { return x.oid.Compare(y.oid) })
	return b.v
}
