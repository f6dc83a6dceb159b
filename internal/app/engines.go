package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/quire-dev/quire/internal/chromium"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/convert"
)

// startEngines starts the LibreOffice workers and the browsers as the
// Config says, or prepares the on-demand worker. Pools warm up in the
// background: a machine without LibreOffice or Chromium still serves
// everything else, while /v1/health says which engine is down.
func (a *App) startEngines(onDemand bool) (err error) {
	cfg := a.Config
	if onDemand {
		a.onDemand = NewOnDemand(cfg, a.Log)
		a.converter = a.onDemand
		return nil
	}
	if cfg.ConvertWorkers < 0 {
		a.Log.Info("conversion disabled (QUIRE_CONVERT_WORKERS < 0)")
	} else {
		opt := cfg.ConvertOptions(a.Log)
		opt.Registerer = a.Metrics
		if a.Convert, err = convert.NewPool(opt); err != nil {
			return err
		}
		a.converter = a.Convert
	}
	if cfg.ChromiumWorkers < 0 {
		a.Log.Info("Chromium off (QUIRE_CHROMIUM_WORKERS < 0): HTML and Markdown go to LibreOffice")
		return nil
	}
	opt := cfg.ChromiumOptions(a.Log)
	opt.Registerer = a.Metrics
	a.Chromium, err = chromium.NewPool(opt)
	return err
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

// stopEngines stops the workers and browsers; past ctx's deadline they
// are killed.
func (a *App) stopEngines(ctx context.Context) error {
	var errs []error
	if a.Convert != nil {
		if err := a.Convert.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("conversion engine stop: %w", err))
		}
	}
	if a.Chromium != nil {
		if err := a.Chromium.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("Chromium engine stop: %w", err))
		}
	}
	if a.onDemand != nil {
		errs = append(errs, a.onDemand.Close(ctx))
	}
	return errors.Join(errs...)
}

// Converter converts documents for the commands: the warm pool, or the
// worker started on demand.
func (a *App) Converter() interface {
	ConvertWith(ctx context.Context, in []byte, from, to string, opts convert.JobOptions) (convert.Result, error)
} {
	return a.converter
}

// OnDemand is a one-worker conversion pool started on first use, so
// that commands that never convert start no LibreOffice.
type OnDemand struct {
	opt  convert.Options
	once sync.Once
	pool *convert.Pool
	err  error
}

// NewOnDemand returns the on-demand worker of cfg's conversion settings,
// for commands that convert without the rest of the service (quire convert).
func NewOnDemand(cfg *config.Config, log *slog.Logger) *OnDemand {
	return &OnDemand{opt: cfg.ConvertOptions(log)}
}

func (l *OnDemand) Convert(ctx context.Context, in []byte, from string) ([]byte, error) {
	r, err := l.ConvertWith(ctx, in, from, convert.ToPDF, convert.JobOptions{})
	return r.PDF, err
}

func (l *OnDemand) ConvertWith(ctx context.Context, in []byte, from, to string, opts convert.JobOptions) (convert.Result, error) {
	l.once.Do(func() {
		l.opt.Workers, l.opt.QueueLength = 1, 1
		l.pool, l.err = convert.NewPool(l.opt)
	})
	if l.err != nil {
		return convert.Result{}, l.err
	}
	return l.pool.ConvertWith(ctx, in, from, to, opts)
}

// Close stops the worker, if one was started.
func (l *OnDemand) Close(ctx context.Context) error {
	if l.pool == nil {
		return nil
	}
	return l.pool.Close(ctx)
}
