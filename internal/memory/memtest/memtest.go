// Package memtest measures, for tests, what the process's heap holds at
// its peak while work runs.
package memtest

import (
	"runtime"
	"time"
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
