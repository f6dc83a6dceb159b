package groupcommit

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// The items that queue while a commit runs share the next commit, each
// gets its own outcome, and Do returns only once its item is committed.
func TestItemsQueuedDuringACommitShareTheNext(t *testing.T) {
	holding, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var batches [][]int
	c := New(64, func(batch []int) ([]int, error) {
		if batch[0] == 0 {
			close(holding)
			<-release // the first commit is slow: the others queue meanwhile
		}
		mu.Lock()
		batches = append(batches, slices.Clone(batch))
		mu.Unlock()
		out := make([]int, len(batch))
		for i, v := range batch {
			out[i] = v * 10
		}
		return out, nil
	})
	defer c.Close()
	first := make(chan int)
	go func() {
		r, _ := c.Do(context.Background(), 0)
		first <- r
	}()
	<-holding
	const n = 20
	var wg sync.WaitGroup
	results := make([]int, n+1)
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.Do(context.Background(), i)
			if err != nil {
				t.Error(err)
			}
			results[i] = r
		}()
	}
	waitFor(t, func() bool { return len(c.queue) == n })
	close(release)
	wg.Wait()
	if r := <-first; r != 0 {
		t.Errorf("item 0: %d", r)
	}
	for i := 1; i <= n; i++ {
		if results[i] != i*10 {
			t.Errorf("item %d: outcome %d, want %d", i, results[i], i*10)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(batches) != 2 || len(batches[0]) != 1 || len(batches[1]) != n {
		t.Errorf("batches %v: want [0] then the %d queued meanwhile in one", batches, n)
	}
}

// A failed commit fails every item of its batch; after Close, Do fails.
func TestFailedCommitAndClose(t *testing.T) {
	boom := errors.New("boom")
	c := New(8, func(batch []string) ([]string, error) { return nil, boom })
	if _, err := c.Do(context.Background(), "a"); !errors.Is(err, boom) {
		t.Errorf("Do: %v, want boom", err)
	}
	c.Close()
	if _, err := c.Do(context.Background(), "b"); !errors.Is(err, ErrClosed) {
		t.Errorf("Do after Close: %v, want ErrClosed", err)
	}
}

// waitFor polls cond for up to a minute (a loaded machine is slow).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline, tick := time.Now().Add(time.Minute), time.Tick(time.Millisecond); time.Now().Before(deadline); <-tick {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met after a minute")
}
