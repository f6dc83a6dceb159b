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
	"syscall"
	"time"

	"github.com/quire-dev/quire/internal/app"
	"github.com/quire-dev/quire/internal/conversion"
	"github.com/quire-dev/quire/internal/engine"
)

// runConvert implements `quire convert IN -o OUT.pdf [--from FORMAT]
// [options]`: one conversion with the engine the service would choose (a
// LibreOffice worker process, or for HTML and Markdown a headless
// Chromium), without a server. The options are those of POST
// /v1/convert, by the same names.
func runConvert(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the PDF to `OUT.pdf` (required)")
	from := fs.String("from", "", "`FORMAT` of IN: "+strings.Join(engine.Formats, ", ")+" (default: told by IN's content and name)")
	opts, setOptions := jobOptionFlags(fs)
	cfg, in, err := parseArgs(fs, "usage: quire convert IN -o OUT.pdf [--from FORMAT] [options]\n\n"+
		"Converts a document to PDF as POST /v1/convert does, with its options: HTML and Markdown with Chromium\n"+
		"(--engine libreoffice: with LibreOffice, as other formats), other formats with LibreOffice.", args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil || len(in) != 1 || *out == "" {
		fs.Usage()
		return 2
	}
	if err := setOptions(); err != nil {
		fmt.Fprintf(stderr, "quire convert: %v\n", err)
		return 2
	}
	if err := convertFile(in[0], *out, *from, *opts, app.NewOnDemand(cfg, newLogger(stderr, "warn")), stderr); err != nil {
		fmt.Fprintf(stderr, "quire convert: %s: %s\n", in[0], describe(err))
		return 1
	}
	return 0
}

// jobOptionFlags defines the conversion options as flags of fs, named as
// the query parameters of POST /v1/convert. The function it returns, run
// after parsing, completes the options (a password read from its file,
// exportFormFields only when given) and validates them.
func jobOptionFlags(fs *flag.FlagSet) (*engine.JobOptions, func() error) {
	o := new(engine.JobOptions)
	fs.StringVar(&o.PDFA, engine.ParamPDFA, "", "make an archival PDF: "+strings.Join(engine.PDFAVersions, ", "))
	fs.BoolVar(&o.PDFUA, engine.ParamPDFUA, false, "make a tagged, accessible PDF (PDF/UA)")
	fs.BoolVar(&o.DecorativeImages, engine.ParamDecorativeImages, false, "with pdfua: mark images without alternative text as decoration instead of refusing the document")
	fs.StringVar(&o.PageRanges, engine.ParamPageRanges, "", "export these `PAGES` only, e.g. 1-3,5")
	fs.BoolVar(&o.Landscape, engine.ParamLandscape, false, "landscape pages (html and md only)")
	formFields := fs.Bool(engine.ParamExportFormFields, true, "export form fields as PDF form fields")
	fs.BoolVar(&o.LosslessImageCompression, engine.ParamLosslessImageCompression, false, "compress images losslessly")
	fs.IntVar(&o.Quality, engine.ParamQuality, 0, "JPEG `QUALITY` of images, 1-100 (default 90)")
	fs.BoolVar(&o.ReduceImageResolution, engine.ParamReduceImageResolution, false, "reduce images to maxImageResolution")
	fs.IntVar(&o.MaxImageResolution, engine.ParamMaxImageResolution, 0, "`DPI` images are reduced to: 75, 150, 300, 600 or 1200 (default 300)")
	fs.StringVar(&o.Engine, engine.ParamEngine, "", "`ENGINE` of html and md: "+strings.Join(engine.Engines, " or ")+
		" (default chromium, unless an option only LibreOffice has is set)")
	fs.StringVar(&o.Paper, engine.ParamPaper, "", "`PAPER` size (Chromium): A4, Letter, ..., or WxH with a unit, e.g. 210x297mm")
	fs.StringVar(&o.Margin, engine.ParamMargin, "", "page `MARGIN` (Chromium): one length with a unit, or four (top right bottom left)")
	fs.BoolVar(&o.PrintBackground, engine.ParamPrintBackground, false, "print background colours and images (Chromium)")
	fs.Float64Var(&o.Scale, engine.ParamScale, 0, "`SCALE` of the page's rendering, 0.1 to 2 (Chromium; default 1)")
	fs.BoolVar(&o.JavaScript, engine.ParamJavaScript, false, "run the page's scripts, still offline (Chromium)")
	passwordFile := fs.String("password-file", "", "open an encrypted IN with the password in `FILE` (its first line)")
	return o, func() error {
		fs.Visit(func(f *flag.Flag) {
			if f.Name == engine.ParamExportFormFields {
				o.ExportFormFields = formFields
			}
		})
		if *passwordFile != "" {
			b, err := os.ReadFile(*passwordFile)
			if err != nil {
				return err
			}
			o.Password, _, _ = strings.Cut(strings.TrimRight(string(b), "\r\n"), "\n")
		}
		return nil
	}
}

// convertFile converts the file in to the PDF out, with opts, as POST
// /v1/convert would (conversion.Service), over one-worker engines
// started for it. Ctrl-C or SIGTERM stops the worker.
func convertFile(in, out, from string, opts engine.JobOptions, engines *app.OnDemand, stderr io.Writer) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		engines.Close(ctx)
	}()
	req := conversion.Request{Request: engine.Request{From: from, To: engine.ToPDF, Options: opts},
		Files: []conversion.File{{Name: filepath.Base(in), Data: data}}}
	res, err := engines.Conversion().Convert(ctx, req)
	if err != nil {
		return err
	}
	return os.WriteFile(out, res.Output, 0o644)
}

// runConvertWorker implements the hidden `quire convert-worker` command:
// a conversion worker, started by the conversion pool of `quire serve` or
// `quire convert`, speaking its protocol on stdin and stdout (see package
// libreoffice). It is not meant to be run by hand; its diagnostics go to the
// process's stderr.
func runConvertWorker(args []string, stdout, stderr io.Writer) int {
	if len(args) != 0 {
		fmt.Fprintln(stderr, "quire convert-worker takes no arguments; it is started by the conversion pool")
		return 2
	}
	return app.RunWorker(os.Stdin, stdout)
}
