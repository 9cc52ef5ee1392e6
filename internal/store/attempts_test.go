package store_test

import (
	"context"
	"testing"

	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// TestReserveAttemptLeavesTheCallsRecord: reserving a login attempt is the
// call's bookkeeping, not its change: a caller already known (a user
// changing its own password) keeps its audit record for the transaction
// of the change, and no record is written with the reservation.
func TestReserveAttemptLeavesTheCallsRecord(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		st := storetest.OpenStore(t, b)
		e := wnms.NewAuditEntry(wnms.AuditRecord{Method: "POST", Path: "/V5/users/ownpassword", ResourceType: "users", Status: 200})
		e.SetActor(wnms.OnPremCustomer, wnms.AuditActor{UserID: 1, LoginID: "admin", Via: "http"})
		ctx := wnms.WithAudit(context.Background(), e)
		if _, _, ok, err := st.ReserveAttempt(ctx, []string{"addr:192.0.2.1"}, 0, 20); err != nil || !ok {
			t.Fatalf("reserve: ok %v, %v", ok, err)
		}
		if _, ok := e.Claim(); !ok {
			t.Error("the reservation's transaction took the call's audit record")
		}
		var n int
		if err := st.QueryRowForTest(context.Background(), `SELECT count(*) FROM audit_log`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d audit records written with the reservation", n)
		}
	})
}
