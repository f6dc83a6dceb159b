package engine

import (
	"sync/atomic"
	"testing"
)

// TestWatchJobMemoryCountsTheJobsGrowth: a worker that held 1000 bytes
// before the job is stopped once the job has grown it by more than the
// limit, not when what it held and the job's together reach it.
func TestWatchJobMemoryCountsTheJobsGrowth(t *testing.T) {
	var held atomic.Int64
	held.Store(1000)
	rss := func() int64 { return held.Add(100) - 100 } // grows by 100 at each sample
	killed := make(chan int64, 1)
	w := WatchJobMemory(250, rss, func() { killed <- held.Load() })
	at := <-killed
	over, peak := w.End()
	if !over || peak != 300 {
		t.Errorf("over %v, peak %d: want over, at a growth of 300", over, peak)
	}
	if at != 1400 { // samples: 1000 before the job, then 1100, 1200, 1300, 300 over it
		t.Errorf("killed when the worker held %d, want 1400 (after the sample of 1300)", at)
	}
}

// TestWatchMemoryWithoutLimit: a limit <= 0 never kills.
func TestWatchMemoryWithoutLimit(t *testing.T) {
	w := WatchJobMemory(0, func() int64 { return 1 << 40 }, func() { t.Error("killed without a limit") })
	if over, _ := w.End(); over {
		t.Error("over without a limit")
	}
}
