package chromium

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/quire-dev/quire/internal/engine"
)

// The Chromium driver of engine.Supervisor: a worker is a browser
// (browser.go) that prints one page at a time in a tab (page.go).

// firstRestartWait is the wait after a failed start, doubled after each
// failure (engine.MaxRestartWait at most): shorter than LibreOffice's,
// as a browser starts faster.
const firstRestartWait = 500 * time.Millisecond

// startBrowser launches the browser of slot, in namespaces unless the
// kernel refuses them (then without, once and for all, with a warning),
// and starts making its first tabs.
func (p *Pool) startBrowser(_ context.Context, slot int) (engine.Worker[*job], error) {
	dir := filepath.Join(p.dir, fmt.Sprintf("browser-%d", slot))
	isolated := p.isolation.Load()
	b, err := launch(&p.opts, dir, isolated, isolated || p.refused.Load())
	if err != nil && isolated && engine.NamespaceRefused(err) {
		p.refused.Store(true)
		if p.isolation.Swap(false) {
			p.opts.Logger.Warn("chromium: the kernel refuses namespaces, which Chromium's own sandbox needs too; the browser runs with the host's network and files and without its sandbox, behind its request interception and proxy only", "err", err)
		}
		isolated = false
		b, err = launch(&p.opts, dir, false, true)
	}
	if err != nil {
		return nil, fmt.Errorf("browser start: %w", err)
	}
	b.confined, b.limits = isolated, p.opts.Page
	b.prepare()
	return b, nil
}

func (b *browserProc) Info() engine.WorkerInfo {
	return engine.WorkerInfo{PID: b.pid, Version: b.version, Log: []any{"confined", b.confined}}
}

// Run prints j in the tab it is due (tabFor) until ctx ends. A tab
// that cannot be had is the browser's failure, not the job's: the
// browser is killed, and the job retried on the next one.
func (b *browserProc) Run(ctx context.Context, j *job) (engine.Result, engine.Followup, error) {
	defer b.prepare() // the next jobs' tabs are made while the browser waits for them
	t0 := time.Now()
	var err error
	b.last, err = b.tabFor(j)
	b.logger.Debug("chromium: tab taken", "waited_ms", float64(time.Since(t0).Microseconds())/1000)
	if err != nil {
		b.kill()
		return engine.Result{}, nil, err
	}
	out, pages, err := renderPage(ctx, b.last, j.page, j.opts, b.limits, b.logger)
	if err == nil {
		b.release(b.last, false)
	}
	return engine.Result{Output: out, Pages: pages, Engine: time.Since(t0)}, nil, err
}

// Classify: a browser that no longer answers crashed (it may have died
// of something else: it died while idle, and the job came before the
// news). Otherwise the page failed: its tab is disposed of, and the error
// is the page's own (page.go), said as it is, or the browser's, whose
// words go to the log while the client gets quire's.
func (b *browserProc) Classify(err error) (bool, error) {
	if !b.healthy() {
		return true, err
	}
	if b.last != nil {
		b.release(b.last, true)
	}
	if errors.Is(err, engine.ErrUnprocessable) || errors.Is(err, context.Canceled) {
		return false, err
	}
	b.logger.Info("chromium: the browser could not print a page", "err", err)
	return false, fmt.Errorf("%w: Chromium could not print the page", engine.ErrUnprocessable)
}

// OverMemory is the error of a page whose print grew the browser's
// processes by peak, past limit.
func (b *browserProc) OverMemory(limit, peak int64) error {
	return fmt.Errorf("%w of %d MiB (the page had taken %d MiB when the browser was stopped)", engine.ErrMemoryLimit, limit>>20, peak>>20)
}

func (b *browserProc) RSS() int64 { return b.rss() }
func (b *browserProc) Kill()      { b.kill() }
func (b *browserProc) Stop()      { b.stop() }

// Ended: a browser that crashed says nothing of how.
func (b *browserProc) Ended() (string, []any) { return "no longer answering", nil }

// Lost is closed when chromedp loses the browser, even while idle.
func (b *browserProc) Lost() <-chan struct{} { return b.ctx.Done() }
