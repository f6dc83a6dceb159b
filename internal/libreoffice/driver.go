package libreoffice

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quire-dev/quire/internal/engine"
)

// The LibreOffice driver of engine.Supervisor: a worker is a process
// (process.go) that converts one document at a time over its protocol
// (protocol.go); a document LibreOfficeKit cannot load goes on to a cold
// soffice (cold.go) in the worker's slot, once the worker has answered.

// worker is one worker process, as the supervisor drives it.
type worker struct {
	pool   *Pool
	proc   *process
	broken bool  // its protocol failed mid-job: it cannot take another
	before int64 // its memory when its job began (the memory error's figures)
}

// startWorker starts the worker of slot in the slot's directory, on its
// CPU. Close's abort kills it while it warms up.
func (p *Pool) startWorker(abort context.Context, slot int) (engine.Worker[*job], error) {
	pl := p.places[slot-1]
	stopKill := func() bool { return false }
	proc, err := startProcess(&p.opts, slot, pl.dir, pl.cpu, func(proc *process) bool {
		stopKill = context.AfterFunc(abort, proc.kill)
		return abort.Err() == nil
	})
	stopKill() // from now on the supervisor kills it
	if err != nil {
		return nil, err
	}
	return &worker{pool: p, proc: proc}, nil
}

func (w *worker) Info() engine.WorkerInfo {
	return engine.WorkerInfo{PID: w.proc.pid(), Version: w.proc.version, Log: []any{"warmup", w.proc.warm}}
}

// Run sends j to the worker and turns its answer into the job's result:
// a document LibreOfficeKit could not load is handed on to a cold soffice.
func (w *worker) Run(ctx context.Context, j *job) (engine.Result, engine.Followup, error) {
	m, err := w.exchange(ctx, j)
	if err != nil {
		w.broken = true // a frame may be half sent or read
		return engine.Result{}, nil, err
	}
	switch m.Class {
	case "":
		return engine.Result{Output: m.Body, Pages: m.Pages, Engine: m.Engine}, nil, nil
	case classLoad:
		w.logRefusal(m)
		if j.opts.Password != "" { // soffice takes no password on its command line
			return engine.Result{}, nil, fmt.Errorf("%w: %s; the one-off soffice that converts what LibreOfficeKit cannot load (documents with comments) takes no password",
				engine.ErrUnprocessable, m.Error)
		}
		return engine.Result{}, w.convertCold(j, m), nil
	case classDocument:
		w.logRefusal(m)
		return engine.Result{}, nil, fmt.Errorf("%w: %s%s", engine.ErrUnprocessable, m.Error, exportHint(j.opts))
	default:
		return engine.Result{}, nil, fmt.Errorf("convert: worker %d (pid %d): %s", w.proc.id, w.proc.pid(), m.Error)
	}
}

// exchange sends j to the worker and reads the result, until ctx ends
// (the job's time limit, or its client leaving: nothing else stops
// LibreOffice in the middle of a document, and the supervisor then kills
// the worker).
func (w *worker) exchange(ctx context.Context, j *job) (*message, error) {
	proc := w.proc
	id := w.pool.nextID.Add(1)
	deadline, _ := ctx.Deadline()
	proc.stdin.SetWriteDeadline(deadline)
	proc.stdout.SetReadDeadline(deadline)
	w.before = proc.rss()
	proc.memory.ResetPeak()
	stop := context.AfterFunc(ctx, func() {
		proc.stdin.SetWriteDeadline(time.Now())
		proc.stdout.SetReadDeadline(time.Now())
	})
	defer stop()
	err := writeFrame(proc.stdin, &message{Kind: kindJob, ID: id, From: j.from, To: j.to,
		Filter: filterOptions(j.opts, j.to), Password: j.opts.Password, Body: j.input})
	var m *message
	if err == nil {
		m, err = readFrame(proc.stdout)
	}
	if err == nil && (m.Kind != kindResult || m.ID != id) {
		err = fmt.Errorf("protocol error: expected result %d, got %s %d", id, m.Kind, m.ID)
	}
	return m, err
}

// logRefusal logs why LibreOffice refused a document, in its own words:
// the client's error carries quire's message only (m.Error), since the
// engine's may name the server's files or echo its internals.
func (w *worker) logRefusal(m *message) {
	w.pool.opts.Logger.Info("convert: LibreOffice refused a document", "worker", w.proc.id, "pid", w.proc.pid(),
		"error", m.Error, "detail", m.Detail)
}

// convertCold is the follow-up of j, which the worker could not load (m):
// a cold soffice conversion in the slot's directory, on its own time and
// memory limits; Close's abort kills it.
func (w *worker) convertCold(j *job, m *message) engine.Followup {
	return func(abort context.Context) (engine.Result, error) {
		o := &w.pool.opts
		pdf, pages, took, err := coldConvert(abort, o, w.proc.dir, j.input, j.from, j.to, filterOptions(j.opts, j.to), o.JobTimeout)
		if err == nil {
			return engine.Result{Output: pdf, Pages: pages, Engine: took, Cold: true}, nil
		}
		if !errors.Is(err, engine.ErrTimeout) && !errors.Is(err, engine.ErrMemoryLimit) {
			err = fmt.Errorf("%w: %s, and %v", engine.ErrUnprocessable, m.Error, err)
		}
		return engine.Result{}, err
	}
}

// Classify: an error of the exchange is the worker's (it died, or broke
// the protocol); any other is the document's, in quire's words already.
func (w *worker) Classify(err error) (bool, error) { return w.broken, err }

func (w *worker) RSS() int64 { return w.proc.rss() }
func (w *worker) Kill()      { w.proc.kill() }

// Stop closes the worker's stdin, which makes it exit, and kills it if it
// has not within 5 s.
func (w *worker) Stop() { w.proc.stop(5 * time.Second) }

// OverMemory reports the job's growth as sampled, or as the kernel
// counted it (the worker's peak since the job began, reset then), if more.
func (w *worker) OverMemory(limit, peak int64) error {
	e := &memoryError{limit: limit, peak: peak, sampled: peak}
	if kernel := w.proc.peakRSS(); kernel > 0 {
		e.kernel = kernel - w.before
		e.peak = max(e.peak, e.kernel)
	}
	return e
}

func (w *worker) Ended() (string, []any) {
	return w.proc.exitState(), []any{"stderr", w.proc.stderr.String()}
}

// Lost is nil: a worker that dies while idle is found at its next job,
// which is then retried.
func (w *worker) Lost() <-chan struct{} { return nil }
