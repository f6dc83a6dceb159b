package httpapi_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/ooxml"
	"github.com/quire-dev/quire/internal/store/storetest"
)

const annotateCorpus = "../../../shared/corpus/annotate"

const (
	nsW   = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
	nsWP  = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
	mtDOC = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
)

// templates lists the corpus templates, skipping when the corpus is absent.
func templates(t *testing.T) []string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(annotateCorpus, "*.docx"))
	if len(names) == 0 {
		t.Skipf("the shared corpus is not here (%s)", annotateCorpus)
	}
	var out []string
	for _, n := range names {
		if !strings.Contains(n, "filled-by") {
			out = append(out, n)
		}
	}
	return out
}

func (e *env) annotate(key, query string, body any) response {
	e.t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.do("POST", "/v1/annotate"+query, bytes.NewReader(b), map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"})
}

// filled decodes a 200 answer of annotate and checks its content type.
func filled(t *testing.T, r response, contentType string) []byte {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("annotate: %d %s", r.status, r.body)
	}
	var res struct {
		Document struct{ Base64, ContentType string }
	}
	r.json(t, &res)
	doc, err := base64.StdEncoding.DecodeString(res.Document.Base64)
	if err != nil || res.Document.ContentType != contentType {
		t.Fatalf("answer: %v, content type %q, want %q", err, res.Document.ContentType, contentType)
	}
	return doc
}

// pdfText is the text of a PDF (pdftotext) without any white space, so
// that line breaks of the layout do not matter.
func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	return strings.Join(pageTexts(t, pdf), "")
}

func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// control is a content control of a template, with the text around it.
type control struct {
	id            string
	block, table  bool
	before, after string // the text of its paragraph (inline) or of the paragraphs beside it (block)
}

// controlsOf lists the content controls of a template's main document.
func controlsOf(t *testing.T, docx []byte) []control {
	t.Helper()
	p, err := ooxml.Open(docx, ooxml.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := p.Read("word/document.xml")
	doc, err := ooxml.Parse(data, ooxml.XMLLimits{})
	if err != nil {
		t.Fatal(err)
	}
	var out []control
	doc.Root.Walk(func(e *ooxml.Element) bool {
		if !e.Is(nsW, "sdt") {
			return true
		}
		pr := e.Child(nsW, "sdtPr")
		if pr.Child(nsW, "docPartObj") != nil || pr.Child(nsW, "id") == nil {
			return true
		}
		c := control{}
		c.id, _ = pr.Child(nsW, "id").AttrValue(nsW, "val")
		content := e.Child(nsW, "sdtContent")
		c.block = content.Child(nsW, "p") != nil || content.Child(nsW, "tbl") != nil
		c.table = content.Find(nsW, "tbl") != nil
		if c.block {
			c.before, c.after = siblingText(e, -1), siblingText(e, +1)
		} else {
			para := e.Parent
			for para != nil && !para.Is(nsW, "p") {
				para = para.Parent
			}
			c.before, c.after = textAround(para, e)
		}
		out = append(out, c)
		return false
	})
	return out
}

// siblingText is the text of the element beside e (dir -1 or +1), "" when none.
func siblingText(e *ooxml.Element, dir int) string {
	sibs := e.Parent.Children
	for i, s := range sibs {
		if s == e && i+dir >= 0 && i+dir < len(sibs) {
			return textOf(sibs[i+dir], nil)
		}
	}
	return ""
}

// textAround is the text of para before and after the element skip.
func textAround(para, skip *ooxml.Element) (before, after string) {
	var b strings.Builder
	para.Walk(func(x *ooxml.Element) bool {
		if x == skip {
			before = b.String()
			b.Reset()
			return false
		}
		if x.Is(nsW, "t") {
			b.WriteString(x.Text)
		}
		return true
	})
	return before, b.String()
}

func textOf(e, skip *ooxml.Element) string {
	before, _ := textAround(e, skip)
	return before
}

func pngURI(t *testing.T, w, h int) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x*h/w, color.Black)
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

func docField(b []byte) map[string]string {
	return map[string]string{"base64": base64.StdEncoding.EncodeToString(b)}
}

// TestAnnotateFixtures fills every control of every template through the
// API: text with to=pdf, where pdftotext must show the value in its
// place; images, signatures and table rows as DOCX, which LibreOffice
// must convert.
func TestAnnotateFixtures(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConversion())
	key := e.key("ann@example.com")
	n := 0
	for _, path := range templates(t) {
		docx, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range controlsOf(t, docx) {
			t.Run(filepath.Base(path)+"/"+c.id, func(t *testing.T) {
				n++
				value := fmt.Sprintf("Quire%dFilled", n)
				pdf := filled(t, e.annotate(key, "?to=pdf", map[string]any{"document": docField(docx),
					"fields": []any{map[string]any{"id": c.id, "type": "text", "value": value}}}), "application/pdf")
				text := pdfText(t, pdf)
				if c.block {
					i, j, k := strings.Index(text, squeeze(c.before)), strings.Index(text, value), strings.LastIndex(text, squeeze(c.after))
					if j < 0 || i > j || (k >= 0 && k < j) {
						t.Errorf("%q is not between %q and %q in %q", value, c.before, c.after, text)
					}
				} else if want := squeeze(c.before + value + c.after); !strings.Contains(text, want) {
					t.Errorf("%q is not in %q", want, text)
				}
				fields := []any{
					map[string]any{"id": c.id, "type": "image", "value": pngURI(t, 60, 30), "options": map[string]any{"dimensions": map[string]any{"width": "180", "height": 90}}},
				}
				e.convertsInLibreOffice(t, filled(t, e.annotate(key, "", map[string]any{"document": docField(docx), "fields": fields}), mtDOC))
				fields[0] = map[string]any{"id": c.id, "type": "signature", "value": pngURI(t, 300, 100),
					"options": map[string]any{"bottomLabel": map[string]any{"text": "ip: 127.0.0.1", "color": "#666"}, "arcElement": map[string]any{"color": "#1e40af"}}}
				e.convertsInLibreOffice(t, filled(t, e.annotate(key, "", map[string]any{"document": docField(docx), "fields": fields}), mtDOC))
				if c.table {
					fields[0] = map[string]any{"id": c.id, "type": "table", "value": [][]string{{"RowOneA", "RowOneB"}, {"RowTwoA"}}}
					pdf := e.convertsInLibreOffice(t, filled(t, e.annotate(key, "", map[string]any{"document": docField(docx), "fields": fields}), mtDOC))
					if text := pdfText(t, pdf); !strings.Contains(text, "RowOneA") || !strings.Contains(text, "RowTwoA") {
						t.Errorf("the new rows are not in %q", text)
					}
				}
			})
		}
	}
}

// convertsInLibreOffice converts a filled DOCX through the warm pool.
func (e *env) convertsInLibreOffice(t *testing.T, docx []byte) []byte {
	t.Helper()
	r, err := e.Convert.ConvertRequest(context.Background(), engine.Request{From: engine.FromDOCX, To: engine.ToPDF}, docx)
	if err != nil || !bytes.HasPrefix(r.Output, []byte("%PDF-")) {
		t.Fatalf("LibreOffice did not convert the filled DOCX: %v", err)
	}
	return r.Output
}

// TestAnnotateRequests covers the HTTP side: authentication, groups,
// unmatched fields, dimensions as strings, refusals with hints, and
// packages that are not usable.
func TestAnnotateRequests(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	path := filepath.Join(annotateCorpus, "synthetic-sc-template.docx")
	docx, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("the shared corpus is not here (%s): %v", annotateCorpus, err)
	}
	e.do("POST", "/v1/annotate", strings.NewReader(`{}`), nil).errorBody(t, 401, quire.CodeAuthentication)
	key := e.key("ann@example.com")

	r := e.annotate(key, "", map[string]any{"document": docField(docx), "fields": []any{
		map[string]any{"group": "company", "type": "text", "value": "ACME Inc"},
		map[string]any{"id": 777, "type": "image", "value": pngURI(t, 10, 10), "options": map[string]any{"dimensions": map[string]any{"width": "180", "height": "90"}}},
		map[string]any{"id": "missing,1", "type": "text", "value": "x"},
		map[string]any{"group": "nobody", "type": "text", "value": "x"},
	}})
	out := filled(t, r, mtDOC)
	if got := r.header.Get(httpapi.UnmatchedFieldsHeader); got != "missing%2C1,group:nobody" {
		t.Errorf("%s: %q", httpapi.UnmatchedFieldsHeader, got)
	}
	zr, err := zip.NewReader(bytes.NewReader(out), int64(len(out)))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := zr.Open("word/document.xml")
	var doc bytes.Buffer
	doc.ReadFrom(f)
	if s := doc.String(); strings.Count(s, "ACME Inc") != 2 || !strings.Contains(s, `<wp:extent cx="1714500" cy="857250"/>`) {
		t.Errorf("filled document %s", s)
	}

	for _, c := range []struct {
		query, body, field, issue string
		status                    int
		code                      string
	}{
		{"", `{"document":{"base64":"UEs="},"fields":[],"fieldz":1}`, "fieldz", "did you mean fields?", 400, quire.CodeValidation},
		{"", `{"document":{"base64":"UEs="},"fields":[{"id":"1","type":"text","value":"x","options":{"keepTextNodeStyle":false}}]}`, "fields[0].options.keepTextNodeStyle", "did you mean keepTextNodeStyles", 400, quire.CodeValidation},
		{"", `{"document":{"base64":"UEs="}}`, "fields", "required", 400, quire.CodeValidation},
		{"", `{"document":{"base64":"UEs=","url":"https://example.com/a.docx"},"fields":[]}`, "document", "exactly one", 400, quire.CodeValidation},
		{"?to=xml", `{"document":{"base64":"UEs="},"fields":[]}`, "to", "docx or pdf", 400, quire.CodeValidation},
		{"", `{"document":{"base64":"UEs="},"fields":[{"id":"1","type":"image","value":"x","options":{"dimensions":{"width":"wide"}}}]}`, "fields[0].options.dimensions.width", "pixels", 400, quire.CodeValidation},
		{"", `{"document":{"base64":"UEs="},"fields":[{"id":"1","type":"table","value":"x"}]}`, "fields[0].value", "array of rows", 400, quire.CodeValidation},
		{"", `{"document":{"base64":"` + base64.StdEncoding.EncodeToString([]byte("plain text")) + `"},"fields":[]}`, "", "", 422, quire.CodeUnprocessable},
		{"", `{"document":{"url":"http://127.0.0.1:1/a.docx"},"fields":[]}`, "document.url", "downloaded", 422, quire.CodeUnprocessable},
		{"", `{"document":{"base64":"` + base64.StdEncoding.EncodeToString(declaredBomb(t)) + `"},"fields":[]}`, "", "", 413, quire.CodePayloadTooLarge},
		{"?to=pdf", `{"document":{"base64":"` + base64.StdEncoding.EncodeToString(docx) + `"},"fields":[]}`, "", "", 503, quire.CodeUnavailable},
	} {
		r := e.do("POST", "/v1/annotate"+c.query, strings.NewReader(c.body), map[string]string{"Authorization": "Bearer " + key})
		b := r.errorBody(t, c.status, c.code)
		if c.field == "" {
			continue
		}
		found := false
		for _, d := range b.Details {
			found = found || d.Field == c.field && strings.Contains(d.Issue, c.issue)
		}
		if !found {
			t.Errorf("%s: details %+v lack %s: %s", c.body, b.Details, c.field, c.issue)
		}
	}
}

// declaredBomb is a ZIP whose one entry declares 1 GiB.
func declaredBomb(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	raw, err := w.CreateRaw(&zip.FileHeader{Name: "word/document.xml", Method: zip.Store, UncompressedSize64: 1 << 30, CompressedSize64: 4})
	if err != nil {
		t.Fatal(err)
	}
	raw.Write([]byte("<a/>"))
	w.Close()
	return buf.Bytes()
}
