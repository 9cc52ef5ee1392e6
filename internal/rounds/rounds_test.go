package rounds

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// Callers that arrive while a round runs wait and share the next one;
// each gets its own item's answer.
func TestRoundsShareAndAnswerEach(t *testing.T) {
	var q Queue[int]
	release := make(chan struct{})
	var mu sync.Mutex
	var sizes []int
	run := func(round []*Item[int]) {
		mu.Lock()
		sizes = append(sizes, len(round))
		first := len(sizes) == 1
		mu.Unlock()
		if first {
			<-release // the first round holds the others back
		}
		for _, it := range round {
			if it.V%2 == 1 {
				it.Answer(errors.New("odd"))
			} else {
				it.Answer(nil)
			}
		}
	}
	const callers = 20
	errs := make([]error, callers)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); errs[0] = q.Do(context.Background(), 0, run) }()
	for q.Queued() != 0 || len(sizesOf(&mu, &sizes)) == 0 {
		time.Sleep(time.Millisecond) // the first round is under way
	}
	for i := 1; i < callers; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = q.Do(context.Background(), i, run) }()
	}
	for q.Queued() != callers-1 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	for i, err := range errs {
		if (err != nil) != (i%2 == 1) {
			t.Errorf("caller %d got %v", i, err)
		}
	}
	if got := sizesOf(&mu, &sizes); len(got) != 2 || got[0] != 1 || got[1] != callers-1 {
		t.Errorf("rounds of %v, want [1 %d]", got, callers-1)
	}
}

func sizesOf(mu *sync.Mutex, s *[]int) []int {
	mu.Lock()
	defer mu.Unlock()
	return append([]int(nil), *s...)
}

// A caller whose context ends while its work waits leaves the queue:
// its work never runs.
func TestRoundsLeaveWhenDone(t *testing.T) {
	var q Queue[string]
	release, running := make(chan struct{}), make(chan struct{})
	var ran []string
	run := func(round []*Item[string]) {
		for _, it := range round {
			if it.V == "first" {
				close(running)
				<-release
			}
			ran = append(ran, it.V)
			it.Answer(nil)
		}
	}
	done := make(chan error)
	go func() { done <- q.Do(context.Background(), "first", run) }()
	<-running
	ctx, cancel := context.WithCancel(context.Background())
	left := make(chan error)
	go func() { left <- q.Do(ctx, "gone", run) }()
	for q.Queued() != 1 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller that left got %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(ran) != 1 || ran[0] != "first" || q.Queued() != 0 {
		t.Fatalf("ran %v, %d queued", ran, q.Queued())
	}
}
