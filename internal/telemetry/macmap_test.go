package telemetry

import (
	"runtime"
	"testing"

	"github.com/wnms/wnms/internal/heaptest"
)

func TestMacMap(t *testing.T) {
	type op struct {
		put   bool
		k     boxKey
		v     int64
		want  int64 // for a get: the value, 0 for none
		count int   // entries after the op
	}
	a, b := boxKey{1, 0x0200_0000_0001}, boxKey{2, 0x0200_0000_0001} // one MAC, two customers
	c := boxKey{1, 0x0200_0000_0002}
	tests := []struct {
		name  string
		bound int
		ops   []op
	}{
		{"empty", 10, []op{{k: a, want: 0, count: 0}}},
		{"customers apart", 10, []op{
			{put: true, k: a, v: 7, count: 1},
			{k: a, want: 7, count: 1},
			{k: b, want: 0, count: 1},
			{put: true, k: b, v: 9, count: 2},
			{k: a, want: 7, count: 2},
			{k: b, want: 9, count: 2},
		}},
		{"a put again replaces, not adds", 10, []op{
			{put: true, k: a, v: 7, count: 1},
			{put: true, k: a, v: 8, count: 1},
			{k: a, want: 8, count: 1},
		}},
		{"past the bound it starts afresh", 2, []op{
			{put: true, k: a, v: 1, count: 1},
			{put: true, k: b, v: 2, count: 2},
			{put: true, k: c, v: 3, count: 1},
			{k: a, want: 0, count: 1},
			{k: b, want: 0, count: 1},
			{k: c, want: 3, count: 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m macMap[int64]
			for i, o := range tt.ops {
				if o.put {
					m.put(o.k, o.v, tt.bound)
				} else if got, ok := m.get(o.k); got != o.want || ok != (o.want != 0) {
					t.Errorf("op %d: get(%v) = %d, %v; want %d", i, o.k, got, ok, o.want)
				}
				if m.len() != o.count {
					t.Errorf("op %d: %d entries, want %d", i, m.len(), o.count)
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
