package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// TestCountUp: the SNMP engine boots count; replicas starting together
// each get their own value.
func TestCountUp(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		st := storetest.OpenStore(t, b)
		ctx := context.Background()
		var mu sync.Mutex
		seen := map[int64]bool{}
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := st.CountUp(ctx, "snmp_engine_boots")
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[n] = true
				mu.Unlock()
			}()
		}
		wg.Wait()
		for n := int64(1); n <= 8; n++ {
			if !seen[n] {
				t.Fatalf("values %v, want 1 to 8 once each", seen)
			}
		}
	})
}

// TestLocationNamePathAndPolicyCustomers: what traps say about places and
// to whom coldStart goes.
func TestLocationNamePathAndPolicyCustomers(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		st := storetest.OpenStore(t, b)
		ctx := context.Background()
		root := wnms.LocalID(wnms.RootLocation)
		hq := &wnms.Location{Type: wnms.FolderLocation, Name: "HQ", ParentID: &root, TimezoneID: "UTC", CustomerID: 1}
		if err := st.CreateLocation(ctx, hq); err != nil {
			t.Fatal(err)
		}
		floor := &wnms.Location{Type: wnms.FloorLocation, Name: "Floor 1", ParentID: &hq.ID, TimezoneID: "UTC", CustomerID: 1}
		if err := st.CreateLocation(ctx, floor); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[int64]string{floor.ID.ID: "/HQ/Floor 1", hq.ID.ID: "/HQ", 999: ""} {
			if got, err := st.LocationNamePath(ctx, id); err != nil || got != want {
				t.Errorf("location %d: %q %v, want %q", id, got, err, want)
			}
		}
		if ids, err := st.SNMPPolicyCustomers(ctx); err != nil || len(ids) != 0 {
			t.Fatalf("before any policy: %v %v", ids, err)
		}
		if _, err := st.UpdateSNMPPolicy(ctx, 1, func(p *wnms.SNMPPolicy) (*wnms.SNMPPolicy, error) { return p, nil }); err != nil {
			t.Fatal(err)
		}
		if ids, err := st.SNMPPolicyCustomers(ctx); err != nil || len(ids) != 1 || ids[0] != 1 {
			t.Fatalf("after one: %v %v", ids, err)
		}
		c, err := st.SNMPCounts(ctx, 0)
		if err != nil || c.APsUp != 0 || c.APsDown != 0 || c.Clients != 0 {
			t.Fatalf("counts of an empty store: %+v %v", c, err)
		}
	})
}
