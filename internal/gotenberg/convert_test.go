package gotenberg_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/libreoffice/convtest"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
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

// libreOfficeExportOptions: the fields that set LibreOffice's PDF export
// properties change the PDF as LibreOffice's own dialog does.
func libreOfficeExportOptions(t *testing.T, e *env) {
	convert := func(name string, doc []byte, fields ...part) []byte {
		return e.post(t, "/forms/libreoffice/convert", e.bearer(), append([]part{file(name, doc)}, fields...)...).pdf(t)
	}
	headed := convtest.DOCXBody(`<w:p><w:pPr><w:outlineLvl w:val="0"/></w:pPr><w:r><w:t>Chapter one</w:t></w:r></w:p>`+
		`<w:p><w:r><w:t>Body text.</w:t></w:r></w:p>`, "")
	if got := outlineTitles(t, e, convert("book.docx", headed)); len(got) != 1 || got[0] != "Chapter one" {
		t.Errorf("a heading's bookmark: %q, want [Chapter one]", got)
	}
	if got := outlineTitles(t, e, convert("book.docx", headed, field("exportBookmarks", "false"))); len(got) != 0 {
		t.Errorf("exportBookmarks=false: bookmarks %q, want none", got)
	}

	body, rels, parts := convtest.Commented(`<w:p><w:r><w:t>Body text.</w:t></w:r></w:p>`, "")
	commented := convtest.DOCXWith(body, rels, parts)
	if n := annotations(t, convert("remarks.docx", commented), "/Text"); n != 0 {
		t.Errorf("a commented DOCX: %d comment annotations, want none (LibreOffice's default)", n)
	}
	if n := annotations(t, convert("remarks.docx", commented, field("exportNotes", "true")), "/Text"); n != 1 {
		t.Errorf("exportNotes=true: %d comment annotations, want the document's one", n)
	}

	sheet := convtest.XLSX(300)
	if got := info(t, convert("table.xlsx", sheet), "Pages"); got == "1" {
		t.Fatalf("a 300-row sheet printed on %s page: the test needs more than one", got)
	}
	if got := info(t, convert("table.xlsx", sheet, field("singlePageSheets", "true")), "Pages"); got != "1" {
		t.Errorf("singlePageSheets=true: %s pages, want 1", got)
	}
}

// outlineTitles are the titles of pdf's top-level bookmarks, as quire's
// 9.x bookmarks route reads them.
func outlineTitles(t *testing.T, e *env, pdf []byte) []string {
	t.Helper()
	a := e.post(t, "/forms/pdf/bookmarks", e.bearer(), file("a.pdf", pdf))
	var got map[string][]struct{ Title string }
	if err := json.Unmarshal(a.body, &got); a.status != http.StatusOK || err != nil {
		t.Fatalf("/forms/pdf/bookmarks: %d %q", a.status, a.body)
	}
	var titles []string
	for _, b := range got["a.pdf"] {
		titles = append(titles, b.Title)
	}
	return titles
}

// annotations counts the annotations of pdf's pages whose subtype is
// subtype, as qpdf's JSON lists them.
func annotations(t *testing.T, pdf []byte, subtype string) int {
	t.Helper()
	pdftest.RequireTool(t, "qpdf", "qpdf")
	out, err := exec.Command("qpdf", "--json", "--json-key=qpdf", pdftest.WriteTemp(t, pdf)).Output()
	if err != nil {
		t.Fatalf("qpdf --json: %v", err)
	}
	var doc struct{ Qpdf []json.RawMessage } // the header, then the objects
	var objects map[string]struct{ Value any }
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Qpdf) != 2 {
		t.Fatalf("qpdf --json: %v (%d sections)", err, len(doc.Qpdf))
	}
	if err := json.Unmarshal(doc.Qpdf[1], &objects); err != nil {
		t.Fatalf("qpdf --json's objects: %v", err)
	}
	n := 0
	for _, o := range objects {
		if d, ok := o.Value.(map[string]any); ok && d["/Type"] == "/Annot" && d["/Subtype"] == subtype {
			n++
		}
	}
	return n
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
	// 9.x's stages, after the conversion: two documents merged, then the
	// second page kept and turned.
	pdf = e.post(t, "/forms/libreoffice/convert", e.bearer(), file("1.docx", convtest.DOCX(1)), file("2.docx", convtest.DOCX(2)),
		field("stages", `[{"op":"merge"},{"op":"select","pages":"3"},{"op":"rotate","angle":90}]`)).pdf(t)
	if got := info(t, pdf, "Pages"); got != "1" {
		t.Errorf("stages merge, select 3, rotate: %s pages, want 1", got)
	}
	if got := text(t, pdf); !strings.Contains(got, "Page 2") {
		t.Errorf("stages merge, select 3: the page reads %q, want the second document's page 2", got)
	}
}

func pipeRunsTheStagesInOrder(t *testing.T, e *env) {
	pdfs := []part{file("1.pdf", pdftest.OnePage("alpha")), file("2.pdf", pdftest.OnePage("beta"))}
	pdf := e.post(t, "/forms/pdf/pipe", e.bearer(), append(pdfs, field("stages",
		`[{"op":"merge"},{"op":"select","pages":"2,1"},{"op":"encrypt","ownerPassword":"owner"}]`))...).pdf(t)
	if got := text(t, pdf); strings.Index(got, "beta") > strings.Index(got, "alpha") || !strings.Contains(got, "alpha") {
		t.Errorf("merge then select 2,1: %q, want beta before alpha", got)
	}
	if got := info(t, pdf, "Encrypted"); !strings.HasPrefix(got, "yes") {
		t.Errorf("encrypt stage: encrypted %q", got)
	}
	parts := e.post(t, "/forms/pdf/pipe", e.bearer(), append(pdfs, field("stages", `[{"op":"flatten"}]`))...).unzip(t)
	if len(parts) != 2 || !strings.Contains(text(t, parts["2.pdf"]), "beta") {
		t.Errorf("a stage on each of two PDFs: ZIP entries %v, want 1.pdf and 2.pdf", keys(parts))
	}
	for stages, want := range map[string]string{
		`[{"op":"optimize"}]`:                         "form field 'stages' stage 1 ('optimize') is not supported by quire",
		`[{"op":"rotate","angle":90,"x":1}]`:          "stage 1 ('rotate') has a field quire does not take: 'x'",
		`[{"op":"merge"},{"op":"rotate","angle":45}]`: "form field 'angle' must be 90, 180 or 270",
		`{"op":"merge"}`:                              "form field 'stages' is invalid",
	} {
		e.post(t, "/forms/pdf/pipe", e.bearer(), append(pdfs, field("stages", stages))...).plainError(t, 400, want)
	}
	e.post(t, "/forms/pdf/pipe", e.bearer(), pdfs...).plainError(t, 400, "form field 'stages' is required")
}

func libreOfficeRefusals(t *testing.T, e *env) {
	doc := file("report.docx", convtest.DOCX(1))
	e.post(t, "/forms/libreoffice/convert", e.bearer(), doc, field("nativePageRanges", "two")).
		plainError(t, 400, "form field 'nativePageRanges'")
	e.post(t, "/forms/libreoffice/convert", e.bearer(), doc, field("updateIndexes", "false")).
		plainError(t, 400, "form field 'updateIndexes' is not supported by quire")
	e.post(t, "/forms/libreoffice/convert", e.bearer(), doc, field("exportNotes", "often")).
		plainError(t, 400, "form field 'exportNotes' is invalid (got 'often', want true or false)")
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
	e.post(t, "/forms/chromium/convert/html", e.bearer(), index, field("omitBackground", "true")).
		plainError(t, 400, "form field 'omitBackground' requires printBackground set to true")
	outlined := e.post(t, "/forms/chromium/convert/html", e.bearer(), file("index.html", []byte(`<h1>Chapter</h1><p>Text</p>`)),
		field("generateDocumentOutline", "true")).pdf(t)
	if !strings.Contains(uncompressed(t, outlined), "/Outlines") {
		t.Error("generateDocumentOutline=true: the PDF has no outline")
	}
	outlineAndTags(t, e)
	// Chromium paints no default background in a PDF: a page without
	// one of its own is transparent, as omitBackground asks.
	plain := e.post(t, "/forms/chromium/convert/html", e.bearer(), index, field("omitBackground", "true"), field("printBackground", "true")).pdf(t)
	white := e.post(t, "/forms/chromium/convert/html", e.bearer(), file("index.html", []byte(`<body style="background: white"><p>White</p></body>`)),
		field("omitBackground", "true"), field("printBackground", "true")).pdf(t)
	if fill := "1 1 1 rg"; strings.Contains(uncompressed(t, plain), fill) || !strings.Contains(uncompressed(t, white), fill) {
		t.Errorf("omitBackground: a page without a background of its own is painted white, or one with a white background is not")
	}
	e.post(t, "/forms/chromium/convert/html", e.bearer(), index, field("extraHttpHeaders", `{"X-A":"b"}`)).
		plainError(t, 400, "form field 'extraHttpHeaders' is not supported by quire: they apply to the url route's download")
	e.post(t, "/forms/chromium/convert/html", e.bearer(), file("page.html", []byte(page))).
		plainError(t, 400, "must hold 'index.html'")
	e.post(t, "/forms/chromium/convert/html", e.bearer(), index, field("paperWidth", "wide")).
		plainError(t, 400, "form field 'paperWidth' is invalid")
	// Gotenberg's defaults are what quire does.
	e.post(t, "/forms/chromium/convert/html", e.bearer(), index, field("emulatedMediaType", "print"),
		field("failOnHttpStatusCodes", "[499, 599]"), field("skipNetworkIdleEvent", "true")).pdf(t)
	screen := file("index.html", []byte(`<html><head><style>@media print { .screen { display: none } }</style></head><body><p class="screen">Screenonly</p></body></html>`))
	if got := text(t, e.post(t, "/forms/chromium/convert/html", e.bearer(), screen, field("emulatedMediaType", "screen")).pdf(t)); !strings.Contains(got, "Screenonly") {
		t.Errorf("emulatedMediaType=screen: %q, want the text CSS keeps for screens", got)
	}
	e.post(t, "/forms/chromium/convert/html", e.bearer(), index, field("emulatedMediaType", "tv")).
		plainError(t, 400, "form field 'emulatedMediaType' must be print or screen")
}

func archivesAreUnpackedAsFiles(t *testing.T, e *env) {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for name, data := range map[string][]byte{"docs/2.pdf": pdftest.OnePage("beta"), "docs/10.pdf": pdftest.OnePage("gamma"), "docs/": nil} {
		w, _ := z.Create(name)
		w.Write(data)
	}
	z.Close()
	merged := e.post(t, "/forms/pdf/merge", e.bearer(), file("1.pdf", pdftest.OnePage("alpha")), part{field: "archives", name: "more.zip", value: b.String()}).pdf(t)
	got := text(t, merged)
	if a, bb, c := strings.Index(got, "alpha"), strings.Index(got, "beta"), strings.Index(got, "gamma"); !(a >= 0 && a < bb && bb < c) {
		t.Errorf("a merge of 1.pdf and an archive of 2.pdf and 10.pdf: %q, want alpha, beta, gamma", got)
	}
	e.post(t, "/forms/pdf/merge", e.bearer(), file("1.pdf", pdftest.OnePage("alpha")), part{field: "archives", name: "x.zip", value: "not a zip"}).
		plainError(t, 400, "form field 'archives' 'x.zip' is not a ZIP file")
	var bomb bytes.Buffer
	z = zip.NewWriter(&bomb)
	w, _ := z.Create("big.pdf")
	w.Write(bytes.Repeat([]byte{' '}, 51<<20)) // deflates to 50 KB, beyond the PDF tools' 50 MiB
	z.Close()
	e.post(t, "/forms/pdf/flatten", e.bearer(), part{field: "archives", name: "bomb.zip", value: bomb.String()}).
		plainError(t, 413, "The archives unpack to more than the limit (52428800 bytes), at their entry 'big.pdf'")
}

func downloadFromAddsFiles(t *testing.T, e *env) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Authorization") != "Bearer site-token":
			w.WriteHeader(http.StatusUnauthorized)
		case r.URL.Path == "/files/1.pdf":
			w.Write(pdftest.OnePage("alpha"))
		case r.URL.Path == "/export":
			w.Header().Set("Content-Disposition", `attachment; filename="2.pdf"`)
			w.Write(pdftest.OnePage("beta"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	auth := `"extraHttpHeaders":{"Authorization":"Bearer site-token"}`
	list := fmt.Sprintf(`[{"url":"%s/export",%s},{"url":"%s/files/1.pdf",%s}]`, site.URL, auth, site.URL, auth)
	got := text(t, e.post(t, "/forms/pdf/merge", e.bearer(), field("downloadFrom", list)).pdf(t))
	if a, b := strings.Index(got, "alpha"), strings.Index(got, "beta"); a < 0 || b < a {
		t.Errorf("a merge of 1.pdf (named by its URL) and 2.pdf (by its server): %q, want alpha then beta", got)
	}
	// 9.x's filename names the file: 1.pdf taken as 3.pdf comes after 2.pdf.
	list = fmt.Sprintf(`[{"url":"%s/export",%s},{"url":"%s/files/1.pdf","filename":"3.pdf",%s}]`, site.URL, auth, site.URL, auth)
	got = text(t, e.post(t, "/forms/pdf/merge", e.bearer(), field("downloadFrom", list)).pdf(t))
	if a, b := strings.Index(got, "alpha"), strings.Index(got, "beta"); b < 0 || a < b {
		t.Errorf("a merge of 2.pdf and 1.pdf taken as 3.pdf: %q, want beta then alpha", got)
	}
	e.post(t, "/forms/pdf/merge", e.bearer(), field("downloadFrom", fmt.Sprintf(`[{"url":"%s/files/1.pdf","retries":2}]`, site.URL))).
		plainError(t, 400, `form field 'downloadFrom' is invalid (want a JSON array of url, extraHttpHeaders and filename, such as [{"url":"https://example.com/a.pdf"}]): json: unknown field "retries"`)
	e.post(t, "/forms/pdf/merge", e.bearer(), field("downloadFrom", fmt.Sprintf(`[{"url":"%s/files/1.pdf"}]`, site.URL))).
		plainError(t, 400, "The document could not be downloaded")
	e.post(t, "/forms/pdf/merge", e.bearer(), field("downloadFrom", fmt.Sprintf(`[{"url":"%s/files/1.pdf","embedded":true}]`, site.URL))).
		plainError(t, 400, "form field 'downloadFrom' is not supported by quire with 'embedded'")
	e.post(t, "/forms/pdf/merge", e.bearer(), field("downloadFrom", `{"url":1}`)).plainError(t, 400, "form field 'downloadFrom' is invalid")
	// The url route's page, refused by its server: Gotenberg's 400, not a 500.
	e.post(t, "/forms/chromium/convert/url", e.bearer(), field("url", site.URL+"/files/1.pdf")).
		plainError(t, 400, "The document could not be downloaded")
}

func chromiumPDFA(t *testing.T, e *env) {
	archival := e.post(t, "/forms/chromium/convert/html", e.bearer(), file("index.html", []byte(page)), field("pdfa", "PDF/A-2b"),
		field("pdfua", "true")).pdf(t)
	if !bytes.Contains(archival, []byte("pdfaid:part")) || !bytes.Contains(archival, []byte("pdfuaid:part")) {
		t.Error("Chromium with pdfa=PDF/A-2b pdfua=true: no PDF/A and PDF/UA identification in the XMP")
	}
	e.post(t, "/forms/chromium/convert/html", e.bearer(), file("index.html", []byte(page)), field("pdfa", "PDF/A-1b")).
		plainError(t, 400, "form field 'pdfa'")
}

func screenshots(t *testing.T, e *env) {
	a := e.post(t, "/forms/chromium/screenshot/html", e.bearer(), file("index.html", []byte(page)), file("style.css", []byte("h1 { color: #c00 }")))
	img, err := png.Decode(bytes.NewReader(a.body))
	if a.status != http.StatusOK || a.header.Get("Content-Type") != "image/png" || err != nil || img.Bounds().Dx() != 800 {
		t.Fatalf("html screenshot: %d %s %v, want an image/png 800 wide (Gotenberg's default)", a.status, a.header.Get("Content-Type"), err)
	}
	if cd := a.header.Get("Content-Disposition"); cd != "attachment; filename=index.png" {
		t.Errorf("Content-Disposition %q", cd)
	}
	a = e.post(t, "/forms/chromium/screenshot/markdown", e.bearer(), file("index.html", []byte(`<html><body>{{ toHTML "a.md" }}</body></html>`)),
		file("a.md", []byte("# Notes")), field("format", "jpeg"), field("quality", "60"), field("width", "400"), field("height", "300"), field("clip", "true"))
	if img, format, err := image.Decode(bytes.NewReader(a.body)); err != nil || format != "jpeg" || img.Bounds() != image.Rect(0, 0, 400, 300) {
		t.Errorf("markdown screenshot, jpeg 400x300 clipped: %s %v %v", format, img, err)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<html><body><p>Remote</p></body></html>`))
	}))
	defer site.Close()
	a = e.post(t, "/forms/chromium/screenshot/url", e.bearer(), field("url", site.URL), field("format", "webp"))
	if a.status != http.StatusOK || a.header.Get("Content-Type") != "image/webp" || !bytes.HasPrefix(a.body, []byte("RIFF")) || !bytes.Contains(a.body[:16], []byte("WEBP")) {
		t.Errorf("url screenshot as webp: %d %s %.16q", a.status, a.header.Get("Content-Type"), a.body)
	}
	e.post(t, "/forms/chromium/screenshot/html", e.bearer(), file("index.html", []byte(page)), field("format", "gif")).
		plainError(t, 400, "form field 'format' must be one of jpeg, png, webp")
	e.post(t, "/forms/chromium/screenshot/html", e.bearer(), file("index.html", []byte(page)), file("header.html", []byte("<p>head</p>"))).
		plainError(t, 400, "holds 'header.html': a header or a footer is a PDF's")
}

// uncompressed is pdf with its streams uncompressed (qpdf's QDF form),
// to read its content streams.
func uncompressed(t *testing.T, pdf []byte) string {
	pdftest.RequireTool(t, "qpdf", "qpdf")
	out, err := exec.Command("qpdf", "--qdf", "--object-streams=disable", pdftest.WriteTemp(t, pdf), "-").Output()
	if err != nil {
		t.Fatalf("qpdf --qdf: %v", err)
	}
	return string(out)
}

// outlineAndTags: Chromium's PDFs have an outline and tags unless
// generateDocumentOutline (9.x: nativeBookmarks) or generateTaggedPdf is
// false; the outline and PDF/UA need the tags.
func outlineAndTags(t *testing.T, e *env) {
	heading := file("index.html", []byte(`<h1>Chapter</h1><p>Text</p>`))
	for _, c := range []struct {
		fields          []part
		outline, tagged bool
	}{
		{nil, true, true},
		{[]part{field("generateDocumentOutline", "false")}, false, true},
		{[]part{field("nativeBookmarks", "false")}, false, true},
		{[]part{field("nativeBookmarks", "true")}, true, true},
		{[]part{field("generateTaggedPdf", "false")}, false, false},
	} {
		body := uncompressed(t, e.post(t, "/forms/chromium/convert/html", e.bearer(), append([]part{heading}, c.fields...)...).pdf(t))
		if got := strings.Contains(body, "/Outlines"); got != c.outline {
			t.Errorf("%v: outline %v, want %v", c.fields, got, c.outline)
		}
		if got := strings.Contains(body, "/StructTreeRoot"); got != c.tagged {
			t.Errorf("%v: tagged %v, want %v", c.fields, got, c.tagged)
		}
	}
	e.post(t, "/forms/chromium/convert/html", e.bearer(), heading, field("generateTaggedPdf", "false"), field("pdfua", "true")).
		plainError(t, 400, "form field 'generateTaggedPdf' must be true with pdfua")
	e.post(t, "/forms/chromium/convert/html", e.bearer(), heading, field("generateTaggedPdf", "false"), field("nativeBookmarks", "true")).
		plainError(t, 400, "form field 'generateTaggedPdf' must be true for an outline")
	e.post(t, "/forms/chromium/convert/html", e.bearer(), heading, field("generateDocumentOutline", "true"), field("nativeBookmarks", "true")).
		plainError(t, 400, "form field 'nativeBookmarks' is generateDocumentOutline's name in Gotenberg 9")
}

// stagesOfGotenberg9 runs 9.x's stages that quire has, on the pipe and
// on their own routes, and refuses those it lacks by name.
func stagesOfGotenberg9(t *testing.T, e *env) {
	two := file("report.pdf", twoPages(t, e))
	invoice := file("invoice.xml", []byte("<Invoice/>"))
	parts := e.post(t, "/forms/pdf/pipe", e.bearer(), two, field("stages", `[{"op":"split","every":1}]`)).unzip(t)
	if len(parts) != 2 || !strings.Contains(text(t, parts["report_2.pdf"]), "two") {
		t.Errorf("split every 1: ZIP entries %v, want report_1.pdf and report_2.pdf", keys(parts))
	}
	parts = e.post(t, "/forms/pdf/split", e.bearer(), two, field("ranges", `["2","1-2"]`)).unzip(t)
	if len(parts) != 2 || info(t, parts["report_1-2.pdf"], "Pages") != "2" || !strings.Contains(text(t, parts["report_2.pdf"]), "two") {
		t.Errorf("split ranges 2 and 1-2: ZIP entries %v", keys(parts))
	}
	pdf := e.post(t, "/forms/pdf/pipe", e.bearer(), two, invoice, field("stages",
		`[{"op":"set-metadata","title":"Q3 report","author":"Ada"},{"op":"attach","file":"invoice.xml"},{"op":"encrypt","ownerPassword":"o","permissions":{"print":false}}]`)).pdf(t)
	out, err := exec.Command("pdfinfo", pdftest.WriteTemp(t, pdf)).Output()
	if got := string(out); err != nil || !strings.Contains(got, "Q3 report") || !strings.Contains(got, "Ada") ||
		!strings.Contains(got, "print:no") || !strings.Contains(got, "copy:yes") {
		t.Errorf("set-metadata, then encrypt without print: pdfinfo %v\n%s", err, got)
	}
	if out, err := exec.Command("pdfdetach", "-list", pdftest.WriteTemp(t, pdf)).Output(); err != nil || !strings.Contains(string(out), "invoice.xml") {
		t.Errorf("attach stage: pdfdetach -list: %v %s, want invoice.xml", err, out)
	}
	// A text stamped where asked, an image stamped at a size, a page deleted.
	pdf = e.post(t, "/forms/pdf/pipe", e.bearer(), two, field("stages",
		`[{"op":"delete","pages":"1"},{"op":"stamp-text","text":"DRAFT","x":72,"y":72,"fontSize":24,"color":"#c00000","font":"Helvetica"}]`)).pdf(t)
	if got := text(t, pdf); info(t, pdf, "Pages") != "1" || !strings.Contains(got, "two") || !strings.Contains(got, "DRAFT") {
		t.Errorf("delete 1, then stamp-text: %s pages reading %q, want page two with DRAFT", info(t, pdf, "Pages"), got)
	}
	if x, height := wordBox(t, pdf, "DRAFT"); math.Abs(x-72) > 2 || height < 24 || height > 36 {
		t.Errorf("stamp-text at x 72 in 24 points: the word starts at %.1f and is %.1f points tall", x, height)
	}
	stamped := e.post(t, "/forms/pdf/stamp-image", e.bearer(), two, file("logo.png", pngOf(t)), field("image", "logo.png"),
		field("x", "10"), field("y", "10"), field("width", "100"), field("opacity", "0.5")).pdf(t)
	if out, err := exec.Command("pdfimages", "-list", pdftest.WriteTemp(t, stamped)).Output(); err != nil || strings.Count(string(out), "image") < 2 {
		t.Errorf("/forms/pdf/stamp-image: pdfimages -list %q %v, want the image on both pages", out, err)
	}
	// flatten-form burns the form's fields in and keeps the comments; flatten burns both.
	form := file("form.pdf", formWithComment())
	for stage, square := range map[string]bool{"flatten-form": true, "flatten": false} {
		pdf := e.post(t, "/forms/pdf/pipe", e.bearer(), form, field("stages", `[{"op":"`+stage+`"}]`)).pdf(t)
		kept := strings.Contains(uncompressed(t, pdf), "/Square")
		if info(t, pdf, "Form") != "none" || !strings.Contains(text(t, pdf), "Ada") || kept != square {
			t.Errorf("%s: form %q, text %q, Square comment kept %v; want no form, Ada drawn, the comment kept %v",
				stage, info(t, pdf, "Form"), text(t, pdf), kept, square)
		}
	}
	// A form's fields listed, then filled.
	filled := e.post(t, "/forms/pdf/pipe", e.bearer(), form, field("stages", `[{"op":"set-form","fields":{"name":"Grace"}}]`)).pdf(t)
	var fields map[string][]map[string]any
	if a := e.post(t, "/forms/pdf/form", e.bearer(), file("form.pdf", filled)); a.status != 200 || json.Unmarshal(a.body, &fields) != nil ||
		len(fields["form.pdf"]) != 1 || fields["form.pdf"][0]["name"] != "name" || fields["form.pdf"][0]["value"] != "Grace" {
		t.Errorf("/forms/pdf/form after set-form: %d %s, want the field name holding Grace", a.status, a.body)
	}
	if got := text(t, filled); !strings.Contains(got, "Grace") {
		t.Errorf("set-form: the page reads %q, want the new value drawn", got)
	}
	e.post(t, "/forms/pdf/set-form", e.bearer(), form, field("fields", `{"surname":"Hopper"}`)).plainError(t, 400, "form field 'fields'")
	e.post(t, "/forms/pdf/set-form", e.bearer(), form, field("fields", `{"name":3}`)).
		plainError(t, 400, "form field 'fields' gives 'name' a value that is neither a string nor a list of strings")
	// The attachments of a PDF listed, then one detached.
	attached := e.post(t, "/forms/pdf/attach", e.bearer(), two, invoice, field("file", "invoice.xml")).pdf(t)
	var listed map[string][]map[string]any
	if a := e.post(t, "/forms/pdf/attachments", e.bearer(), file("report.pdf", attached)); a.status != 200 || json.Unmarshal(a.body, &listed) != nil ||
		len(listed["report.pdf"]) != 1 || listed["report.pdf"][0]["name"] != "invoice.xml" {
		t.Errorf("/forms/pdf/attachments: %d %s, want invoice.xml listed under report.pdf", a.status, a.body)
	}
	detached := e.post(t, "/forms/pdf/pipe", e.bearer(), file("report.pdf", attached), field("stages", `[{"op":"detach","name":"invoice.xml"}]`)).pdf(t)
	if a := e.post(t, "/forms/pdf/attachments", e.bearer(), file("report.pdf", detached)); a.status != 200 || strings.TrimSpace(string(a.body)) != `{"report.pdf":[]}` {
		t.Errorf("attachments after detach: %d %s, want none", a.status, a.body)
	}
	e.post(t, "/forms/pdf/detach", e.bearer(), file("report.pdf", attached), field("name", "other.xml")).plainError(t, 400, "form field 'name'")
	// Their own routes, and an encryption that allows everything, as 9.x's does by default.
	pdf = e.post(t, "/forms/pdf/set-metadata", e.bearer(), two, field("subject", "Quarterly")).pdf(t)
	if got := info(t, pdf, "Subject"); got != "Quarterly" {
		t.Errorf("/forms/pdf/set-metadata: subject %q", got)
	}
	pdf = e.post(t, "/forms/pdf/encrypt", e.bearer(), two, field("ownerPassword", "o")).pdf(t)
	if got := info(t, pdf, "Encrypted"); !strings.Contains(got, "print:yes") || !strings.Contains(got, "copy:yes") || !strings.Contains(got, "change:yes") {
		t.Errorf("/forms/pdf/encrypt: %q, want every permission", got)
	}
	out, _ = exec.Command("pdfdetach", "-list", pdftest.WriteTemp(t, e.post(t, "/forms/pdf/attach", e.bearer(), two, invoice, field("file", "invoice.xml")).pdf(t))).Output()
	if !strings.Contains(string(out), "invoice.xml") {
		t.Errorf("/forms/pdf/attach: pdfdetach -list %s", out)
	}
	for stages, want := range map[string]string{
		`[{"op":"sign","certificate":"cert.p12"}]`:                    "stage 1 ('sign') is not supported by quire: quire signs with its own keys",
		`[{"op":"frobnicate"}]`:                                       "stage 1 ('frobnicate') is not a stage",
		`[{"op":"attach","file":"missing.xml"}]`:                      "stage 1 ('attach'): 'file' names no file uploaded ('missing.xml')",
		`[{"op":"split","ranges":["1,2"]}]`:                           "each entry one page or one range",
		`[{"op":"encrypt","ownerPassword":"o","algorithm":"rc4-40"}]`: "'algorithm' is not supported by quire with 'rc4-40'",
		`[{"op":"set-metadata","modDate":"D:20260101120000Z"}]`:       "stage 1 ('set-metadata'): 'modDate' is not supported by quire",
		`[{"op":"stamp-text","text":"A","font":"Courier"}]`:           "stage 1 ('stamp-text'): 'font' is not supported by quire",
		`[{"op":"stamp-text","text":"A","rotation":12.5}]`:            "'rotation' is not supported by quire in fractions of a degree",
		`[{"op":"stamp-text","text":"A","rotation":400}]`:             "'rotation' must be between -360 and 360 degrees",
		`[{"op":"stamp-image","image":"logo.png","width":0}]`:         "'width' must be more than 0",
		`[{"op":"delete","pages":"odd"}]`:                             "'pages' is not supported by quire with 'odd'",
	} {
		e.post(t, "/forms/pdf/pipe", e.bearer(), two, field("stages", stages)).plainError(t, 400, want)
	}
	e.post(t, "/forms/pdf/stamp-text", e.bearer(), two, field("text", "A"), field("font", "Courier")).
		plainError(t, 400, "form field 'font' is not supported by quire: quire draws the text with its own fonts")
	e.post(t, "/forms/pdf/delete", e.bearer(), two, field("pages", "1-2")).plainError(t, 400, "would leave no page")
	e.post(t, "/forms/pdf/set-metadata", e.bearer(), two, field("modDate", "D:20260101120000Z")).
		plainError(t, 400, "form field 'modDate' is not supported by quire")
	e.post(t, "/forms/pdf/optimize", e.bearer(), two).plainError(t, 400, "route '/forms/pdf/optimize' is not supported by quire: quire does not recompress")
}

// wordBox is where the word first is on the PDF's first page: its left
// edge, in points from the page's left, and its height.
func wordBox(t *testing.T, pdf []byte, word string) (x, height float64) {
	t.Helper()
	out, err := exec.Command("pdftotext", "-bbox", "-f", "1", "-l", "1", pdftest.WriteTemp(t, pdf), "-").Output()
	if err != nil {
		t.Fatalf("pdftotext -bbox: %v", err)
	}
	m := regexp.MustCompile(`xMin="([\d.]+)" yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">` + regexp.QuoteMeta(word) + `<`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no word %q on the first page: %s", word, out)
	}
	x, _ = strconv.ParseFloat(string(m[1]), 64)
	yMin, _ := strconv.ParseFloat(string(m[2]), 64)
	yMax, _ := strconv.ParseFloat(string(m[3]), 64)
	return x, yMax - yMin
}

// formWithComment is a one-page PDF with a filled text field and a
// Square comment, each with an appearance.
func formWithComment() []byte {
	ap := "BT /Helv 12 Tf 2 6 Td (Ada) Tj ET"
	square := "0 0 1 RG 0 0 40 40 re S"
	return pdftest.File(
		"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [5 0 R] /DR << /Font << /Helv 4 0 R >> >> >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /Helv 4 0 R >> >> /Annots [5 0 R 7 0 R] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		"<< /Type /Annot /Subtype /Widget /FT /Tx /T (name) /V (Ada) /Rect [100 600 300 620] /P 3 0 R /AP << /N 6 0 R >> >>",
		fmt.Sprintf("<< /Type /XObject /Subtype /Form /BBox [0 0 200 20] /Resources << /Font << /Helv 4 0 R >> >> /Length %d >>\nstream\n%s\nendstream", len(ap), ap),
		"<< /Type /Annot /Subtype /Square /Rect [100 500 140 540] /Contents (Check this) /AP << /N 8 0 R >> >>",
		fmt.Sprintf("<< /Type /XObject /Subtype /Form /BBox [0 0 40 40] /Length %d >>\nstream\n%s\nendstream", len(square), square))
}
