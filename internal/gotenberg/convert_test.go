package gotenberg_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

func libreOffice(t *testing.T, e *env) {
	one := e.post(t, "/forms/libreoffice/convert", e.bearer(), file("report.docx", convtest.DOCX(2))).pdf(t)
	if got := info(t, one, "Pages"); got != "2" {
		t.Errorf("pages %s, want 2", got)
	}
	if got := text(t, one); !strings.Contains(got, "Page 2") {
		t.Errorf("text %q", got)
	}
	a := e.post(t, "/forms/libreoffice/convert", e.bearer(), file("b.docx", convtest.DOCX(1)), file("a.docx", convtest.DOCX(2)))
	if entries := a.unzip(t); len(entries) != 2 || entries["a.pdf"] == nil || entries["b.pdf"] == nil {
		t.Errorf("ZIP entries %v, want a.pdf and b.pdf", keys(entries))
	}
	merged := e.post(t, "/forms/libreoffice/convert", e.bearer(), file("b.docx", convtest.DOCX(1)), file("a.docx", convtest.DOCX(2)),
		field("merge", "true")).pdf(t)
	if got := info(t, merged, "Pages"); got != "3" {
		t.Errorf("merged pages %s, want 3", got)
	}
	ranged := e.post(t, "/forms/libreoffice/convert", e.bearer(), file("report.docx", convtest.DOCX(3)), field("nativePageRanges", "2-3")).pdf(t)
	if got := info(t, ranged, "Pages"); got != "2" {
		t.Errorf("nativePageRanges=2-3: pages %s, want 2", got)
	}
	archival := e.post(t, "/forms/libreoffice/convert", e.bearer(), file("report.docx", convtest.DOCX(1)), field("pdfa", "PDF/A-2b"),
		field("pdfua", "true")).pdf(t)
	if !bytes.Contains(archival, []byte("pdfaid:part")) || !bytes.Contains(archival, []byte("pdfuaid:part")) {
		t.Error("pdfa=PDF/A-2b pdfua=true: no PDF/A and PDF/UA identification in the XMP")
	}
}

func postProcessing(t *testing.T, e *env) {
	parts := e.post(t, "/forms/libreoffice/convert", e.bearer(), file("report.docx", convtest.DOCX(2)),
		field("splitMode", "intervals"), field("splitSpan", "1")).unzip(t)
	if len(parts) != 2 || !strings.Contains(text(t, parts["report_2.pdf"]), "Page 2") {
		t.Errorf("split parts %v", keys(parts))
	}
	pdf := e.post(t, "/forms/chromium/convert/html", e.bearer(), file("index.html", []byte(page)),
		field("metadata", `{"Title":"Invoice 42"}`), field("flatten", "true"), field("ownerPassword", "owner")).pdf(t)
	if got := info(t, pdf, "Title"); got != "Invoice 42" {
		t.Errorf("metadata: title %q", got)
	}
	if got := info(t, pdf, "Encrypted"); !strings.HasPrefix(got, "yes") {
		t.Errorf("ownerPassword: encrypted %q", got)
	}
	e.post(t, "/forms/libreoffice/convert", e.bearer(), file("report.docx", convtest.DOCX(1)), field("splitUnify", "true")).
		plainError(t, 400, "form field 'splitSpan' is required with 'splitMode' and 'splitUnify'")
}

func libreOfficeRefusals(t *testing.T, e *env) {
	doc := file("report.docx", convtest.DOCX(1))
	e.post(t, "/forms/libreoffice/convert", e.bearer(), doc, field("nativePageRanges", "two")).
		plainError(t, 400, "form field 'nativePageRanges'")
	e.post(t, "/forms/libreoffice/convert", e.bearer(), doc, field("exportNotes", "true")).
		plainError(t, 400, "form field 'exportNotes' is not supported by quire")
	e.post(t, "/forms/libreoffice/convert", e.bearer(), doc, field("pdfa", "PDF/A-4")).
		plainError(t, 400, "form field 'pdfa'")
	e.post(t, "/forms/libreoffice/convert", e.bearer(), doc, field("merge", "maybe")).
		plainError(t, 400, "form field 'merge' is invalid (got 'maybe', want true or false)")
	e.post(t, "/forms/libreoffice/convert", e.bearer(), file("junk.docx", []byte("not a document"))).plainError(t, 400, "")
	e.post(t, "/forms/libreoffice/convert", e.bearer()).plainError(t, 400, "files")
}

const page = `<!DOCTYPE html><html><head><link rel="stylesheet" href="style.css"></head><body><h1>Invoice 42</h1></body></html>`

func chromiumHTML(t *testing.T, e *env) {
	letter := e.post(t, "/forms/chromium/convert/html", e.bearer(), file("index.html", []byte(page)),
		file("style.css", []byte("h1 { color: #c00 }"))).pdf(t)
	if got := text(t, letter); !strings.Contains(got, "Invoice 42") {
		t.Errorf("text %q", got)
	}
	if got := info(t, letter, "Page size"); !strings.HasPrefix(got, "612 x 792") {
		t.Errorf("default page size %q, want Gotenberg's Letter", got)
	}
	a4 := e.post(t, "/forms/chromium/convert/html", e.bearer(), file("index.html", []byte(page)),
		field("paperWidth", "210mm"), field("paperHeight", "297mm"), field("marginTop", "1"), field("landscape", "true")).pdf(t)
	if got := info(t, a4, "Page size"); !strings.HasPrefix(got, "841.9") || !strings.Contains(got, "(A4)") {
		t.Errorf("A4 landscape page size %q", got)
	}
}

func chromiumMarkdown(t *testing.T, e *env) {
	pdf := e.post(t, "/forms/chromium/convert/markdown", e.bearer(),
		file("index.html", []byte(`<html><body>{{ toHTML "notes.md" }}</body></html>`)),
		file("notes.md", []byte("# Release notes\n\n- first *item*\n"))).pdf(t)
	if got := text(t, pdf); !strings.Contains(got, "Release notes") || !strings.Contains(got, "first item") {
		t.Errorf("text %q", got)
	}
	e.post(t, "/forms/chromium/convert/markdown", e.bearer(),
		file("index.html", []byte(`{{ toHTML "missing.md" }}`))).plainError(t, 400, "missing.md")
}

func chromiumURL(t *testing.T, e *env) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<html><body><p>Fetched page</p></body></html>`))
	}))
	defer site.Close()
	pdf := e.post(t, "/forms/chromium/convert/url", e.bearer(), field("url", site.URL)).pdf(t)
	if got := text(t, pdf); !strings.Contains(got, "Fetched page") {
		t.Errorf("text %q", got)
	}
	e.post(t, "/forms/chromium/convert/url", e.bearer()).plainError(t, 400, "form field 'url' is required")
	e.post(t, "/forms/chromium/convert/url", e.bearer(), field("url", site.URL), file("index.html", []byte(page))).
		plainError(t, 400, "form field 'files' is not taken by the url route")
}

func chromiumRefusals(t *testing.T, e *env) {
	index := file("index.html", []byte(page))
	e.post(t, "/forms/chromium/convert/html", e.bearer(), index, field("waitDelay", "2s")).
		plainError(t, 400, "form field 'waitDelay' is not supported by quire")
	e.post(t, "/forms/chromium/convert/html", e.bearer(), index, file("header.html", []byte("<p>head</p>"))).
		plainError(t, 400, "header.html")
	e.post(t, "/forms/chromium/convert/html", e.bearer(), file("page.html", []byte(page))).
		plainError(t, 400, "must hold 'index.html'")
	e.post(t, "/forms/chromium/convert/html", e.bearer(), index, field("paperWidth", "wide")).
		plainError(t, 400, "form field 'paperWidth' is invalid")
	// Gotenberg's defaults are what quire does.
	e.post(t, "/forms/chromium/convert/html", e.bearer(), index, field("emulatedMediaType", "print"),
		field("failOnHttpStatusCodes", "[499, 599]"), field("skipNetworkIdleEvent", "true")).pdf(t)
}
