package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/quire-dev/quire/internal/app"
	"github.com/quire-dev/quire/internal/pdftools"
)

// runPDF implements `quire pdf OPERATION [options] -o OUT FILE...`: one
// PDF operation of POST /v1/pdf/{operation}, without a server, within
// the same limits (the QUIRE_PDF_* settings). The options are the
// query's, by the same names; set.KEY=VALUE is --set KEY=VALUE.
func runPDF(args []string, stdout, stderr io.Writer) int {
	usage := "usage: quire pdf OPERATION [options] [-o OUT] FILE...\n\noperations: " + strings.Join(pdftools.Operations, ", ") +
		"\n(quire pdf OPERATION -h lists the options)"
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprintln(stdout, usage)
		return 0
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	op := args[0]
	fs := flag.NewFlagSet("pdf "+op, flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the result to `OUT` (split: OUT_PAGES.pdf per part; metadata without --set: JSON to standard output when absent)")
	req := pdfRequestFlags(fs, op)
	cfg, files, err := parseArgs(fs, fmt.Sprintf("usage: quire pdf %s [options] [-o OUT] FILE...\n\nRuns the PDF operation %s, as POST /v1/pdf/%s does, with its options.", op, op, op), args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil || len(files) == 0 {
		fs.Usage()
		return 2
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "quire pdf: %v\n", err)
			return 1
		}
		req.Files = append(req.Files, pdftools.File{Name: filepath.Base(path), Data: b})
	}
	res, err := app.NewPDFTools(cfg, newLogger(stderr, "warn"), nil, nil).Do(context.Background(), *req)
	if err != nil {
		fmt.Fprintf(stderr, "quire pdf %s: %s\n", op, describe(err))
		return 1
	}
	if err := writePDFResult(res, *out, stdout); err != nil {
		fmt.Fprintf(stderr, "quire pdf %s: %v\n", op, err)
		return 1
	}
	return 0
}

// pdfRequestFlags defines the options of the operation as flags of fs.
func pdfRequestFlags(fs *flag.FlagSet, op string) *pdftools.Request {
	r := &pdftools.Request{Op: op}
	fs.BoolVar(&r.Force, "force", false, "rewrite a signed PDF anyway (its signatures break)")
	fs.StringVar(&r.Ranges, "ranges", "", "split: `RANGES` such as 1-3,4-")
	fs.IntVar(&r.Every, "every", 0, "split: a part every `N` pages")
	fs.IntVar(&r.Angle, "angle", 0, "rotate: 90, 180, 270 (clockwise); watermark: degrees")
	fs.StringVar(&r.Pages, "pages", "", "rotate, watermark: `PAGES` such as 1-3,5 (default: all)")
	fs.Func("set", "metadata: set a property, `KEY=VALUE` ("+strings.Join(pdftools.MetadataKeys, ", ")+"); repeatable", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("want KEY=VALUE")
		}
		if r.Set == nil {
			r.Set = map[string]string{}
		}
		r.Set[k] = v
		return nil
	})
	fs.StringVar(&r.UserPassword, "userPassword", "", "encrypt: the password to open")
	fs.StringVar(&r.OwnerPassword, "ownerPassword", "", "encrypt: the password to change permissions")
	fs.Func("allow", "encrypt: permissions granted, `LIST` of "+strings.Join(pdftools.Permissions, ","), func(s string) error {
		r.Allow = strings.Split(s, ",")
		return nil
	})
	fs.StringVar(&r.Text, "text", "", "watermark: the text (else the second FILE is an image)")
	fs.Float64Var(&r.Opacity, "opacity", 0, "watermark: opacity, more than 0, at most 1 (default 0.5)")
	fs.BoolVar(&r.Stamp, "stamp", false, "watermark: over the content")
	fs.BoolVar(&r.FacturX, "facturx", false, "attach: make a Factur-X invoice of the file named "+pdftools.FacturXName)
	fs.IntVar(&r.Page, "page", pdftools.DefaultPage, "render: the `PAGE`")
	fs.IntVar(&r.DPI, "dpi", pdftools.DefaultDPI, "render: resolution")
	return r
}

// writePDFResult writes the result to out: each part of a split to
// OUT_PAGES.pdf, JSON without out to stdout.
func writePDFResult(res pdftools.Result, out string, stdout io.Writer) error {
	switch {
	case res.Parts != nil:
		if out == "" {
			return errors.New("split needs -o OUT (the parts go to OUT_PAGES.pdf)")
		}
		base := strings.TrimSuffix(out, filepath.Ext(out))
		for _, p := range res.Parts {
			if err := os.WriteFile(base+"_"+p.Pages+".pdf", p.Data, 0o644); err != nil {
				return err
			}
		}
		return nil
	case out == "" && res.ContentType == pdftools.TypeJSON:
		_, err := fmt.Fprintln(stdout, string(res.Data))
		return err
	case out == "":
		return errors.New("-o OUT is required")
	}
	return os.WriteFile(out, res.Data, 0o644)
}
