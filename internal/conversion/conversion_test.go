package conversion

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
)

// office is a LibreOffice pool that answers each file with its own bytes,
// of two pages, or fails the file named bad as a damaged document.
type office struct{ bad string }

func (office) Slots() int                         { return 2 }
func (office) RetryAfter() time.Duration          { return time.Second }
func (office) Check(engine.Request, []byte) error { return nil }

func (o office) ConvertRequest(_ context.Context, r engine.Request, in []byte) (engine.Result, error) {
	if r.Name == o.bad {
		return engine.Result{}, fmt.Errorf("%w: damaged", engine.ErrUnprocessable)
	}
	return engine.Result{Output: in, Pages: 2, Engine: time.Millisecond}, nil
}

// browser is a Chromium pool that prints each page to its own bytes, one
// page, and counts the pages it printed.
type browser struct{ printed *int }

func (browser) RetryAfter() time.Duration                     { return time.Second }
func (browser) Check(page Page, opts engine.JobOptions) error { return nil }

func (b browser) Convert(_ context.Context, page Page, _ engine.JobOptions) (engine.Result, error) {
	*b.printed++
	return engine.Result{Output: page.Doc, Pages: 1}, nil
}

func request(merge bool, names ...string) Request {
	r := Request{Request: engine.Request{To: engine.ToPDF, Merge: merge}}
	for _, n := range names {
		r.Files = append(r.Files, File{Name: n, Data: []byte("PK\x03\x04 " + n)})
	}
	return r
}

// TestServiceRoutesAndCombines: several files are converted each, put in
// a ZIP, their engine times and pages (as the engine counted them) summed; the file that fails is named; with
// no engine, or a web page to print without Chromium, the answer is a
// 503; a request without files is invalid.
func TestServiceRoutesAndCombines(t *testing.T) {
	ctx := context.Background()
	res, err := New(office{}, nil).Convert(ctx, request(false, "a.docx", "b.docx"))
	if err != nil || res.ContentType != "application/zip" || len(res.Parts) != 2 || res.Engine != 2*time.Millisecond || res.Pages != 4 {
		t.Errorf("two files: %v, %q, %d parts, engine %v, %d pages", err, res.ContentType, len(res.Parts), res.Engine, res.Pages)
	}
	var qe *quire.Error
	_, err = New(office{bad: "b.docx"}, nil).Convert(ctx, request(false, "a.docx", "b.docx"))
	if !errors.As(err, &qe) || qe.Code != quire.CodeUnprocessable || qe.Details[0].Field != "file[1]" {
		t.Errorf("a damaged second file: %v", err)
	}
	_, err = New(nil, nil).Convert(ctx, request(false, "a.docx"))
	if !errors.As(err, &qe) || qe.Code != quire.CodeEngineBusy {
		t.Errorf("no engine: %v", err)
	}
	page := Request{Request: engine.Request{To: engine.ToPDF, Options: engine.JobOptions{Engine: engine.EngineChromium}},
		Files: []File{{Name: "a.html", Data: []byte("<p>a</p>")}}}
	if err := New(office{}, nil).Check(page); !errors.As(err, &qe) || qe.Code != quire.CodeEngineBusy || qe.RetryAfter == 0 {
		t.Errorf("a page for Chromium without Chromium: %v", err)
	}
	if _, err := New(office{}, nil).Convert(ctx, Request{}); !errors.As(err, &qe) || qe.Code != quire.CodeValidation {
		t.Errorf("no file: %v", err)
	}
}

// TestWebPagesForLibreOffice: a web page goes to Chromium unless its
// request names LibreOffice as its engine (Gotenberg's LibreOffice route
// does), and then to LibreOffice although Chromium is there.
func TestWebPagesForLibreOffice(t *testing.T) {
	ctx := context.Background()
	printed := 0
	s := New(office{}, browser{&printed})
	page := Request{Request: engine.Request{To: engine.ToPDF}, Files: []File{{Name: "a.html", Data: []byte("<p>a</p>")}, {Name: "b.md", Data: []byte("# b")}}}
	if _, err := s.Convert(ctx, page); err != nil || printed != 1 {
		t.Errorf("a page: %v, %d printed; want Chromium's print", err, printed)
	}
	page.Options.Engine = engine.EngineLibreOffice
	res, err := s.Convert(ctx, page)
	if err != nil || printed != 1 || len(res.Parts) != 2 {
		t.Errorf("a page for LibreOffice: %v, %d printed, %d outputs; want each file converted by LibreOffice", err, printed, len(res.Parts))
	}
}
