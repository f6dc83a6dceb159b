package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
)

func TestJobOptionsValidate(t *testing.T) {
	no := false
	good := []struct {
		from, to string
		o        JobOptions
	}{
		{FromDOCX, ToPDF, JobOptions{}},
		{FromDOCX, ToPDF, JobOptions{PDFA: "PDF/A-2b", PDFUA: true, PageRanges: "1-3,5", ExportFormFields: &no, Quality: 80,
			ReduceImageResolution: true, MaxImageResolution: 150, Password: "secret", Export: map[string]bool{"ExportNotes": true, "ExportBookmarks": false}}},
		{FromMarkdown, ToPDF, JobOptions{Landscape: true, LosslessImageCompression: true}},
		{FromHTML, ToDOCX, JobOptions{Landscape: true}},
		{"", ToPDF, JobOptions{Landscape: true, Password: "x"}}, // from unknown yet: checked again by Convert
	}
	for _, c := range good {
		if err := c.o.Validate(c.from, c.to); err != nil {
			t.Errorf("%+v from %s to %s: %v", c.o, c.from, c.to, err)
		}
	}
	bad := []struct {
		from, to string
		o        JobOptions
		fields   []string
	}{
		{FromDOCX, ToPDF, JobOptions{PDFA: "PDF/A-2u"}, []string{ParamPDFA}},
		{FromDOCX, ToPDF, JobOptions{PageRanges: "1-3;5"}, []string{ParamPageRanges}},
		{FromDOCX, ToPDF, JobOptions{PageRanges: "0"}, []string{ParamPageRanges}},
		{FromDOCX, ToPDF, JobOptions{PageRanges: "5-3"}, []string{ParamPageRanges}},
		{FromDOCX, ToPDF, JobOptions{PageRanges: strings.Repeat("1,", MaxPageRangesLength) + "1"}, []string{ParamPageRanges}},
		{FromDOCX, ToPDF, JobOptions{Quality: 101}, []string{ParamQuality}},
		{FromDOCX, ToPDF, JobOptions{Quality: 50, LosslessImageCompression: true}, []string{ParamQuality}},
		{FromDOCX, ToPDF, JobOptions{ReduceImageResolution: true, MaxImageResolution: 100}, []string{ParamMaxImageResolution}},
		{FromDOCX, ToPDF, JobOptions{MaxImageResolution: 150}, []string{ParamMaxImageResolution}},
		{FromDOCX, ToPDF, JobOptions{Landscape: true}, []string{ParamLandscape}},
		{FromHTML, ToPDF, JobOptions{Password: "x"}, []string{ParamPassword}},
		{FromDOCX, ToPDF, JobOptions{Password: string(make([]byte, MaxPasswordLength+1))}, []string{ParamPassword}},
		{FromHTML, ToDOCX, JobOptions{PDFA: "PDF/A-1b"}, []string{"to"}},
		{FromDOCX, ToPDF, JobOptions{Export: map[string]bool{"ExportNotes": true, "Printing": true}}, []string{ParamExport + ".Printing"}},
		{FromDOCX, ToDOCX, JobOptions{Export: map[string]bool{"ExportNotes": true}}, []string{"to"}},
		{FromRTF, ToPDF, JobOptions{PDFA: "x", Quality: -1, Landscape: true}, []string{ParamLandscape, ParamPDFA, ParamQuality}},
	}
	for _, c := range bad {
		err := c.o.Validate(c.from, c.to)
		var e *quire.Error
		if !errors.As(err, &e) || e.Code != quire.CodeValidation {
			t.Errorf("%+v from %s to %s: got %v, want a validation error", c.o, c.from, c.to, err)
			continue
		}
		var fields []string
		for _, d := range e.Details {
			fields = append(fields, d.Field)
		}
		slices.Sort(fields)
		if !slices.Equal(fields, c.fields) {
			t.Errorf("%+v from %s to %s: details %+v, want fields %v", c.o, c.from, c.to, e.Details, c.fields)
		}
	}
}
