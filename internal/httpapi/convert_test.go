package httpapi_test

import (
	"bytes"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// withConversion lends the server the tests' shared LibreOffice pool.
func withConversion() envOption {
	return func(c *apitest.Config) { c.ConvertWorkers, c.Engines = 1, engines }
}

// convert posts content as the multipart field "file" to /v1/convert?query.
func (e *env) convert(key, query, name string, content []byte) response {
	e.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(content)
	mw.Close()
	return e.do("POST", "/v1/convert?"+query, &body, map[string]string{"Authorization": "Bearer " + key, "Content-Type": mw.FormDataContentType()})
}

const docxType = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

// TestConvertMarkdownAndHTMLToDOCX: to=docx answers a Word document made
// by the warm workers, which converts on to a PDF; other sources and other
// targets are refused with details.
func TestConvertMarkdownAndHTMLToDOCX(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConversion())
	key := e.key("docx@example.com")
	for _, c := range []struct{ query, name, content string }{
		{"from=md&to=docx", "notes.md", "# Notes\n\nSome *text*.\n"},
		{"from=html&to=DOCX", "page.html", "<html><body><h1>Page</h1><p>Text.</p></body></html>"},
	} {
		r := e.convert(key, c.query, c.name, []byte(c.content))
		if r.status != 200 || r.header.Get("Content-Type") != docxType || !bytes.HasPrefix(r.body, []byte("PK\x03\x04")) {
			t.Fatalf("%s = %d %s %.100q", c.query, r.status, r.header.Get("Content-Type"), r.body)
		}
		if back := e.convert(key, "from=docx", "out.docx", r.body); back.status != 200 || !bytes.HasPrefix(back.body, []byte("%PDF-")) {
			t.Errorf("%s: the DOCX does not convert to PDF: %d %.200s", c.query, back.status, back.body)
		}
	}
	for query, issue := range map[string]string{"from=docx&to=docx": "docx is made from html or md only", "from=rtf&to=docx": "not from rtf",
		"from=md&to=odt": "must be pdf or docx"} {
		b := e.convert(key, query, "x", []byte("x")).errorBody(t, 400, "VALIDATION_ERROR")
		if len(b.Details) != 1 || b.Details[0].Field != "to" || !strings.Contains(b.Details[0].Issue, issue) {
			t.Errorf("%s: details %+v, want to: %s", query, b.Details, issue)
		}
	}
}
