package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// On SQLite, changes that wait for the writer while another commits share
// the next commit, each in a savepoint: one that fails is undone alone and
// answers its own error, the others and their audit records commit, and a
// transaction that ends under a change makes every change of the round run
// again alone, once each.
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
	stored := func(name string) int {
		var n int
		if err := st.QueryRowForTest(ctx, `SELECT count(*) FROM settings WHERE name = $1`, name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	type member struct {
		f       func(*sql.Tx) error
		audit   bool // the change carries a call's audit record
		gone    bool // its caller went away before its turn
		panics  bool // its function panics (wantErr: the panic, on its caller's goroutine)
		wantErr string
	}
	cases := []struct {
		name    string
		members func(p string) []member
		shared  bool     // all members commit in one transaction
		want    []string // settings stored, once each
		notWant []string
	}{{
		name: "all commit together",
		members: func(p string) []member {
			return []member{{f: put(p + "a")}, {f: put(p + "b"), audit: true}, {f: put(p + "c")}, {f: put(p + "d"), audit: true}}
		},
		shared: true, want: []string{"a", "b", "c", "d"},
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
		shared: true, want: []string{"a", "c"}, notWant: []string{"b", "d"},
	}, {
		name: "a caller gone before its turn changes nothing",
		members: func(p string) []member {
			return []member{{f: put(p + "a")}, {f: put(p + "b"), gone: true, wantErr: "context canceled"}, {f: put(p + "c")}}
		},
		shared: true, want: []string{"a", "c"}, notWant: []string{"b"},
	}, {
		name: "a panicking change panics its own caller only",
		members: func(p string) []member {
			return []member{
				{f: put(p + "a"), audit: true},
				{f: both(put(p+"b"), func(*sql.Tx) error { panic("boom") }), audit: true, panics: true, wantErr: "boom"},
				{f: put(p + "c")},
			}
		},
		shared: true, want: []string{"a", "c"}, notWant: []string{"b"},
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
				_, err := st.ChangeForTest(ctx, running, hold, put(p+"first"))
				first <- err
			}()
			<-running
			txs, errs := make([]string, len(members)), make([]error, len(members))
			entries := make([]*wnms.AuditEntry, len(members))
			var wg sync.WaitGroup
			for j, m := range members {
				mctx, cancel := context.WithCancel(ctx)
				defer cancel()
				if m.audit {
					entries[j] = wnms.NewAuditEntry(wnms.AuditRecord{CustomerID: 1, Method: "PUT", Path: "/test",
						ResourceType: "configuration/hotspotssid", Status: 200})
					mctx = wnms.WithAudit(mctx, entries[j])
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() {
						if v := recover(); v != nil {
							errs[j] = fmt.Errorf("panic: %v", v)
						}
					}()
					txs[j], errs[j] = st.ChangeForTest(mctx, nil, nil, m.f)
					if m.panics {
						errs[j] = errors.New("no panic")
					}
				}()
				for st.ChangeQueueForTest() != j+1 { // arrival order is member order
					time.Sleep(time.Millisecond)
				}
				if m.gone {
					cancel()
				}
			}
			close(hold)
			wg.Wait()
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			shared := ""
			for j, m := range members {
				if (errs[j] == nil) != (m.wantErr == "") || errs[j] != nil && !strings.Contains(errs[j].Error(), m.wantErr) {
					t.Errorf("member %d: %v, want %q", j, errs[j], m.wantErr)
				}
				if errs[j] != nil || m.gone {
					continue
				}
				if shared == "" {
					shared = txs[j]
				} else if (txs[j] == shared) != c.shared {
					t.Errorf("member %d committed in %s, first in %s: shared %v, want %v", j, txs[j], shared, !c.shared, c.shared)
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
				_, id, _ := e.Finish(200)
				if (id != 0) != (errs[j] == nil) {
					t.Errorf("member %d (%v): audit record %d", j, errs[j], id)
					continue
				}
				if id == 0 {
					continue
				}
				var n int
				if err := st.QueryRowForTest(ctx, `SELECT count(*) FROM audit_log WHERE id = $1`, id).Scan(&n); err != nil || n != 1 {
					t.Errorf("member %d: audit record %d stored %d times (%v)", j, id, n, err)
				}
			}
		})
	}
	t.Run("a lone change that panics leaves the writer to the next", func(t *testing.T) {
		var got any
		func() {
			defer func() { got = recover() }()
			st.ChangeForTest(ctx, nil, nil, both(put("lone-a"), func(*sql.Tx) error { panic("alone") }))
		}()
		if got != "alone" {
			t.Fatalf("recovered %v, want the change's own panic", got)
		}
		if _, err := st.ChangeForTest(ctx, nil, nil, put("lone-b")); err != nil {
			t.Fatal(err)
		}
		if stored("lone-a") != 0 || stored("lone-b") != 1 {
			t.Errorf("stored lone-a %d, lone-b %d; want 0 and 1", stored("lone-a"), stored("lone-b"))
		}
	})
}
