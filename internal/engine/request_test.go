package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
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
