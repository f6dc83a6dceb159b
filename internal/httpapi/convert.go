package httpapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/chromium"
	"github.com/quire-dev/quire/internal/convert"
	"github.com/quire-dev/quire/internal/pdfmerge"
)

// multipartOverhead is the room a multipart body needs beyond its file.
const multipartOverhead = 1 << 20

func (s *Server) convertRoutes() []Route {
	return []Route{{Method: "POST", Path: "/v1/convert", Handler: s.convertDocument, MaxBody: s.opt.ConvertMaxBytes + multipartOverhead, Async: true, Check: s.checkConvert, Metered: quire.OpConvert, Budgeted: true, Auth: KeyRequired}}
}

// contentTypes are the media types of the output formats.
var contentTypes = map[string]string{
	convert.ToPDF:  "application/pdf",
	convert.ToDOCX: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}

// convertDocument answers the PDF (or DOCX, to=docx) of the multipart field
// "file", converted with the options of the query (convert.JobOptions);
// with several files, one merged PDF (merge=true) or a ZIP of the
// converted files. Each file's format is from, or else told by its name
// and content (convert.Detect). The Server-Timing header tells the
// engine's own time from the queue's.
func (s *Server) convertDocument(w http.ResponseWriter, r *http.Request) {
	t0 := time.Now()
	req, files, from, printed, err := s.convertInput(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var results []convert.Result
	if printed {
		results, err = req.print(r.Context(), s.deps.Chromium, from, files)
	} else {
		results, err = s.convertFiles(r.Context(), req, files)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out, contentType, err := req.answer(r.Context(), files, results)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var engine, queued time.Duration
	for _, res := range results {
		engine, queued = engine+res.Engine, queued+res.Queued
	}
	total := results[0].Total
	if len(results) > 1 {
		total = time.Since(t0)
	}
	u := meter(r.Context())
	u.Documents, u.EngineSeconds = int64(len(files)), engine.Seconds()
	if req.To == convert.ToPDF {
		for _, res := range results {
			u.Pages += pdfPages(res.Output)
		}
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Server-Timing", fmt.Sprintf("engine;dur=%.1f, queue;dur=%.1f, total;dur=%.1f",
		ms(engine.Seconds()), ms(queued.Seconds()), ms(total.Seconds())))
	w.Write(out)
}

// convertInput reads a conversion's query and files, and tells whether
// its first file, of format from, is printed by Chromium (printable).
func (s *Server) convertInput(r *http.Request) (req convertRequest, files []Upload, from string, printed bool, err error) {
	req = convertRequestOf(r)
	files, err = FileParts(r, "file", cmp.Or(s.opt.ConvertMaxFiles, defaultConvertMaxFiles))
	if err != nil {
		return req, nil, "", false, err
	}
	from, printed, err = req.printable(files[0], s.deps.Chromium != nil)
	return req, files, from, printed, err
}

// checkConvert is the convert route's Check: each file as its engine
// checks it before converting it. With conversion disabled, the job is
// accepted, and waits as the request's 503 says.
func (s *Server) checkConvert(r *http.Request) error {
	req, files, from, printed, err := s.convertInput(r)
	switch {
	case err != nil:
		return err
	case printed:
		if err := s.deps.Chromium.Check(req.page(from, files), req.Options); err != nil {
			return fileError(err, files[:1], 0)
		}
		return nil
	case s.deps.Convert == nil:
		return nil
	}
	for i, f := range files {
		c := req.Request
		c.Name = f.Name
		if err := s.deps.Convert.Check(c, f.Data); err != nil {
			return fileError(err, files, i)
		}
	}
	return nil
}

// convertFiles converts each file with LibreOffice.
func (s *Server) convertFiles(ctx context.Context, req convertRequest, files []Upload) ([]convert.Result, error) {
	pool := s.deps.Convert
	if pool == nil {
		return nil, quire.Errorf(quire.CodeEngineBusy, "Conversion is disabled on this server.")
	}
	return req.convertAll(ctx, pool, files)
}

// printable tells whether the request goes to Chromium: its first file
// is HTML or Markdown, made into PDF, and the options choose Chromium
// (convert.JobOptions.EngineFor). The other files are then the page's.
// Without Chromium on this server (haveChromium false), the default
// engine is LibreOffice, and asking for Chromium is a 503. Anything else
// (a query that did not decode, another output, another format) goes to
// LibreOffice, whose validation reports what Chromium cannot do.
func (req convertRequest) printable(first Upload, haveChromium bool) (string, bool, error) {
	from := cmp.Or(req.From, convert.PageFormat(first.Name, first.Data))
	if len(req.Malformed) > 0 || req.To != convert.ToPDF || (from != convert.FromHTML && from != convert.FromMarkdown) ||
		req.Options.EngineFor(from, req.To) != convert.EngineChromium {
		return from, false, nil
	}
	switch {
	case !haveChromium && req.Options.Engine == "" && !req.Options.NeedsChromium():
		return from, false, nil
	case !haveChromium:
		return "", false, &quire.Error{Code: quire.CodeEngineBusy, Message: "The Chromium engine is disabled on this server (QUIRE_CHROMIUM_WORKERS < 0).", RetryAfter: time.Minute}
	case req.Merge:
		return "", false, quire.Invalid("The conversion request is not valid.", quire.Detail{Field: paramMerge,
			Issue: "merges the PDFs of several documents; an html or md page printed by Chromium takes the other files as its own (images, style sheets)"})
	}
	return from, true, nil
}

// print prints the page of files[0] (of format from) with Chromium, the
// other files being its assets.
func (req convertRequest) print(ctx context.Context, pool Printer, from string, files []Upload) ([]convert.Result, error) {
	res, err := pool.Convert(ctx, req.page(from, files), req.Options)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr // the client left
		}
		return nil, fileError(convert.ToAPIError(err, pool.RetryAfter()), files[:1], 0)
	}
	return []convert.Result{res}, nil
}

// page is the page of files[0], of format from, with the other files as
// its assets.
func (req convertRequest) page(from string, files []Upload) chromium.Page {
	page := chromium.Page{Doc: files[0].Data, From: from, Name: files[0].Name}
	for _, f := range files[1:] {
		page.Assets = append(page.Assets, chromium.Asset{Name: f.Name, Data: f.Data})
	}
	return page
}

// defaultConvertMaxFiles is Options.ConvertMaxFiles's default.
const defaultConvertMaxFiles = 10

// convertRequest is the query of POST /v1/convert, decoded: the
// conversion service validates it with each file's format
// (convert.Request.Validate).
type convertRequest struct{ convert.Request }

// paramMerge is the query parameter that merges several files' PDFs.
const paramMerge = "merge"

// convertRequestOf decodes the query of r; what does not decode is in
// its Malformed, for the service to report with the rest.
func convertRequestOf(r *http.Request) convertRequest {
	q := newQueryDecoder(r.URL.Query(), convertParams)
	req := convert.Request{From: strings.ToLower(q.string("from")), To: strings.ToLower(cmp.Or(q.string("to"), convert.ToPDF)),
		Merge: q.bool(paramMerge), Options: q.convertOptions()}
	req.Malformed = q.details
	return convertRequest{req}
}

// answer returns the response body and its media type: the one output,
// the merged PDF, or a ZIP of the outputs.
func (req convertRequest) answer(ctx context.Context, files []Upload, results []convert.Result) ([]byte, string, error) {
	outs := make([][]byte, len(results))
	for i, res := range results {
		outs[i] = res.Output
	}
	switch {
	case len(outs) == 1: // one document, or one page printed with its files
		return outs[0], contentTypes[req.To], nil
	case req.Merge:
		pdf, err := req.merge(ctx, files[0].Name, outs)
		return pdf, contentTypes[convert.ToPDF], err
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	z, err := zipOf(entryNames(names, req.To), outs)
	return z, "application/zip", err
}

// merge joins the PDFs of one request, and makes the result conform as
// each part did (convert.Conform): the merge writes metadata of its own
// (and, unless told, cross-reference streams, which PDF/A-1 forbids).
func (req convertRequest) merge(ctx context.Context, name string, pdfs [][]byte) ([]byte, error) {
	c := req.Options.ConformanceOptions(name)
	pdf, err := pdfmerge.Merge(pdfs, c.PDFA == 1)
	if err != nil {
		return nil, err
	}
	res, err := convert.Conform(ctx, convert.Result{Output: pdf}, nil, name, req.Options)
	return res.Output, convert.ToAPIError(err, 0)
}

// convertAll converts files as req asks, each of the format req names or
// else of the one its name and content tell, as many at once as the pool
// has workers. The first failure cancels the others and is answered,
// naming its file.
func (req convertRequest) convertAll(parent context.Context, pool Converter, files []Upload) ([]convert.Result, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	results := make([]convert.Result, len(files))
	errs := make([]error, len(files))
	slots := make(chan struct{}, max(1, pool.Status().Workers))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
				return
			}
			if ctx.Err() == nil {
				r := req.Request
				r.Name = f.Name
				results[i], errs[i] = pool.ConvertRequest(ctx, r, f.Data)
			}
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	for i, err := range errs { // the first file that failed, not one cancelled because of it
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, fileError(convert.ToAPIError(err, pool.RetryAfter()), files, i)
		}
	}
	if err := parent.Err(); err != nil {
		return nil, err // the client left
	}
	return results, nil
}

// fileError is the contract's error for err about the file files[i]: a
// detail names the file ("file", or "file[i]" with several files, by
// place and name), and so does the message with several files. A
// VALIDATION_ERROR is the request's, not the file's, and is returned as
// it is.
func fileError(err error, files []Upload, i int) error {
	err = convert.ToAPIError(err, 0)
	var qe *quire.Error
	if !errors.As(err, &qe) || qe.Code == quire.CodeEngineBusy || qe.Code == quire.CodeValidation {
		return err
	}
	field, issue, message := "file", qe.Message, qe.Message
	if len(files) > 1 {
		which := fmt.Sprintf("file %d (%q)", i+1, files[i].Name)
		field, issue, message = fmt.Sprintf("file[%d]", i), which+": "+qe.Message, "In "+which+": "+qe.Message
	}
	return &quire.Error{Code: qe.Code, Message: message, Details: append([]quire.Detail{{Field: field, Issue: issue}}, qe.Details...)}
}

func ms(seconds float64) float64 { return seconds * 1000 }

// convertStatus is the health check line of the conversion engine.
func convertStatus(pool Engine) string {
	if pool == nil {
		return "disabled"
	}
	return engineStatus(pool.Status(), "workers")
}

// engineStatus is the health check line of an engine whose processes
// (unit: "workers", "browsers") are in st.
func engineStatus(st convert.Status, unit string) string {
	line := fmt.Sprintf("%d/%d %s ready, %d busy, %d queued", st.Ready, st.Workers, unit, st.Busy, st.Queued)
	if st.Ready == 0 && st.LastError != "" {
		line += "; last error: " + st.LastError
	}
	return line
}

// convertReady reports whether the engine can take a job now: disabled
// (nil) counts as ready, since nothing waits for it.
func convertReady(pool Engine) bool {
	return pool == nil || engineReady(pool.Status())
}

// engineReady reports whether an engine in st can take a job now.
func engineReady(st convert.Status) bool { return st.Ready+st.Busy > 0 }
