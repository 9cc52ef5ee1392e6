package telemetry

import (
	"errors"
	"github.com/wnms/wnms/internal/wnms"
	"maps"
	"slices"
	"testing"
)

// TestMovedIn: a client's update takes its identity back when the client
// comes from a location the caller does not see, or was not asked about
// (which it names, to ask about); not when it stays, or comes from one
// the caller sees.
func TestMovedIn(t *testing.T) {
	updates := map[int64]wnms.ClientUpdate{1: {LocationID: 10}, 2: {LocationID: 10}, 3: {LocationID: 10}, 4: {LocationID: 10}, 5: {LocationID: 10}}
	seen := map[int64]error{20: nil, 30: errors.New("outside your locations")}
	for _, c := range []struct {
		name    string
		where   map[int64]int64
		want    []int64
		unasked []int64
	}{
		{"stays", map[int64]int64{1: 10}, nil, nil},
		{"from a location it sees", map[int64]int64{2: 20}, nil, nil},
		{"from a location it does not see", map[int64]int64{3: 30}, []int64{3}, nil},
		{"from a location not asked about", map[int64]int64{4: 40}, []int64{4}, []int64{40}},
		{"new (absent)", map[int64]int64{}, nil, nil},
		{"all at once", map[int64]int64{1: 10, 2: 20, 3: 30, 4: 40, 5: 40}, []int64{3, 4, 5}, []int64{40}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fresh, unasked := movedIn(updates, c.where, seen)
			if got := slices.Sorted(maps.Keys(fresh)); !slices.Equal(got, c.want) {
				t.Errorf("moved in %v, want %v", got, c.want)
			}
			if !slices.Equal(unasked, c.unasked) {
				t.Errorf("not asked about %v, want %v", unasked, c.unasked)
			}
		})
	}
}
