package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// run keeps slot sl supplied with a worker until the pool closes: it
// starts one, serves jobs with it until it must be replaced, and starts
// the next. Failed starts are tried again with exponential back-off.
func (s *Supervisor[J]) run(sl *slot[J]) {
	defer s.wg.Done()
	defer s.setState(sl, StateStopped, nil)
	wait := s.opts.FirstRestartWait
	for replacing := false; ; {
		s.setState(sl, StateStarting, nil)
		w, err := s.start(s.abortCtx, sl.id)
		if err != nil {
			if s.aborting() || !s.startFailed(sl, err, wait) {
				return
			}
			wait = min(2*wait, MaxRestartWait)
			continue
		}
		wait = s.opts.FirstRestartWait
		if replacing {
			s.count(func(c *Counters) { c.Restarts++ })
		}
		replacing = true
		s.ready(sl, w)
		more := s.serve(sl, w)
		w.Stop()
		if !more || (IsClosed(s.closed) && s.queue.Len() == 0) { // no replacement for a closed pool with nothing left to do
			return
		}
	}
}

// ready records w, just started, as sl's worker, or kills it when the
// pool is aborting: abort may have killed the workers already.
func (s *Supervisor[J]) ready(sl *slot[J], w Worker[J]) {
	info := w.Info()
	s.opts.Logger.Info(s.opts.Log+" "+s.opts.Unit+" ready", append([]any{s.opts.Unit, sl.id, "pid", info.PID, "version", info.Version}, info.Log...)...)
	s.mu.Lock()
	defer s.mu.Unlock()
	sl.state, sl.w, sl.pid, sl.jobs = StateReady, w, info.PID, 0
	if s.version == "" {
		s.version = info.Version
	}
	if s.aborting() {
		w.Kill()
	}
}

// startFailed records a failed start, fails the queued jobs if no worker
// runs at all, and waits before the next try. It returns false when the
// pool closes meanwhile.
func (s *Supervisor[J]) startFailed(sl *slot[J], err error, wait time.Duration) bool {
	s.opts.Logger.Error(s.opts.Log+" "+s.opts.Unit+" failed to start", s.opts.Unit, sl.id, "err", err, "retry_in", wait)
	s.mu.Lock()
	s.lastError = err.Error()
	s.mu.Unlock()
	s.setState(sl, StateFailed, nil)
	if s.allFailed() != nil {
		for _, t := range s.queue.Drain() {
			t.Job.finish(Result{}, fmt.Errorf("%w: no %s could start: %v", ErrUnavailable, s.opts.Unit, err))
		}
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-s.closed:
		return false
	}
}

// serve runs jobs on w until w must be replaced (it returns true) or the
// pool is closed and its queue empty, or aborting (false).
func (s *Supervisor[J]) serve(sl *slot[J], w Worker[J]) bool {
	for {
		t := s.queue.Next(s.abortCtx.Done(), w.Lost())
		if t == nil {
			return s.lostIdle(sl, w)
		}
		if err := t.Job.ctx.Err(); err != nil { // the client left while the job waited
			s.queue.Done(t)
			t.Job.finish(Result{}, fmt.Errorf("conversion cancelled before it started: %w", err))
			continue
		}
		s.setState(sl, StateBusy, w)
		keep := s.runTask(sl, w, t.Job)
		s.queue.Done(t)
		if !keep {
			return !s.aborting()
		}
		s.setState(sl, StateReady, w)
	}
}

// lostIdle reports whether the wait for a job ended because w died while
// idle (it is then replaced), rather than because the pool closed or
// aborts.
func (s *Supervisor[J]) lostIdle(sl *slot[J], w Worker[J]) bool {
	if !IsClosed(w.Lost()) || s.aborting() {
		return false
	}
	s.opts.Logger.Warn(s.opts.Log+" "+s.opts.Unit+" died while idle", s.opts.Unit, sl.id, "pid", w.Info().PID)
	s.count(func(c *Counters) { c.Crashes++ })
	return true
}

// runTask runs t on w within its limits and answers it, unless w crashed
// on it and it is queued again. It returns whether w may take another job.
func (s *Supervisor[J]) runTask(sl *slot[J], w Worker[J], t *task[J]) bool {
	queued := time.Since(t.enqueued)
	// ctx ends at the time limit, and the timer kills the worker a moment
	// later, in case its driver missed ctx's end: a job is never left
	// running past its limit.
	ctx, cancel := context.WithTimeout(t.ctx, s.opts.JobTimeout)
	defer cancel()
	timer := time.AfterFunc(s.opts.JobTimeout, w.Kill)
	// The job is charged what the worker grows by while it runs, not what
	// it held before (what earlier jobs left, what it made ready for the
	// next): a job that succeeds alone does not fail after others.
	watch := WatchJobMemory(s.opts.MaxWorkerMemory, w.RSS, w.Kill)
	t0 := time.Now()
	res, then, err := w.Run(ctx, t.job)
	killed := !timer.Stop()
	over, peak := watch.End()
	s.noteJobTime(time.Since(t0))
	s.mu.Lock()
	sl.jobs++
	s.mu.Unlock()
	switch {
	case over:
		s.overMemory(sl, w, t, peak)
	case err != nil && s.aborting(): // Close killed the worker
		w.Kill()
		t.finish(Result{}, s.closedError("was"))
	case err != nil && ended(t.ctx):
		return s.abandoned(sl, w, t, err)
	case err != nil && (killed || ended(ctx)):
		s.timedOut(sl, w, t)
	case err != nil:
		return s.failed(sl, w, t, err, queued)
	default:
		if then != nil {
			if res, err = then(s.abortCtx); err != nil && s.aborting() { // Close killed the follow-up
				t.finish(Result{}, s.closedError("was"))
				return false
			}
		}
		s.answer(t, res, err, queued)
		return !killed && !s.dueForRecycling(sl, w)
	}
	return false
}

// overMemory ends t, whose worker grew past the memory limit and was
// killed. It is not retried: the document, not the worker, is at fault.
func (s *Supervisor[J]) overMemory(sl *slot[J], w Worker[J], t *task[J], peak int64) {
	w.Kill()
	s.count(func(c *Counters) { c.OverMemory++; c.Failed++ })
	s.opts.Logger.Warn(s.opts.Log+" job exceeded the memory limit; "+s.opts.Unit+" killed", s.opts.Unit, sl.id, "pid", sl.pid,
		"limit_mib", s.opts.MaxWorkerMemory>>20, "peak_mib", peak>>20)
	t.finish(Result{}, w.OverMemory(s.opts.MaxWorkerMemory, peak))
}

// abandoned ends t, whose client left while it ran. Its worker is killed
// when the job's end left it unusable (nothing else stops LibreOffice in
// the middle of a document); it returns whether the worker is kept.
func (s *Supervisor[J]) abandoned(sl *slot[J], w Worker[J], t *task[J], err error) bool {
	crashed, _ := w.Classify(err)
	if crashed {
		w.Kill()
		s.opts.Logger.Info(s.opts.Log+" job abandoned by its client; "+s.opts.Unit+" killed", s.opts.Unit, sl.id, "pid", sl.pid)
	}
	s.count(func(c *Counters) { c.Failed++ })
	t.finish(Result{}, fmt.Errorf("conversion abandoned while running: %w", t.ctx.Err()))
	return !crashed
}

// timedOut ends t, which ran past its time limit, and kills its worker.
func (s *Supervisor[J]) timedOut(sl *slot[J], w Worker[J], t *task[J]) {
	w.Kill()
	s.count(func(c *Counters) { c.Timeouts++; c.Failed++ })
	s.opts.Logger.Warn(s.opts.Log+" job exceeded its time limit; "+s.opts.Unit+" killed", s.opts.Unit, sl.id, "pid", sl.pid, "limit", s.opts.JobTimeout)
	t.finish(Result{}, fmt.Errorf("%w (%v)", ErrTimeout, s.opts.JobTimeout))
}

// failed handles the error of a job that ran: the document's (answered;
// the worker goes on) or the worker's crash. It returns whether the
// worker may take another job.
func (s *Supervisor[J]) failed(sl *slot[J], w Worker[J], t *task[J], err error, queued time.Duration) bool {
	crashed, answer := w.Classify(err)
	if crashed {
		s.crashed(sl, w, t, err)
		return false
	}
	s.answer(t, Result{}, answer, queued)
	return !s.dueForRecycling(sl, w)
}

// crashed handles a worker that died (or broke its protocol) during t.
// The job is retried once, on another worker, when that is safe: a
// conversion has no effect outside the worker, its input is still in
// memory, and a crash is often the worker's fault (memory exhausted,
// state left by an earlier document) rather than the document's. A second
// crash or a client that left end the job instead; one retry bounds what
// a document that crashes the engine every time costs.
func (s *Supervisor[J]) crashed(sl *slot[J], w Worker[J], t *task[J], cause error) {
	w.Kill()
	how, detail := w.Ended()
	s.mu.Lock()
	s.counts.Crashes++
	s.lastError = fmt.Sprintf("%s %d (pid %d) crashed during a job: %s", s.opts.Unit, sl.id, sl.pid, how)
	s.mu.Unlock()
	s.opts.Logger.Warn(s.opts.Log+" "+s.opts.Unit+" crashed during a job",
		append([]any{s.opts.Unit, sl.id, "pid", sl.pid, "exit", how, "cause", cause}, detail...)...)
	if t.attempts == 0 && t.ctx.Err() == nil {
		t.attempts++
		s.count(func(c *Counters) { c.Retried++ })
		s.queue.PushFront(t.ticket)
		return
	}
	s.count(func(c *Counters) { c.Failed++ })
	t.finish(Result{}, fmt.Errorf("%w (the %s ended: %s)", ErrCrashed, s.opts.Unit, how))
}

// answer delivers t's result or error, and counts it.
func (s *Supervisor[J]) answer(t *task[J], res Result, err error, queued time.Duration) {
	s.count(func(c *Counters) {
		switch {
		case err != nil:
			c.Failed++
			if errors.Is(err, ErrMemoryLimit) { // a follow-up's process, killed at the limit
				c.OverMemory++
			}
		case res.Cold:
			c.Converted++
			c.Cold++
		default:
			c.Converted++
		}
	})
	if err != nil {
		t.finish(Result{}, err)
		return
	}
	res.Queued, res.Attempts = queued, t.attempts+1
	t.finish(res, nil)
}

// dueForRecycling reports whether w has run its share of jobs or grown
// past MaxWorkerRSS; it is checked after the answer, as reading a
// worker's memory may take milliseconds, but before the worker shows as
// ready again.
func (s *Supervisor[J]) dueForRecycling(sl *slot[J], w Worker[J]) bool {
	s.mu.Lock()
	jobs := sl.jobs
	s.mu.Unlock()
	reason := ""
	if n := s.opts.MaxJobsPerWorker; n > 0 && jobs >= n {
		reason = fmt.Sprintf("%d jobs", jobs)
	} else if limit := s.opts.MaxWorkerRSS; limit > 0 {
		if rss := w.RSS(); rss > limit {
			reason = fmt.Sprintf("resident memory %d MiB over %d MiB", rss>>20, limit>>20)
		}
	}
	if reason == "" {
		return false
	}
	s.count(func(c *Counters) { c.Recycled++ })
	s.opts.Logger.Info(s.opts.Log+" "+s.opts.Unit+" recycled", s.opts.Unit, sl.id, "pid", sl.pid, "reason", reason)
	return true
}

// ended reports whether ctx has ended, or its deadline passed: a
// driver's own clock (a pipe's deadline, the kill timer) may tell before
// ctx's timer does.
func ended(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(d)
}

func (s *Supervisor[J]) setState(sl *slot[J], state string, w Worker[J]) {
	s.mu.Lock()
	sl.state, sl.w = state, w
	s.mu.Unlock()
}
