package conversion

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/safeinput"
)

// ParamMerge is the query parameter that merges several files' PDFs.
const ParamMerge = "merge"

// route tells whether r goes to Chromium, and the format of its first
// file: a web page (HTML or Markdown, safeinput.PageFormat) made into PDF,
// with options that choose Chromium (engineFor). The
// other files are then the page's. Without Chromium on this server, the
// default engine is LibreOffice, and asking for Chromium is a 503.
// Anything else (a query that did not decode, another output, another
// format) goes to LibreOffice, whose validation reports what Chromium
// cannot do.
func (s *Service) route(r Request) (string, bool, error) {
	first := r.Files[0]
	from := cmp.Or(r.From, safeinput.PageFormat(first.Name, first.Data))
	if len(r.Malformed) > 0 || r.To != engine.ToPDF || (from != engine.FromHTML && from != engine.FromMarkdown) ||
		engineFor(r.Options, from, r.To) != engine.EngineChromium {
		return from, false, nil
	}
	switch {
	case s.browser == nil && r.Options.Engine == "" && len(r.Options.ChromiumParams()) == 0:
		return from, false, nil
	case s.browser == nil:
		return "", false, &quire.Error{Code: quire.CodeEngineBusy, Message: "The Chromium engine is disabled on this server (QUIRE_CHROMIUM_WORKERS < 0).", RetryAfter: time.Minute}
	case r.Merge:
		return "", false, quire.Invalid("The conversion request is not valid.", quire.Detail{Field: ParamMerge,
			Issue: "merges the PDFs of several documents; an html or md page printed by Chromium takes the other files as its own (images, style sheets)"})
	}
	return from, true, nil
}

// print prints the page of r's first file (of format from) with Chromium,
// the other files being its assets.
func (s *Service) print(ctx context.Context, r Request, from string) ([]engine.Result, error) {
	res, err := s.browser.Convert(ctx, page(from, r.Files), r.Options)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr // the client left
		}
		return nil, fileError(engine.ToAPIError(err, s.browser.RetryAfter()), r.Files[:1], 0)
	}
	return []engine.Result{res}, nil
}

// page is the page of files[0], of format from, with the other files as
// its assets.
func page(from string, files []File) Page {
	return Page{Doc: files[0].Data, From: from, Name: files[0].Name, Assets: files[1:]}
}

// convertAll converts r's files with LibreOffice, each of the format r
// names or else of the one its name and content tell, as many at once as
// the engine has workers. The first failure cancels the others and is
// answered, naming its file.
func (s *Service) convertAll(parent context.Context, r Request) ([]engine.Result, error) {
	if s.office == nil {
		return nil, quire.Errorf(quire.CodeEngineBusy, "Conversion is disabled on this server.")
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	results := make([]engine.Result, len(r.Files))
	errs := make([]error, len(r.Files))
	// Slots, not Status: Status reads each worker's memory from /proc,
	// on every request.
	slots := make(chan struct{}, max(1, s.office.Slots()))
	var wg sync.WaitGroup
	for i, f := range r.Files {
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
				results[i], errs[i] = s.office.ConvertRequest(ctx, r.document(f), f.Data)
			}
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	for i, err := range errs { // the first file that failed, not one cancelled because of it
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, fileError(engine.ToAPIError(err, s.office.RetryAfter()), r.Files, i)
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
func fileError(err error, files []File, i int) error {
	err = engine.ToAPIError(err, 0)
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

// engineFor returns the engine that converts a document of format from
// to format to with o: the one o names, or else Chromium for HTML and
// Markdown to PDF unless o sets an option only LibreOffice has (PDF/A-1b
// among them: Chromium paints with transparency and soft masks, which
// PDF/A-1 forbids), and LibreOffice for the rest.
func engineFor(o engine.JobOptions, from, to string) string {
	switch {
	case o.Engine != "":
		return strings.ToLower(o.Engine)
	case to == engine.ToPDF && engine.IsWebPage(from) && len(o.LibreOfficeParams()) == 0:
		return engine.EngineChromium
	}
	return engine.EngineLibreOffice
}
