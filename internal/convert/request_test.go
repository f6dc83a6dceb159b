package convert

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/convert/convtest"
)

// TestRequestValidate: a request's every fault in one VALIDATION_ERROR,
// the adapter's decoding problems among them, the checks of options that
// depend on the format made with the format the document turned out to be.
func TestRequestValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		r    Request
		want map[string]string // field: part of its issue; nil: valid
	}{
		{"valid", Request{From: FromDOCX, To: ToPDF, Options: JobOptions{PDFA: "PDF/A-2b"}}, nil},
		{"format not told yet", Request{To: ToPDF, Options: JobOptions{Landscape: true}}, nil},
		{"unknown from, bad option", Request{From: "pages", To: ToPDF, Options: JobOptions{PDFA: "PDF/A-9"}},
			map[string]string{"from": "must be one of", "pdfa": "must be one of"}},
		{"merge to docx", Request{From: FromMarkdown, To: ToDOCX, Merge: true}, map[string]string{"merge": "merges PDFs only"}},
		{"unknown to", Request{From: FromMarkdown, To: "odt"}, map[string]string{"to": "must be pdf or docx"}},
		{"xlsx to docx", Request{From: FromXLSX, To: ToDOCX}, map[string]string{"to": "not from xlsx"}},
		{"landscape on a docx", Request{From: FromDOCX, To: ToPDF, Options: JobOptions{Landscape: true}}, map[string]string{"landscape": "html and md only"}},
		{"malformed beside invalid", Request{From: FromDOCX, To: ToPDF, Options: JobOptions{PDFA: "PDF/A-2u"},
			Malformed: []quire.Detail{{Field: "quality", Issue: "must be a whole number"}}},
			map[string]string{"pdfa": "must be one of", "quality": "whole number"}},
	} {
		err := c.r.Validate()
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var e *quire.Error
		if !errors.As(err, &e) || e.Code != quire.CodeValidation || e.Message != "The conversion request is not valid." || len(e.Details) != len(c.want) {
			t.Errorf("%s: %#v, want a VALIDATION_ERROR on %v", c.name, err, c.want)
			continue
		}
		for _, d := range e.Details {
			if !strings.Contains(d.Issue, c.want[d.Field]) || c.want[d.Field] == "" {
				t.Errorf("%s: %s: %q, want %q", c.name, d.Field, d.Issue, c.want[d.Field])
			}
		}
	}
}

// TestPrepareDetectsOnce: without a format, prepare tells it from the
// package that the checks then read (detect hands it on), validates the
// request with it, and prepares the same input as with the format named.
func TestPrepareDetectsOnce(t *testing.T) {
	o, err := Options{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	p := &Pool{opts: o}
	for from, doc := range map[string][]byte{FromXLSX: convtest.XLSX(2), FromPPTX: convtest.PPTX(1), FromODS: convtest.ODS(1)} {
		f, z, err := detect("no-extension", doc)
		if f != from || z == nil || err != nil {
			t.Fatalf("detect %s = %q, %v, %v; want the format and its opened package", from, f, z, err)
		}
		named, _, err := p.prepare(doc, &Request{From: from, To: ToPDF})
		if err != nil {
			t.Fatal(err)
		}
		r := &Request{Name: "no-extension", To: ToPDF}
		told, gotFrom, err := p.prepare(doc, r)
		if err != nil || gotFrom != from || r.From != from || !bytes.Equal(told, named) {
			t.Errorf("%s without from: %q, %v (request's %q); the same input as with from: %v", from, gotFrom, err, r.From, bytes.Equal(told, named))
		}
	}
	r := &Request{Name: "x.docx", To: ToPDF, Options: JobOptions{Landscape: true}}
	if _, _, err := p.prepare(convtest.PPTX(1), r); err == nil || !strings.Contains(err.Error(), "not valid") || r.From != FromPPTX {
		t.Errorf("landscape on a detected pptx: %v (from %q), want the request refused", err, r.From)
	}
	if _, _, err := p.prepare([]byte("plain words"), &Request{Name: "notes.txt", To: ToPDF}); !errors.Is(err, ErrInvalidFormat) {
		t.Errorf("a text that tells nothing: %v, want ErrInvalidFormat", err)
	}
}
