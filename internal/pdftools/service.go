// Package pdftools owns the PDF operations of POST /v1/pdf/{operation}:
// merge, split, rotate, flatten, metadata, encrypt, watermark, attach
// (and Factur-X invoices) and render. Every input is first read by
// quire's own PDF model (internal/pdf) within the limits of signing, and
// fully checked there (pdf.Document.CheckAll) before pdfcpu rewrites it.
// The operations that can be incremental updates (metadata, attach, and
// watermark of a signed PDF, as an annotation) are written by quire's own
// model, so that every earlier signature stays valid; the others, which
// rewrite the file, refuse a signed PDF unless forced.
package pdftools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/certpage"
	"github.com/quire-dev/quire/internal/memory"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdfsign"
)

// Options are the limits of the operations.
type Options struct {
	Limits          pdf.Limits     // each input's reader bounds (config's PDFLimits); MaxInputSize: MaxBytes
	MaxBytes        int64          // largest input file
	MaxFiles        int            // most files in one request
	RenderMaxPixels int64          // most pixels of a rendered page
	Timeout         time.Duration  // longest operation; 0: a minute
	Fonts           *certpage.Lazy // the text watermark's fonts, the certificate page's; nil: its defaults
	Worker          string         // the PDF worker's executable (it calls RunWorkerIfAsked); "": this program
	Logger          *slog.Logger
}

// Service runs the operations.
type Service struct {
	opt     Options
	metrics *metrics
	workers atomic.Int64 // worker processes running
}

// New returns the service; its metrics go to reg (nil: none).
func New(opt Options, reg prometheus.Registerer) *Service {
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	opt.Limits.MaxInputSize = opt.MaxBytes
	if opt.Timeout <= 0 {
		opt.Timeout = time.Minute
	}
	if opt.Fonts == nil {
		opt.Fonts = certpage.NewLazy(certpage.Options{})
	}
	return &Service{opt: opt, metrics: newMetrics(reg)}
}

// MaxBytes is the largest input file.
func (s *Service) MaxBytes() int64 { return s.opt.MaxBytes }

// MaxFiles is the most files in one request.
func (s *Service) MaxFiles() int { return s.opt.MaxFiles }

// Result is an operation's answer: one file, or the parts of a split.
type Result struct {
	Data        []byte
	ContentType string
	Parts       []Part // split: the PDFs, in order (Data is nil)
	Documents   int    // input documents processed
	Pages       int    // pages of the PDFs answered
}

// Part is one PDF of a split, named by its pages ("1-3").
type Part struct {
	Pages string
	Data  []byte
}

// Content types of the results.
const (
	TypePDF  = "application/pdf"
	TypeZIP  = "application/zip"
	TypePNG  = "image/png"
	TypeJSON = "application/json"
)

// Check runs the checks of Do that spend no time on the operation: the
// request, and each file read within the limits (its objects are read
// when the job runs). A job's submission runs it, so that a request Do
// would refuse is refused before it is queued, as it would be.
func (s *Service) Check(ctx context.Context, req Request) error {
	if err := req.Validate(s.opt.MaxFiles); err != nil {
		return err
	}
	if req.Op == OpWatermark && req.Text != "" {
		if _, err := s.shapedText(req.Text); err != nil {
			return err
		}
	}
	for _, f := range req.pdfs() {
		if _, err := pdf.Open(ctx, f.Data, s.opt.Limits); err != nil {
			return s.documentError(f, err)
		}
	}
	return nil
}

// Do validates req and runs it within the timeout.
func (s *Service) Do(ctx context.Context, req Request) (Result, error) {
	if err := req.Validate(s.opt.MaxFiles); err != nil {
		return Result{}, err
	}
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
	defer cancel()
	res, err := s.operate(ctx, req)
	if err != nil && ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = quire.Errorf(quire.CodeUnprocessable, "The PDF %s took longer than %s.", req.Op, s.opt.Timeout)
	}
	s.metrics.observe(req.Op, time.Since(t0), err)
	return res, err
}

// operate runs the operation. Its loops over pages check ctx, and
// pdfcpu, which takes no context, runs in a worker process killed when
// ctx ends: a timeout, a client gone or a cancelled job stops the work.
func (s *Service) operate(ctx context.Context, req Request) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = quire.Errorf(quire.CodeUnprocessable, "The PDF could not be processed (%s).", req.Op)
			s.opt.Logger.Warn("pdf operation panicked", "op", req.Op, "panic", fmt.Sprint(r))
		}
	}()
	if req.Op == OpMerge {
		return s.merge(ctx, req)
	}
	in, err := s.open(ctx, req.Files[0], req.Op, req.Force)
	if err != nil {
		return Result{}, err
	}
	switch req.Op {
	case OpSplit:
		return s.split(ctx, in, req)
	case OpDelete:
		return s.deletePages(ctx, in, req)
	case OpRotate:
		return s.rewrite(ctx, taskRotate, in, req)
	case OpFlatten:
		return s.flatten(ctx, in, req)
	case OpMetadata:
		return s.metadata(in, req)
	case OpEncrypt:
		return s.encrypt(ctx, in, req)
	case OpWatermark:
		return s.watermark(ctx, in, req)
	case OpAttach:
		return s.attach(in, req)
	case OpBookmarks:
		return s.bookmarks(ctx, in, req)
	case OpSetBookmarks:
		return s.setBookmarks(ctx, in, req)
	case OpAttachments:
		return s.attachments(ctx, in)
	case OpDetach:
		return s.detach(ctx, in, req)
	case OpForm:
		return s.form(ctx, in)
	case OpSetForm:
		return s.setForm(ctx, in, req)
	default:
		return s.render(ctx, in, req)
	}
}

// input is an uploaded PDF read and checked by quire's model.
type input struct {
	name   string
	doc    *pdf.Document
	pages  int
	signed bool
}

// incremental are the operations written as an incremental update,
// which keeps a signed PDF's signatures valid; render, bookmarks,
// attachments and form only read.
var incremental = map[string]bool{OpMetadata: true, OpAttach: true, OpWatermark: true, OpRender: true, OpBookmarks: true, OpAttachments: true,
	OpForm: true, OpSetForm: true}

// open reads f within the limits, charges its shape to the request's
// memory reservation, reads every object (CheckAll), and refuses a signed
// PDF to an operation that would rewrite it, unless forced.
func (s *Service) open(ctx context.Context, f File, op string, force bool) (*input, error) {
	doc, err := pdf.Open(ctx, f.Data, s.opt.Limits)
	if err != nil {
		return nil, s.documentError(f, err)
	}
	// The body is charged already (Route.Budgeted: PerBodyByte per byte
	// of all the files); each file's objects add what the library will
	// hold for them.
	if err := memory.Add(ctx, int64(doc.ObjectCount())*perObject); err != nil {
		return nil, err
	}
	if err := doc.CheckAll(ctx); err != nil {
		return nil, s.documentError(f, err)
	}
	pages, err := doc.Pages()
	if err != nil {
		return nil, s.documentError(f, err)
	}
	signed, err := pdfsign.Signed(doc)
	if err != nil {
		return nil, s.documentError(f, fmt.Errorf("%w: %v", pdf.ErrUnreadable, err))
	}
	if signed && !force && !incremental[op] {
		return nil, quire.Errorf(quire.CodeUnprocessable,
			"%s is signed: %s rewrites the whole file, which would break its signatures. Send force=true to do it anyway (the result carries no valid signature).",
			display(f), op)
	}
	return &input{name: f.Name, doc: doc, pages: len(pages), signed: signed}, nil
}

// perObject is the memory charged per object of an input: what pdfcpu
// holds for a parsed object, at most (measured on the corpus: 300-700
// bytes for ordinary objects).
const perObject = 1 << 10

// documentError translates the reader's refusals into the contract's
// errors, naming the file. The cause of an unreadable PDF is logged, not
// answered: it names the parser's internals.
func (s *Service) documentError(f File, err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, pdf.ErrEncrypted):
		return quire.Errorf(quire.CodeUnprocessable, "%s is encrypted; send it without a password.", display(f))
	case errors.Is(err, pdf.ErrDamagedSigned):
		return quire.Errorf(quire.CodeUnprocessable, "%s is damaged and signed: repairing it would break its signature.", display(f))
	case errors.Is(err, pdf.ErrTooLarge):
		return quire.Errorf(quire.CodePayloadTooLarge, "%s is larger than the limit (%d bytes).", display(f), s.opt.MaxBytes)
	case errors.Is(err, pdf.ErrUnreadable):
		s.opt.Logger.Info("unreadable PDF", "file", f.Name, "err", err)
		return quire.Errorf(quire.CodeUnprocessable, "%s cannot be read as a PDF within the limits, even after an attempt to repair its structure.", display(f))
	}
	var qe *quire.Error
	if errors.As(err, &qe) {
		return err
	}
	return fmt.Errorf("pdftools: %s: %w", f.Name, err)
}

// libraryError is a failure of pdfcpu on a file that quire's reader
// accepted: the file is one pdfcpu cannot handle, a 422 naming it.
func (s *Service) libraryError(name, op string, err error) error {
	s.opt.Logger.Info("pdfcpu refused a PDF", "op", op, "file", name, "err", err)
	return quire.Errorf(quire.CodeUnprocessable, "%s could not be processed (%s): its structure is one the PDF library refuses.", display(File{Name: name}), op)
}

// display names a file in a message.
func display(f File) string {
	if f.Name == "" {
		return "The PDF"
	}
	return fmt.Sprintf("The PDF %q", baseName(f.Name))
}
