package annotate

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
)

// codeOf is the code of a *quire.Error, "" for any other error.
func codeOf(err error) string {
	var qe *quire.Error
	if errors.As(err, &qe) {
		return qe.Code
	}
	return ""
}

// TestServiceChecksAndFills: Check refuses what Annotate would refuse
// before any work, and leaves a template named by URL to the job;
// Annotate fills a DOCX, fetches a template by URL within the size limit,
// and refuses PDF output without a converter.
func TestServiceChecksAndFills(t *testing.T) {
	t.Parallel()
	tmpl := fixture(t, "sdts-basic.docx")
	const url = "https://templates.example/contract.docx"
	fetched := 0
	e := newTestEngine(t, func(_ context.Context, u string) ([]byte, error) {
		if u != url {
			return nil, errors.New("unexpected URL " + u)
		}
		fetched++
		return tmpl, nil
	})
	s := NewService(e, nil, int64(len(tmpl)), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if s.MaxDocumentBytes() != int64(len(tmpl)) {
		t.Errorf("MaxDocumentBytes: %d", s.MaxDocumentBytes())
	}
	fields := []Field{{ID: "-436595273", Type: TypeText, Value: "Filled by the service"}, {ID: "no-such-id", Type: TypeText, Value: "x"}}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		req  Request
		code string
	}{
		{"a valid request", Request{Document: Document{Bytes: tmpl}, Fields: fields}, ""},
		{"a template by URL, not downloaded yet", Request{Document: Document{URL: url}, Fields: fields}, ""},
		{"no template", Request{Fields: fields}, quire.CodeValidation},
		{"a field of no type", Request{Document: Document{Bytes: tmpl}, Fields: []Field{{ID: "1"}}}, quire.CodeValidation},
		{"a template that is no DOCX", Request{Document: Document{Bytes: []byte("%PDF-1.7")}, Fields: fields}, quire.CodeUnprocessable},
	} {
		if err := s.Check(ctx, c.req); codeOf(err) != c.code || (c.code == "") != (err == nil) {
			t.Errorf("Check %s: %v, want %q", c.name, err, c.code)
		}
	}
	if fetched != 0 {
		t.Errorf("Check downloaded the template %d times", fetched)
	}
	for _, doc := range []Document{{Bytes: tmpl}, {URL: url}} {
		res, err := s.Annotate(ctx, Request{Document: doc, Fields: fields})
		if err != nil || res.ContentType != ContentTypeDOCX || strings.Join(res.Unmatched, " ") != "no-such-id" {
			t.Fatalf("Annotate %+v: %v, %s, unmatched %v", doc, err, res.ContentType, res.Unmatched)
		}
		if !strings.Contains(string(entries(t, res.Document)[documentPart]), "Filled by the service") {
			t.Errorf("Annotate %+v: the text is not in the document", doc)
		}
	}
	if fetched != 1 {
		t.Errorf("the template was downloaded %d times, want once", fetched)
	}
	small := NewService(e, nil, int64(len(tmpl))-1, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := small.Annotate(ctx, Request{Document: Document{URL: url}, Fields: fields}); codeOf(err) != quire.CodePayloadTooLarge {
		t.Errorf("a downloaded template over the limit: %v", err)
	}
	if _, err := s.Annotate(ctx, Request{Document: Document{Bytes: tmpl}, Fields: fields, PDF: true}); codeOf(err) != quire.CodeUnavailable {
		t.Errorf("PDF output without a converter: %v", err)
	}
	if _, err := s.Annotate(ctx, Request{Document: Document{URL: "https://templates.example/other.docx"}, Fields: fields}); err == nil || !strings.Contains(err.Error(), "document.url") {
		t.Errorf("a failed download: %v, want it reported on document.url", err)
	}
}
