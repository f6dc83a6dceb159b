package gotenberg_test

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// TestGotenbergPDF runs the PDF routes that need no conversion engine on
// a server of their own.
func TestGotenbergPDF(t *testing.T) {
	e := start(t, apitest.Config{})
	t.Run("bookmarksWrittenAndReadInEachVersionsShape", func(t *testing.T) { bookmarksWrittenAndReadInEachVersionsShape(t, e) })
	t.Run("bookmarksRefusedByField", func(t *testing.T) { bookmarksRefusedByField(t, e) })
	t.Run("mergeSetsTheBookmarksAsked", func(t *testing.T) { mergeSetsTheBookmarksAsked(t, e) })
	t.Run("facturXInvoiceInEachPDF", func(t *testing.T) { facturXInvoiceInEachPDF(t, e) })
	t.Run("validateIsRefusedNamingTheRoute", func(t *testing.T) {
		e.post(t, "/forms/pdf/validate", e.bearer(), file("a.pdf", pdftest.OnePage("a")), field("profile", "PDF/A-3b")).
			plainError(t, 400, "route '/forms/pdf/validate' is not supported by quire: quire has no PDF/A or PDF/UA validator")
	})
}

// invoiceXML is a Factur-X (CII) invoice of the guideline id.
func invoiceXML(id string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100" xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100">
<rsm:ExchangedDocumentContext><ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>` + id + `</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter></rsm:ExchangedDocumentContext>
<rsm:ExchangedDocument><ram:ID>INV-1</ram:ID><ram:TypeCode>380</ram:TypeCode></rsm:ExchangedDocument>
</rsm:CrossIndustryInvoice>`
}

// pdfaFile is the shared corpus's PDF/A-1b file, found beside the
// repository (or its worktree).
func pdfaFile(t *testing.T) []byte {
	t.Helper()
	dir, _ := filepath.Abs(".")
	for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if b, err := os.ReadFile(filepath.Join(dir, "shared", "corpus", "pdf", "pypdf-samples__crazyones-pdfa.pdf")); err == nil {
			return b
		}
	}
	t.Skip("the shared PDF corpus (shared/corpus/pdf beside the repository) is absent")
	return nil
}

func facturXInvoiceInEachPDF(t *testing.T, e *env) {
	pdfa := pdfaFile(t)
	xml := part{field: "facturxXml", name: "invoice-2026.xml", value: invoiceXML("urn:cen.eu:en16931:2017")}
	out := e.post(t, "/forms/pdfengines/factur-x", e.bearer(), file("invoice.pdf", pdfa), xml,
		field("facturxConformanceLevel", "EN 16931"), field("facturxDocumentType", "INVOICE"), field("pdfa", "PDF/A-3b")).pdf(t)
	pdftest.RequireTool(t, "pdfdetach", "poppler-utils")
	list, err := exec.Command("pdfdetach", "-list", pdftest.WriteTemp(t, out)).Output()
	if err != nil || !strings.Contains(string(list), "1 embedded files") || !strings.Contains(string(list), "factur-x.xml") {
		t.Errorf("pdfdetach -list: %v %s, want factur-x.xml alone", err, list)
	}
	meta, err := exec.Command("pdfinfo", "-meta", pdftest.WriteTemp(t, out)).Output()
	for _, want := range []string{"<fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>", "<fx:DocumentType>INVOICE</fx:DocumentType>", "pdfaid:part"} {
		if err != nil || !strings.Contains(string(meta), want) {
			t.Errorf("pdfinfo -meta: %v, XMP lacks %s", err, want)
		}
	}
	base := []part{file("invoice.pdf", pdfa)}
	for _, c := range []struct {
		form []part
		want string
	}{
		{[]part{xml}, "form field 'facturxConformanceLevel' is required"},
		{[]part{xml, field("facturxConformanceLevel", "MINIMUM")}, "form field 'facturxConformanceLevel' is invalid (got 'MINIMUM'): the invoice's guideline is of the level EN 16931"},
		{[]part{xml, field("facturxConformanceLevel", "XRECHNUNG")}, "form field 'facturxConformanceLevel' is not supported by quire (got 'XRECHNUNG')"},
		{[]part{field("facturxConformanceLevel", "EN 16931")}, "form field 'facturxXml' is required"},
		{[]part{{field: "facturxXml", name: "i.xml", value: "not xml"}, field("facturxConformanceLevel", "EN 16931")}, "form field 'facturxXml' is invalid"},
		{[]part{xml, field("facturxConformanceLevel", "EN 16931"), field("facturxDocumentType", "ORDER")}, "form field 'facturxDocumentType' is not supported by quire"},
		{[]part{xml, field("facturxConformanceLevel", "EN 16931"), field("pdfa", "PDF/A-3u")}, "form field 'pdfa' is not supported by quire"},
	} {
		e.post(t, "/forms/pdfengines/factur-x", e.bearer(), append(base, c.form...)...).plainError(t, 400, c.want)
	}
	// A PDF that is not PDF/A: Gotenberg converts it, quire refuses it.
	e.post(t, "/forms/pdfengines/factur-x", e.bearer(), file("plain.pdf", pdftest.OnePage("x")), xml, field("facturxConformanceLevel", "EN 16931")).
		plainError(t, 400, "is not PDF/A")
}

// readJSON posts files to a read route and decodes its JSON answer.
func (e *env) readJSON(t *testing.T, path string, files ...part) map[string]any {
	t.Helper()
	a := e.post(t, path, e.bearer(), files...)
	var got map[string]any
	if a.status != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") || json.Unmarshal(a.body, &got) != nil {
		t.Fatalf("%s: %d %s %.300q, want JSON", path, a.status, a.header.Get("Content-Type"), a.body)
	}
	return got
}

// decoded is the JSON s decoded, to compare answers with.
func decoded(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func bookmarksWrittenAndReadInEachVersionsShape(t *testing.T, e *env) {
	doc := pdftest.Generated(3, false, 0)
	set9 := `[{"title":"Summary","pageNumber":1,"children":[{"title":"Figures","pageNumber":2}]},{"title":"Appendix","pageNumber":3}]`
	out := e.post(t, "/forms/pdf/set-bookmarks", e.bearer(), file("report.pdf", doc), field("bookmarks", set9)).pdf(t)
	if got := e.readJSON(t, "/forms/pdf/bookmarks", file("report.pdf", out)); !reflect.DeepEqual(got["report.pdf"], decoded(t, set9)) {
		t.Errorf("9.x bookmarks: %v, want %s", got, set9)
	}
	want8 := `[{"title":"Summary","page":1,"children":[{"title":"Figures","page":2,"children":[]}]},{"title":"Appendix","page":3,"children":[]}]`
	if got := e.readJSON(t, "/forms/pdfengines/bookmarks/read", file("report.pdf", out), file("plain.pdf", doc)); !reflect.DeepEqual(got["report.pdf"], decoded(t, want8)) ||
		!reflect.DeepEqual(got["plain.pdf"], []any{}) {
		t.Errorf("8.x bookmarks: %v, want report.pdf: %s, plain.pdf: []", got, want8)
	}
	// 8.x: one list for every file, or lists by file name (a file not
	// named is answered as it is).
	byName := `{"a.pdf":[{"title":"Two","page":2,"children":[]}]}`
	parts := e.post(t, "/forms/pdfengines/bookmarks/write", e.bearer(), file("a.pdf", doc), file("b.pdf", doc), field("bookmarks", byName)).unzip(t)
	got := e.readJSON(t, "/forms/pdfengines/bookmarks/read", file("a.pdf", parts["a.pdf"]), file("b.pdf", parts["b.pdf"]))
	if !reflect.DeepEqual(got["a.pdf"], decoded(t, byName).(map[string]any)["a.pdf"]) || !reflect.DeepEqual(got["b.pdf"], []any{}) {
		t.Errorf("8.x write by name: %v, want a.pdf's bookmark, none on b.pdf", got)
	}
	one := e.post(t, "/forms/pdfengines/bookmarks/write", e.bearer(), file("a.pdf", out), field("bookmarks", `[{"title":"Only","page":3}]`)).pdf(t)
	if got := e.readJSON(t, "/forms/pdf/bookmarks", file("a.pdf", one)); !reflect.DeepEqual(got["a.pdf"], decoded(t, `[{"title":"Only","pageNumber":3}]`)) {
		t.Errorf("8.x write of a list: %v, want the list only (replacing the former)", got)
	}
	// 9.x's stage set-bookmarks, after a merge.
	piped := e.post(t, "/forms/pdf/pipe", e.bearer(), file("a.pdf", doc), file("b.pdf", pdftest.OnePage("b")),
		field("stages", `[{"op":"merge"},{"op":"set-bookmarks","bookmarks":[{"title":"B","pageNumber":4}]}]`)).pdf(t)
	if got := e.readJSON(t, "/forms/pdf/bookmarks", file("m.pdf", piped)); !reflect.DeepEqual(got["m.pdf"], decoded(t, `[{"title":"B","pageNumber":4}]`)) {
		t.Errorf("stage set-bookmarks: %v, want B on page 4", got)
	}
}

func bookmarksRefusedByField(t *testing.T, e *env) {
	doc := file("report.pdf", pdftest.Generated(3, false, 0))
	for path, cases := range map[string]map[string]string{
		"/forms/pdf/set-bookmarks": {
			``:                                 "form field 'bookmarks' is required",
			`{`:                                "form field 'bookmarks' is required: a JSON list",
			`[]`:                               "form field 'bookmarks' is required",
			`[{"pageNumber":1}]`:               "form field 'bookmarks' is invalid: bookmarks[0].title is required",
			`[{"title":"a"}]`:                  "bookmarks[0].pageNumber is required",
			`[{"title":"a","page":1}]`:         "bookmarks[0].page is not supported by quire",
			`[{"title":"a","pageNumber":"1"}]`: "bookmarks[0].pageNumber is of the wrong type",
			`[{"title":"a","pageNumber":9}]`:   `form field 'bookmarks' is invalid: a bookmark opens page 9, past the last page of "report.pdf" (3)`,
			`[{"title":"a","pageNumber":1,"children":[{"title":"","pageNumber":1}]}]`: "bookmarks[0].children[0].title is required",
			`[{"title":"a","pageNumber":1,"color":"red"}]`:                            "bookmarks[0].color is not supported by quire",
		},
		"/forms/pdfengines/bookmarks/write": {
			`{"other.pdf":[{"title":"a","page":1}]}`: "it names 'other.pdf', which is not a file uploaded",
			`[{"title":"a","pageNumber":1}]`:         "bookmarks[0].pageNumber is not supported by quire",
			`"a"`:                                    "form field 'bookmarks' is required",
		},
	} {
		for value, want := range cases {
			form := []part{doc}
			if value != "" {
				form = append(form, field("bookmarks", value))
			}
			if msg := e.post(t, path, e.bearer(), form...).plainError(t, 400, want); !strings.HasPrefix(msg, "Invalid form data: form field 'bookmarks' ") {
				t.Errorf("%s bookmarks=%s: %q, want Gotenberg's message naming the field", path, value, msg)
			}
		}
	}
	long := `[{"title":"` + strings.Repeat("a", 501) + `","pageNumber":1}]`
	e.post(t, "/forms/pdf/set-bookmarks", e.bearer(), doc, field("bookmarks", long)).plainError(t, 400, "bookmarks[0].title is longer than 500 bytes")
}

// mergeSetsTheBookmarksAsked: 8.x's merge takes bookmarks (a list for the
// merged PDF, or lists by file name moved by the pages before the file)
// or autoIndexBookmarks (the files' own, moved so).
func mergeSetsTheBookmarksAsked(t *testing.T, e *env) {
	a := e.post(t, "/forms/pdf/set-bookmarks", e.bearer(), file("a.pdf", pdftest.Generated(3, false, 0)),
		field("bookmarks", `[{"title":"A","pageNumber":2,"children":[{"title":"A1","pageNumber":3}]}]`)).pdf(t)
	b := e.post(t, "/forms/pdf/set-bookmarks", e.bearer(), file("b.pdf", pdftest.Generated(2, false, 0)),
		field("bookmarks", `[{"title":"B","pageNumber":2}]`)).pdf(t)
	files := []part{file("a.pdf", a), file("b.pdf", b)}
	for value, want := range map[string]string{
		`autoIndexBookmarks=true`:                              `[{"title":"A","pageNumber":2,"children":[{"title":"A1","pageNumber":3}]},{"title":"B","pageNumber":5}]`,
		`bookmarks={"b.pdf":[{"title":"Second","page":1}]}`:    `[{"title":"Second","pageNumber":4}]`,
		`bookmarks=[{"title":"Whole","page":5,"children":[]}]`: `[{"title":"Whole","pageNumber":5}]`,
	} {
		name, v, _ := strings.Cut(value, "=")
		merged := e.post(t, "/forms/pdfengines/merge", e.bearer(), append(files, field(name, v))...).pdf(t)
		if got := e.readJSON(t, "/forms/pdf/bookmarks", file("m.pdf", merged)); !reflect.DeepEqual(got["m.pdf"], decoded(t, want)) {
			t.Errorf("merge with %s: bookmarks %v, want %s", value, got["m.pdf"], want)
		}
	}
	e.post(t, "/forms/pdfengines/merge", e.bearer(), append(files, field("autoIndexBookmarks", "true"), field("bookmarks", `[{"title":"x","page":1}]`))...).
		plainError(t, 400, "form field 'autoIndexBookmarks' is not supported by quire with 'bookmarks'")
	e.post(t, "/forms/pdfengines/merge", e.bearer(), append(files, field("bookmarks", `[{"title":"x","page":6}]`))...).
		plainError(t, 400, "form field 'bookmarks' is invalid: a bookmark opens page 6, past the last page")
	e.post(t, "/forms/pdf/pipe", e.bearer(), append(files, field("stages", `[{"op":"merge","autoIndexBookmarks":true}]`))...).
		plainError(t, 400, "form field 'stages' stage 1 ('merge') has a field quire does not take: 'autoIndexBookmarks'")
}
