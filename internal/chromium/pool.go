// Package chromium prints HTML and Markdown to PDF with headless Chromium,
// the engine users expect for web content, from a supervised pool of warm
// browsers driven over the DevTools protocol (chromedp, through a pipe).
//
// # Design
//
// Each slot of the Pool holds one browser process, started with a
// profile directory of its own and, where the kernel allows, in the same
// namespaces and confined filesystem as the LibreOffice workers
// (engine.Confine): no network at all, none of the host's files but the
// system's programs, libraries and fonts. A browser prints one page at a
// time. A page with scripts on prints in a fresh browser context (an
// incognito-like profile in memory) that is disposed of afterwards, so
// that nothing of it (cache, cookies, storage, service workers) is seen
// by a later job. Pages with scripts off, which store nothing that a
// later page could read, print one after the other in one shared tab, in
// its one warm renderer, as long as they are one tenant's: starting a
// renderer for each page was most of a print's CPU.
//
// Each page loads from an origin of its own, http://RANDOM.quire.invalid/
// (a name that resolves nowhere, and that no other page can guess): every
// request of the page is intercepted (the DevTools Fetch domain) and
// answered from memory when it names the page or one of the request's
// other files by its relative name at that origin, and failed otherwise.
// That is the fence; the namespaces, a proxy to nowhere and the flags
// that turn Chromium's own background traffic off are the fences behind
// it. Scripts are off unless the job asks for them.
//
// Jobs wait in the fair scheduler of package engine, in a line per key,
// as LibreOffice's do.
//
// The supervisor gives each job the convert job timeout and a memory
// bound on what the browser's processes grow by while it prints (counted
// per job, so that a page that prints alone prints beside others and
// after them): past either, the browser is killed
// and replaced, and the job fails with engine.ErrTimeout or
// engine.ErrMemoryLimit. A browser that dies is replaced, and a job on
// which it died is tried once more on the new one (a second death:
// engine.ErrCrashed); a browser is
// also replaced after MaxJobsPerWorker jobs or when it holds more than
// MaxWorkerRSS after a job, which bounds slow leaks.
package chromium

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/safeinput"
)

// Options configure a Pool. The zero value of a field selects its default.
type Options struct {
	// PoolOptions are the browsers' count (Workers; each holds about
	// 150-250 MB when warm), queue (QueueLength, for each key), time and
	// memory limits (MaxWorkerMemory: what a browser's processes grow by
	// during one page) and program, with engine.DefaultPoolOptions but for
	// StartTimeout (DefaultStartTimeout). The program confines itself and
	// then executes the browser.
	engine.PoolOptions
	// Path is the browser's program (default DefaultPath()).
	Path string
	// Dir holds the browsers' profiles (default: a new directory under
	// os.TempDir(), removed by Close).
	Dir string
	// Text bounds the nesting and tables of a page, as libreoffice.Options'
	// MaxNesting and MaxTableCells do LibreOffice's.
	Text safeinput.TextLimits
	// Page bounds what a page's scripts and print may do (page.go).
	Page PageLimits
	// Registerer is where the engine's metrics go (engine.Collector,
	// named quire_chromium_...); nil: nowhere.
	Registerer prometheus.Registerer

	// hostNamespaces starts the browsers without namespaces of their own,
	// for tests that run without the quire program's worker mode.
	hostNamespaces bool
}

// Where Debian installs the browser: the chromium-headless-shell
// package's shell, made for automation (no browser window or its UI's
// machinery: a new context's page starts several times faster), and the
// chromium package's full browser.
const (
	ShellPath   = "/usr/bin/chromium-headless-shell"
	BrowserPath = "/usr/bin/chromium"
)

// DefaultPath is the browser's program when none is set: the headless
// shell when it is installed, else the full browser.
func DefaultPath() string {
	if _, err := os.Stat(ShellPath); err == nil {
		return ShellPath
	}
	return BrowserPath
}

// DefaultStartTimeout bounds a browser's start: shorter than a
// LibreOffice worker's, which converts a document to warm up.
const DefaultStartTimeout = 30 * time.Second

func (o Options) withDefaults() (Options, error) {
	def := engine.DefaultPoolOptions
	def.StartTimeout = DefaultStartTimeout
	var err error
	if o.PoolOptions, err = o.PoolOptions.WithDefaults(def); err != nil {
		return o, fmt.Errorf("chromium: %w", err)
	}
	if o.Path == "" {
		o.Path = DefaultPath()
	}
	o.Page = o.Page.withDefaults()
	return o, nil
}

// Pool is the supervisor of the browsers. It is safe for concurrent use.
type Pool struct {
	opts   Options
	dir    string
	ownDir bool
	queue  *engine.Scheduler[*job]
	closed context.Context // done once Close has begun
	close  context.CancelFunc
	wg     sync.WaitGroup
	// isolation is true while the kernel lets browsers start in
	// namespaces of their own.
	isolation atomic.Bool
	// refused is true once the kernel refused the namespaces: Chromium's
	// own sandbox needs them too, so the browser then runs without it.
	refused  atomic.Bool
	aborting atomic.Bool   // Close gave up waiting: kill everything
	abortCh  chan struct{} // closed with aborting set

	mu        sync.Mutex            // guards the fields below
	states    []string              // each slot's state: engine.State*
	procs     map[*browserProc]bool // the running browsers
	counts    engine.Counters
	lastError string
	version   string
}

// NewPool starts the browsers and returns at once; they start in the
// background (Status shows them, WaitReady waits for them).
func NewPool(opts Options) (*Pool, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Pool{opts: o, dir: o.Dir, queue: engine.NewScheduler[*job](o.QueueLength, o.Workers), procs: map[*browserProc]bool{}}
	p.closed, p.close = context.WithCancel(context.Background())
	p.abortCh = make(chan struct{})
	p.isolation.Store(!o.hostNamespaces)
	if p.dir == "" {
		if p.dir, err = os.MkdirTemp("", "quire-chromium-"); err != nil {
			return nil, fmt.Errorf("chromium: %w", err)
		}
		p.ownDir = true
	} else if p.dir, err = filepath.Abs(p.dir); err != nil { // a confined browser sees it at its absolute path
		return nil, fmt.Errorf("chromium: %w", err)
	}
	p.states = make([]string, o.Workers)
	for i := range o.Workers {
		p.states[i] = engine.StateStarting
		p.wg.Add(1)
		go p.run(i)
	}
	if o.Registerer != nil {
		o.Registerer.MustRegister(engine.NewCollector("quire_chromium", "browser", p.Status))
	}
	return p, nil
}

// Page is what Convert prints: an HTML or Markdown document and the
// files it may load by their relative names.
type Page struct {
	Doc    []byte
	From   string // engine.FromHTML or engine.FromMarkdown
	Assets []Asset
	Name   string // the page's file name: its title when it has none, for PDF/UA
}

// Asset is a file of the page, reachable by its name relative to it.
type Asset struct {
	Name string
	Data []byte
}

// job is one page waiting for, or printed by, a browser.
type job struct {
	ctx      context.Context
	page     Page
	opts     engine.JobOptions
	enqueued time.Time
	ticket   *engine.Ticket[*job] // its place in the queue
	done     chan jobResult       // buffered: the browser never waits for the caller
}

type jobResult struct {
	res engine.Result
	err error
}

// Check runs the checks of Convert that spend no browser time: the
// options, the page's format and its nesting. A job's submission runs
// it, so that a page the print would refuse is refused before it is
// queued, as it would be.
func (p *Pool) Check(page Page, opts engine.JobOptions) error {
	return CheckPage(page, opts, p.opts.Text)
}

// CheckPage is Pool.Check for a pool of Options.Text limits, for a caller
// that starts its browser only for a page that passes (quire convert).
func CheckPage(page Page, opts engine.JobOptions, limits safeinput.TextLimits) error {
	if err := opts.Validate(page.From, engine.ToPDF); err != nil {
		return err
	}
	if err := safeinput.Check(page.Doc, page.From); err != nil {
		return err
	}
	return safeinput.CheckText(page.Doc, page.From, limits)
}

// Convert prints page to PDF with the options of opts that apply
// (paper, margin, landscape, printBackground, pageRanges, scale,
// javascript), then makes it conform to the PDF/A and PDF/UA opts asks
// for (engine.Conform). Its errors match engine's Err* values, or ctx's error.
func (p *Pool) Convert(ctx context.Context, page Page, opts engine.JobOptions) (engine.Result, error) {
	t0 := time.Now()
	if err := p.Check(page, opts); err != nil {
		return engine.Result{}, err
	}
	if page.From == engine.FromMarkdown {
		html, err := safeinput.MarkdownPage(page.Doc)
		if err != nil {
			return engine.Result{}, err
		}
		page = Page{Doc: html, From: engine.FromHTML, Assets: page.Assets, Name: page.Name}
	}
	give, err := quire.TakeEngineTurn(ctx)
	if err != nil {
		return engine.Result{}, fmt.Errorf("conversion cancelled before it started: %w", err)
	}
	defer give()
	j := &job{ctx: ctx, page: page, opts: opts, enqueued: t0, done: make(chan jobResult, 1)}
	if err := p.submit(j); err != nil {
		return engine.Result{}, err
	}
	select {
	case r := <-j.done:
		res, err := engine.Conform(ctx, r.res, r.err, page.Name, opts)
		res.Total = time.Since(t0)
		return res, err
	case <-ctx.Done():
		p.queue.Remove(j.ticket)
		return engine.Result{}, fmt.Errorf("conversion abandoned: %w", ctx.Err())
	}
}

var errClosed = fmt.Errorf("%w: the Chromium pool is closed", engine.ErrUnavailable)

// submit queues j unless the pool is closed, no browser can start, or
// its key's line is full.
func (p *Pool) submit(j *job) error {
	p.mu.Lock()
	failed, last := p.allFailed(), p.lastError
	p.mu.Unlock()
	if failed {
		return fmt.Errorf("%w: no browser starts: %s", engine.ErrUnavailable, last)
	}
	// The queue itself refuses jobs once Close has begun, so that no job
	// slips in between a check and Close's drain.
	j.ticket = engine.NewTicket(quire.Tenant(j.ctx), j)
	switch p.queue.Push(j.ticket) {
	case engine.Closed:
		return errClosed
	case engine.Full:
		return fmt.Errorf("%w: %d jobs of this key are waiting", engine.ErrBusy, p.opts.QueueLength)
	}
	return nil
}

// allFailed reports whether every browser's last start failed; p.mu held.
func (p *Pool) allFailed() bool {
	for _, s := range p.states {
		if s != engine.StateFailed {
			return false
		}
	}
	return true
}

// WaitReady waits until every browser has started, or ctx ends; it fails
// at once when a browser's start failed.
func (p *Pool) WaitReady(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		st := p.Status()
		switch {
		case st.FailedStart > 0:
			return fmt.Errorf("%w: %s", engine.ErrUnavailable, st.LastError)
		case st.Ready+st.Busy == st.Workers:
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Status is a snapshot of the pool, in every engine's terms (engine.Status).
func (p *Pool) Status() engine.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := engine.Status{Workers: len(p.states), Queued: p.queue.Len(), QueueLength: p.opts.QueueLength, Counters: p.counts, LastError: p.lastError}
	for _, s := range p.states {
		switch s {
		case engine.StateReady:
			st.Ready++
		case engine.StateBusy:
			st.Busy++
		case engine.StateStarting:
			st.Starting++
		case engine.StateFailed:
			st.FailedStart++
		}
	}
	return st
}

// Version is the browser's product and version, such as
// "HeadlessChrome/156.0.8078.108" (the headless shell) or
// "Chrome/156.0.8078.108", once a browser has started; "" before.
func (p *Pool) Version() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.version
}

// RetryAfter is the wait suggested to a client refused with ErrBusy: about
// the time the queue takes to drain.
func (p *Pool) RetryAfter() time.Duration {
	st := p.Status()
	return time.Duration(1+st.Queued/max(1, st.Workers)) * time.Second
}

// Close stops taking jobs, lets the browsers finish the jobs queued
// until ctx ends, then stops them.
func (p *Pool) Close(ctx context.Context) error {
	p.queue.Close()
	p.close()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("chromium: stopping the browsers: %w", ctx.Err())
		p.abort()
		<-done
	}
	for _, t := range p.queue.Drain() { // a job that no browser took: every browser stopped
		t.Job.done <- jobResult{err: fmt.Errorf("%w: %v", engine.ErrUnavailable, errStopped)}
	}
	if p.ownDir {
		os.RemoveAll(p.dir)
	}
	return err
}

func (p *Pool) setState(slot int, state string) {
	p.mu.Lock()
	p.states[slot] = state
	p.mu.Unlock()
}

func (p *Pool) count(f func(*engine.Counters)) {
	p.mu.Lock()
	f(&p.counts)
	p.mu.Unlock()
}

// errStopped ends a job still queued when Close gave up waiting.
var errStopped = errors.New("the Chromium pool stopped")
