package telemetry

// macMap holds a value for MACs of customers: a map per customer keyed
// by the MAC's 48 bits, so that an entry's key is 8 bytes rather than 16
// with the customer in it (the boxId cache's entry is 16 bytes where it
// was 24). A customer's map of its own costs about what mapCost entries
// do, and counts so against a cache's bound: the bound holds the memory
// whether a few customers have many clients or many customers one. It
// is not safe for concurrent use: each cache holds its own lock.
type macMap[V any] struct {
	m map[int64]map[uint64]V
	n int // entries counted against the bound, customers' maps included (mapCost each)
}

func (m *macMap[V]) get(k boxKey) (V, bool) {
	v, ok := m.m[k.customer][k.mac]
	return v, ok
}

// mapCost is what a customer's map counts as against the bound: the
// entries whose memory an inner map with a few entries takes (one group
// of 8 slots, the map's header and its slot in the outer map).
const mapCost = 8

// reserve makes room for n more entries: past bound the map starts afresh
// first, so that a batch's entries are kept together.
func (m *macMap[V]) reserve(n, bound int) {
	if m.n+n > bound {
		m.m, m.n = nil, 0
	}
}

// put sets k's value. A cache holding bound entries starts afresh first
// (even for a key it holds): a cache so bounded costs at most bound
// entries, and what it forgot is read from the store again.
func (m *macMap[V]) put(k boxKey, v V, bound int) {
	if m.n >= bound {
		m.m, m.n = nil, 0
	}
	if m.m == nil {
		m.m = make(map[int64]map[uint64]V)
	}
	inner := m.m[k.customer]
	if inner == nil {
		inner = make(map[uint64]V)
		m.m[k.customer] = inner
		m.n += mapCost
	}
	if _, ok := inner[k.mac]; !ok {
		m.n++
	}
	inner[k.mac] = v
}

// len is the entries counted against the bound, customers' maps
// included.
func (m *macMap[V]) len() int { return m.n }
