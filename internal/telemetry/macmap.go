package telemetry

// macMap holds a value for MACs of customers: a map per customer keyed
// by the MAC's 48 bits, so that an entry's key is 8 bytes rather than 16
// with the customer in it (the boxId cache's entry is 16 bytes where it
// was 24). A cache has tens of thousands of entries and a few customers.
// It is not safe for concurrent use: each cache holds its own lock.
type macMap[V any] struct {
	m map[int64]map[uint64]V
	n int // entries, all customers
}

func (m *macMap[V]) get(k boxKey) (V, bool) {
	v, ok := m.m[k.customer][k.mac]
	return v, ok
}

// put sets k's value. Past bound entries the map starts afresh first: a
// cache so bounded costs at most bound entries, and what it forgot is
// read from the store again.
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
	}
	if _, ok := inner[k.mac]; !ok {
		m.n++
	}
	inner[k.mac] = v
}

func (m *macMap[V]) len() int { return m.n }
