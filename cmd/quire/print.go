package main

import (
	"context"
	"time"

	"github.com/quire-dev/quire/internal/chromium"
	"github.com/quire-dev/quire/internal/convert"
)

// printed tells whether quire convert prints a document of format from
// with Chromium, as POST /v1/convert would: HTML and Markdown, unless
// opts choose LibreOffice (engine=libreoffice, or an option only it has),
// or Chromium is off (QUIRE_CHROMIUM_WORKERS < 0) and opts do not ask
// for it.
func printed(from string, opts convert.JobOptions, o chromium.Options) bool {
	if opts.EngineFor(from, convert.ToPDF) != convert.EngineChromium {
		return false
	}
	return o.Browsers >= 0 || opts.Engine != "" || opts.NeedsChromium()
}

// printDocument prints an HTML or Markdown document to PDF with one
// headless Chromium, started for it and stopped after.
func printDocument(ctx context.Context, data []byte, from string, opts convert.JobOptions, o chromium.Options) (convert.Result, error) {
	o.Browsers, o.QueueLength = 1, 1
	pool, err := chromium.NewPool(o)
	if err != nil {
		return convert.Result{}, err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		pool.Close(ctx)
	}()
	if err := pool.WaitReady(ctx); err != nil {
		return convert.Result{}, err
	}
	return pool.Convert(ctx, chromium.Page{Doc: data, From: from}, opts)
}
