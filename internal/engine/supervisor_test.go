package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The supervisor's tests drive it with a fake engine whose jobs say which
// fault to play: the faults are the point here, and a fake plays each one
// at will. The real engines' packages test their drivers on it.

// fakeDriver starts fakeWorkers; failStarts of its starts fail first.
type fakeDriver struct {
	failStarts atomic.Int32
	started    atomic.Int32
	crashedYet atomic.Bool // a "crash-once" job has crashed a worker
	baseRSS    int64       // what a worker holds before any job
}

func (d *fakeDriver) start(abort context.Context, slot int) (Worker[string], error) {
	if d.failStarts.Add(-1) >= 0 {
		return nil, errors.New("no engine here")
	}
	n := d.started.Add(1)
	w := &fakeWorker{d: d, pid: int(n), dead: make(chan struct{}), lost: make(chan struct{})}
	w.rss.Store(d.baseRSS)
	return w, nil
}

// fakeWorker runs a job by its text: "ok", "refuse" (the document's
// fault), "crash", "crash-once", "hang" (until ctx ends), "stuck" (until
// killed), "grow N" (N bytes more, until killed), "cold" (a follow-up).
type fakeWorker struct {
	d        *fakeDriver
	pid      int
	rss      atomic.Int64
	dead     chan struct{}
	lost     chan struct{}
	killOnce sync.Once
}

var errRefused = fmt.Errorf("%w: refused by the fake engine", ErrUnprocessable)

func (w *fakeWorker) Info() WorkerInfo { return WorkerInfo{PID: w.pid, Version: "fake 1"} }

func (w *fakeWorker) Run(ctx context.Context, job string) (Result, Followup, error) {
	switch cmd, arg, _ := strings.Cut(job, " "); cmd {
	case "refuse":
		return Result{}, nil, errRefused
	case "crash-once":
		if w.d.crashedYet.Swap(true) {
			return Result{Output: []byte(job)}, nil, nil
		}
		fallthrough
	case "crash":
		w.Kill()
		return Result{}, nil, io.ErrUnexpectedEOF
	case "hang":
		select {
		case <-ctx.Done():
		case <-w.dead:
		}
		return Result{}, nil, io.ErrUnexpectedEOF
	case "stuck":
		<-w.dead
		return Result{}, nil, io.ErrUnexpectedEOF
	case "grow":
		var n int64
		fmt.Sscan(arg, &n)
		w.rss.Add(n)
		if n < 1<<20 { // below the tests' limit: done
			return Result{Output: []byte(job)}, nil, nil
		}
		<-w.dead
		return Result{}, nil, io.ErrUnexpectedEOF
	case "cold":
		return Result{}, func(context.Context) (Result, error) { return Result{Output: []byte(job), Cold: true}, nil }, nil
	}
	return Result{Output: []byte(job)}, nil, nil
}

// Classify: a worker that is dead crashed; anything else is the document's.
func (w *fakeWorker) Classify(err error) (bool, error) { return IsClosed(w.dead), err }
func (w *fakeWorker) RSS() int64                       { return w.rss.Load() }
func (w *fakeWorker) Kill()                            { w.killOnce.Do(func() { close(w.dead) }) }
func (w *fakeWorker) Stop()                            { w.Kill() }
func (w *fakeWorker) Ended() (string, []any)           { return "killed", nil }
func (w *fakeWorker) Lost() <-chan struct{}            { return w.lost }
func (w *fakeWorker) OverMemory(limit, peak int64) error {
	return fmt.Errorf("%w of %d bytes (grew by %d)", ErrMemoryLimit, limit, peak)
}

// newFake starts a supervisor of the fake engine with o's limits.
func newFake(t *testing.T, d *fakeDriver, o PoolOptions) *Supervisor[string] {
	t.Helper()
	o.Workers = max(o.Workers, 1)
	o.QueueLength = cmpOr(o.QueueLength, 4)
	o.JobTimeout = orDefault(o.JobTimeout, time.Minute)
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s := NewSupervisor(SupervisorOptions{PoolOptions: o, Names: Names{Log: "fake", Unit: "worker", Pool: "fake pool"},
		FirstRestartWait: time.Millisecond}, d.start)
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func orDefault(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

// waitUntil polls cond until it holds, or fails the test after 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for tick := time.Tick(time.Millisecond); !cond(); <-tick {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

func do(s *Supervisor[string], job string) (Result, error) {
	return s.Do(context.Background(), time.Now(), job)
}

func TestSupervisorAnswersAndCounts(t *testing.T) {
	s := newFake(t, &fakeDriver{}, PoolOptions{})
	if err := s.WaitReady(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := do(s, "ok")
	if err != nil || string(r.Output) != "ok" || r.Attempts != 1 {
		t.Fatalf("ok: %q, attempts %d, %v", r.Output, r.Attempts, err)
	}
	if _, err := do(s, "refuse"); !errors.Is(err, errRefused) {
		t.Fatalf("refuse: %v, want the driver's answer", err)
	}
	if r, err := do(s, "cold"); err != nil || !r.Cold {
		t.Fatalf("cold: %+v, %v; want the follow-up's result", r, err)
	}
	c := s.Counters()
	if c.Converted != 2 || c.Failed != 1 || c.Cold != 1 || c.Crashes != 0 || c.Restarts != 0 {
		t.Errorf("counters %+v", c)
	}
	if s.Version() != "fake 1" || s.Status().Details[0].Jobs != 3 {
		t.Errorf("version %q, status %+v", s.Version(), s.Status())
	}
}

// TestSupervisorSlots: Slots is Status's Workers, whether the workers
// have started or not (the conversion service sizes its fan-out by it on
// every request, without Status's reading of their memory).
func TestSupervisorSlots(t *testing.T) {
	d := &fakeDriver{}
	d.failStarts.Store(1 << 20) // no worker ever starts
	s := newFake(t, d, PoolOptions{Workers: 3})
	if s.Slots() != 3 || s.Status().Workers != 3 {
		t.Errorf("Slots %d, Status().Workers %d; want 3", s.Slots(), s.Status().Workers)
	}
}

func TestSupervisorRetriesACrashOnce(t *testing.T) {
	s := newFake(t, &fakeDriver{}, PoolOptions{})
	r, err := do(s, "crash-once")
	if err != nil || r.Attempts != 2 {
		t.Fatalf("crash-once: attempts %d, %v; want success on the second", r.Attempts, err)
	}
	_, err = do(s, "crash")
	if !errors.Is(err, ErrCrashed) || !strings.Contains(err.Error(), "the worker ended: killed") {
		t.Fatalf("crash: %v, want ErrCrashed saying how", err)
	}
	waitUntil(t, "the last crashed worker replaced", func() bool { return s.Status().Ready == 1 })
	if c := s.Counters(); c.Crashes != 3 || c.Retried != 2 || c.Restarts != 3 || c.Failed != 1 {
		t.Errorf("counters %+v, want 3 crashes, 2 retries, 3 restarts, 1 failed", c)
	}
}

func TestSupervisorTimeLimit(t *testing.T) {
	s := newFake(t, &fakeDriver{}, PoolOptions{JobTimeout: 50 * time.Millisecond})
	for _, job := range []string{"hang", "stuck"} { // the driver stops at ctx's end; or is killed
		if _, err := do(s, job); !errors.Is(err, ErrTimeout) {
			t.Errorf("%s: %v, want ErrTimeout", job, err)
		}
	}
	if _, err := do(s, "ok"); err != nil {
		t.Fatal(err)
	}
	if c := s.Counters(); c.Timeouts != 2 || c.Restarts != 2 || c.Crashes != 0 {
		t.Errorf("counters %+v, want 2 timeouts and 2 restarts", c)
	}
}

// TestSupervisorMemoryIsPerJob: the limit bounds what a job grows the
// worker by, not what the worker held before it.
func TestSupervisorMemoryIsPerJob(t *testing.T) {
	s := newFake(t, &fakeDriver{baseRSS: 100 << 20}, PoolOptions{MaxWorkerMemory: 1 << 20, MaxWorkerRSS: -1})
	for range 3 { // each grows the worker by half the limit, and keeps it
		if _, err := do(s, fmt.Sprint("grow ", 512<<10)); err != nil {
			t.Fatalf("a job within the limit, on a worker holding more: %v", err)
		}
	}
	_, err := do(s, fmt.Sprint("grow ", 2<<20))
	if !errors.Is(err, ErrMemoryLimit) || !strings.Contains(err.Error(), "grew by 2097152") {
		t.Fatalf("a job past the limit: %v, want ErrMemoryLimit at its growth", err)
	}
	if c := s.Counters(); c.OverMemory != 1 || c.Crashes != 0 || c.Retried != 0 {
		t.Errorf("counters %+v, want one over memory, not retried", c)
	}
}

func TestSupervisorRecycles(t *testing.T) {
	d := &fakeDriver{}
	s := newFake(t, d, PoolOptions{MaxJobsPerWorker: 2})
	for range 5 {
		if _, err := do(s, "ok"); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "the third worker ready", func() bool { return s.Status().Ready == 1 })
	if c := s.Counters(); c.Recycled != 2 || d.started.Load() != 3 {
		t.Errorf("counters %+v, %d workers started; want 2 recycled, 3 started", c, d.started.Load())
	}
}

func TestSupervisorFailedStarts(t *testing.T) {
	d := &fakeDriver{}
	d.failStarts.Store(1 << 30)
	s := newFake(t, d, PoolOptions{Workers: 2})
	if err := s.WaitReady(context.Background()); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no engine here") {
		t.Fatalf("WaitReady: %v, want the start's error", err)
	}
	waitUntil(t, "every start failed", func() bool { return s.Status().FailedStart == 2 })
	if _, err := do(s, "ok"); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no worker could start") {
		t.Fatalf("job with no worker: %v, want ErrUnavailable", err)
	}
	d.failStarts.Store(0) // the engine is back: the back-off's next try starts it
	waitUntil(t, "the workers started", func() bool { return s.Status().Ready == 2 })
	if _, err := do(s, "ok"); err != nil {
		t.Fatal(err)
	}
}

func TestSupervisorClientLeaves(t *testing.T) {
	s := newFake(t, &fakeDriver{}, PoolOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := s.Do(ctx, time.Now(), "hang"); done <- err }()
	waitUntil(t, "the job runs", func() bool { return s.Status().Busy == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want context.Canceled", err)
	}
	waitUntil(t, "the worker kept", func() bool { return s.Status().Ready == 1 })
	if c := s.Counters(); c.Failed != 1 || c.Timeouts != 0 || c.Restarts != 0 {
		t.Errorf("counters %+v: a client leaving is no timeout, and this worker is unharmed", c)
	}
}

func TestSupervisorWorkerLostWhileIdle(t *testing.T) {
	d := &fakeDriver{}
	s := newFake(t, d, PoolOptions{})
	waitUntil(t, "the worker ready", func() bool { return len(s.Workers()) == 1 })
	close(s.Workers()[0].(*fakeWorker).lost)
	waitUntil(t, "the worker replaced", func() bool { return s.Counters().Restarts == 1 && s.Status().Ready == 1 })
	if c := s.Counters(); c.Crashes != 1 {
		t.Errorf("counters %+v, want one crash", c)
	}
}

func TestSupervisorCloseAborts(t *testing.T) {
	s := newFake(t, &fakeDriver{}, PoolOptions{QueueLength: 1})
	stuck, queued := make(chan error, 1), make(chan error, 1)
	go func() { _, err := do(s, "stuck"); stuck <- err }()
	waitUntil(t, "the job runs", func() bool { return s.Status().Busy == 1 })
	go func() { _, err := do(s, "ok"); queued <- err }()
	waitUntil(t, "the next job waits", func() bool { return s.Status().Queued == 1 })
	if _, err := do(s, "ok"); !errors.Is(err, ErrBusy) {
		t.Errorf("a job past the queue's length: %v, want ErrBusy", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Close gives up at once
	if err := s.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close: %v, want its context's error", err)
	}
	for name, ch := range map[string]chan error{"running": stuck, "queued": queued} {
		if err := <-ch; !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "the fake pool was closed") {
			t.Errorf("%s job at Close: %v, want ErrUnavailable", name, err)
		}
	}
	if _, err := do(s, "ok"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("job after Close: %v, want ErrUnavailable", err)
	}
	if st := s.Status(); st.Details[0].State != StateStopped {
		t.Errorf("after Close: %s", st.Details[0].State)
	}
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
