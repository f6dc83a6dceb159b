package libreoffice

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
)

// TestFloodingKeyDoesNotStarveAnother: key A fills both workers and its
// own line; key B is admitted all the same and runs as soon as one of A's
// jobs ends, before A's queued jobs. A's first two jobs are running
// before its next three are sent (sent at once, on a loaded machine all
// five could be waiting before a worker took one, and two refused).
func TestFloodingKeyDoesNotStarveAnother(t *testing.T) {
	t.Parallel() // seconds of waiting for the script engine's sleeps
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 2, QueueLength: 3}})
	ctxA := quire.WithTenant(context.Background(), "A")
	var doneA atomic.Int32
	errs := make(chan error, 5)
	send := func(n int) {
		for range n {
			go func() {
				_, err := p.Convert(ctxA, []byte("sleep 5s"), "md")
				doneA.Add(1)
				errs <- err
			}()
		}
	}
	send(2)
	waitFor(t, p, "A holds both workers", func(s engine.Status) bool { return s.Busy == 2 })
	send(3)
	waitFor(t, p, "A holds both workers and fills its line", func(s engine.Status) bool { return s.Busy == 2 && s.Queued == 3 })
	if _, err := p.Convert(ctxA, []byte("sleep 1s"), "md"); !errors.Is(err, engine.ErrBusy) {
		t.Errorf("A's sixth job: %v, want ErrBusy", err)
	}
	if _, err := p.Convert(quire.WithTenant(context.Background(), "B"), []byte("b"), "md"); err != nil {
		t.Fatalf("B's job beside A's flood: %v", err)
	}
	// B's job started when A's first two ended, before any of A's queued
	// jobs (each 5 s long) could: at most A's first two had ended.
	if n := doneA.Load(); n > 2 {
		t.Errorf("%d of A's jobs ended before B's one, want at most the 2 running when B came", n)
	}
	for range 5 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
