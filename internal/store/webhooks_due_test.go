package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// TestDueWebhooks: a dispatcher's regular claim pass looks only at the
// webhooks with a delivery due and not claimed, enabled and not backing
// off; before, it was handed every enabled webhook not backing off and
// ran a claim (a write transaction) for each, with nothing to claim while
// the receivers answer.
func TestDueWebhooks(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := storetest.OpenStore(t, b)
		now := time.Now().UnixMilli()
		hooks := map[string]int64{}
		for _, name := range []string{"due", "delivered only", "due later", "claimed", "backing off", "disabled", "none", "failed"} {
			w := &wnms.Webhook{CustomerID: 1, URL: "https://example.com/" + name, Secret: "s3cret-s3cret-s3cret",
				LocationPath: "/", Enabled: name != "disabled"}
			if err := st.CreateWebhook(ctx, w); err != nil {
				t.Fatal(err)
			}
			hooks[name] = w.ID
		}
		row := func(hook string, event int64, state string, next, claim int64) {
			if err := st.ExecForTest(ctx, `INSERT INTO webhook_deliveries (webhook_id, event_id, kind, event_ts, body, state,
				next_at, claim_until, updated_at) VALUES ($1, $2, 'apDown', $3, '{}', $4, $5, $6, $3)`,
				hooks[hook], event, now, state, next, claim); err != nil {
				t.Fatal(err)
			}
		}
		row("due", 1, wnms.DeliveryPending, now-1000, 0)
		row("due", 2, wnms.DeliveryDelivered, now-1000, 0)
		row("delivered only", 1, wnms.DeliveryDelivered, now-1000, 0)
		row("due later", 1, wnms.DeliveryPending, now+60_000, 0)
		row("claimed", 1, wnms.DeliveryPending, now-1000, now+30_000)
		row("backing off", 1, wnms.DeliveryPending, now-1000, 0)
		row("disabled", 1, wnms.DeliveryPending, now-1000, 0)
		row("failed", 1, wnms.DeliveryFailed, now-1000, 0)
		if err := st.ExecForTest(ctx, `UPDATE webhooks SET paused_until = $1 WHERE id = $2`, now+60_000, hooks["backing off"]); err != nil {
			t.Fatal(err)
		}
		ids, err := st.DueWebhooks(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprint([]int64{hooks["due"]}); fmt.Sprint(ids) != want {
			t.Errorf("due webhooks %v, want %s (of %v)", ids, want, hooks)
		}
		// A claim that ran out and a retry that came due are due again.
		ids, err = st.DueWebhooks(ctx, now+61_000)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprint([]int64{hooks["due"], hooks["due later"], hooks["claimed"], hooks["backing off"]}); fmt.Sprint(ids) != want {
			t.Errorf("a minute later: due webhooks %v, want %s", ids, want)
		}
	})
}
