package libreoffice

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/ooxml"
	"github.com/quire-dev/quire/internal/safeinput"
)

// Pool is the supervisor of the conversion workers. It is safe for
// concurrent use.
type Pool struct {
	opts   Options
	dir    string
	ownDir bool     // dir was created by NewPool and is removed by Close
	lock   *os.File // holds dir's lock while the pool is open (workdir.go)
	queue  *engine.Scheduler[*job]
	slots  []*slot
	nextID atomic.Uint64

	closed    chan struct{} // closed by Close: no new jobs
	closeOnce sync.Once
	// abortCtx ends when Close gives up waiting: kill everything. A cold
	// soffice (cold.go) runs under it; abort is its Done channel.
	abortCtx context.Context
	abortNow context.CancelFunc
	abort    <-chan struct{}
	wg       sync.WaitGroup

	mu        sync.Mutex // guards the fields below and every slot's fields
	counts    engine.Counters
	lastError string
	version   string        // the engine's, from the first worker ready
	avgJob    time.Duration // moving average of a job's time in a worker
}

// slot is one place for a worker; its process is replaced as needed.
type slot struct {
	id    int
	dir   string
	cpu   *int   // the CPU its workers run on, nil for any (affinity.go)
	state string // one of the State* constants
	proc  *process
}

// NewPool starts the workers and returns at once; they warm up in the
// background (Status shows them "starting", WaitReady waits for them).
// Jobs submitted meanwhile wait in the queue.
func NewPool(opts Options) (*Pool, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Pool{opts: o, dir: o.Dir, queue: engine.NewScheduler[*job](o.QueueLength, o.Workers), closed: make(chan struct{})}
	p.abortCtx, p.abortNow = context.WithCancel(context.Background())
	p.abort = p.abortCtx.Done()
	if p.dir == "" {
		removeStaleWorkDirs("", o.Logger)
		if p.dir, p.lock, err = newWorkDir(""); err != nil {
			p.abortNow()
			return nil, err
		}
		p.ownDir = true
	}
	cpus := workerCPUs(o.Workers, allowedCPUs())
	for i := range o.Workers {
		s := &slot{id: i + 1, dir: filepath.Join(p.dir, fmt.Sprintf("worker-%d", i+1)), state: engine.StateStarting}
		if cpus != nil {
			s.cpu = &cpus[i]
		}
		p.slots = append(p.slots, s)
		p.wg.Add(1)
		go p.run(s)
	}
	if o.Registerer != nil {
		o.Registerer.MustRegister(p.collector())
	}
	return p, nil
}

// ConvertRequest converts in as r asks (to PDF or DOCX: engine.CanConvert),
// and makes a PDF conform to the PDF/A and PDF/UA r asks for. r is
// validated once, here (Request.Validate: a format it does not name, or
// that does not convert to r.To, is a VALIDATION_ERROR), once the
// document's format is known: without r.From, its content and r.Name
// tell it (safeinput.Detect) from the same opened package that the checks
// of safeinput.Prepare then read. Its errors match engine's Err* values,
// or ctx's error.
func (p *Pool) ConvertRequest(ctx context.Context, r engine.Request, in []byte) (engine.Result, error) {
	t0 := time.Now()
	in, from, err := safeinput.Prepare(&r, in, p.opts.inputLimits())
	if err != nil {
		return engine.Result{}, err
	}
	res, err := p.queueJob(ctx, t0, in, from, r.To, r.Options)
	return engine.Conform(ctx, res, err, r.Name, r.Options)
}

// ConvertEdited converts to PDF a DOCX template that its caller opened
// and edited (annotate fills one): safeinput.PrepareEdited checks the
// template's own entries, cleans them with the caller's edits, and writes
// the package out once.
func (p *Pool) ConvertEdited(ctx context.Context, template *ooxml.Package, edits *ooxml.Edits) (engine.Result, error) {
	t0 := time.Now()
	in, err := safeinput.PrepareEdited(template, edits, p.opts.inputLimits())
	if err != nil {
		return engine.Result{}, err
	}
	return p.queueJob(ctx, t0, in, engine.FromDOCX, engine.ToPDF, engine.JobOptions{})
}

// queueJob queues the prepared input in, of format from, as a job converting
// to format to, and waits for its result.
func (p *Pool) queueJob(ctx context.Context, t0 time.Time, in []byte, from, to string, opts engine.JobOptions) (engine.Result, error) {
	give, err := quire.TakeEngineTurn(ctx)
	if err != nil {
		return engine.Result{}, fmt.Errorf("conversion cancelled before it started: %w", err)
	}
	defer give()
	j := &job{ctx: ctx, tenant: quire.Tenant(ctx), from: from, to: to, opts: opts, input: in, enqueued: t0, done: make(chan jobResult, 1)}
	if err := p.submit(j); err != nil {
		return engine.Result{}, err
	}
	select {
	case r := <-j.done:
		r.res.Total = time.Since(t0)
		return r.res, r.err
	case <-ctx.Done():
		if p.queue.Remove(j.ticket) {
			return engine.Result{}, fmt.Errorf("conversion cancelled before it started: %w", ctx.Err())
		}
		return engine.Result{}, fmt.Errorf("conversion abandoned while running: %w", ctx.Err())
	}
}

// Check runs the checks of ConvertRequest that spend no engine time
// (safeinput.CheckRequest): it validates r (its format told first when
// r.From is empty) and checks in against the limits and its declared
// format. A job's submission runs it, so that a request the conversion
// would refuse is refused before it is queued, as it would be.
func (p *Pool) Check(r engine.Request, in []byte) error {
	return safeinput.CheckRequest(r, in, p.opts.inputLimits())
}

// submit queues j, unless the pool is closed, cannot start any worker,
// or its queue is full.
func (p *Pool) submit(j *job) error {
	if p.isClosed() {
		return errPoolClosed
	}
	if err := p.allFailed(); err != nil {
		return err
	}
	// The queue itself refuses jobs once Close has begun, so that no job
	// slips in between the check above and Close's final drain.
	j.ticket = engine.NewTicket(j.tenant, j)
	switch p.queue.Push(j.ticket) {
	case engine.Closed:
		return errPoolClosed
	case engine.Full:
		return fmt.Errorf("%w: %d jobs of this key are waiting", engine.ErrBusy, p.opts.QueueLength)
	}
	return nil
}

var errPoolClosed = fmt.Errorf("%w: the conversion pool is closed", engine.ErrUnavailable)

func (p *Pool) isClosed() bool { return engine.IsClosed(p.closed) }

// allFailed returns ErrUnavailable when no worker runs and the last start
// of every worker failed, so that callers do not wait for nothing.
func (p *Pool) allFailed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.slots {
		if s.state != engine.StateFailed {
			return nil
		}
	}
	return fmt.Errorf("%w: no worker could start: %s", engine.ErrUnavailable, p.lastError)
}

// WaitReady waits until every worker is ready or busy, or until one
// failed to start (its error), or ctx ends.
func (p *Pool) WaitReady(ctx context.Context) error {
	for {
		st, _ := p.snapshot()
		if st.FailedStart > 0 {
			return fmt.Errorf("%w: %s", engine.ErrUnavailable, st.LastError)
		}
		if st.Ready+st.Busy == st.Workers {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("convert: workers not ready: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Status returns a snapshot of the workers, the queue and the counters.
// It reads each running worker's memory from /proc; Counters is cheaper
// when only the counters are wanted.
func (p *Pool) Status() engine.Status {
	st, procs := p.snapshot()
	for i, proc := range procs { // outside p.mu: /proc is slow to read under load
		if proc != nil {
			st.Details[i].RSSBytes = proc.rss()
		}
	}
	return st
}

// Counters returns the pool's counters, without the workers' details.
func (p *Pool) Counters() engine.Counters {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts
}

// snapshot is Status without the workers' memory, with the processes of
// the ready and busy workers (nil for the others), in Details' order.
func (p *Pool) snapshot() (engine.Status, []*process) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := engine.Status{Workers: len(p.slots), Queued: p.queue.Len(), QueueLength: p.opts.QueueLength,
		Counters: p.counts, LastError: p.lastError, Version: p.version, Details: make([]engine.WorkerStatus, 0, len(p.slots))}
	procs := make([]*process, len(p.slots))
	for i, s := range p.slots {
		ws := engine.WorkerStatus{ID: s.id, State: s.state}
		if s.proc != nil && (s.state == engine.StateReady || s.state == engine.StateBusy) {
			ws.PID, ws.Jobs = s.proc.pid(), s.proc.jobs
			procs[i] = s.proc
		}
		st.Details = append(st.Details, ws)
		switch s.state {
		case engine.StateReady:
			st.Ready++
		case engine.StateStarting:
			st.Starting++
		case engine.StateBusy:
			st.Busy++
		case engine.StateFailed:
			st.FailedStart++
		}
	}
	return st, procs
}

// RetryAfter estimates when a job refused with ErrBusy would find room:
// the time the queued and running jobs need, at least one second.
func (p *Pool) RetryAfter() time.Duration {
	queued := p.queue.Len()
	p.mu.Lock()
	busy := 0
	for _, s := range p.slots {
		if s.state == engine.StateBusy {
			busy++
		}
	}
	avg, workers := p.avgJob, len(p.slots)
	p.mu.Unlock()
	wait := time.Duration(queued+busy) * avg / time.Duration(max(1, workers))
	return max(time.Second, wait.Round(time.Second))
}

// Close stops taking jobs, lets the queued and running ones finish, and
// stops the workers. If ctx ends first, it kills the workers (starting,
// idle or busy) and any cold soffice; the jobs still queued or running
// then fail with ErrUnavailable. Jobs that no worker took before the last
// one stopped fail with ErrUnavailable too.
func (p *Pool) Close(ctx context.Context) error {
	p.closeOnce.Do(func() {
		p.queue.Close() // first: a job queued after this point cannot exist
		close(p.closed)
	})
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("convert: close: jobs still running were stopped: %w", ctx.Err())
		p.abortNow()
		p.killAll()
		<-done
	}
	// Every worker has stopped; whatever is still queued (a retry whose
	// replacement worker could not start, for one) would wait forever.
	for _, t := range p.queue.Drain() {
		t.Job.finish(engine.Result{}, fmt.Errorf("%w: the conversion pool was closed", engine.ErrUnavailable))
	}
	if p.ownDir {
		os.RemoveAll(p.dir)
		p.lock.Close()
	}
	return err
}

// killAll kills every worker process, including those still starting;
// p.abort is closed already, so adopt refuses any process started later.
func (p *Pool) killAll() {
	p.mu.Lock()
	procs := make([]*process, 0, len(p.slots))
	for _, s := range p.slots {
		if s.proc != nil {
			procs = append(procs, s.proc)
		}
	}
	p.mu.Unlock()
	for _, proc := range procs {
		proc.kill()
	}
}

func (p *Pool) aborting() bool { return engine.IsClosed(p.abort) }

// run keeps slot s supplied with a worker until the pool closes: it
// starts one, serves jobs with it until it must be replaced, and starts
// the next. Failed starts are retried with exponential back-off.
func (p *Pool) run(s *slot) {
	defer p.wg.Done()
	defer p.setState(s, engine.StateStopped, nil)
	backoff := time.Second
	for replacing := false; ; {
		p.setState(s, engine.StateStarting, nil)
		proc, err := startProcess(&p.opts, s.id, s.dir, s.cpu, func(proc *process) bool { return p.adopt(s, proc) })
		if err != nil {
			if p.aborting() || !p.startFailed(s, err, backoff) {
				return
			}
			backoff = min(2*backoff, 30*time.Second)
			continue
		}
		backoff = time.Second
		if replacing {
			p.count(func(c *engine.Counters) { c.Restarts++ })
		}
		replacing = true
		p.opts.Logger.Info("convert worker ready", "worker", s.id, "pid", proc.pid(), "warmup", proc.warm, "version", proc.version)
		p.setState(s, engine.StateReady, proc)
		more := p.serve(s, proc)
		proc.stop(5 * time.Second)
		if !more || (p.isClosed() && p.queue.Len() == 0) { // no replacement for a closed pool with nothing left to do
			return
		}
	}
}

// adopt records proc, just spawned and not yet ready, as slot s's process,
// so that killAll reaches it during its start. It returns false, and
// records nothing, when the pool is aborting: killAll may have run already.
func (p *Pool) adopt(s *slot, proc *process) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.aborting() {
		return false
	}
	s.proc = proc
	return true
}

// startFailed records a failed start, fails the queued jobs if no worker
// runs at all, and waits before the next try. It returns false when the
// pool closes meanwhile.
func (p *Pool) startFailed(s *slot, err error, wait time.Duration) bool {
	p.opts.Logger.Error("convert worker failed to start", "worker", s.id, "err", err, "retry_in", wait)
	p.mu.Lock()
	p.lastError = err.Error()
	p.mu.Unlock()
	p.setState(s, engine.StateFailed, nil)
	if p.allFailed() != nil {
		for _, t := range p.queue.Drain() {
			t.Job.finish(engine.Result{}, fmt.Errorf("%w: no worker could start: %v", engine.ErrUnavailable, err))
		}
	}
	select {
	case <-time.After(wait):
		return true
	case <-p.closed:
		return false
	}
}

// serve runs jobs on proc until proc must be replaced (it returns true)
// or the pool is closed and its queue empty (false).
func (p *Pool) serve(s *slot, proc *process) bool {
	for {
		j := p.nextJob()
		if j == nil {
			return false
		}
		if err := j.ctx.Err(); err != nil { // the client left while the job waited
			p.queue.Done(j.ticket)
			j.finish(engine.Result{}, fmt.Errorf("conversion cancelled before it started: %w", err))
			continue
		}
		p.setState(s, engine.StateBusy, proc)
		more := p.runJob(proc, j)
		p.queue.Done(j.ticket)
		if !more {
			return !p.aborting()
		}
		p.setState(s, engine.StateReady, proc)
	}
}

// runJob sends j to proc and answers it. It returns false when proc must
// be replaced: it crashed, timed out, or is due for recycling.
func (p *Pool) runJob(proc *process, j *job) bool {
	queued := time.Since(j.enqueued)
	t0 := time.Now()
	m, err := p.exchange(proc, j)
	p.noteJobTime(time.Since(t0))
	var overMemory *memoryError
	switch {
	case err == nil:
		p.mu.Lock()
		proc.jobs++
		p.mu.Unlock()
		recycle := p.dueForRecycling(proc) // before answering, so that Status never shows a retiring worker as ready
		if m.Class == classLoad {
			p.convertCold(proc, j, m, queued)
		} else {
			p.answer(proc, j, m, queued)
		}
		return !recycle
	case errors.As(err, &overMemory):
		proc.kill()
		overMemory.kernel = proc.peakRSS()
		overMemory.peak = max(overMemory.sampled, overMemory.kernel)
		p.count(func(c *engine.Counters) { c.OverMemory++; c.Failed++ })
		p.opts.Logger.Warn("convert job exceeded the memory limit; worker killed", "worker", proc.id, "pid", proc.pid(),
			"limit_mib", overMemory.limit>>20, "peak_mib", overMemory.peak>>20)
		j.finish(engine.Result{}, overMemory)
	case errors.Is(err, os.ErrDeadlineExceeded) && j.ctx.Err() != nil:
		proc.kill()
		p.count(func(c *engine.Counters) { c.Failed++ })
		p.opts.Logger.Info("convert job abandoned by its client; worker killed", "worker", proc.id, "pid", proc.pid())
		j.finish(engine.Result{}, fmt.Errorf("conversion abandoned while running: %w", j.ctx.Err()))
	case errors.Is(err, os.ErrDeadlineExceeded):
		proc.kill()
		p.count(func(c *engine.Counters) { c.Timeouts++; c.Failed++ })
		p.opts.Logger.Warn("convert job exceeded its time limit; worker killed", "worker", proc.id, "pid", proc.pid(), "limit", p.opts.JobTimeout)
		j.finish(engine.Result{}, fmt.Errorf("%w (%v)", engine.ErrTimeout, p.opts.JobTimeout))
	default:
		p.crashed(proc, j, err)
	}
	return false
}

// exchange sends j to proc and reads the result, within JobTimeout and
// MaxWorkerMemory (a *memoryError: proc was killed).
func (p *Pool) exchange(proc *process, j *job) (*message, error) {
	id := p.nextID.Add(1)
	deadline := time.Now().Add(p.opts.JobTimeout)
	proc.stdin.SetWriteDeadline(deadline)
	proc.stdout.SetReadDeadline(deadline)
	resetPeak(proc.pid())
	// A job whose client left (or whose async job was cancelled) ends its
	// exchange at once; runJob then kills the worker, as nothing else
	// stops LibreOffice in the middle of a document.
	stopWatch := context.AfterFunc(j.ctx, func() {
		proc.stdin.SetWriteDeadline(time.Now())
		proc.stdout.SetReadDeadline(time.Now())
	})
	defer stopWatch()
	watch := engine.WatchMemory(p.opts.MaxWorkerMemory, proc.rss, func() { syscall.Kill(-proc.pid(), syscall.SIGKILL) })
	err := writeFrame(proc.stdin, &message{Kind: kindJob, ID: id, From: j.from, To: j.to,
		Filter: filterOptions(j.opts, j.to), Password: j.opts.Password, Body: j.input})
	var m *message
	if err == nil {
		m, err = readFrame(proc.stdout)
	}
	if over, peak := watch.End(); over {
		return nil, &memoryError{limit: p.opts.MaxWorkerMemory, peak: peak, sampled: peak}
	}
	if err == nil && (m.Kind != kindResult || m.ID != id) {
		err = fmt.Errorf("protocol error: expected result %d, got %s %d", id, m.Kind, m.ID)
	}
	return m, err
}

// answer delivers the worker's result m to j.
func (p *Pool) answer(proc *process, j *job, m *message, queued time.Duration) {
	res := engine.Result{Output: m.Body, Pages: m.Pages, Engine: m.Engine, Queued: queued, Attempts: j.attempts + 1}
	switch m.Class {
	case "":
		p.count(func(c *engine.Counters) { c.Converted++ })
		j.finish(res, nil)
	case classDocument:
		p.count(func(c *engine.Counters) { c.Failed++ })
		p.logRefusal(proc, m)
		j.finish(engine.Result{}, fmt.Errorf("%w: %s%s", engine.ErrUnprocessable, m.Error, exportHint(j.opts)))
	default:
		p.count(func(c *engine.Counters) { c.Failed++ })
		j.finish(engine.Result{}, fmt.Errorf("convert: worker %d (pid %d): %s", proc.id, proc.pid(), m.Error))
	}
}

// logRefusal logs why LibreOffice refused a document, in its own words:
// the client's error carries quire's message only (m.Error), since the
// engine's may name the server's files or echo its internals.
func (p *Pool) logRefusal(proc *process, m *message) {
	p.opts.Logger.Info("convert: LibreOffice refused a document", "worker", proc.id, "pid", proc.pid(),
		"error", m.Error, "detail", m.Detail)
}

// convertCold answers j, which the worker could not load (m), with a
// cold soffice conversion in the slot's directory.
func (p *Pool) convertCold(proc *process, j *job, m *message, queued time.Duration) {
	p.logRefusal(proc, m)
	if j.opts.Password != "" { // soffice takes no password on its command line
		p.count(func(c *engine.Counters) { c.Failed++ })
		j.finish(engine.Result{}, fmt.Errorf("%w: %s; the one-off soffice that converts what LibreOfficeKit cannot load (documents with comments) takes no password",
			engine.ErrUnprocessable, m.Error))
		return
	}
	pdf, pages, took, err := coldConvert(p.abortCtx, &p.opts, proc.dir, j.input, j.from, j.to, filterOptions(j.opts, j.to), p.opts.JobTimeout)
	if err != nil {
		if p.aborting() { // Close killed soffice
			j.finish(engine.Result{}, fmt.Errorf("%w: the conversion pool was closed", engine.ErrUnavailable))
			return
		}
		p.count(func(c *engine.Counters) {
			c.Failed++
			if errors.Is(err, engine.ErrMemoryLimit) {
				c.OverMemory++
			}
		})
		if !errors.Is(err, engine.ErrTimeout) && !errors.Is(err, engine.ErrMemoryLimit) {
			err = fmt.Errorf("%w: %s, and %v", engine.ErrUnprocessable, m.Error, err)
		}
		j.finish(engine.Result{}, err)
		return
	}
	p.count(func(c *engine.Counters) { c.Converted++; c.Cold++ })
	j.finish(engine.Result{Output: pdf, Pages: pages, Engine: took, Queued: queued, Attempts: j.attempts + 1, Cold: true}, nil)
}

// crashed handles a worker that died (or broke the protocol) during j.
// The job is retried once, on another worker, when that is safe: a
// conversion has no effect outside the worker, its input is still in
// memory, and a crash is often the worker's fault (memory exhausted,
// state left by an earlier document) rather than the document's. A second
// crash, a client that left, or a closing pool end the job instead; one
// retry bounds what a document that crashes LibreOffice every time costs.
func (p *Pool) crashed(proc *process, j *job, cause error) {
	proc.kill()
	state := proc.exitState()
	p.mu.Lock()
	p.counts.Crashes++
	p.lastError = fmt.Sprintf("worker %d (pid %d) crashed during a job: %s", proc.id, proc.pid(), state)
	p.mu.Unlock()
	p.opts.Logger.Warn("convert worker crashed during a job", "worker", proc.id, "pid", proc.pid(),
		"exit", state, "cause", cause, "stderr", proc.stderr.String())
	switch {
	case p.aborting():
		j.finish(engine.Result{}, fmt.Errorf("%w: the conversion pool was closed", engine.ErrUnavailable))
	case j.attempts == 0 && j.ctx.Err() == nil:
		j.attempts++
		p.count(func(c *engine.Counters) { c.Retried++ })
		p.queue.PushFront(j.ticket)
	default:
		p.count(func(c *engine.Counters) { c.Failed++ })
		j.finish(engine.Result{}, fmt.Errorf("%w (the worker ended: %s)", engine.ErrCrashed, state))
	}
}

// dueForRecycling reports whether proc has run its share of jobs or grown
// past the memory threshold.
func (p *Pool) dueForRecycling(proc *process) bool {
	reason := ""
	if n := p.opts.MaxJobsPerWorker; n > 0 && proc.jobs >= n {
		reason = fmt.Sprintf("%d jobs", proc.jobs)
	} else if limit := p.opts.MaxWorkerRSS; limit > 0 {
		if rss := proc.rss(); rss > limit {
			reason = fmt.Sprintf("resident memory %d MiB over %d MiB", rss>>20, limit>>20)
		}
	}
	if reason == "" {
		return false
	}
	p.count(func(c *engine.Counters) { c.Recycled++ })
	p.opts.Logger.Info("convert worker recycled", "worker", proc.id, "pid", proc.pid(), "reason", reason)
	return true
}

// nextJob waits for a queued job; it returns nil once the pool is closed
// and the queue empty, or when the pool aborts.
func (p *Pool) nextJob() *job {
	if t := p.queue.Next(p.abort, nil); t != nil {
		return t.Job
	}
	return nil
}

func (p *Pool) setState(s *slot, state string, proc *process) {
	p.mu.Lock()
	s.state, s.proc = state, proc
	if state == engine.StateReady && p.version == "" {
		p.version = proc.version
	}
	p.mu.Unlock()
}

func (p *Pool) count(f func(*engine.Counters)) {
	p.mu.Lock()
	f(&p.counts)
	p.mu.Unlock()
}

// noteJobTime updates the moving average of a job's time in a worker.
func (p *Pool) noteJobTime(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.avgJob == 0 {
		p.avgJob = d
		return
	}
	p.avgJob = (4*p.avgJob + d) / 5
}

// job is one conversion on its way through the pool.
type job struct {
	ctx      context.Context
	tenant   string // the API key the job is done for (quire.Tenant); the queue is fair across them
	from     string
	to       string // ToPDF or ToDOCX
	opts     engine.JobOptions
	input    []byte
	enqueued time.Time
	attempts int                  // earlier attempts that ended in a crash
	ticket   *engine.Ticket[*job] // its place in the queue
	done     chan jobResult
}

type jobResult struct {
	res engine.Result
	err error
}

// finish answers j. The channel has room for the one answer, so a worker
// never waits for a client that left.
func (j *job) finish(res engine.Result, err error) {
	j.done <- jobResult{res, err}
}
