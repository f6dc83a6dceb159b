package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire/internal/chromium"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/conversion"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice"
	"github.com/quire-dev/quire/internal/ooxml"
)

// RunWorker is the main function of the hidden worker mode (`quire
// convert-worker`) that the engines' pools start this program in: a
// LibreOffice worker, or the program that confines a browser or a cold
// soffice before it executes them (libreoffice.RunWorker). It returns the
// process's exit code.
func RunWorker(stdin io.Reader, stdout io.Writer) int { return libreoffice.RunWorker(stdin, stdout) }

// startEngines starts the LibreOffice workers and the browsers as the
// Config says (unless o lends its pools), or prepares the on-demand
// worker. Pools warm up in the background: a machine without LibreOffice
// or Chromium still serves everything else, while /v1/health says which
// engine is down.
func (a *App) startEngines(o Options) (err error) {
	if o.OnDemand {
		a.onDemand = NewOnDemand(a.Config, a.Log)
		a.converter = a.onDemand
		a.Conversion = newConversion(nil, nil) // commands run by hand serve no conversion
		return nil
	}
	a.lent = Options{Convert: o.Convert, Chromium: o.Chromium}
	if a.Convert = o.Convert; a.Convert == nil {
		if a.Convert, err = NewConvertPool(a.Config, a.Log, a.Metrics); err != nil {
			return err
		}
	}
	if a.Convert != nil {
		a.converter = a.Convert
	}
	if a.Chromium = o.Chromium; a.Chromium == nil {
		if a.Chromium, err = NewChromiumPool(a.Config, a.Log, a.Metrics); err != nil {
			return err
		}
	}
	a.Conversion = newConversion(a.Convert, a.Chromium)
	return nil
}

// NewConvertPool starts the LibreOffice workers of cfg, their metrics in
// reg (nil: none); nil when QUIRE_CONVERT_WORKERS turns them off.
func NewConvertPool(cfg *config.Config, log *slog.Logger, reg prometheus.Registerer) (*libreoffice.Pool, error) {
	if cfg.ConvertWorkers < 0 {
		log.Info("conversion disabled (QUIRE_CONVERT_WORKERS < 0)")
		return nil, nil
	}
	opt := convertOptions(cfg, log)
	opt.Registerer = reg
	return libreoffice.NewPool(opt)
}

// NewChromiumPool starts the browsers of cfg, their metrics in reg (nil:
// none); nil when QUIRE_CHROMIUM_WORKERS turns them off.
func NewChromiumPool(cfg *config.Config, log *slog.Logger, reg prometheus.Registerer) (*chromium.Pool, error) {
	if cfg.ChromiumWorkers < 0 {
		log.Info("Chromium off (QUIRE_CHROMIUM_WORKERS < 0): HTML and Markdown go to LibreOffice")
		return nil, nil
	}
	opt := chromiumOptions(cfg, log)
	opt.Registerer = reg
	return chromium.NewPool(opt)
}

// newConversion is the conversion service over the pools, nil ones off.
func newConversion(office *libreoffice.Pool, browser *chromium.Pool) *conversion.Service {
	var o conversion.Office // a nil pool must stay a nil interface: the service tells "off" by it
	var b conversion.Browser
	if office != nil {
		o = office
	}
	if browser != nil {
		b = printer{browser}
	}
	return conversion.New(o, b)
}

// printer is the Chromium pool as the conversion service prints with it.
type printer struct{ pool *chromium.Pool }

func (p printer) RetryAfter() time.Duration { return p.pool.RetryAfter() }

func (p printer) Check(page conversion.Page, opts engine.JobOptions) error {
	return p.pool.Check(chromiumPage(page), opts)
}

func (p printer) Convert(ctx context.Context, page conversion.Page, opts engine.JobOptions) (engine.Result, error) {
	return p.pool.Convert(ctx, chromiumPage(page), opts)
}

// chromiumPage is p as package chromium names a page.
func chromiumPage(p conversion.Page) chromium.Page {
	c := chromium.Page{Doc: p.Doc, From: p.From, Name: p.Name}
	for _, f := range p.Assets {
		c.Assets = append(c.Assets, chromium.Asset{Name: f.Name, Data: f.Data})
	}
	return c
}

// WaitReady waits until the started engines have warmed up.
func (a *App) WaitReady(ctx context.Context) error {
	if a.Convert != nil {
		if err := a.Convert.WaitReady(ctx); err != nil {
			return fmt.Errorf("conversion workers not ready: %w", err)
		}
	}
	if a.Chromium != nil {
		if err := a.Chromium.WaitReady(ctx); err != nil {
			return fmt.Errorf("browsers not ready: %w", err)
		}
	}
	return nil
}

// stopEngines stops the workers and browsers it started; past ctx's deadline they
// are killed.
func (a *App) stopEngines(ctx context.Context) error {
	var errs []error
	if a.Convert != nil && a.Convert != a.lent.Convert {
		if err := a.Convert.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("conversion engine stop: %w", err))
		}
	}
	if a.Chromium != nil && a.Chromium != a.lent.Chromium {
		if err := a.Chromium.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("Chromium engine stop: %w", err))
		}
	}
	if a.onDemand != nil {
		errs = append(errs, a.onDemand.Close(ctx))
	}
	return errors.Join(errs...)
}

// OnDemand is a one-worker conversion pool started on first use, so
// that commands that never convert start no LibreOffice, and a browser
// started for each page it prints.
type OnDemand struct {
	opt      libreoffice.Options
	chromium chromium.Options
	once     sync.Once
	pool     *libreoffice.Pool
	err      error
}

// NewOnDemand returns the on-demand worker of cfg's conversion settings,
// for commands that convert without the rest of the service (quire convert).
func NewOnDemand(cfg *config.Config, log *slog.Logger) *OnDemand {
	return &OnDemand{opt: convertOptions(cfg, log), chromium: chromiumOptions(cfg, log)}
}

// Conversion is the conversion service over the on-demand engines, as
// quire convert converts: the LibreOffice worker started at its first
// use, a browser started for each page, none with Chromium off
// (QUIRE_CHROMIUM_WORKERS < 0).
func (l *OnDemand) Conversion() *conversion.Service {
	var b conversion.Browser
	if l.chromium.Workers >= 0 {
		b = onDemandBrowser{l.chromium}
	}
	return conversion.New(l, b)
}

// Slots is one: the one worker converts one file at a time.
func (l *OnDemand) Slots() int { return 1 }

// RetryAfter is no wait: nothing but this command's file waits.
func (l *OnDemand) RetryAfter() time.Duration { return 0 }

// Check checks in as the worker would convert it, starting the worker.
func (l *OnDemand) Check(r engine.Request, in []byte) error {
	p, err := l.started()
	if err != nil {
		return err
	}
	return p.Check(r, in)
}

// ConvertRequest converts in as r asks, starting the worker.
func (l *OnDemand) ConvertRequest(ctx context.Context, r engine.Request, in []byte) (engine.Result, error) {
	p, err := l.started()
	if err != nil {
		return engine.Result{}, err
	}
	return p.ConvertRequest(ctx, r, in)
}

// ConvertEdited converts a filled DOCX template (annotate's ?to=pdf),
// starting the worker.
func (l *OnDemand) ConvertEdited(ctx context.Context, template *ooxml.Package, edits *ooxml.Edits) (engine.Result, error) {
	p, err := l.started()
	if err != nil {
		return engine.Result{}, err
	}
	return p.ConvertEdited(ctx, template, edits)
}

// started returns the worker's pool, started at the first use.
func (l *OnDemand) started() (*libreoffice.Pool, error) {
	l.once.Do(func() {
		l.opt.Workers, l.opt.QueueLength = 1, 1
		l.pool, l.err = libreoffice.NewPool(l.opt)
	})
	return l.pool, l.err
}

// onDemandBrowser prints each page with one headless Chromium, started
// for it and stopped after.
type onDemandBrowser struct{ opt chromium.Options }

func (b onDemandBrowser) RetryAfter() time.Duration { return 0 }

func (b onDemandBrowser) Check(page conversion.Page, opts engine.JobOptions) error {
	return chromium.CheckPage(chromiumPage(page), opts, b.opt.Text)
}

// Convert prints page on a browser of its own. The pool checks the page,
// once, before it waits for its browser (Pool.Convert): a page it refuses
// is answered at once, whether a browser could start or not, and the one
// starting is stopped. A browser that cannot start fails the print.
func (b onDemandBrowser) Convert(ctx context.Context, page conversion.Page, opts engine.JobOptions) (engine.Result, error) {
	o := b.opt
	o.Workers, o.QueueLength = 1, 1
	pool, err := chromium.NewPool(o)
	if err != nil {
		return engine.Result{}, err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		pool.Close(ctx)
	}()
	ctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	go func() { // the job would wait for a browser that does not start
		if err := pool.WaitReady(ctx); err != nil {
			fail(err)
		}
	}()
	res, err := pool.Convert(ctx, chromiumPage(page), opts)
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, engine.ErrUnavailable) {
		return engine.Result{}, cause
	}
	return res, err
}

// Close stops the worker, if one was started.
func (l *OnDemand) Close(ctx context.Context) error {
	if l.pool == nil {
		return nil
	}
	return l.pool.Close(ctx)
}
