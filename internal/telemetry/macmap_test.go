package telemetry

import (
	"runtime"
	"testing"

	"github.com/wnms/wnms/internal/heaptest"
)

func TestMacMap(t *testing.T) {
	type op struct {
		put     bool
		reserve int // > 0: reserve that many
		k       boxKey
		v       int64
		want    int64 // for a get: the value, 0 for none
		count   int   // entries counted after the op, customers' maps included
	}
	const m = mapCost
	a, b := boxKey{1, 0x0200_0000_0001}, boxKey{2, 0x0200_0000_0001} // one MAC, two customers
	c := boxKey{1, 0x0200_0000_0002}
	tests := []struct {
		name  string
		bound int
		ops   []op
	}{
		{"empty", 100, []op{{k: a, want: 0, count: 0}}},
		{"customers apart, each map counted", 100, []op{
			{put: true, k: a, v: 7, count: 1 + m},
			{k: a, want: 7, count: 1 + m},
			{k: b, want: 0, count: 1 + m},
			{put: true, k: b, v: 9, count: 2 + 2*m},
			{put: true, k: c, v: 5, count: 3 + 2*m},
			{k: a, want: 7, count: 3 + 2*m},
			{k: b, want: 9, count: 3 + 2*m},
			{k: c, want: 5, count: 3 + 2*m},
		}},
		{"a put again replaces, not adds", 100, []op{
			{put: true, k: a, v: 7, count: 1 + m},
			{put: true, k: a, v: 8, count: 1 + m},
			{k: a, want: 8, count: 1 + m},
		}},
		{"past the bound it starts afresh", 2 + 2*m, []op{
			{put: true, k: a, v: 1, count: 1 + m},
			{put: true, k: b, v: 2, count: 2 + 2*m},
			{put: true, k: c, v: 3, count: 1 + m},
			{k: a, want: 0, count: 1 + m},
			{k: b, want: 0, count: 1 + m},
			{k: c, want: 3, count: 1 + m},
		}},
		{"a reservation that fits keeps what is there", 2 + m, []op{
			{put: true, k: a, v: 1, count: 1 + m},
			{reserve: 1, count: 1 + m},
			{put: true, k: c, v: 3, count: 2 + m},
			{k: a, want: 1, count: 2 + m},
		}},
		{"a reservation that does not fit starts afresh", 2 + m, []op{
			{put: true, k: a, v: 1, count: 1 + m},
			{reserve: 2, count: 0},
			{k: a, want: 0, count: 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mm macMap[int64]
			for i, o := range tt.ops {
				switch {
				case o.put:
					mm.put(o.k, o.v, tt.bound)
				case o.reserve > 0:
					mm.reserve(o.reserve, tt.bound)
				default:
					if got, ok := mm.get(o.k); got != o.want || ok != (o.want != 0) {
						t.Errorf("op %d: get(%v) = %d, %v; want %d", i, o.k, got, ok, o.want)
					}
				}
				if mm.len() != o.count {
					t.Errorf("op %d: %d entries counted, want %d", i, mm.len(), o.count)
				}
			}
		})
	}
}

// BenchmarkBoxIDCacheState reports the boxId cache's bytes per client,
// its maps included.
func BenchmarkBoxIDCacheState(b *testing.B) {
	const clients = 20_000
	var perClient float64
	for b.Loop() {
		before := heaptest.Live()
		var m macMap[int64]
		for i := range clients {
			m.put(boxKey{1, 0x0200_0000_0000 | uint64(i)}, int64(i), maxBoxCache)
		}
		perClient = float64(heaptest.Live()-before) / clients
		runtime.KeepAlive(&m)
	}
	b.ReportMetric(perClient, "B/client")
}
