package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// TestFinishDeliveriesMovesOnlyLeasedCursors: a dispatcher's cursors move
// only for the webhooks whose lease it still holds, only forward, and the
// ones whose lease another took come back as lost (their events are the
// new holder's to deliver).
func TestFinishDeliveriesMovesOnlyLeasedCursors(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := storetest.OpenStore(t, b)
		var ids []int64
		for i := range 3 {
			w := &wnms.Webhook{CustomerID: 1, URL: fmt.Sprintf("https://example.com/hook%d", i), Secret: "s3cret",
				Kinds: []string{wnms.EventAPDown}, LocationPath: "/", Enabled: true}
			if err := st.CreateWebhook(ctx, w); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, w.ID)
		}
		// a holds the first and third webhooks' leases, b the second's.
		for i, id := range ids {
			owner := "a"
			if i == 1 {
				owner = "b"
			}
			if err := st.ExecForTest(ctx, `UPDATE webhooks SET lease_owner = $1, lease_until = $2 WHERE id = $3`,
				owner, time.Now().Add(time.Hour).UnixMilli(), id); err != nil {
				t.Fatal(err)
			}
		}
		cursor := func(id int64) int64 {
			var c int64
			if err := st.QueryRowForTest(ctx, `SELECT cursor FROM webhooks WHERE id = $1`, id).Scan(&c); err != nil {
				t.Fatal(err)
			}
			return c
		}
		cur := func(id, event int64) wnms.Cursor { return wnms.Cursor{WebhookID: id, EventID: event} }
		for _, step := range []struct {
			name    string
			cursors []wnms.Cursor
			lost    string
			want    [3]int64
		}{
			{"a moves its own", []wnms.Cursor{cur(ids[0], 5), cur(ids[1], 7), cur(ids[2], 9)}, fmt.Sprint([]int64{ids[1]}), [3]int64{5, 0, 9}},
			{"never back", []wnms.Cursor{cur(ids[0], 3), cur(ids[2], 12)}, "[]", [3]int64{5, 0, 12}},
			{"one lost alone", []wnms.Cursor{cur(ids[1], 20)}, fmt.Sprint([]int64{ids[1]}), [3]int64{5, 0, 12}},
		} {
			lost, err := st.FinishDeliveries(ctx, nil, 24*time.Hour, "a", step.cursors)
			if err != nil {
				t.Fatal(err)
			}
			if lost == nil {
				lost = []int64{}
			}
			if fmt.Sprint(lost) != step.lost {
				t.Errorf("%s: lost %v, want %s", step.name, lost, step.lost)
			}
			if got := [3]int64{cursor(ids[0]), cursor(ids[1]), cursor(ids[2])}; got != step.want {
				t.Errorf("%s: cursors %v, want %v", step.name, got, step.want)
			}
		}
	})
}
