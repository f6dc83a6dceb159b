package libreoffice

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

// TestNoisyNeighbour (issue #25), with real LibreOffice and 2 workers: key
// A keeps 8 conversions of a 46-page DOCX in flight while key B converts
// a 1-page DOCX, one at a time. Every one of B's conversions succeeds, and
// B's median latency is at most its median alone plus one of A's jobs (the
// median time of A's jobs in a worker during the flood): B waits for at
// most one running job of A's, never for A's queue; and after its first,
// B finds a worker free (issue #41), which the jobs of A's that end while
// B's are on their way tell.
func TestNoisyNeighbour(t *testing.T) {
	requireLibreOffice(t)
	if testing.Short() {
		t.Skip("minutes of LibreOffice work; not in -short")
	}
	// A loaded machine may take minutes to warm two workers up.
	p := startTestPool(t, "lok", Options{PoolOptions: engine.PoolOptions{Workers: 2, QueueLength: 8, MaxJobsPerWorker: -1, StartTimeout: 4 * time.Minute}})
	ready, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	if err := p.WaitReady(ready); err != nil {
		t.Fatal(err)
	}
	large, small := convtest.DOCX(46), convtest.DOCX(1)
	ctxA := quire.WithTenant(t.Context(), "A")
	ctxB := quire.WithTenant(t.Context(), "B")
	convertB := func() time.Duration {
		t.Helper()
		t0 := time.Now()
		if _, err := p.Convert(ctxB, small, engine.FromDOCX); err != nil {
			t.Fatalf("B's conversion: %v", err)
		}
		return time.Since(t0)
	}
	if r, err := p.ConvertTimed(ctxA, large, engine.FromDOCX); err != nil { // warm up, and check A's document
		t.Fatal(err)
	} else if r.Engine < 10*time.Millisecond {
		t.Fatalf("A's 46-page document took %v in LibreOffice: too small to tell a queue from none", r.Engine)
	}
	const samples = 15
	var alone []time.Duration
	for range samples {
		alone = append(alone, convertB())
	}

	ctx, stop := context.WithCancel(ctxA)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		jobsA   []time.Duration
		failedA []error
		endedA  int // A's jobs answered
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				r, err := p.ConvertTimed(ctx, large, engine.FromDOCX)
				mu.Lock()
				if err == nil {
					endedA++
					jobsA = append(jobsA, r.Engine)
				} else if ctx.Err() == nil {
					failedA = append(failedA, err)
				}
				mu.Unlock()
			}
		}()
	}
	waitFor(t, p, "A's flood fills both workers and waits in line", func(s engine.Status) bool { return s.Busy == 2 && s.Queued >= 4 })
	convertB() // B's first job waits for one of A's: A held both workers
	var beside []time.Duration
	waited := 0 // B's jobs during which one of A's ended
	for range samples {
		mu.Lock()
		before := endedA
		mu.Unlock()
		beside = append(beside, convertB())
		mu.Lock()
		if endedA != before {
			waited++
		}
		mu.Unlock()
	}
	stop()
	wg.Wait()

	soloB, besideB := median(alone), median(beside)
	mu.Lock()
	defer mu.Unlock()
	if len(jobsA) == 0 {
		t.Fatalf("none of A's jobs ended during the flood (%d failed: %v)", len(failedA), failedA)
	}
	jobA := median(jobsA)
	t.Logf("B alone: median %v; beside A's flood: median %v (%.1fx); A's job in a worker: median %v over %d; A refused: %d",
		soloB, besideB, float64(besideB)/float64(soloB), jobA, len(jobsA), len(failedA))
	// While B is active, A holds one worker and B finds the other free:
	// B's job, a fraction of A's, sees one of A's end by chance only. Had
	// A taken the worker B freed, each of B's would wait for one of A's.
	if waited > samples/2 {
		t.Errorf("%d of B's %d jobs saw one of A's end on the way: B waited for A's jobs", waited, samples)
	}
	if besideB > soloB+jobA {
		t.Errorf("B's median beside A's flood is %v, more than its median alone (%v) plus one of A's jobs (%v)", besideB, soloB, jobA)
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
