// Package memtest measures, for tests, what the process's heap holds at
// its peak while operations charged to a memory budget run.
package memtest

import (
	"context"
	"errors"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/memory"
)

// PeakHeap runs f and returns the most heap in use (runtime.MemStats'
// HeapInuse: live objects and garbage not yet collected, what the budget
// stands for) above what was in use when it started, sampled every 2 ms.
// The heap and not the resident memory is measured: the documents are Go
// objects, and the resident memory also holds pages the runtime has not
// yet returned, which no budget models.
func PeakHeap(f func()) int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base := m.HeapInuse
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-stop:
				done <- peak
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	return int64(<-done) - int64(base)
}

// AtOnce runs work n times at once, each under its own reservation of b
// first charged first bytes, as the HTTP adapter charges a request before
// reading it; work charges the rest through its context. The runtime's
// memory limit is set as the server sets it (memory.LimitRuntime). It
// returns how many ran, how many were refused with 503 and Retry-After,
// and the heap's peak (PeakHeap); any other outcome fails t.
func AtOnce(t testing.TB, ctx context.Context, b *memory.Budget, n int, first int64, work func(context.Context) error) (ran, refused int, peak int64) {
	memory.LimitRuntime(b.Size())
	defer debug.SetMemoryLimit(math.MaxInt64)
	var mu sync.Mutex
	peak = PeakHeap(func() {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r, err := b.Reserve(ctx, first)
				if err == nil {
					err = work(memory.With(ctx, r))
					r.Release()
				}
				mu.Lock()
				defer mu.Unlock()
				var qe *quire.Error
				switch {
				case err == nil:
					ran++
				case errors.As(err, &qe) && qe.Code == quire.CodeEngineBusy && qe.RetryAfter > 0:
					refused++
				default:
					t.Errorf("operation %d of %d: %v, want success or 503 with Retry-After", i+1, n, err)
				}
			})
		}
		wg.Wait()
	})
	if b.Held() != 0 {
		t.Errorf("%d bytes of the budget still held after every operation", b.Held())
	}
	return ran, refused, peak
}
