// Package conversion converts documents however the request arrived
// (POST /v1/convert and its jobs, the Gotenberg routes, `quire convert`):
// it tells each file's format, chooses its engine (LibreOffice for office
// documents, Chromium for web pages), converts several files at once,
// merges their PDFs or puts the outputs in a ZIP, and counts the pages
// of what it answers, for metering. The engines are passed in
// (internal/app); the adapters only decode a request into a Request and
// encode the Result.
package conversion

import (
	"cmp"
	"context"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/zipout"
)

// Office converts office documents with LibreOffice (*libreoffice.Pool).
type Office interface {
	Slots() int // the documents it converts at once
	RetryAfter() time.Duration
	Check(req engine.Request, in []byte) error
	ConvertRequest(ctx context.Context, req engine.Request, in []byte) (engine.Result, error)
}

// Browser prints web pages to PDF with Chromium (*chromium.Pool, as
// internal/app passes it).
type Browser interface {
	RetryAfter() time.Duration
	Check(page Page, opts engine.JobOptions) error
	Convert(ctx context.Context, page Page, opts engine.JobOptions) (engine.Result, error)
}

// Page is a web page to print: an HTML or Markdown document, and the
// files it may load by their names relative to it (images, style sheets).
type Page struct {
	Doc    []byte
	From   string // engine.FromHTML or engine.FromMarkdown
	Name   string // the page's file name: its title when it has none, for PDF/UA
	Assets []File
}

// Service converts documents with the engines it was given.
type Service struct {
	office  Office  // nil: conversion disabled
	browser Browser // nil: web pages go to LibreOffice
}

// New returns the service over its engines; either may be nil (off).
func New(office Office, browser Browser) *Service {
	return &Service{office: office, browser: browser}
}

// File is one document to convert.
type File struct {
	Name string // the client's file name, "" if it gave none
	Data []byte
}

// Request is one conversion: its files, with the options of POST
// /v1/convert (engine.Request, whose Name each file's is).
type Request struct {
	engine.Request
	Files []File
	// Start is when the request arrived, where the Total of several
	// files' conversion starts (zero: when Convert is called).
	Start time.Time
}

// Validate reports what is wrong with r as a whole, before any file is
// read: that it has no file. What the options allow depends on each
// file's format, which the engine tells while it opens the file, so the
// engine validates them with it (engine.Request.Validate), once per
// file.
func (r Request) Validate() error {
	if len(r.Files) == 0 {
		return quire.Invalid("The conversion request is not valid.", quire.Detail{Field: "file", Issue: "is required: the documents to convert"})
	}
	return nil
}

// Result is a conversion's answer.
type Result struct {
	// Output is the one output, the merged PDF, or a ZIP of the outputs.
	Output      []byte
	ContentType string // Output's media type
	// Parts are the outputs before they are put in a ZIP (ConvertEach),
	// each named as the file it was made from.
	Parts  []File
	Pages  int64         // pages of the PDFs made, for metering; 0 for DOCX
	Engine time.Duration // the engines' own time, summed over the files
	Queued time.Duration // time the files waited for an engine, summed
	// Total is the engine call's whole time for one file; for several,
	// from Request.Start to the merged PDF or the ZIP.
	Total time.Duration
}

// contentTypes are the media types of the output formats.
var contentTypes = map[string]string{
	engine.ToPDF:  "application/pdf",
	engine.ToDOCX: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"zip":         "application/zip",
}

// Convert converts r's files as r asks: Output is the one output, the
// merged PDF (r.Merge), or a ZIP of the outputs, each named after its
// file.
func (s *Service) Convert(ctx context.Context, r Request) (Result, error) {
	r.Start = cmp.Or(r.Start, time.Now())
	res, err := s.ConvertEach(ctx, r)
	if err != nil || len(res.Parts) == 1 {
		return res, err
	}
	names, outs := make([]string, len(res.Parts)), make([][]byte, len(res.Parts))
	for i, p := range res.Parts {
		names[i], outs[i] = p.Name, p.Data
	}
	res.Output, err = zipout.Archive(zipout.Names(names, r.To), outs)
	res.ContentType, res.Total = contentTypes["zip"], time.Since(r.Start)
	return res, err
}

// ConvertEach is Convert without the ZIP: Parts holds each file's
// output, or the one merged PDF (r.Merge), for callers that package them
// their own way (the Gotenberg routes' post-processing).
func (s *Service) ConvertEach(ctx context.Context, r Request) (Result, error) {
	t0 := cmp.Or(r.Start, time.Now())
	if err := r.Validate(); err != nil {
		return Result{}, err
	}
	from, printed, err := s.route(r)
	if err != nil {
		return Result{}, err
	}
	var results []engine.Result
	if printed {
		results, err = s.print(ctx, r, from)
	} else {
		results, err = s.convertAll(ctx, r)
	}
	if err != nil {
		return Result{}, err
	}
	res := summed(r.To, r.Files, results)
	if r.Merge && len(res.Parts) > 1 {
		out, err := merge(ctx, r, res.Parts)
		if err != nil {
			return Result{}, err
		}
		res.Parts = []File{{Name: r.Files[0].Name, Data: out}}
		res.Output = out
	}
	if len(results) > 1 { // the files' conversions overlap: the whole request's time, merge included
		res.Total = time.Since(t0)
	}
	return res, nil
}

// Check runs the checks of Convert that spend no engine time, on each
// file as its engine checks it: what a request answered later (a job) is
// refused with before it is queued. With conversion disabled, it passes:
// the job waits as the synchronous request's 503 says.
func (s *Service) Check(r Request) error {
	if err := r.Validate(); err != nil {
		return err
	}
	from, printed, err := s.route(r)
	switch {
	case err != nil:
		return err
	case printed:
		if err := s.browser.Check(page(from, r.Files), r.Options); err != nil {
			return fileError(err, r.Files, 0)
		}
		return nil
	case s.office == nil:
		return nil
	}
	for i, f := range r.Files {
		if err := s.office.Check(r.document(f), f.Data); err != nil {
			return fileError(err, r.Files, i)
		}
	}
	return nil
}

// Print prints a web page with Chromium, counting its pages: for the
// routes that make the page themselves (Gotenberg's, which take a URL
// or an index.html).
func (s *Service) Print(ctx context.Context, p Page, opts engine.JobOptions) (Result, error) {
	res, err := s.browse(ctx, p, opts)
	if err != nil {
		return Result{}, err
	}
	return summed(engine.ToPDF, []File{{Name: p.Name}}, []engine.Result{res}), nil
}

// Screenshot captures the image of a web page that opts.Shot asks for,
// with Chromium, counted as one page (Gotenberg's screenshot routes).
func (s *Service) Screenshot(ctx context.Context, p Page, opts engine.JobOptions) (Result, error) {
	res, err := s.browse(ctx, p, opts)
	if err != nil {
		return Result{}, err
	}
	return Result{Output: res.Output, ContentType: engine.ShotFormats[opts.Shot.Format], Parts: []File{{Name: p.Name, Data: res.Output}},
		Pages: res.Pages, Engine: res.Engine, Queued: res.Queued, Total: res.Total}, nil
}

// browse runs a page the caller made through Chromium: its print, or its
// image.
func (s *Service) browse(ctx context.Context, p Page, opts engine.JobOptions) (engine.Result, error) {
	if s.browser == nil {
		return engine.Result{}, quire.Errorf(quire.CodeEngineBusy, "The Chromium engine is disabled on this server.")
	}
	res, err := s.browser.Convert(ctx, p, opts)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return engine.Result{}, ctxErr // the client left
		}
		return engine.Result{}, engine.ToAPIError(err, s.browser.RetryAfter())
	}
	return res, nil
}

// summed is the result of the conversions of files to format to: their
// outputs as Parts (the first as Output), their pages (as each engine
// counted them) and times summed.
func summed(to string, files []File, results []engine.Result) Result {
	res := Result{Parts: make([]File, len(results)), Total: results[0].Total}
	for i, c := range results {
		res.Parts[i] = File{Name: files[i].Name, Data: c.Output}
		res.Engine, res.Queued, res.Pages = res.Engine+c.Engine, res.Queued+c.Queued, res.Pages+c.Pages
	}
	res.Output, res.ContentType = res.Parts[0].Data, contentTypes[to]
	return res
}

// document is the engine's request for the file f of r.
func (r Request) document(f File) engine.Request {
	c := r.Request
	c.Name = f.Name
	return c
}
