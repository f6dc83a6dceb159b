package engine

import "time"

// MemorySampleInterval is how often a running job's memory is read. At
// the fastest growth measured (a few hundred MB/s) a worker overshoots
// its limit by a few megabytes before it is killed, on a machine with a
// core to spare; where the cores are busy, the sampling waits for one
// (the engines run at a lower priority than the supervisor, or in their
// own processes at least).
const MemorySampleInterval = 10 * time.Millisecond

// MemoryWatch samples a worker's memory while it works on a job.
type MemoryWatch struct {
	stop, done chan struct{}
	over       bool  // the limit was exceeded and kill called; read after done
	peak       int64 // highest sample; read after done
}

// WatchMemory calls rss every MemorySampleInterval until End is called;
// the first time rss exceeds limit it calls kill and stops sampling. A
// limit <= 0 watches nothing.
func WatchMemory(limit int64, rss func() int64, kill func()) *MemoryWatch {
	w := &MemoryWatch{stop: make(chan struct{}), done: make(chan struct{})}
	if limit <= 0 {
		close(w.done)
		return w
	}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(MemorySampleInterval)
		defer tick.Stop()
		for {
			n := rss()
			w.peak = max(w.peak, n)
			if n > limit {
				w.over = true
				kill()
				return
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// WatchJobMemory is WatchMemory of what rss grows by from now on: a job
// is charged what it takes, not what the worker held before it (what
// earlier jobs left, what it made ready for the next ones).
func WatchJobMemory(limit int64, rss func() int64, kill func()) *MemoryWatch {
	if limit <= 0 {
		return WatchMemory(limit, rss, kill)
	}
	before := rss()
	return WatchMemory(limit, func() int64 { return rss() - before }, kill)
}

// End stops the watch and reports whether it killed the process, and the
// highest memory it saw.
func (w *MemoryWatch) End() (over bool, peak int64) {
	close(w.stop)
	<-w.done
	return w.over, w.peak
}
