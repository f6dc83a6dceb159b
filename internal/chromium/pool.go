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
// The supervisor (engine.Supervisor, of which the Pool is a driver:
// supervise.go) gives each job the convert job timeout and a memory
// bound on what the browser's processes grow by while it prints (counted
// per job, so that a page that prints alone prints beside others and
// after them): past either, the browser is killed
// and replaced, and the job fails with engine.ErrTimeout or
// engine.ErrMemoryLimit. A browser that dies is replaced, and a job on
// which it died is tried once more, on the next browser free (a second
// death: engine.ErrCrashed); a browser is
// also replaced after MaxJobsPerWorker jobs or when it holds more than
// MaxWorkerRSS after a job, which bounds slow leaks.
package chromium

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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

// Pool prints pages with browsers: a driver of the engine's Supervisor
// (supervise.go), which holds the browsers, their queue and their limits.
// It is safe for concurrent use.
type Pool struct {
	opts   Options
	dir    string
	ownDir bool
	// isolation is true while the kernel lets browsers start in
	// namespaces of their own.
	isolation atomic.Bool
	// refused is true once the kernel refused the namespaces: Chromium's
	// own sandbox needs them too, so the browser then runs without it.
	refused atomic.Bool
	sup     *engine.Supervisor[*job]
}

// NewPool starts the browsers and returns at once; they start in the
// background (Status shows them, WaitReady waits for them).
func NewPool(opts Options) (*Pool, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Pool{opts: o, dir: o.Dir}
	p.isolation.Store(!o.hostNamespaces)
	if p.dir == "" {
		if p.dir, err = os.MkdirTemp("", "quire-chromium-"); err != nil {
			return nil, fmt.Errorf("chromium: %w", err)
		}
		p.ownDir = true
	} else if p.dir, err = filepath.Abs(p.dir); err != nil { // a confined browser sees it at its absolute path
		return nil, fmt.Errorf("chromium: %w", err)
	}
	p.sup = engine.NewSupervisor(engine.SupervisorOptions{PoolOptions: o.PoolOptions,
		Names:            engine.Names{Log: "chromium", Unit: "browser", Pool: "Chromium pool"},
		FirstRestartWait: firstRestartWait}, p.startBrowser)
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

// job is one page, as a browser receives it.
type job struct {
	ctx  context.Context // its client's: whose page it is (tabFor)
	page Page
	opts engine.JobOptions
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
	r, err := p.sup.Do(ctx, t0, &job{ctx: ctx, page: page, opts: opts})
	res, err := engine.Conform(ctx, r, err, page.Name, opts)
	res.Total = time.Since(t0)
	return res, err
}

// WaitReady waits until every browser has started, or ctx ends; it fails
// at once when a browser's start failed.
func (p *Pool) WaitReady(ctx context.Context) error { return p.sup.WaitReady(ctx) }

// Status is a snapshot of the pool, in every engine's terms (engine.Status).
func (p *Pool) Status() engine.Status { return p.sup.Status() }

// Version is the browser's product and version, such as
// "HeadlessChrome/156.0.8078.108" (the headless shell) or
// "Chrome/156.0.8078.108", once a browser has started; "" before.
func (p *Pool) Version() string { return p.sup.Version() }

// RetryAfter is the wait suggested to a client refused with ErrBusy:
// about the time the queued and running jobs take, at least one second.
func (p *Pool) RetryAfter() time.Duration { return p.sup.RetryAfter() }

// Close stops taking jobs, lets the browsers finish the jobs queued
// until ctx ends, then stops them (killed, when ctx ended first).
func (p *Pool) Close(ctx context.Context) error {
	err := p.sup.Close(ctx)
	if p.ownDir {
		os.RemoveAll(p.dir)
	}
	return err
}
