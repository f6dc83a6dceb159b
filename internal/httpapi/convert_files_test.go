package httpapi_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"mime/multipart"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/libreoffice/convtest"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

type upload struct {
	name string
	data []byte
}

// convertFiles posts files, in order, as multipart fields "file" to
// /v1/convert?query.
func (e *env) convertFiles(key, query string, files ...upload) response {
	e.t.Helper()
	return e.postFiles("/v1/convert?"+query, map[string]string{"Authorization": "Bearer " + key}, files...)
}

// postFiles posts files, in order, as multipart fields "file" to target,
// with the request headers header.
func (e *env) postFiles(target string, header map[string]string, files ...upload) response {
	e.t.Helper()
	body, ctype := multipartFiles(files...)
	h := map[string]string{"Content-Type": ctype}
	for k, v := range header {
		h[k] = v
	}
	return e.do("POST", target, body, h)
}

// multipartFiles is a multipart body of files, in order, as fields "file",
// and its content type.
func multipartFiles(files ...upload) (*bytes.Buffer, string) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, f := range files {
		fw, _ := mw.CreateFormFile("file", f.name)
		fw.Write(f.data)
	}
	mw.Close()
	return &body, mw.FormDataContentType()
}

// pageTexts is the text of each page of pdf (pdftotext), white space
// squeezed out.
func pageTexts(t *testing.T, pdf []byte) []string {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Fatal("pdftotext is not installed: apt-get install poppler-utils")
	}
	cmd := exec.Command("pdftotext", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	pages := strings.Split(string(out), "\f")
	for i := range pages {
		pages[i] = squeeze(pages[i])
	}
	return pages[:len(pages)-1] // pdftotext ends every page with a form feed
}

// mixed are three documents of three formats, each page with a text that
// tells where it comes from: a Markdown page, a workbook of 3 pages, a
// presentation of 2 slides. Their formats are told from name and content.
var mixed = []upload{
	{"alpha.md", []byte("# Alpha document\n\nFirst file.\n")},
	{"table.xlsx", convtest.XLSX(120)},
	{"deck.pptx", convtest.PPTX(2)},
}

// firstFile names the file whose text each page of mixed shows first.
func firstFile(page string) string {
	switch {
	case strings.Contains(page, "Alphadocument"):
		return "alpha.md"
	case strings.Contains(page, "row"):
		return "table.xlsx"
	case strings.Contains(page, "Slide1"):
		return "deck.pptx#1"
	case strings.Contains(page, "Slide2"):
		return "deck.pptx#2"
	}
	return "?"
}

// TestConvertSeveralFiles: merge=true answers one PDF with the pages of
// each file in the order given; without it, a ZIP with one PDF per file,
// named after the files, each with the pages of that file alone.
func TestConvertSeveralFiles(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConversion())
	key := e.key("files@example.com")
	single := map[string]int{}
	for _, f := range mixed {
		r := e.convertFiles(key, "", f)
		if r.status != 200 || r.header.Get("Content-Type") != "application/pdf" {
			t.Fatalf("%s alone: %d %.300s", f.name, r.status, r.body)
		}
		single[f.name] = pages(t, pdftest.WriteTemp(t, r.body))
	}
	if single["table.xlsx"] != 3 || single["deck.pptx"] != 2 {
		t.Fatalf("page counts of the files alone: %v, want table.xlsx 3 and deck.pptx 2", single)
	}

	r := e.convertFiles(key, "merge=true", mixed[2], mixed[0], mixed[1])
	if r.status != 200 || r.header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("merge: %d %.300s", r.status, r.body)
	}
	var order []string
	for _, p := range pageTexts(t, r.body) {
		order = append(order, firstFile(p))
	}
	want := []string{"deck.pptx#1", "deck.pptx#2"}
	for range single["alpha.md"] {
		want = append(want, "alpha.md")
	}
	want = append(want, "table.xlsx", "table.xlsx", "table.xlsx")
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("merged pages come from %v, want %v", order, want)
	}
	if n := pages(t, pdftest.WriteTemp(t, r.body)); n != len(want) {
		t.Errorf("merged PDF has %d pages, want %d", n, len(want))
	}

	// The options apply to every file: the first page of each.
	r = e.convertFiles(key, "merge=true&pageRanges=1", mixed[1], mixed[2])
	if r.status != 200 {
		t.Fatalf("merge with pageRanges=1: %d %.300s", r.status, r.body)
	}
	order = nil
	for _, p := range pageTexts(t, r.body) {
		order = append(order, firstFile(p))
	}
	if fmt.Sprint(order) != "[table.xlsx deck.pptx#1]" {
		t.Errorf("merge with pageRanges=1: pages from %v, want the first of table.xlsx and of deck.pptx", order)
	}

	same := upload{"report.md", []byte("# Report\n")}
	r = e.convertFiles(key, "merge=false", append(mixed, same, upload{`C:\Users\x\REPORT.md`, same.data}, upload{"../../etc/passwd.html", []byte("<p>x</p>")}, upload{"", []byte("<p>no name</p>")})...)
	if r.status != 200 || r.header.Get("Content-Type") != "application/zip" {
		t.Fatalf("zip: %d %s %.300s", r.status, r.header.Get("Content-Type"), r.body)
	}
	z, err := zip.NewReader(bytes.NewReader(r.body), int64(len(r.body)))
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"alpha.pdf", "table.pdf", "deck.pdf", "report.pdf", "REPORT (2).pdf", "passwd.pdf", "document.pdf"}
	var names []string
	for i, f := range z.File {
		names = append(names, f.Name)
		rc, _ := f.Open()
		var b bytes.Buffer
		b.ReadFrom(rc)
		rc.Close()
		if i < len(mixed) {
			if n := pages(t, pdftest.WriteTemp(t, b.Bytes())); n != single[mixed[i].name] {
				t.Errorf("%s: %d pages, the file alone %d", f.Name, n, single[mixed[i].name])
			}
		}
	}
	if fmt.Sprint(names) != fmt.Sprint(wantNames) {
		t.Errorf("ZIP entries %q, want %q", names, wantNames)
	}
}

// TestConvertFilesRefused: too many files, a bad merge value, a file
// whose content is not the declared format, a format that cannot be told,
// and one bad file among good ones, each answered with details.
func TestConvertFilesRefused(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConversion())
	key := e.key("refused@example.com")
	md := upload{"a.md", []byte("# A\n")}
	for _, c := range []struct {
		name, query string
		files       []upload
		status      int
		code, field string
		issue       string
	}{
		{"too many files", "", slices.Repeat([]upload{md}, 9), 400, "VALIDATION_ERROR", "file", "at most 8 files per request"}, // apitest's QUIRE_CONVERT_MAX_FILES
		{"bad merge", "merge=yes", []upload{md}, 400, "VALIDATION_ERROR", "merge", "must be true or false"},
		{"near miss", "Merge=true", []upload{md}, 400, "VALIDATION_ERROR", "Merge", "did you mean merge?"},
		{"merge to docx", "merge=true&to=docx", []upload{md}, 400, "VALIDATION_ERROR", "merge", "merges PDFs only"},
		{"unknown from", "from=pages", []upload{md}, 400, "VALIDATION_ERROR", "from", "must be one of"},
		{"declared xlsx, is pptx", "from=xlsx", []upload{{"deck.pptx", convtest.PPTX(1)}}, 400, "INVALID_FILE_FORMAT", "file",
			"declared xlsx, but the ZIP package has no xl/workbook.xml (it looks like a PowerPoint presentation (pptx))"},
		{"declared docx, is ods", "from=docx", []upload{{"t.ods", convtest.ODS(1)}}, 400, "INVALID_FILE_FORMAT", "file", "it looks like an OpenDocument spreadsheet (ods)"},
		{"cannot tell", "", []upload{{"notes.txt", []byte("plain words")}}, 400, "INVALID_FILE_FORMAT", "file", `cannot tell the format of "notes.txt"`},
		{"second of three is bad", "merge=true", []upload{md, {"scan.pdf", []byte("%PDF-1.7\n")}, md}, 400, "INVALID_FILE_FORMAT", "file[1]", `file 2 ("scan.pdf")`},
		{"third of three is damaged", "", []upload{md, md, {"t.xlsx", convtest.XLSX(2)[:300]}}, 422, "UNPROCESSABLE_DOCUMENT", "file[2]", `file 3 ("t.xlsx")`},
		{"xlsx to docx", "to=docx", []upload{{"t.xlsx", convtest.XLSX(2)}}, 400, "VALIDATION_ERROR", "to", "not from xlsx"},
	} {
		b := e.convertFiles(key, c.query, c.files...).errorBody(t, c.status, c.code)
		if len(b.Details) == 0 || b.Details[0].Field != c.field || !strings.Contains(b.Details[0].Issue, c.issue) {
			t.Errorf("%s: details %+v, want %s: %s", c.name, b.Details, c.field, c.issue)
		}
	}
}
