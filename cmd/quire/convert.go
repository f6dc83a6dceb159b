package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/convert"
)

// runConvert implements `quire convert IN -o OUT.pdf [--from FORMAT]`:
// one conversion with the engine of the service (a LibreOffice worker
// process), without a server.
func runConvert(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the PDF to `OUT.pdf` (required)")
	from := fs.String("from", "", "`FORMAT` of IN: "+strings.Join(convert.Formats, ", ")+" (default: from IN's extension)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: quire convert IN -o OUT.pdf [--from FORMAT]\n\n"+
			"Converts a document to PDF with LibreOffice, as POST /v1/convert does.\n\nflags:")
		fs.PrintDefaults()
	}
	cfg, in, err := config.Parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil || len(in) != 1 || *out == "" {
		fs.Usage()
		return 2
	}
	if *from == "" {
		*from = formatOf(in[0])
	}
	if err := convertFile(in[0], *out, *from, cfg.ConvertOptions(newLogger(stderr, "warn")), stderr); err != nil {
		fmt.Fprintf(stderr, "quire convert: %s: %v\n", in[0], err)
		return 1
	}
	return 0
}

// formatOf guesses the source format from a file name.
func formatOf(path string) string {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	switch ext {
	case "htm", "xhtml":
		return convert.FromHTML
	case "markdown":
		return convert.FromMarkdown
	}
	return ext
}

// convertFile converts the file in to the PDF out with a one-worker pool.
// Ctrl-C or SIGTERM stops the worker.
func convertFile(in, out, from string, opt convert.Options, stderr io.Writer) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	if err := convert.Check(data, from); err != nil {
		return err // before starting LibreOffice for nothing
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pool := &lazyPool{opt: opt}
	defer pool.Close()
	pdf, err := pool.Convert(ctx, data, from)
	if err != nil {
		return err
	}
	return os.WriteFile(out, pdf, 0o644)
}

// lazyPool is a one-worker conversion pool for commands run by hand,
// started on first use so that commands that never convert start no
// LibreOffice.
type lazyPool struct {
	opt  convert.Options
	once sync.Once
	pool *convert.Pool
	err  error
}

func (l *lazyPool) Convert(ctx context.Context, in []byte, from string) ([]byte, error) {
	r, err := l.ConvertWith(ctx, in, from, convert.ToPDF, convert.JobOptions{})
	return r.PDF, err
}

func (l *lazyPool) ConvertWith(ctx context.Context, in []byte, from, to string, opts convert.JobOptions) (convert.Result, error) {
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
func (l *lazyPool) Close() {
	if l.pool == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l.pool.Close(ctx)
}

// runConvertWorker implements the hidden `quire convert-worker` command:
// a conversion worker, started by the conversion pool of `quire serve` or
// `quire convert`, speaking its protocol on stdin and stdout (see package
// convert). It is not meant to be run by hand; its diagnostics go to the
// process's stderr.
func runConvertWorker(args []string, stdout, stderr io.Writer) int {
	if len(args) != 0 {
		fmt.Fprintln(stderr, "quire convert-worker takes no arguments; it is started by the conversion pool")
		return 2
	}
	return convert.RunWorker(os.Stdin, stdout)
}
