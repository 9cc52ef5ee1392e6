package store_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// clientState is what a client's row says, for comparing two ways of
// writing it.
type clientState struct {
	Mac, Name, Username, IP, EventType, BSSID, SSID string
	LastSeen, Location                              int64
	RSSI                                            string
}

func clientStates(t *testing.T, st *store.Store, customerID int64) map[string]clientState {
	t.Helper()
	cs, _, err := st.Clients(context.Background(), wnms.ClientQuery{CustomerID: customerID, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]clientState{}
	for _, c := range cs {
		rssi := "none"
		if c.RSSI != nil {
			rssi = fmt.Sprintf("%d/%v", *c.RSSI, *c.DataRateMbps)
		}
		ip := "none"
		if c.IPAddress != nil {
			ip = *c.IPAddress
		}
		out[c.MacAddress] = clientState{c.MacAddress, c.Name, c.Username, ip, c.LastEventType, c.BSSID, c.SSID,
			c.LastSeen, c.LocationID.ID, rssi}
	}
	return out
}

// Derived state written behind ingest is exact and survives crashes:
// batches of events with random client updates (timestamps out of order,
// fields present and absent) go through the ingest write for customer 1,
// with flushes and kill -9 style crashes at random points between them;
// then the same updates go one by one through UpdateClients for
// customer 2. After the last reopen, both customers' clients read the
// same, and every slot an attempt fell in is marked out of date.
func TestWriteBehindExactAcrossCrashes(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		cfg := storetest.StoreConfig(t, b)
		st, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { st.Close() }()
		st.HoldDerivedForTest()
		r := rand.New(rand.NewPCG(3, 4))
		base := time.Now().Add(-2 * time.Hour).UnixMilli()
		pick := func(vals ...string) string { return vals[r.IntN(len(vals))] }
		macs := []string{"AA:00:00:00:00:01", "AA:00:00:00:00:02", "AA:00:00:00:00:03", "AA:00:00:00:00:04"}
		wantSlots := map[int64]bool{}
		var oneByOne []map[int64]wnms.ClientUpdate
		crashes, n := 0, 0
		for batch := range 40 {
			var evs []*wnms.ClientEvent
			var bodies [][]byte
			behind := map[int64]wnms.ClientUpdate{}
			for range 1 + r.IntN(6) {
				m := r.IntN(len(macs))
				u := wnms.ClientUpdate{MacAddress: macs[m], Timestamp: base + int64(r.IntN(40))*60_000,
					Name: pick("", "", "laptop", "phone"), Username: pick("", "ada", "bob"), IP: pick("", "", "10.0.0.1", "10.0.0.2"), EventType: pick("", "Success", "Failure"),
					BSSID: pick("00:11:74:00:00:01", "00:11:74:00:00:02"), SSID: pick("corp", "guest"), Channel: 36,
					Protocol: "A", LocationID: int64(1 + r.IntN(3))}
				if r.IntN(2) == 0 {
					rssi, rate := -40-r.IntN(30), float64(r.IntN(300))
					u.RSSI, u.DataRate = &rssi, &rate
				}
				// One by one, at once, for customer 2 (at the end: an
				// update flushes what is pending first).
				oneByOne = append(oneByOne, map[int64]wnms.ClientUpdate{int64(101 + m): u})
				// Coalesced in the batch, as ingest does, for customer 1.
				if cur, ok := behind[int64(1+m)]; ok {
					u = wnms.Coalesce(cur, u)
				}
				behind[int64(1+m)] = u
				n++
				evs = append(evs, &wnms.ClientEvent{EventID: fmt.Sprintf("e%d", n), MacAddress: u.MacAddress, BSSID: u.BSSID,
					Timestamp: u.Timestamp, Type: wnms.Failure, SSID: u.SSID, Channel: 36, Protocol: "A", LocationID: wnms.UnknownLocation})
				bodies = append(bodies, []byte(`{}`))
				wantSlots[wnms.SlotOf(u.Timestamp)] = true
			}
			if got, err := st.InsertClientEvents(ctx, 1, evs, bodies, behind); err != nil || got != len(evs) {
				t.Fatalf("batch %d: %d stored, %v", batch, got, err)
			}
			switch r.IntN(6) + batch/39*6 { // the last batch stays pending
			case 0:
				if err := st.FlushDerived(ctx); err != nil {
					t.Fatal(err)
				}
			case 1:
				st.CrashForTest()
				crashes++
				if st, err = store.Open(ctx, cfg); err != nil {
					t.Fatal(err)
				}
				st.HoldDerivedForTest()
			}
		}
		// A last crash with batches pending, then the server that opens next.
		if left, err := st.JournalRowsForTest(ctx); err != nil || left == 0 {
			t.Fatalf("journal rows before the last crash: %d, %v (want some pending)", left, err)
		}
		st.CrashForTest()
		// A command that only administers the store (apikey, migrate,
		// backup) leaves the journal to the servers.
		admin := cfg
		admin.Serving = false
		if st, err = store.Open(ctx, admin); err != nil {
			t.Fatal(err)
		}
		if left, err := st.JournalRowsForTest(ctx); err != nil || left == 0 {
			t.Fatalf("journal rows after an administrative open: %d, %v (want them left)", left, err)
		}
		st.Close()
		if st, err = store.Open(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		if left, err := st.JournalRowsForTest(ctx); err != nil || left != 0 {
			t.Fatalf("journal rows after reopening: %d, %v", left, err)
		}
		behind := clientStates(t, st, 1)
		for _, u := range oneByOne {
			if err := st.UpdateClients(ctx, 2, u); err != nil {
				t.Fatal(err)
			}
		}
		direct := clientStates(t, st, 2)
		if len(direct) != len(macs) || !reflect.DeepEqual(behind, direct) {
			t.Errorf("after %d crashes, written behind:\n%v\none by one:\n%v", crashes+1, behind, direct)
		}
		dirty, err := st.DirtySlots(ctx, 1, 0, base+24*3600_000, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, d := range dirty {
			got = append(got, d.Slot)
		}
		slices.Sort(got)
		var want []int64
		for s := range wantSlots {
			want = append(want, s)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("dirty slots %v, want %v", got, want)
		}
	})
}

// A read sees every batch acknowledged before it, on the server that
// holds them in memory, without waiting for the flush.
func TestWriteBehindReadsSeeAcknowledged(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := storetest.OpenStore(t, b)
		evs, bodies := events("AA:00:00:00:00:09", time.Now().Add(-time.Minute), 2)
		u := wnms.ClientUpdate{MacAddress: "AA:00:00:00:00:09", Timestamp: evs[1].Timestamp, Name: "scanner",
			EventType: "Success", BSSID: "00:11:74:00:00:01", SSID: "corp", Channel: 36, Protocol: "A", LocationID: 1}
		if _, err := st.InsertClientEvents(ctx, 1, evs, bodies, map[int64]wnms.ClientUpdate{7: u}); err != nil {
			t.Fatal(err)
		}
		if got := clientStates(t, st, 1)["AA:00:00:00:00:09"]; got.Name != "scanner" || got.LastSeen != u.Timestamp {
			t.Errorf("read right after ingest: %+v", got)
		}
		if n, err := st.JournalRowsForTest(ctx); err != nil || n != 0 {
			t.Errorf("journal rows after the read's flush: %d %v", n, err)
		}
		// A retried batch (all stored already) journals nothing.
		if n, err := st.InsertClientEvents(ctx, 1, evs, bodies, map[int64]wnms.ClientUpdate{7: u}); err != nil || n != 0 {
			t.Fatalf("retry: %d %v", n, err)
		}
		if n, err := st.JournalRowsForTest(ctx); err != nil || n != 0 {
			t.Errorf("journal rows after a retry: %d %v", n, err)
		}
	})
}

// A statement on the clients table alone (a scoped ingest's client
// updates) flushes what is pending only when a client's state is: pending
// baseline slots wait for their flush.
func TestClientStatementsSettleClientsOnly(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := storetest.OpenStore(t, b)
		st.HoldDerivedForTest() // no flush by time: only the statements'
		journal := func() int {
			n, err := st.JournalRowsForTest(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		evs, bodies := events("AA:00:00:00:00:0A", time.Now().Add(-time.Minute), 2)
		// Slots pending, no client: the clients statements leave them.
		if _, err := st.InsertClientEvents(ctx, 1, evs, bodies, nil); err != nil {
			t.Fatal(err)
		}
		u := wnms.ClientUpdate{MacAddress: "AA:00:00:00:00:0A", Timestamp: evs[1].Timestamp, Name: "scoped",
			EventType: "Success", BSSID: "00:11:74:00:00:01", SSID: "corp", Channel: 36, Protocol: "A", LocationID: 1}
		if err := st.UpdateClients(ctx, 1, map[int64]wnms.ClientUpdate{8: u}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.ClientLocations(ctx, 1, []int64{8}); err != nil {
			t.Fatal(err)
		}
		if n := journal(); n != 1 {
			t.Fatalf("journal rows with only slots pending, after client statements: %d, want 1", n)
		}
		// A client pending: they flush first, and see it.
		evs, bodies = events("AA:00:00:00:00:0B", time.Now().Add(-time.Minute), 2)
		u.MacAddress, u.Timestamp = "AA:00:00:00:00:0B", evs[1].Timestamp
		if _, err := st.InsertClientEvents(ctx, 1, evs, bodies, map[int64]wnms.ClientUpdate{9: u}); err != nil {
			t.Fatal(err)
		}
		where, err := st.ClientLocations(ctx, 1, []int64{8, 9})
		if err != nil {
			t.Fatal(err)
		}
		if where[8] != 1 || where[9] != 1 {
			t.Errorf("locations %v, want both clients at 1", where)
		}
		if n := journal(); n != 0 {
			t.Errorf("journal rows after a client statement with a client pending: %d, want 0", n)
		}
	})
}

// On SQLite, writes that wait for the writer while a round runs share the
// next round's transaction; when one of them fails, the others still
// commit, each alone, and only it fails.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	st := storetest.OpenStore(t, storetest.SQLite)
	insert := `INSERT INTO baseline_dirty (customer_id, slot, version) VALUES (9, $1, 0)`
	run := func(fail int) (txs []string, errs []error) {
		hold, running := make(chan struct{}), make(chan struct{})
		first := make(chan error, 1)
		go func() { _, err := st.GroupWriteForTest(ctx, running, hold, insert, int64(1000*fail)); first <- err }()
		<-running // the first write leads a round of its own, and waits in it
		txs, errs = make([]string, 4), make([]error, 4)
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				slot := int64(1000*fail + 1 + i)
				if fail > 0 && i == 2 {
					slot = int64(1000 * fail) // the key the first round took: a conflict
				}
				txs[i], errs[i] = st.GroupWriteForTest(ctx, nil, nil, insert, slot)
			}()
		}
		for st.GroupQueueForTest() != 4 {
			time.Sleep(time.Millisecond)
		}
		close(hold)
		wg.Wait()
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		return txs, errs
	}
	txs, errs := run(0)
	for i := range 4 {
		if errs[i] != nil || txs[i] != txs[0] {
			t.Fatalf("write %d: %v in %s, want nil in the shared %s", i, errs[i], txs[i], txs[0])
		}
	}
	_, errs = run(1)
	for i, err := range errs {
		if (err != nil) != (i == 2) {
			t.Errorf("write %d of a round with a failing write: %v", i, err)
		}
		if err != nil && !strings.Contains(err.Error(), "UNIQUE") {
			t.Errorf("write %d failed with %v, want its own conflict", i, err)
		}
	}
	dirty, err := st.DirtySlots(ctx, 9, 0, 1<<40, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirty) != 2*4+1 { // slots 0..4, and 1000, 1001, 1002, 1004
		t.Errorf("%d rows committed, want 9: %v", len(dirty), dirty)
	}
}

// A journal body gives back what went in.
func TestJournalRoundTrip(t *testing.T) {
	rssi, rate, ap := -61, 433.3, int64(12)
	in := map[int64]wnms.ClientUpdate{
		5: {MacAddress: "AA:BB", Timestamp: 1_700_000_000_000, Name: "n", Username: "u", EventType: "Failure", BSSID: "b",
			SSID: "s", Channel: 149, Protocol: "AC", LocationID: 3, APBoxID: &ap, APName: "Lobby", RSSI: &rssi, DataRate: &rate,
			NameTS: 1_699_999_999_000, UsernameTS: 1_700_000_000_000, EventTypeTS: 1_600_000_000_000, SignalTS: 1_700_000_000_000,
			IP: "10.0.0.61", IPTS: 1_699_999_998_000},
		6: {MacAddress: "CC:DD", Timestamp: 42},
	}
	got, slots, err := store.DecodeJournalForTest(in, []int64{900_000, -900_000})
	if err != nil {
		t.Fatal(err)
	}
	for box, u := range in {
		if !reflect.DeepEqual(got[box], u.Stamped()) {
			t.Errorf("client %d: %+v, want %+v", box, got[box], u.Stamped())
		}
	}
	slices.Sort(slots)
	if !slices.Equal(slots, []int64{-900_000, 900_000}) {
		t.Errorf("slots %v", slots)
	}
}

// A journal body of version 1 (written by a server from before clients
// had an IP, and possibly still in the journal when the new one starts)
// reads as the client it held, with no IP.
func TestJournalReadsVersion1(t *testing.T) {
	// What encodeJournal of version 1 made of one client and slot 42.
	raw, err := hex.DecodeString("0071008eff01015401061161613a62623a63633a30303a30303a303380a0abfef9620c6361726f6c2d6c6170746f70056361726f6c07" +
		"537563636573731131313a32323a33333a34343a35353a363604636f7270083830322e313161630461702d31480a010e0177010000000000106240" +
		"d00f000000010000ffff")
	if err != nil {
		t.Fatal(err)
	}
	got, slots, err := store.DecodeJournalBodyForTest(raw)
	if err != nil {
		t.Fatal(err)
	}
	rssi, rate, ap := -60, 144.5, int64(7)
	want := wnms.ClientUpdate{MacAddress: "aa:bb:cc:00:00:03", Timestamp: 1_700_000_000_000, Name: "carol-laptop",
		Username: "carol", EventType: "Success", BSSID: "11:22:33:44:55:66", SSID: "corp", Channel: 36, Protocol: "802.11ac",
		LocationID: 5, APBoxID: &ap, APName: "ap-1", RSSI: &rssi, DataRate: &rate, NameTS: 1_699_999_999_000}.Stamped()
	if len(got) != 1 || !reflect.DeepEqual(got[3], want) {
		t.Errorf("clients %+v, want 3: %+v", got, want)
	}
	if !slices.Equal(slots, []int64{42}) {
		t.Errorf("slots %v, want [42]", slots)
	}
}

// SQLite's bulk path writes events and samples with INSERT OR IGNORE, which
// skips a row that breaks any constraint, not only a row stored already.
// That is the same as ON CONFLICT DO NOTHING only while those tables have
// no CHECK or foreign key (their NOT NULL columns are always filled), as
// here.
func TestOrIgnoreTables(t *testing.T) {
	st := storetest.OpenStore(t, storetest.SQLite)
	tables := store.OrIgnoreTablesForTest()
	if len(tables) == 0 {
		t.Fatal("no tables")
	}
	for _, table := range tables {
		q, err := st.TelemetrySchemaForTest(context.Background(), table)
		if err != nil || q == "" {
			t.Fatalf("%s: %q %v", table, q, err)
		}
		up := strings.ToUpper(q)
		for _, word := range []string{"CHECK", "REFERENCES", "ON CONFLICT"} {
			if strings.Contains(up, word) {
				t.Errorf("%s has %s: INSERT OR IGNORE would skip rows ON CONFLICT DO NOTHING keeps\n%s", table, word, q)
			}
		}
	}
}

// What waits in memory is bounded: a batch that fills it flushes before it
// answers, however many clients a sender invents.
func TestWriteBehindBounded(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := storetest.OpenStore(t, b)
		st.HoldDerivedForTest()
		const limit = 50
		st.LimitPendingForTest(limit)
		base := time.Now().Add(-time.Hour)
		most := 0
		for batch := range 30 {
			mac := fmt.Sprintf("AA:00:00:00:%02X:00", batch)
			evs, bodies := events(mac, base.Add(time.Duration(batch)*time.Second), 1)
			clients := map[int64]wnms.ClientUpdate{}
			for i := range 7 { // 7 new clients a batch
				clients[int64(batch*10+i)] = wnms.ClientUpdate{MacAddress: fmt.Sprintf("AA:00:00:00:%02X:%02X", batch, i),
					Timestamp: evs[0].Timestamp, LocationID: 1}
			}
			if _, err := st.InsertClientEvents(ctx, 1, evs, bodies, clients); err != nil {
				t.Fatal(err)
			}
			most = max(most, st.PendingForTest())
		}
		if most == 0 || most >= limit {
			t.Errorf("at most %d clients and slots pending, want some and fewer than %d", most, limit)
		}
		if got := len(clientStates(t, st, 1)); got != 30*7 {
			t.Errorf("%d clients stored, want %d", got, 30*7)
		}
	})
}
