package store

import (
	"context"
	"errors"
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

// groupWriter queues the ingest writes of one store.
type groupWriter struct {
	mu    sync.Mutex
	queue []*groupWrite
	busy  bool // a leader is writing a round
}

// groupWrite is one request's part of a shared transaction.
type groupWrite struct {
	run   func(b *bulkTx) error // its statements, inside the transaction
	after func()                // (optional) once they are committed, in commit order
	done  chan error            // its answer, or errLead
}

// errLead tells a waiting request that it leads the next round.
var errLead = errors.New("lead the next round")

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
	w := &groupWrite{run: run, after: after, done: make(chan error, 1)}
	g := &s.group
	g.mu.Lock()
	g.queue = append(g.queue, w)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if lead {
		s.leadRound(ctx)
	}
	for {
		err := <-w.done
		if err != errLead {
			return err
		}
		s.leadRound(ctx)
	}
}

// leadRound writes every queued request in one transaction, answers each,
// and hands the lead to the first request queued meanwhile. The round runs
// to its end even if the leading request's context ends: the others wait
// on it.
func (s *Store) leadRound(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	g := &s.group
	g.mu.Lock()
	round := g.queue
	g.queue = nil
	g.mu.Unlock()

	err := s.bulk(ctx, s.tw, func(b *bulkTx) error {
		for _, w := range round {
			if err := w.run(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && len(round) > 1 {
		// One request's statements may have failed them all: each runs
		// again on its own, and gets its own verdict.
		for _, w := range round {
			err := s.bulk(ctx, s.tw, w.run)
			if err == nil && w.after != nil {
				w.after()
			}
			w.done <- err
		}
	} else {
		for _, w := range round {
			if err == nil && w.after != nil {
				w.after()
			}
			w.done <- err
		}
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 {
		g.busy = false
		return
	}
	g.queue[0].done <- errLead
}
