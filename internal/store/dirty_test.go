package store

import (
	"slices"
	"testing"
)

// Two batches that mark the same slots upsert them in one order (by
// slot), whatever the order of their records, so that on PostgreSQL they
// wait for each other instead of deadlocking.
func TestDirtySlotsInSlotOrder(t *testing.T) {
	const slot = 900_000
	for _, times := range [][]int64{
		{5 * slot, slot, 3 * slot, slot + 1, 4 * slot},
		{4 * slot, 3 * slot, 5*slot + 7, slot},
	} {
		rows := dirtySlots(1, len(times), func(i int) int64 { return times[i] })
		var got []int64
		for _, r := range rows {
			got = append(got, r[1].(int64))
		}
		if want := []int64{slot, 3 * slot, 4 * slot, 5 * slot}; !slices.Equal(got, want) {
			t.Errorf("marks of %v: %v, want %v", times, got, want)
		}
	}
}
