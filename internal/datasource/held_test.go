package datasource

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/radius"
	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/syslog"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// A held accept outlives the bridge that held it, on each engine: the
// next bridge over the same store (a restarted server) takes it back, and
// the connection still makes one Success: the syslog Success carrying the
// accept's AAA fields and username when it comes, the accept alone when
// its hold ends first; and a row whose Success was stored before the
// server stopped only goes.
func TestHeldAcceptsSurviveARestart(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends(t) {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			st := storetest.OpenStore(t, backend)
			ctx := context.Background()
			src := wnms.DataSource{Name: "lab", CIDR: "127.0.0.1/32", RadiusSecret: "s", Syslog: true,
				LocationID: wnms.LocalID(0)}
			// A bridge is a server's: a restart makes a new one over the
			// same store.
			start := func(hold time.Duration) *Bridge {
				b := &Bridge{Store: st, Ingest: telemetry.NewService(st, slog.New(slog.DiscardHandler)), Held: st, ServerID: 1, Hold: hold}
				b.init()
				b.table.Store(&table{entries: []entry{{customer: wnms.OnPremCustomer, src: src, prefix: src.Prefix()}}})
				t := b.table.Load()
				t.byName = map[string]*entry{key(wnms.OnPremCustomer, "lab"): &t.entries[0]}
				return b
			}
			now := time.Now()
			accept := func(b *Bridge, id, mac string) <-chan bool {
				t.Helper()
				rec := radius.Observation{Event: &wnms.EventRecord{EventID: &id, MacAddress: &mac, EventType: wnms.Ptr(wnms.Success),
					BSSID: wnms.Ptr("AA:BB:CC:DD:EE:FF"), SSID: "corp", Timestamp: wnms.Ptr(now.UnixMilli()), Username: "carol",
					ConnectionSteps: wnms.ConnectionSteps{AuthenticationTimestamp: wnms.Ptr(now.UnixMilli())}, AAALatency: wnms.Ptr[int64](42),
					EventDetail: wnms.EventDetail{RadiusPrimaryIP: wnms.Ptr("10.0.0.9")}}}
				stored := make(chan bool, 1)
				if !b.HoldSuccess(radius.Source{Group: wnms.OnPremCustomer, Name: "lab"}, rec, stored) {
					t.Fatal("the accept was not held")
				}
				return stored
			}
			events := func(mac, typ string) []map[string]any {
				t.Helper()
				raw, _, err := st.ClientEvents(ctx, wnms.EventQuery{CustomerID: wnms.OnPremCustomer, MAC: mac, From: -1, To: -1,
					Types: []string{typ}, Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				var out []map[string]any
				for _, r := range raw {
					var m map[string]any
					json.Unmarshal(r, &m)
					out = append(out, m)
				}
				return out
			}
			rows := func() int {
				t.Helper()
				hs, err := st.HeldAccepts(ctx, 1, 0, 100)
				if err != nil {
					t.Fatal(err)
				}
				return len(hs)
			}

			// Held, then a graceful stop: the accept shows as a RADIUS
			// accept event and waits in the store.
			// The proxy answers the NAS once told the row is written, and
			// not before.
			b1 := start(time.Minute)
			told := []<-chan bool{accept(b1, "radius-joined", "02:00:00:00:00:01"), accept(b1, "radius-alone", "02:00:00:00:00:02")}
			for _, c := range told {
				if len(c) != 0 {
					t.Fatal("told before the row is written")
				}
			}
			b1.persistHeld(ctx) // what persistOnWake does at once
			for _, c := range told {
				if len(c) != 1 || !<-c {
					t.Fatal("not told the row is written")
				}
			}
			if n := rows(); n != 2 {
				t.Fatalf("%d rows held in the store once told, want 2", n)
			}
			b1.Flush(ctx)
			if ev := events("02:00:00:00:00:01", "Intermediate"); len(ev) != 1 || ev[0]["categoryCode"] != float64(2) ||
				ev[0]["typeCode"] != float64(11) || ev[0]["radiusPrimaryIP"] != "10.0.0.9" {
				t.Fatalf("RADIUS accept events: %v", ev)
			}
			if n := rows(); n != 2 {
				t.Fatalf("%d rows held in the store, want 2", n)
			}

			// The next server takes them back; the syslog Success of the
			// first connection takes its accept.
			b2 := start(time.Minute)
			b2.recoverHeld(ctx, true)
			if n := b2.accepts.held(); n != 2 {
				t.Fatalf("%d accepts taken back, want 2", n)
			}
			err := b2.EmitSyslog(ctx, netip.MustParseAddr("127.0.0.1"), []syslog.ClientEvent{{MacAddress: "02:00:00:00:00:01",
				EventType: "Success", Timestamp: now.Add(time.Second).UnixMilli(), AssociationTimestamp: now.Add(-time.Second).UnixMilli(),
				AssocSeen: now.Add(-time.Second), AuthSeen: now.Add(100 * time.Millisecond)}})
			if err != nil {
				t.Fatal(err)
			}
			ok := events("02:00:00:00:00:01", "Success")
			// (The Success's read shape has no radiusPrimaryIP: the
			// upstream shows on the RADIUS accept event.)
			if len(ok) != 1 || ok[0]["eventId"] != "radius-joined" || ok[0]["aaaLatency"] != float64(42) ||
				ok[0]["authenticationTimestamp"] != float64(now.UnixMilli()) {
				t.Fatalf("the syslog Success did not take its accept: %v", ok)
			}
			clients, _, err := st.Clients(ctx, wnms.ClientQuery{CustomerID: wnms.OnPremCustomer, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			username := "(no such client)"
			for _, c := range clients {
				if c.MacAddress == "02:00:00:00:00:01" {
					username = c.Username
				}
			}
			if username != "carol" {
				t.Errorf("the client's username is %q, want the accepted request's", username)
			}
			if n := rows(); n != 1 {
				t.Fatalf("%d rows held after the join, want 1", n)
			}

			// Stopped without Flush (kill -9) after the row was written: the
			// next server, whose hold is over, stores the accept alone; a
			// row left behind by a server killed between storing a Success
			// and removing its row only goes.
			b2.persistHeld(ctx)
			if err := st.PutHeldAccepts(ctx, []wnms.HeldAccept{{ServerID: 1, EventID: "radius-joined", CustomerID: wnms.OnPremCustomer,
				Source: "lab", HeldAt: now.UnixMilli(), Success: wnms.HeldRecord{EventRecord: wnms.EventRecord{EventID: wnms.Ptr("radius-joined"),
					MacAddress: wnms.Ptr("02:00:00:00:00:01"), EventType: wnms.Ptr(wnms.Success), Timestamp: wnms.Ptr[int64](1)}}}}); err != nil {
				t.Fatal(err)
			}
			b3 := start(time.Millisecond)
			b3.recoverHeld(ctx, true)
			if ok := events("02:00:00:00:00:02", "Success"); len(ok) != 1 || ok[0]["eventId"] != "radius-alone" || ok[0]["aaaLatency"] != float64(42) {
				t.Fatalf("the accept whose hold ended: %v", ok)
			}
			if ok := events("02:00:00:00:00:01", "Success"); len(ok) != 1 {
				t.Fatalf("%d Successes for the joined connection, want 1", len(ok))
			}
			if n := rows(); n != 0 || b3.accepts.held() != 0 {
				t.Fatalf("%d rows and %d accepts held at the end", n, b3.accepts.held())
			}
			// Nothing more for a fourth start.
			b4 := start(time.Millisecond)
			b4.recoverHeld(ctx, true)
			b4.releaseHeld(ctx)
			for _, mac := range []string{"02:00:00:00:00:01", "02:00:00:00:00:02"} {
				if ok := events(mac, "Success"); len(ok) != 1 {
					t.Errorf("%s: %d Successes, want 1", mac, len(ok))
				}
				if ev := events(mac, "Intermediate"); len(ev) != 1 {
					t.Errorf("%s: %d RADIUS accept events, want 1", mac, len(ev))
				}
			}
		})
	}
}

var _ HeldStore = (*store.Store)(nil)
