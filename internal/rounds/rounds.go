// Package rounds runs the work of many callers in rounds: work that
// arrives while a round runs waits, and the next round takes all of it.
// It is how writes share commits: the store's group commit of ingests and
// changes, and a data source's records, whose packets share one ingest.
package rounds

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
)

// Queue queues the work of one writer and runs it in rounds: work that
// arrives while a round is running waits, and the first of it to arrive
// then leads the next round, for everything that waited. A round answers
// each of its items; a caller returns with its own item's answer.
type Queue[T any] struct {
	mu    sync.Mutex
	queue []*Item[T]
	busy  bool // a leader is running a round
	last  int  // items in the last round
}

// Item is one caller's work and its answer.
type Item[T any] struct {
	V    T          // the caller's work
	done chan error // its answer, or errLead
}

// errLead tells a waiting caller that it leads the next round.
var errLead = errors.New("lead the next round")

// Do queues v, takes part in rounds (run runs one, and must answer each of
// its items) until v is answered, and returns the answer. A caller whose
// ctx ends while v still waits for a round takes v out of the queue and
// returns ctx's error; once a round took v, the caller waits for v's
// answer.
func (q *Queue[T]) Do(ctx context.Context, v T, run func([]*Item[T])) error {
	it := &Item[T]{V: v, done: make(chan error, 1)}
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
func (q *Queue[T]) leave(it *Item[T]) bool {
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
// ErrAbandoned and the lead is handed on before the leader's stack
// unwinds further: no caller waits forever.
func (q *Queue[T]) lead(run func([]*Item[T])) {
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
				case it.done <- ErrAbandoned: // not answered yet (an answer fills the buffer)
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

// ErrAbandoned answers the items of a round whose leader stopped.
var ErrAbandoned = errors.New("the round this work was in did not finish")

// handOn gives the lead to the first queued item, if any.
func (q *Queue[T]) handOn() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		q.busy = false
		return
	}
	q.queue[0].done <- errLead
}

// Queued is how many items wait for a round.
func (q *Queue[T]) Queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

// Answer gives the item its answer: the caller's Do returns err. Each
// item of a round is answered once.
func (it *Item[T]) Answer(err error) { it.done <- err }
