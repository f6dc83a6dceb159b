package libreoffice

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/ooxml"
	"github.com/quire-dev/quire/internal/safeinput"
)

// Pool converts documents with LibreOffice workers: a driver of the
// engine's Supervisor (driver.go), which holds the workers, their queue
// and their limits. It is safe for concurrent use.
type Pool struct {
	opts   Options
	dir    string
	ownDir bool     // dir was created by NewPool and is removed by Close
	lock   *os.File // holds dir's lock while the pool is open (workdir.go)
	places []place  // each slot's directory and CPU, by slot - 1
	nextID atomic.Uint64
	sup    *engine.Supervisor[*job]
}

// place is where a slot's workers run.
type place struct {
	dir string
	cpu *int // the CPU its workers run on, nil for any (affinity.go)
}

// NewPool starts the workers and returns at once; they warm up in the
// background (Status shows them "starting", WaitReady waits for them).
// Jobs submitted meanwhile wait in the queue.
func NewPool(opts Options) (*Pool, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Pool{opts: o, dir: o.Dir}
	if p.dir == "" {
		removeStaleWorkDirs("", o.Logger)
		if p.dir, p.lock, err = newWorkDir(""); err != nil {
			return nil, err
		}
		p.ownDir = true
	}
	cpus := workerCPUs(o.Workers, allowedCPUs())
	for i := range o.Workers {
		pl := place{dir: filepath.Join(p.dir, fmt.Sprintf("worker-%d", i+1))}
		if cpus != nil {
			pl.cpu = &cpus[i]
		}
		p.places = append(p.places, pl)
	}
	p.sup = engine.NewSupervisor(engine.SupervisorOptions{PoolOptions: o.PoolOptions,
		Names:            engine.Names{Log: "convert", Unit: "worker", Pool: "conversion pool"},
		FirstRestartWait: time.Second}, p.startWorker)
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
	return p.sup.Do(ctx, t0, &job{from: from, to: to, opts: opts, input: in})
}

// Check runs the checks of ConvertRequest that spend no engine time
// (safeinput.CheckRequest): it validates r (its format told first when
// r.From is empty) and checks in against the limits and its declared
// format. A job's submission runs it, so that a request the conversion
// would refuse is refused before it is queued, as it would be.
func (p *Pool) Check(r engine.Request, in []byte) error {
	return safeinput.CheckRequest(r, in, p.opts.inputLimits())
}

// WaitReady waits until every worker is ready or busy, or until one
// failed to start (its error), or ctx ends.
func (p *Pool) WaitReady(ctx context.Context) error { return p.sup.WaitReady(ctx) }

// Slots is how many documents the pool converts at once.
func (p *Pool) Slots() int { return p.sup.Slots() }

// Status returns a snapshot of the workers, the queue and the counters.
// It reads each running worker's memory from /proc; Counters is cheaper
// when only the counters are wanted.
func (p *Pool) Status() engine.Status { return p.sup.Status() }

// Counters returns the pool's counters, without the workers' details.
func (p *Pool) Counters() engine.Counters { return p.sup.Counters() }

// RetryAfter estimates when a job refused with ErrBusy would find room:
// the time the queued and running jobs need, at least one second.
func (p *Pool) RetryAfter() time.Duration { return p.sup.RetryAfter() }

// Close stops taking jobs, lets the queued and running ones finish, and
// stops the workers. If ctx ends first, it kills the workers (starting,
// idle or busy) and any cold soffice; the jobs still queued or running
// then fail with ErrUnavailable. Jobs that no worker took before the last
// one stopped fail with ErrUnavailable too.
func (p *Pool) Close(ctx context.Context) error {
	err := p.sup.Close(ctx)
	if p.ownDir {
		os.RemoveAll(p.dir)
		p.lock.Close()
	}
	return err
}

// job is one conversion, as a worker receives it.
type job struct {
	from  string
	to    string // ToPDF or ToDOCX
	opts  engine.JobOptions
	input []byte
}
