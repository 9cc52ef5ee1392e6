package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// TestNewClientOnTwoReplicas: two replicas writing the same new client at
// the same moment both succeed. (With clients_mac a unique index, the
// PostgreSQL run failed in two of three runs: "duplicate key value
// violates unique constraint clients_mac".)
func TestNewClientOnTwoReplicas(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		first, second := replicas(t, b)
		ts := time.Now().Add(-time.Hour).UnixMilli()
		for box := int64(1); box <= 200; box++ {
			u := wnms.ClientUpdate{MacAddress: fmt.Sprintf("AA:00:00:00:%02X:%02X", box>>8, box&0xff), Timestamp: ts, EventType: "Success",
				BSSID: "00:11:74:00:00:01", SSID: "corp", Channel: 36, Protocol: "A", LocationID: 1}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, st := range []interface {
				UpdateClients(context.Context, int64, map[int64]wnms.ClientUpdate) error
			}{first, second} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = st.UpdateClients(ctx, 1, map[int64]wnms.ClientUpdate{box: u})
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatalf("client %d: %v", box, err)
				}
			}
		}
	})
}
