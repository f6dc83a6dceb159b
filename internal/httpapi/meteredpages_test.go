package httpapi_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestMeteredPagesAreThePDFs: the pages metered for a conversion are
// those its engines counted as they made the PDF (engine.Result.Pages),
// summed for a merge; they must be the pages of the PDF answered as
// pdf.PageCount reads them, the figure metered before the engines
// counted: a DOCX of three pages, an XLSX, a PPTX (LibreOffice's Writer,
// Calc and Impress), an HTML page (Chromium), two DOCX merged, a DOCX
// made PDF/A (conformance rewrites the PDF) and a template filled to PDF
// (annotate).
func TestMeteredPagesAreThePDFs(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConversion(), withChromium())
	e.Clock.Set(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	const email = "pages@example.com"
	key := e.key(email)
	docx := convtest.DOCX(3)
	page := []byte("<!DOCTYPE html><html><body>" + strings.Repeat("<p>A line of the page.</p>", 120) + "</body></html>")
	for _, c := range []struct {
		name, query string
		files       []upload
		least       int64 // pages the PDF has at least: the count is of something
	}{
		{"DOCX", "", []upload{{"three.docx", docx}}, 3},
		{"XLSX", "", []upload{{"table.xlsx", convtest.XLSX(120)}}, 3},
		{"PPTX", "", []upload{{"slides.pptx", convtest.PPTX(4)}}, 4},
		{"HTML", "", []upload{{"page.html", page}}, 2},
		{"merge", "merge=true", []upload{{"a.docx", docx}, {"b.docx", docx}}, 6},
		{"PDF/A", "pdfa=PDF/A-2b", []upload{{"three.docx", docx}}, 3},
	} {
		before := e.meteredPages(t, email, quire.OpConvert)
		r := e.convertFiles(key, c.query, c.files...)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", c.name, r.status, r.body)
		}
		want := pdf.PageCount(r.body)
		if got := e.meteredPages(t, email, quire.OpConvert) - before; got != want || want < c.least {
			t.Errorf("%s: %d pages metered, the PDF has %d (at least %d expected)", c.name, got, want, c.least)
		}
	}
	if n := e.Chromium.Status().Converted; n != 1 {
		t.Errorf("Chromium printed %d pages, want the HTML page", n)
	}
	templates, _ := filepath.Glob(filepath.Join(annotateCorpus, "sdts-basic.docx"))
	if len(templates) == 0 {
		t.Skipf("the shared corpus is not here (%s)", annotateCorpus)
	}
	template, err := os.ReadFile(templates[0])
	if err != nil {
		t.Fatal(err)
	}
	filledPDF := filled(t, e.annotate(key, "?to=pdf", map[string]any{"document": docField(template), "fields": []any{}}), "application/pdf")
	if got, want := e.meteredPages(t, email, quire.OpAnnotate), pdf.PageCount(filledPDF); got != want || want == 0 {
		t.Errorf("annotate: %d pages metered, the PDF has %d", got, want)
	}
}

// meteredPages is the pages metered so far for the key of email's
// operation op, as the usage report has them.
func (e *env) meteredPages(t *testing.T, email, op string) int64 {
	t.Helper()
	r := e.do("GET", "/v1/usage/api?groupBy=month&from=2026-11-01T00:00:00Z&to=2026-12-01T00:00:00Z", nil,
		map[string]string{"Authorization": "Bearer " + adminToken})
	var rep metering.Report
	if r.json(t, &rep); r.status != 200 {
		t.Fatalf("usage report: %d %s", r.status, r.body)
	}
	var pages int64
	for _, k := range rep.Keys {
		for _, p := range k.Periods {
			if k.Email == email {
				pages += p.Operations.Of(op).Pages
			}
		}
	}
	return pages
}
