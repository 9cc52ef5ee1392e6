package store

import (
	"context"
	"database/sql"
	"fmt"
	"runtime/debug"

	"github.com/wnms/wnms/internal/rounds"
)

// Group commit of ingest writes. Each ingest request's records are one
// transaction of their own, but requests that reach the telemetry writer
// while another one is writing wait, and then commit together: one
// transaction runs each waiting request's statements in arrival order. A
// commit (a WAL sync, and on SQLite the write of every page the batch
// touched) is then shared by all of them, so concurrent senders cost the
// engine what one sender with their combined batch would. Each request
// still gets its own answer (its own count of new rows), and a request
// whose statements fail does not fail the others: when a shared
// transaction fails, each request runs again alone.
//
// Changes (configuration, users, sessions: Store.tx) share commits the
// same way on SQLite, whose one writer runs them one after another anyway:
// there a commit's cost is the pages it writes to the WAL, and the pages a
// change and its audit record touch (the last leaf of each table and
// index) are mostly the same pages for every change, so a round of
// changes writes them once. Each change runs inside a savepoint of the
// round's transaction: one that fails is undone alone and answers its own
// error, and the others commit. PostgreSQL runs changes concurrently and
// syncs concurrent commits together by itself; there each change is a
// transaction of its own.

// groupWrite is one request's part of a shared transaction.
type groupWrite struct {
	run   func(b *bulkTx) error // its statements, inside the transaction
	after func()                // (optional) once they are committed, in commit order
}

// writeGrouped runs run in a telemetry write transaction shared with the
// requests waiting at the same time, then after (nil: nothing) once it is
// committed, and answers whether it was.
func (s *Store) writeGrouped(ctx context.Context, run func(b *bulkTx) error, after func()) error {
	if !groupsCommits(s.dialect) {
		var audited func(bool)
		err := s.bulk(ctx, s.tw, func(b *bulkTx) error {
			if err := run(b); err != nil {
				return err
			}
			var err error
			audited, err = s.auditInBulk(ctx, b)
			return err
		})
		if audited != nil {
			audited(err == nil)
		}
		if err == nil && after != nil {
			after()
		}
		return err
	}
	// The round runs to its end even if the leading request's context
	// ends: the others wait on it.
	rctx := context.WithoutCancel(ctx)
	return s.group.Do(ctx, groupWrite{run: run, after: after}, func(round []*rounds.Item[groupWrite]) {
		s.writeRound(rctx, round)
	})
}

// writeRound writes a round of ingest requests in one transaction and
// answers each.
func (s *Store) writeRound(ctx context.Context, round []*rounds.Item[groupWrite]) {
	err := s.bulk(ctx, s.tw, func(b *bulkTx) error {
		for _, w := range round {
			if err := w.V.run(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && len(round) > 1 {
		// One request's statements may have failed them all: each runs
		// again on its own, and gets its own verdict.
		for _, w := range round {
			err := s.bulk(ctx, s.tw, w.V.run)
			if err == nil && w.V.after != nil {
				w.V.after()
			}
			w.Answer(err)
		}
		return
	}
	for _, w := range round {
		if err == nil && w.V.after != nil {
			w.V.after()
		}
		w.Answer(err)
	}
}

// change is one call's part of a round of changes.
type change struct {
	ctx context.Context
	f   func(*sql.Tx) error
	// solo: f calls out to code that may read the store outside tx (a
	// caller's check of the new value against what is stored), which
	// must see every change before it committed: it runs in a
	// transaction of its own, after the changes before it in the round
	// committed.
	solo bool
}

// changeRound commits a round of changes on the SQLite writer: each in a
// savepoint of one transaction, in arrival order, as if each had had the
// writer alone. A change whose function fails is rolled back to its
// savepoint and answers its error; when the transaction itself fails
// (an interrupted statement or a failed commit ends it for all), every
// change of the round runs again in a transaction of its own.
func (s *Store) changeRound(round []*rounds.Item[change]) {
	for len(round) > 0 {
		n := 1
		if !round[0].V.solo {
			for n < len(round) && !round[n].V.solo {
				n++
			}
		}
		s.shareCommit(round[:n])
		round = round[n:]
	}
}

// shareCommit commits changes in one transaction, each in a savepoint (a
// lone one in a transaction of its own), and answers each.
func (s *Store) shareCommit(round []*rounds.Item[change]) {
	if len(round) == 1 {
		c := round[0]
		c.Answer(s.changeAlone(c.V))
		return
	}
	// No caller's context: the round outlives any one of them.
	ctx := context.Background()
	type result struct {
		it   *rounds.Item[change]
		done func(bool) // its audit record's, when it changed something
		err  error
	}
	var ran []result
	var alone []*rounds.Item[change] // to run on their own
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		tx, alone = nil, round
	} else {
		defer tx.Rollback() // when the round ends otherwise than below
	}
	for i, it := range round {
		if tx == nil {
			break
		}
		if err := it.V.ctx.Err(); err != nil {
			it.Answer(err) // gone before its turn: nothing ran
			continue
		}
		if _, err := tx.ExecContext(ctx, `SAVEPOINT wnms_change`); err != nil {
			alone = round[i:]
			break
		}
		done, ferr := s.changeIn(tx, it.V)
		undo := `RELEASE wnms_change`
		if ferr != nil {
			undo = `ROLLBACK TO wnms_change`
		}
		if _, err := tx.ExecContext(ctx, undo); err != nil {
			// The transaction ended under the change (SQLite rolls the
			// whole of it back when a statement is interrupted).
			if done != nil {
				done(false)
			}
			alone = round[i:]
			break
		}
		if ferr != nil {
			if _, err := tx.ExecContext(ctx, `RELEASE wnms_change`); err != nil {
				alone = round[i:]
				break
			}
		}
		ran = append(ran, result{it, done, ferr})
	}
	if tx != nil {
		if alone == nil {
			err = tx.Commit()
		}
		if alone != nil || err != nil {
			tx.Rollback()
			again := make([]*rounds.Item[change], 0, len(ran)+len(alone))
			for _, r := range ran {
				if r.done != nil {
					r.done(false)
				}
				again = append(again, r.it)
			}
			alone, ran = append(again, alone...), nil
		}
	}
	for _, r := range ran {
		if r.done != nil {
			r.done(true)
		}
		r.it.Answer(r.err)
	}
	for _, it := range alone {
		it.Answer(s.changeAlone(it.V))
	}
}

// changeIn runs c in tx for changeRound. A panic of c's function is
// c's error, which Store.tx panics with again on c's caller's goroutine:
// the round goes on for the others.
func (s *Store) changeIn(tx *sql.Tx, c change) (done func(bool), err error) {
	defer panicAsError(&err)
	return s.change(c.ctx, tx, c.f)
}

// changeAlone runs c in a transaction of its own for changeRound, its
// panic made its error as in changeIn.
func (s *Store) changeAlone(c change) (err error) {
	defer panicAsError(&err)
	return s.txAlone(c.ctx, c.f)
}

// panicAsError, deferred, makes a change function's panic the error
// *err (a changePanic).
func panicAsError(err *error) {
	if v := recover(); v != nil {
		*err = changePanic{v, debug.Stack()}
	}
}

// changePanic carries a change's panic, and the stack it was raised on,
// back to its caller.
type changePanic struct {
	v     any
	stack []byte
}

func (p changePanic) Error() string { return fmt.Sprint("panic in a change: ", p.v) }

// ChangePanic is what a change panics with on SQLite when its function
// panicked, on the change's caller's goroutine: the value the function
// panicked with and the stack it did on (which may be another caller's,
// the one that led the change's round).
type ChangePanic struct {
	Value any
	Stack string
}

func (p ChangePanic) String() string {
	return fmt.Sprintf("%v\n\ngoroutine that ran the change:\n%s", p.Value, p.Stack)
}
