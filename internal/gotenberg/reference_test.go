package gotenberg_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/libreoffice/convtest"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// reference is testdata/reference.json: the routes and form fields of
// Gotenberg's published reference, with an example value of each.
type reference struct {
	Routes map[string]struct {
		Files  string            // which files the route takes: html, markdown, url, office, pdf, pdfs, pdf+embeds, pdf+attachment, pdf+image, pdf-with-attachment, form, pdfa+invoice
		Base   map[string]string // fields the route needs besides the one tried
		Fields map[string]string
	}
}

// reference checks that every route and field of Gotenberg's reference
// is served, or refused with a 400 that names it: never ignored.
func referenceRoutesAndFields(t *testing.T, e *env) {
	raw, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<html><body><p>Remote page</p>` + ready + `</body></html>`))
	}))
	defer site.Close()
	files := map[string][]part{
		"html":           {file("index.html", []byte(page+ready)), file("style.css", []byte("h1 { color: navy }"))}, // the page's every file: failOnResourceLoadingFailed passes
		"markdown":       {file("index.html", []byte(`{{ toHTML "a.md" }}`+ready)), file("a.md", []byte("# Title"))},
		"url":            {field("url", site.URL)},
		"office":         {file("a.docx", convtest.DOCX(1))},
		"pdf":            {file("a.pdf", twoPages(t, e))},
		"pdfs":           {file("a.pdf", pdftest.OnePage("a")), file("b.pdf", pdftest.OnePage("b"))},
		"pdf+embeds":     {file("a.pdf", pdftest.OnePage("a")), {field: "embeds", name: "invoice.xml", value: "<Invoice/>"}},
		"pdf+attachment": {file("a.pdf", pdftest.OnePage("a")), file("invoice.xml", []byte("<Invoice/>"))},
		"pdf+image":      {file("a.pdf", pdftest.OnePage("a")), file("logo.png", pngOf(t))},
		"form":           {file("form.pdf", formWithComment())},
		"pdf-with-attachment": {file("a.pdf", e.post(t, "/forms/pdf/attach", e.bearer(), file("a.pdf", pdftest.OnePage("a")),
			file("invoice.xml", []byte("<Invoice/>")), field("file", "invoice.xml")).pdf(t))},
		"pdfa+invoice": {file("a.pdf", e.post(t, "/forms/libreoffice/convert", e.bearer(), file("a.docx", convtest.DOCX(1)), field("pdfa", "PDF/A-3b")).pdf(t)),
			{field: "facturxXml", name: "invoice.xml", value: invoiceXML("urn:cen.eu:en16931:2017")}},
	}
	for _, path := range slices.Sorted(maps.Keys(ref.Routes)) {
		rt := ref.Routes[path]
		form := slices.Clone(files[rt.Files])
		for _, k := range slices.Sorted(maps.Keys(rt.Base)) {
			form = append(form, field(k, rt.Base[k]))
		}
		a := e.post(t, path, e.bearer(), form...)
		servedRoute := a.status == http.StatusOK
		if !servedRoute {
			a.plainError(t, 400, "route '"+path+"' is not supported by quire")
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(rt.Fields)) {
			tried := append(without(form, name), field(name, rt.Fields[name]))
			a := e.post(t, path, e.bearer(), tried...)
			if a.status != http.StatusOK && (a.status != 400 || !strings.Contains(string(a.body), "'"+name+"'")) {
				t.Errorf("%s %s=%s: %d %q, want 200 or a 400 naming the field", path, name, rt.Fields[name], a.status, a.body)
			}
		}
	}
}

// ready is what the reference's waits wait for (waitForSelector
// "#ready", waitForExpression "window.ready === true").
const ready = `<p id="ready">Ready</p><script>window.ready = true</script>`

// without is form without the field name.
func without(form []part, name string) []part {
	return slices.DeleteFunc(slices.Clone(form), func(p part) bool { return p.name == "" && p.field == name })
}

// twoPages is a PDF of two pages.
func twoPages(t *testing.T, e *env) []byte {
	return e.post(t, "/forms/pdf/merge", e.bearer(), file("a.pdf", pdftest.OnePage("one")), file("b.pdf", pdftest.OnePage("two"))).pdf(t)
}
