package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
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

// rounds queues the work of one writer and runs it in rounds: work that
// arrives while a round is running waits, and the first of it to arrive
// then leads the next round, for everything that waited. A round answers
// each of its items; a caller returns with its own item's answer.
type rounds[T any] struct {
	mu    sync.Mutex
	queue []*roundItem[T]
	busy  bool // a leader is running a round
	last  int  // items in the last round
}

// roundItem is one caller's work and its answer.
type roundItem[T any] struct {
	v    T
	done chan error // its answer, or errLead
}

// errLead tells a waiting caller that it leads the next round.
var errLead = errors.New("lead the next round")

// do queues v, takes part in rounds (run runs one, and must answer each of
// its items) until v is answered, and returns the answer. A caller whose
// ctx ends while v still waits for a round takes v out of the queue and
// returns ctx's error; once a round took v, the caller waits for v's
// answer.
func (q *rounds[T]) do(ctx context.Context, v T, run func([]*roundItem[T])) error {
	it := &roundItem[T]{v: v, done: make(chan error, 1)}
	q.mu.Lock()
	q.queue = append(q.queue, it)
	lead := !q.busy
	q.busy = true
	q.mu.Unlock()
	if lead {
		q.lead(run)
	}
	for {
		var err error
		select {
		case err = <-it.done:
		case <-ctx.Done():
			if q.leave(it) {
				return ctx.Err()
			}
			err = <-it.done
		}
		if err != errLead {
			return err
		}
		q.lead(run)
	}
}

// leave takes it out of the queue, if no round took it yet, and hands on
// the lead it may have been given meanwhile.
func (q *rounds[T]) leave(it *roundItem[T]) bool {
	q.mu.Lock()
	i := slices.Index(q.queue, it)
	if i < 0 {
		q.mu.Unlock()
		return false
	}
	q.queue = slices.Delete(q.queue, i, i+1)
	led := false
	select {
	case err := <-it.done:
		led = err == errLead // the only answer a queued item gets
	default:
	}
	q.mu.Unlock()
	if led {
		q.handOn()
	}
	return true
}

// lead runs a round of every queued item and hands the lead to the first
// item queued meanwhile. When run does not return (a panic, or
// runtime.Goexit), the items it did not answer are answered
// errRoundAbandoned and the lead is handed on before the leader's stack
// unwinds further: no caller waits forever.
func (q *rounds[T]) lead(run func([]*roundItem[T])) {
	q.mu.Lock()
	if len(q.queue) == 1 && q.last > 1 {
		// Callers are writing side by side (the last round was shared)
		// and the leader found itself alone: the others are likely
		// about to queue. One yield lets them join this round instead
		// of waiting for the next; a lone writer never yields.
		q.mu.Unlock()
		runtime.Gosched()
		q.mu.Lock()
	}
	round := q.queue
	q.last = len(round)
	q.queue = nil
	q.mu.Unlock()
	returned := false
	defer func() {
		if !returned {
			for _, it := range round {
				select {
				case it.done <- errRoundAbandoned: // not answered yet (an answer fills the buffer)
				default:
				}
			}
			q.handOn()
		}
	}()
	run(round)
	returned = true
	q.handOn()
}

// errRoundAbandoned answers the items of a round whose leader stopped.
var errRoundAbandoned = errors.New("store: the write round this write was in failed")

// handOn gives the lead to the first queued item, if any.
func (q *rounds[T]) handOn() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		q.busy = false
		return
	}
	q.queue[0].done <- errLead
}

// queued is how many items wait for a round.
func (q *rounds[T]) queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
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
	return s.group.do(ctx, groupWrite{run: run, after: after}, func(round []*roundItem[groupWrite]) {
		s.writeRound(rctx, round)
	})
}

// writeRound writes a round of ingest requests in one transaction and
// answers each.
func (s *Store) writeRound(ctx context.Context, round []*roundItem[groupWrite]) {
	err := s.bulk(ctx, s.tw, func(b *bulkTx) error {
		for _, w := range round {
			if err := w.v.run(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && len(round) > 1 {
		// One request's statements may have failed them all: each runs
		// again on its own, and gets its own verdict.
		for _, w := range round {
			err := s.bulk(ctx, s.tw, w.v.run)
			if err == nil && w.v.after != nil {
				w.v.after()
			}
			w.done <- err
		}
		return
	}
	for _, w := range round {
		if err == nil && w.v.after != nil {
			w.v.after()
		}
		w.done <- err
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
func (s *Store) changeRound(round []*roundItem[change]) {
	for len(round) > 0 {
		n := 1
		if !round[0].v.solo {
			for n < len(round) && !round[n].v.solo {
				n++
			}
		}
		s.shareCommit(round[:n])
		round = round[n:]
	}
}

// shareCommit commits changes in one transaction, each in a savepoint (a
// lone one in a transaction of its own), and answers each.
func (s *Store) shareCommit(round []*roundItem[change]) {
	if len(round) == 1 {
		c := round[0]
		c.done <- s.changeAlone(c.v)
		return
	}
	// No caller's context: the round outlives any one of them.
	ctx := context.Background()
	type result struct {
		it   *roundItem[change]
		done func(bool) // its audit record's, when it changed something
		err  error
	}
	var ran []result
	var alone []*roundItem[change] // to run on their own
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
		if err := it.v.ctx.Err(); err != nil {
			it.done <- err // gone before its turn: nothing ran
			continue
		}
		if _, err := tx.ExecContext(ctx, `SAVEPOINT wnms_change`); err != nil {
			alone = round[i:]
			break
		}
		done, ferr := s.changeIn(tx, it.v)
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
			again := make([]*roundItem[change], 0, len(ran)+len(alone))
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
		r.it.done <- r.err
	}
	for _, it := range alone {
		it.done <- s.changeAlone(it.v)
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
