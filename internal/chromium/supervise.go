package chromium

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/quire-dev/quire/internal/engine"
)

// Restart waits after a failed start: the first, doubled each time after.
const (
	firstRestartWait = 500 * time.Millisecond
	maxRestartWait   = 30 * time.Second
)

// run keeps a browser in slot until the pool closes, handing it jobs.
func (p *Pool) run(slot int) {
	defer p.wg.Done()
	dir := filepath.Join(p.dir, fmt.Sprintf("browser-%d", slot+1))
	var b *browserProc
	defer func() {
		if b != nil {
			p.forget(b)
			b.stop()
		}
		p.setState(slot, engine.StateStopped)
	}()
	wait := firstRestartWait
	for !p.aborting.Load() {
		if b == nil {
			var err error
			if b, err = p.start(slot, dir); err != nil {
				if !p.sleep(wait) {
					return
				}
				wait = min(2*wait, maxRestartWait)
				continue
			}
			wait = firstRestartWait
		}
		b.prepare()
		t := p.queue.Next(p.abortCh, b.ctx.Done())
		if t == nil {
			if b.ctx.Err() == nil || p.aborting.Load() { // closed and drained, or aborted
				return
			}
			// The browser died while idle: chromedp lost it.
			p.opts.Logger.Warn("chromium: browser died while idle", "slot", slot+1, "pid", b.pid)
			p.count(func(c *engine.Counters) { c.Crashes++; c.Restarts++ })
			p.forget(b)
			b.stop()
			b = nil
			continue
		}
		b = p.runJob(slot, dir, b, t.Job)
		p.queue.Done(t)
	}
}

// runJob runs j on b, and on a new browser when b dies on it, and returns
// the browser that is to take the next job (nil: none is left).
func (p *Pool) runJob(slot int, dir string, b *browserProc, j *job) *browserProc {
	if err := j.ctx.Err(); err != nil { // the client left while it waited
		j.done <- jobResult{err: fmt.Errorf("conversion cancelled before it started: %w", err)}
		return b
	}
	p.setState(slot, engine.StateBusy)
	keep, retry := p.serve(b, j, 1)
	if !keep {
		p.forget(b)
		b.stop()
		b = nil
	}
	if retry { // the browser died on the job: once more, on a new one
		if b, _ = p.start(slot, dir); b == nil {
			j.done <- jobResult{err: fmt.Errorf("%w: the browser died, and no new one starts: %s", engine.ErrUnavailable, p.Status().LastError)}
			return nil
		}
		if keep, _ = p.serve(b, j, 2); !keep {
			p.forget(b)
			b.stop()
			return nil
		}
	}
	if b != nil {
		p.setState(slot, engine.StateReady)
	}
	return b
}

// forget takes b out of the browsers abort kills.
func (p *Pool) forget(b *browserProc) {
	p.mu.Lock()
	delete(p.procs, b)
	p.mu.Unlock()
}

// start launches the slot's browser, in namespaces unless the kernel
// refuses them (then without, once and for all, with a warning).
func (p *Pool) start(slot int, dir string) (*browserProc, error) {
	p.setState(slot, engine.StateStarting)
	isolated := p.isolation.Load()
	b, err := launch(&p.opts, dir, isolated, isolated || p.refused.Load())
	if err != nil && isolated && engine.NamespaceRefused(err) {
		p.refused.Store(true)
		if p.isolation.Swap(false) {
			p.opts.Logger.Warn("chromium: the kernel refuses namespaces, which Chromium's own sandbox needs too; the browser runs with the host's network and files and without its sandbox, behind its request interception and proxy only", "err", err)
		}
		b, err = launch(&p.opts, dir, false, true)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.states[slot] = engine.StateFailed
		p.lastError = "browser start: " + err.Error()
		p.opts.Logger.Error("chromium: browser start failed", "slot", slot+1, "err", err)
		return nil, err
	}
	p.states[slot] = engine.StateReady
	p.procs[b] = true
	p.version = b.version
	p.opts.Logger.Info("chromium: browser started", "slot", slot+1, "pid", b.pid, "version", b.version, "confined", isolated)
	return b, nil
}

// sleep waits d, or until the pool closes; false if it closed.
func (p *Pool) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.closed.Done():
		return false
	case <-t.C:
		return true
	}
}

// serve prints j on b within the job's time and memory limits, answers
// it, and reports whether b may take another job. On its first attempt,
// a job on which the browser died is not answered but to be retried: the
// browser may have died of something else (it died while idle, and the
// job came before the news).
func (p *Pool) serve(b *browserProc, j *job, attempt int) (keep, retry bool) {
	queued := time.Since(j.enqueued)
	var timedOut atomic.Bool
	timer := time.AfterFunc(p.opts.JobTimeout, func() { timedOut.Store(true); b.kill() })
	// The job is charged what the browser's processes grow by while it
	// prints, not what they held before it (the shared tab's renderer
	// with what earlier pages left, the tabs made ahead): what a page may
	// take does not depend on what ran before it.
	watch := engine.WatchJobMemory(p.opts.MaxWorkerMemory, b.rss, b.kill)
	t0 := time.Now()
	var out []byte
	var pages int64
	tb, err := b.tabFor(j)
	p.opts.Logger.Debug("chromium: tab taken", "waited_ms", float64(time.Since(t0).Microseconds())/1000)
	if err == nil {
		out, pages, err = renderPage(j.ctx, tb, j.page, j.opts, p.opts.Page, p.opts.Logger)
	} else { // not the job's fault: the browser is failing, and is replaced
		b.kill()
	}
	took := time.Since(t0)
	timer.Stop()
	over, peak := watch.End()
	b.jobs++
	keep = true
	switch {
	case timedOut.Load():
		err, keep = fmt.Errorf("%w (%v)", engine.ErrTimeout, p.opts.JobTimeout), false
		p.count(func(c *engine.Counters) { c.Timeouts++ })
	case over:
		err, keep = fmt.Errorf("%w of %d MiB (the page had taken %d MiB when the browser was stopped)", engine.ErrMemoryLimit, p.opts.MaxWorkerMemory>>20, peak>>20), false
		p.count(func(c *engine.Counters) { c.OverMemory++ })
	case err != nil && j.ctx.Err() != nil: // the client left; the tab was closed
		err = fmt.Errorf("conversion abandoned while running: %w", j.ctx.Err())
	case err != nil && !b.healthy():
		err, keep = fmt.Errorf("%w", engine.ErrCrashed), false
		p.count(func(c *engine.Counters) { c.Crashes++ })
		if attempt == 1 && j.ctx.Err() == nil {
			p.count(func(c *engine.Counters) { c.Retried++; c.Restarts++ })
			return false, true
		}
	case errors.Is(err, engine.ErrUnprocessable): // the page's own doing (page.go), said as it is
	case err != nil: // the browser's words go to the log; the client gets quire's
		p.opts.Logger.Info("chromium: the browser could not print a page", "err", err)
		err = fmt.Errorf("%w: Chromium could not print the page", engine.ErrUnprocessable)
	}
	p.count(func(c *engine.Counters) {
		if err != nil {
			c.Failed++
		} else {
			c.Converted++
		}
		if !keep {
			p.restarting(c)
		}
	})
	j.done <- jobResult{res: engine.Result{Output: out, Pages: pages, Engine: took, Queued: queued, Attempts: attempt}, err: err}
	// After the answer: reading the memory of the browser's processes
	// takes a few milliseconds, more under load.
	if keep && p.dueForRecycling(b) {
		keep = false
		p.count(func(c *engine.Counters) { c.Recycled++; p.restarting(c) })
	}
	if keep && tb != nil {
		b.release(tb, err != nil) // after the answer: the client does not wait for it
	}
	return keep, false
}

// restarting counts a browser stopped to be replaced, unless the pool is
// closing; p.mu held.
func (p *Pool) restarting(c *engine.Counters) {
	if p.closed.Err() == nil {
		c.Restarts++
	}
}

// dueForRecycling reports whether b has run its share of jobs or holds
// too much memory.
func (p *Pool) dueForRecycling(b *browserProc) bool {
	return p.opts.MaxJobsPerWorker > 0 && b.jobs >= p.opts.MaxJobsPerWorker ||
		p.opts.MaxWorkerRSS > 0 && b.rss() > p.opts.MaxWorkerRSS
}

// abort kills every browser: Close gave up waiting for them.
func (p *Pool) abort() {
	if !p.aborting.Swap(true) {
		close(p.abortCh)
	}
	p.mu.Lock()
	for b := range p.procs {
		b.kill()
	}
	p.mu.Unlock()
}
