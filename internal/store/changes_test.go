package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// On SQLite, changes that wait for the writer while another commits share
// the next commit, each in a savepoint: one that fails is undone alone and
// answers its own error, the others and their audit records commit, and a
// transaction that ends under a change makes every change of the round run
// again alone; a solo change commits alone after the changes before it,
// and a caller that goes away while its change waits leaves the queue.
func TestChangeRound(t *testing.T) {
	ctx := context.Background()
	st := storetest.OpenStore(t, storetest.SQLite)
	put := func(name string) func(*sql.Tx) error {
		return func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES ($1, 'v')`, name)
			return err
		}
	}
	both := func(fs ...func(*sql.Tx) error) func(*sql.Tx) error {
		return func(tx *sql.Tx) error {
			for _, f := range fs {
				if err := f(tx); err != nil {
					return err
				}
			}
			return nil
		}
	}
	count := func(query string, arg any) int {
		var n int
		if err := st.QueryRowForTest(ctx, query, arg).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	stored := func(name string) int { return count(`SELECT count(*) FROM settings WHERE name = $1`, name) }
	type member struct {
		f       func(*sql.Tx) error
		solo    bool
		audit   bool // the change carries a call's audit record
		gone    bool // its caller goes away while the change waits for its round
		panics  bool // its function panics (wantErr: the panic, on its caller's goroutine)
		wantErr string
	}
	cases := []struct {
		name    string
		members func(p string) []member
		shared  [][]int  // members that commit in one transaction, by transaction
		want    []string // settings stored, once each
		notWant []string
	}{{
		name: "all commit together",
		members: func(p string) []member {
			return []member{{f: put(p + "a")}, {f: put(p + "b"), audit: true}, {f: put(p + "c")}, {f: put(p + "d"), audit: true}}
		},
		shared: [][]int{{0, 1, 2, 3}}, want: []string{"a", "b", "c", "d"},
	}, {
		name: "a failing change is undone alone",
		members: func(p string) []member {
			return []member{
				{f: put(p + "a"), audit: true},
				// its first insert is undone with its second, which
				// conflicts with the change before it in the round
				{f: both(put(p+"b"), put(p+"a")), audit: true, wantErr: "UNIQUE"},
				{f: put(p + "c"), audit: true},
				{f: both(put(p+"d"), func(*sql.Tx) error { return errors.New("refused") }), wantErr: "refused"},
			}
		},
		shared: [][]int{{0, 2}}, want: []string{"a", "c"}, notWant: []string{"b", "d"},
	}, {
		name: "a caller gone while its change waits changes nothing",
		members: func(p string) []member {
			return []member{{f: put(p + "a")}, {f: put(p + "b"), gone: true, wantErr: "context canceled"}, {f: put(p + "c")}}
		},
		shared: [][]int{{0, 2}}, want: []string{"a", "c"}, notWant: []string{"b"},
	}, {
		name: "a panicking change panics its own caller only",
		members: func(p string) []member {
			return []member{
				{f: put(p + "a"), audit: true},
				{f: both(put(p+"b"), func(*sql.Tx) error { panic("boom") }), audit: true, panics: true, wantErr: "boom"},
				{f: put(p + "c")},
			}
		},
		shared: [][]int{{0, 2}}, want: []string{"a", "c"}, notWant: []string{"b"},
	}, {
		name: "a solo change sees the changes before it committed",
		members: func(p string) []member {
			// It reads through the pool, as a caller's check does.
			sees := func(*sql.Tx) error {
				if stored(p+"b") != 1 {
					return errors.New("b not committed yet")
				}
				return nil
			}
			return []member{{f: put(p + "a")}, {f: put(p + "b"), audit: true}, {f: both(sees, put(p+"c")), solo: true, audit: true},
				{f: put(p + "d")}, {f: put(p + "e"), audit: true}}
		},
		shared: [][]int{{0, 1}, {3, 4}}, want: []string{"a", "b", "c", "d", "e"},
	}, {
		name: "a transaction ended under a change runs each alone",
		members: func(p string) []member {
			// The first time, as an interrupted statement does: the
			// transaction ends and the statement fails.
			var once sync.Once
			end := func(tx *sql.Tx) error {
				var err error
				once.Do(func() {
					if _, err = tx.ExecContext(ctx, `ROLLBACK`); err == nil {
						err = errors.New("interrupted")
					}
				})
				return err
			}
			return []member{{f: put(p + "a"), audit: true}, {f: put(p + "b")}, {f: both(end, put(p+"c")), audit: true}, {f: put(p + "d")}}
		},
		want: []string{"a", "b", "c", "d"},
	}}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := fmt.Sprintf("round%d-", i)
			members := c.members(p)
			// A first change holds the writer while the members queue.
			hold, running := make(chan struct{}), make(chan struct{})
			first := make(chan error, 1)
			go func() {
				_, err := st.ChangeForTest(ctx, running, hold, false, put(p+"first"))
				first <- err
			}()
			<-running
			txs, errs := make([]*sql.Tx, len(members)), make([]error, len(members))
			runs := make([]atomic.Int32, len(members))
			entries := make([]*wnms.AuditEntry, len(members))
			var wg sync.WaitGroup
			queued := 0
			for j, m := range members {
				mctx, cancel := context.WithCancel(ctx)
				defer cancel()
				if m.audit {
					entries[j] = wnms.NewAuditEntry(wnms.AuditRecord{CustomerID: 1, Method: "PUT", Path: "/test",
						RequestID: p + fmt.Sprint(j), ResourceType: "configuration/hotspotssid", Status: 200})
					mctx = wnms.WithAudit(mctx, entries[j])
				}
				f := func(tx *sql.Tx) error { runs[j].Add(1); return m.f(tx) }
				answered := make(chan struct{})
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer close(answered)
					defer func() {
						if v := recover(); v != nil {
							errs[j] = fmt.Errorf("panic: %v", v)
						}
					}()
					txs[j], errs[j] = st.ChangeForTest(mctx, nil, nil, m.solo, f)
					if m.panics {
						errs[j] = errors.New("no panic")
					}
				}()
				queued++
				for st.ChangeQueueForTest() != queued { // arrival order is member order
					time.Sleep(time.Millisecond)
				}
				if m.gone {
					cancel()
					<-answered // at once, while the writer is still held
					queued--
				}
			}
			close(hold)
			wg.Wait()
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			for j, m := range members {
				if (errs[j] == nil) != (m.wantErr == "") || errs[j] != nil && !strings.Contains(errs[j].Error(), m.wantErr) {
					t.Errorf("member %d: %v, want %q", j, errs[j], m.wantErr)
				}
			}
			// Which committed members shared a transaction: those of each
			// group of c.shared, with each other and no other.
			group := map[int]int{} // member: its transaction's index in c.shared, +1
			for g, ms := range c.shared {
				for _, j := range ms {
					group[j] = g + 1
				}
			}
			for j := range members {
				if errs[j] != nil {
					continue
				}
				for k := j + 1; k < len(members); k++ {
					want := group[j] != 0 && group[j] == group[k]
					if errs[k] == nil && (txs[j] == txs[k]) != want {
						t.Errorf("members %d and %d shared a transaction: %v, want %v", j, k, txs[j] == txs[k], want)
					}
				}
				if c.shared != nil && runs[j].Load() != 1 {
					t.Errorf("member %d ran %d times, want once", j, runs[j].Load())
				}
			}
			for _, name := range c.want {
				if n := stored(p + name); n != 1 {
					t.Errorf("%s stored %d times, want once", name, n)
				}
			}
			for _, name := range c.notWant {
				if n := stored(p + name); n != 0 {
					t.Errorf("%s stored, want not", name)
				}
			}
			for j, e := range entries {
				if e == nil {
					continue
				}
				rec, id, _ := e.Finish(200)
				if (id != 0) != (errs[j] == nil) {
					t.Errorf("member %d (%v): audit record %d", j, errs[j], id)
				}
				want := 0
				if errs[j] == nil {
					want = 1
				}
				if n := count(`SELECT count(*) FROM audit_log WHERE request_id = $1`, rec.RequestID); n != want {
					t.Errorf("member %d (%v): %d audit records, want %d", j, errs[j], n, want)
				}
			}
		})
	}
	t.Run("a lone change that panics leaves the writer to the next", func(t *testing.T) {
		var got any
		func() {
			defer func() { got = recover() }()
			st.ChangeForTest(ctx, nil, nil, false, both(put("lone-a"), func(*sql.Tx) error { panic("alone") }))
		}()
		if p, ok := got.(store.ChangePanic); !ok || p.Value != "alone" || !strings.Contains(p.Stack, "changes_test.go") {
			t.Fatalf("recovered %#v, want the change's own panic and its stack", got)
		}
		if _, err := st.ChangeForTest(ctx, nil, nil, false, put("lone-b")); err != nil {
			t.Fatal(err)
		}
		if stored("lone-a") != 0 || stored("lone-b") != 1 {
			t.Errorf("stored lone-a %d, lone-b %d; want 0 and 1", stored("lone-a"), stored("lone-b"))
		}
	})
}
