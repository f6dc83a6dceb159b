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
// or fails the file named bad as a damaged document.
type office struct{ bad string }

func (office) Status() engine.Status              { return engine.Status{Workers: 2} }
func (office) RetryAfter() time.Duration          { return time.Second }
func (office) Check(engine.Request, []byte) error { return nil }

func (o office) ConvertRequest(_ context.Context, r engine.Request, in []byte) (engine.Result, error) {
	if r.Name == o.bad {
		return engine.Result{}, fmt.Errorf("%w: damaged", engine.ErrUnprocessable)
	}
	return engine.Result{Output: in, Engine: time.Millisecond}, nil
}

func request(merge bool, names ...string) Request {
	r := Request{Request: engine.Request{To: engine.ToPDF, Merge: merge}}
	for _, n := range names {
		r.Files = append(r.Files, File{Name: n, Data: []byte("PK\x03\x04 " + n)})
	}
	return r
}

// TestServiceRoutesAndCombines: several files are converted each, put in
// a ZIP, their engine times summed; the file that fails is named; with
// no engine, or a web page to print without Chromium, the answer is a
// 503; a request without files is invalid.
func TestServiceRoutesAndCombines(t *testing.T) {
	ctx := context.Background()
	res, err := New(office{}, nil).Convert(ctx, request(false, "a.docx", "b.docx"))
	if err != nil || res.ContentType != "application/zip" || len(res.Parts) != 2 || res.Engine != 2*time.Millisecond {
		t.Errorf("two files: %v, %q, %d parts, engine %v", err, res.ContentType, len(res.Parts), res.Engine)
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
