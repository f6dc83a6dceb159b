package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/quire-dev/quire"
)

// Supervisor is the one supervisor of every engine's pool (the LibreOffice
// workers, the browsers): slots of workers, started again with back-off
// when a start fails; a fair queue of jobs per key (Scheduler); each job
// run within its time limit and the memory it may grow by (WatchJobMemory),
// retried once on another worker when its worker crashed on it; workers
// retired after MaxJobsPerWorker jobs or above MaxWorkerRSS; its status and
// counters; and Close, which kills everything when its deadline ends. What
// is the engine's own is its driver's: how a worker starts, runs a job,
// dies and tells its errors apart (Worker). J is the driver's job. It is
// safe for concurrent use.
type Supervisor[J any] struct {
	opts   SupervisorOptions
	start  StartFunc[J]
	queue  *Scheduler[*task[J]]
	slots  []*slot[J]
	closed chan struct{} // closed by Close: no new jobs
	once   sync.Once
	// abortCtx ends when Close gives up waiting: kill everything. Starts
	// and a job's follow-up (Followup) run under it.
	abortCtx context.Context
	abortNow context.CancelFunc
	wg       sync.WaitGroup

	mu        sync.Mutex // guards the fields below and every slot's fields
	counts    Counters
	lastError string
	version   string        // the engine's, from the first worker ready
	avgJob    time.Duration // moving average of a job's time in a worker
}

// SupervisorOptions configure a Supervisor: the engine's PoolOptions
// (defaults applied), the words of its logs and errors, and its wait after
// a failed start.
type SupervisorOptions struct {
	PoolOptions
	Names
	// FirstRestartWait is the wait after a failed start, doubled after
	// each failure up to MaxRestartWait.
	FirstRestartWait time.Duration
}

// Names are the words an engine's logs and errors use.
type Names struct {
	Log  string // the start of its log messages: "convert", "chromium"
	Unit string // what a worker is: "worker", "browser"
	Pool string // what the pool is, in errors: "conversion pool", "Chromium pool"
}

// MaxRestartWait bounds the wait between a slot's failed starts.
const MaxRestartWait = 30 * time.Second

// StartFunc starts the worker of slot (1, 2, ...) and waits until it is
// ready for jobs. abort ends when the pool gives up waiting at Close: a
// start that waits on the worker should stop then.
type StartFunc[J any] func(abort context.Context, slot int) (Worker[J], error)

// Worker is one running engine process, as its driver sees it. Run, Classify
// and Stop are called by its slot's goroutine; Kill and RSS from any.
type Worker[J any] interface {
	// Info describes the worker once started.
	Info() WorkerInfo
	// Run runs job and returns its result, or what is left to do out of
	// the worker (Followup, nil for none), or its error. It must return
	// soon after ctx ends: the job's client left, or its time limit passed.
	Run(ctx context.Context, job J) (Result, Followup, error)
	// Classify tells what an error of Run means: whether the worker
	// crashed on the job (it is killed, and the job retried once), and
	// the error to answer the job with otherwise, in the client's words.
	Classify(err error) (crashed bool, answer error)
	// RSS is the worker's memory, which the job's memory limit bounds the
	// growth of, and MaxWorkerRSS the size of after a job.
	RSS() int64
	// Kill kills the worker at once; it may be called more than once.
	Kill()
	// Stop ends a worker that is to take no more jobs.
	Stop()
	// OverMemory is the error of a job that grew the worker by peak, past
	// limit, once the worker was killed.
	OverMemory(limit, peak int64) error
	// Ended describes how a worker that crashed (and was killed) ended,
	// and what its log should say of it.
	Ended() (how string, log []any)
	// Lost is closed when the worker dies while idle (nil: never noticed).
	Lost() <-chan struct{}
}

// WorkerInfo describes a started worker.
type WorkerInfo struct {
	PID     int
	Version string
	Log     []any // what the log of its start adds
}

// Followup finishes a job whose worker did its part, outside the worker's
// limits, in its slot (LibreOffice's cold soffice, for a document its
// worker could not load); it runs under the pool's abort context.
type Followup func(abort context.Context) (Result, error)

// slot is one place for a worker; its worker is replaced as needed.
type slot[J any] struct {
	id    int
	state string    // one of the State* constants
	w     Worker[J] // the running worker, nil while none
	pid   int
	jobs  int // jobs run by w
}

// task is one job on its way through the pool.
type task[J any] struct {
	ctx      context.Context
	job      J
	enqueued time.Time
	attempts int // earlier attempts that ended in a crash
	ticket   *Ticket[*task[J]]
	done     chan answer // room for the one answer: a worker never waits for a client that left
}

type answer struct {
	res Result
	err error
}

func (t *task[J]) finish(res Result, err error) { t.done <- answer{res, err} }

// NewSupervisor starts o.Workers slots, each starting its worker with
// start in the background (Status shows them "starting", WaitReady waits
// for them); jobs submitted meanwhile wait in the queue.
func NewSupervisor[J any](o SupervisorOptions, start StartFunc[J]) *Supervisor[J] {
	s := &Supervisor[J]{opts: o, start: start, queue: NewScheduler[*task[J]](o.QueueLength, o.Workers), closed: make(chan struct{})}
	s.abortCtx, s.abortNow = context.WithCancel(context.Background())
	for i := range o.Workers {
		s.slots = append(s.slots, &slot[J]{id: i + 1, state: StateStarting})
	}
	for _, sl := range s.slots { // once all are made: a failed start reads them all (allFailed)
		s.wg.Add(1)
		go s.run(sl)
	}
	return s
}

// Do runs job for ctx's key (quire.Tenant) and waits for its result;
// since is when the request began (Result.Queued and Total count from it).
func (s *Supervisor[J]) Do(ctx context.Context, since time.Time, job J) (Result, error) {
	give, err := quire.TakeEngineTurn(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("conversion cancelled before it started: %w", err)
	}
	defer give()
	t := &task[J]{ctx: ctx, job: job, enqueued: since, done: make(chan answer, 1)}
	if err := s.submit(t); err != nil {
		return Result{}, err
	}
	select {
	case a := <-t.done:
		a.res.Total = time.Since(since)
		return a.res, a.err
	case <-ctx.Done():
		if s.queue.Remove(t.ticket) {
			return Result{}, fmt.Errorf("conversion cancelled before it started: %w", ctx.Err())
		}
		return Result{}, fmt.Errorf("conversion abandoned while running: %w", ctx.Err())
	}
}

// submit queues t, unless the pool is closed, cannot start any worker, or
// t's key's line is full.
func (s *Supervisor[J]) submit(t *task[J]) error {
	if IsClosed(s.closed) {
		return s.closedError("is")
	}
	if err := s.allFailed(); err != nil {
		return err
	}
	// The queue itself refuses jobs once Close has begun, so that no job
	// slips in between the check above and Close's final drain.
	t.ticket = NewTicket(quire.Tenant(t.ctx), t)
	switch s.queue.Push(t.ticket) {
	case Closed:
		return s.closedError("is")
	case Full:
		return fmt.Errorf("%w: %d jobs of this key are waiting", ErrBusy, s.opts.QueueLength)
	}
	return nil
}

// closedError is the error of a job the closed pool refuses ("is") or
// ends ("was").
func (s *Supervisor[J]) closedError(verb string) error {
	return fmt.Errorf("%w: the %s %s closed", ErrUnavailable, s.opts.Pool, verb)
}

// allFailed returns ErrUnavailable when the last start of every worker
// failed, so that callers do not wait for nothing.
func (s *Supervisor[J]) allFailed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sl := range s.slots {
		if sl.state != StateFailed {
			return nil
		}
	}
	return fmt.Errorf("%w: no %s could start: %s", ErrUnavailable, s.opts.Unit, s.lastError)
}

// WaitReady waits until every worker is ready or busy, or until one
// failed to start (its error), or ctx ends.
func (s *Supervisor[J]) WaitReady(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		st, _ := s.snapshot()
		if st.FailedStart > 0 {
			return fmt.Errorf("%w: %s", ErrUnavailable, st.LastError)
		}
		if st.Ready+st.Busy == st.Workers {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %ss not ready: %w", s.opts.Log, s.opts.Unit, ctx.Err())
		case <-tick.C:
		}
	}
}

// Slots is how many workers the supervisor runs at once (Status's
// Workers), without Status's reading of each worker's memory: the slots
// are made once, by NewSupervisor.
func (s *Supervisor[J]) Slots() int { return len(s.slots) }

// Status returns a snapshot of the workers, the queue and the counters.
// It reads each running worker's memory; Counters is cheaper when only
// the counters are wanted.
func (s *Supervisor[J]) Status() Status {
	st, workers := s.snapshot()
	for i, w := range workers { // outside s.mu: a worker's memory is slow to read under load
		if w != nil {
			st.Details[i].RSSBytes = w.RSS()
		}
	}
	return st
}

// Counters returns the pool's counters, without the workers' details.
func (s *Supervisor[J]) Counters() Counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Version is the engine's version, from the first worker ready; "" before.
func (s *Supervisor[J]) Version() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// snapshot is Status without the workers' memory, with the ready and busy
// workers (nil for the others), in Details' order.
func (s *Supervisor[J]) snapshot() (Status, []Worker[J]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Workers: len(s.slots), Queued: s.queue.Len(), QueueLength: s.opts.QueueLength,
		Counters: s.counts, LastError: s.lastError, Version: s.version, Details: make([]WorkerStatus, 0, len(s.slots))}
	workers := make([]Worker[J], len(s.slots))
	for i, sl := range s.slots {
		ws := WorkerStatus{ID: sl.id, State: sl.state}
		if sl.w != nil && (sl.state == StateReady || sl.state == StateBusy) {
			ws.PID, ws.Jobs = sl.pid, sl.jobs
			workers[i] = sl.w
		}
		st.Details = append(st.Details, ws)
		switch sl.state {
		case StateReady:
			st.Ready++
		case StateStarting:
			st.Starting++
		case StateBusy:
			st.Busy++
		case StateFailed:
			st.FailedStart++
		}
	}
	return st, workers
}

// Workers returns the running workers, for their drivers' tests.
func (s *Supervisor[J]) Workers() []Worker[J] {
	_, workers := s.snapshot()
	var running []Worker[J]
	for _, w := range workers {
		if w != nil {
			running = append(running, w)
		}
	}
	return running
}

// RetryAfter estimates when a job refused with ErrBusy would find room:
// the time the queued and running jobs need, at least one second.
func (s *Supervisor[J]) RetryAfter() time.Duration {
	queued := s.queue.Len()
	s.mu.Lock()
	busy := 0
	for _, sl := range s.slots {
		if sl.state == StateBusy {
			busy++
		}
	}
	avg, workers := s.avgJob, len(s.slots)
	s.mu.Unlock()
	wait := time.Duration(queued+busy) * avg / time.Duration(max(1, workers))
	return max(time.Second, wait.Round(time.Second))
}

// Close stops taking jobs, lets the queued and running ones finish, and
// stops the workers. If ctx ends first, it kills the workers (starting,
// idle or busy) and ends the starts and follow-ups (the abort context);
// the jobs still queued or running then fail with ErrUnavailable. Jobs
// that no worker took before the last one stopped fail with
// ErrUnavailable too.
func (s *Supervisor[J]) Close(ctx context.Context) error {
	s.once.Do(func() {
		s.queue.Close() // first: a job queued after this point cannot exist
		close(s.closed)
	})
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("%s: close: jobs still running were stopped: %w", s.opts.Log, ctx.Err())
		s.abort()
		<-done
	}
	// Every worker has stopped; whatever is still queued (a retry whose
	// replacement worker could not start, for one) would wait forever.
	for _, t := range s.queue.Drain() {
		t.Job.finish(Result{}, s.closedError("was"))
	}
	return err
}

// abort ends the abort context, then kills every worker; a worker whose
// start ends after this is killed as it registers (ready).
func (s *Supervisor[J]) abort() {
	s.abortNow()
	s.mu.Lock()
	var workers []Worker[J]
	for _, sl := range s.slots {
		if sl.w != nil {
			workers = append(workers, sl.w)
		}
	}
	s.mu.Unlock()
	for _, w := range workers {
		w.Kill()
	}
}

func (s *Supervisor[J]) aborting() bool { return s.abortCtx.Err() != nil }

func (s *Supervisor[J]) count(f func(*Counters)) {
	s.mu.Lock()
	f(&s.counts)
	s.mu.Unlock()
}

// noteJobTime updates the moving average of a job's time in a worker.
func (s *Supervisor[J]) noteJobTime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.avgJob == 0 {
		s.avgJob = d
		return
	}
	s.avgJob = (4*s.avgJob + d) / 5
}
