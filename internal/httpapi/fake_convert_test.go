package httpapi_test

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"io"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/annotate"
	"github.com/quire-dev/quire/internal/conversion"
	"github.com/quire-dev/quire/internal/pdftools"
)

// TestFakeConvertQuery: the options of POST /v1/convert reach the
// service decoded (from and to in lower case, to defaulting to pdf);
// an unknown option gets a hint, a value of the wrong type is named,
// all in one 400 (DESIGN.md: unknown options: 400).
func TestFakeConvertQuery(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.conversion.got = make(chan conversion.Request, 1)
	a := f.serve(t)
	r := a.postFiles("/v1/convert?from=DOCX&merge=true&pdfa=PDF/A-2b&quality=80&scale=0.5&exportFormFields=false", map[string]string{"a.docx": "PK"})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	req := <-f.conversion.got
	if req.From != "docx" || req.To != "pdf" || !req.Merge || req.Options.PDFA != "PDF/A-2b" || req.Options.Quality != 80 ||
		req.Options.Scale != 0.5 || req.Options.ExportFormFields == nil || *req.Options.ExportFormFields {
		t.Errorf("the service got %+v", req.Request)
	}

	b := a.postFiles("/v1/convert?from=docx&pdfA=PDF/A-2b&quality=high&scale=big&merge=yes&to=pdf&to=docx", map[string]string{"a.docx": "PK"}).
		errorBody(t, 400, quire.CodeValidation)
	for field, issue := range map[string]string{"pdfA": "did you mean pdfa?", "quality": "must be a whole number",
		"scale": "must be a number", "merge": "must be true or false", "to": "more than once"} {
		if got := detail(t, b, field); !strings.Contains(got, issue) {
			t.Errorf("%s: issue %q, want %q", field, got, issue)
		}
	}
}

// TestFakeConvertFiles: the files are multipart "file" parts, at most
// ConvertMaxFiles of them, none empty (a later one named by its place
// and name); a body that is not multipart, or
// over the route's limit, is refused before the service.
func TestFakeConvertFiles(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.conversion.got = make(chan conversion.Request, 1)
	a := f.serve(t)
	b := a.postFiles("/v1/convert", map[string]string{"a.docx": "PK", "b.docx": "PK", "c.docx": "PK"}).errorBody(t, 400, quire.CodeValidation)
	if got := detail(t, b, "file"); got != "at most 2 files per request" {
		t.Errorf("three files: %q", got)
	}
	b = a.postFiles("/v1/convert", map[string]string{"a.docx": "PK", "b.docx": ""}).errorBody(t, 400, quire.CodeValidation)
	if got := detail(t, b, "file"); got != `file 2 ("b.docx") must not be empty` {
		t.Errorf("a second file empty: %q", got)
	}
	b = a.send("POST", "/v1/convert", strings.NewReader("PK"), "Authorization", "Bearer "+goodKey, "Content-Type", "application/octet-stream").
		errorBody(t, 400, quire.CodeValidation)
	if got := detail(t, b, "file"); !strings.Contains(got, "multipart/form-data") {
		t.Errorf("not multipart: %q", got)
	}
	body, contentType := multipartOf(t, map[string]string{"big.docx": strings.Repeat("x", 3<<20)})
	a.send("POST", "/v1/convert", body, "Authorization", "Bearer "+goodKey, "Content-Type", contentType).errorBody(t, 413, quire.CodePayloadTooLarge)
	// Chunked, with no length declared: the limit stops the reading.
	body, contentType = multipartOf(t, map[string]string{"big.docx": strings.Repeat("x", 3<<20)})
	a.send("POST", "/v1/convert", io.MultiReader(body), "Authorization", "Bearer "+goodKey, "Content-Type", contentType).
		errorBody(t, 413, quire.CodePayloadTooLarge)
	select {
	case req := <-f.conversion.got:
		t.Errorf("a refused request reached the service: %+v", req.Request)
	default:
	}
}

// TestFakeConvertAnswer: the answer is the service's output with its
// media type and length (not chunked), and Server-Timing tells the
// engine's time from the queue's, in milliseconds.
func TestFakeConvertAnswer(t *testing.T) {
	t.Parallel()
	a := newFakes().serve(t)
	r := a.postFiles("/v1/convert?from=docx", map[string]string{"a.docx": "%PDF-converted"})
	if r.status != 200 || string(r.body) != "%PDF-converted" || r.header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("%d %v %q", r.status, r.header, r.body)
	}
	large := "%PDF-" + strings.Repeat("x", 64<<10) // past what net/http measures by itself
	if r := a.postFiles("/v1/convert?from=docx", map[string]string{"a.docx": large}); r.header.Get("Content-Length") != strconv.Itoa(len(large)) {
		t.Errorf("Content-Length %q of %d bytes, want %d (transfer encoding %q)", r.header.Get("Content-Length"), len(r.body), len(large), r.header.Get("Transfer-Encoding"))
	}
	if st := r.header.Get("Server-Timing"); st != "engine;dur=1.5, queue;dur=0.5, total;dur=2.0" {
		t.Errorf("Server-Timing %q", st)
	}
}

// TestFakeConvertServiceErrors: the service's refusals keep their codes:
// a full engine is 503 ENGINE_UNAVAILABLE with Retry-After, a format it
// does not take 415, a file that is not what it says 400.
func TestFakeConvertServiceErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err    *quire.Error
		status int
	}{
		{&quire.Error{Code: quire.CodeEngineBusy, Message: "All workers are busy.", RetryAfter: 5e9}, 503},
		{quire.Errorf(quire.CodeUnsupportedMedia, "from=xyz is not a format quire converts."), 415},
		{quire.Errorf(quire.CodeInvalidFormat, "The file is not a DOCX."), 400},
		{quire.Errorf(quire.CodeUnprocessable, "The document is encrypted."), 422},
	} {
		f := newFakes()
		f.conversion.err = c.err
		r := f.serve(t).postFiles("/v1/convert?from=docx", map[string]string{"a.docx": "PK"})
		if b := r.errorBody(t, c.status, c.err.Code); b.Message != c.err.Message {
			t.Errorf("%s: message %q", c.err.Code, b.Message)
		}
		if want := map[bool]string{true: "5", false: ""}[c.err.RetryAfter > 0]; r.header.Get("Retry-After") != want {
			t.Errorf("%s: Retry-After %q, want %q", c.err.Code, r.header.Get("Retry-After"), want)
		}
	}
}

// TestFakeAnnotateDecoding: an annotate request's fields are decoded as
// spec/ANNOTATE.md shapes them (ids as strings or numbers, dimensions as
// numbers or "180px", table rows); what does not decode is named, a near
// miss with a hint, and to= is docx or pdf.
func TestFakeAnnotateDecoding(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.filler = &fakeFiller{got: make(chan annotate.Request, 1)}
	a := f.serve(t)
	docx := inline([]byte("PK docx"))
	r := fakeDo(t, a, "POST", "/v1/annotate", goodKey, `{"document":`+docx+`,"fields":[
		{"id":7,"type":"text","value":"Ann","options":{"keepTextNodeStyles":false}},
		{"id":"t","type":"table","value":[["a","b"]],"options":{"copyRowStyle":true}},
		{"group":"g","type":"image","value":"data:","options":{"dimensions":{"width":"180px","height":90},
		 "arcElement":{"color":"#f00"},"topLabel":{"text":"top","color":"red"}}}]}`)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	req := <-f.filler.got
	if len(req.Fields) != 3 || req.Fields[0].ID != "7" || req.Fields[0].Options.KeepTextNodeStyles || !req.Fields[1].Options.CopyRowStyle ||
		len(req.Fields[1].Rows) != 1 || req.Fields[2].Options.Width != 180 || req.Fields[2].Options.Height != 90 ||
		req.Fields[2].Options.ArcColor != "#f00" || req.Fields[2].Options.TopLabel.Text != "top" || req.Fields[2].Group != "g" {
		t.Errorf("the filler got %+v", req.Fields)
	}

	b := fakeDo(t, a, "POST", "/v1/annotate?to=xml", goodKey, `{"document":`+docx+`,"fields":[
		{"id":1,"typ":"text","value":3,"options":{"dimensions":{"width":"wide"},"keepTextNodeStyles":"no"}},
		{"type":"table","value":"not rows"}, 5]}`).errorBody(t, 400, quire.CodeValidation)
	<-f.filler.got // the request reached the service, which refused it with the adapter's details
	for field, issue := range map[string]string{
		"to":                                   `must be docx or pdf, not "xml"`,
		"fields[0].typ":                        "did you mean type?",
		"fields[0].type":                       "is required",
		"fields[0].value":                      "must be a string",
		"fields[0].options.dimensions.width":   "must be a number of pixels",
		"fields[0].options.keepTextNodeStyles": "must be a boolean",
		"fields[1].value":                      "an array of rows",
		"fields[2]":                            "must be an object",
	} {
		if got := detail(t, b, field); !strings.Contains(got, issue) {
			t.Errorf("%s: issue %q, want %q", field, got, issue)
		}
	}
	for _, c := range []struct{ fields, issue string }{
		{``, "is required"},
		{`,"fields":{}}`, "must be an array"},
		{`,"fields":[` + strings.Repeat(`{},`, annotate.MaxFields) + `{}]`, "at most 1000 fields"},
	} {
		b := fakeDo(t, a, "POST", "/v1/annotate", goodKey, `{"document":`+docx+strings.TrimSuffix(c.fields, "}")+`}`).errorBody(t, 400, quire.CodeValidation)
		if got := detail(t, b, "fields"); !strings.Contains(got, c.issue) {
			t.Errorf("fields%.20s: issue %q, want %q", c.fields, got, c.issue)
		}
		<-f.filler.got // the request reached the service, which refused it with the adapter's details
	}
	b = fakeDo(t, a, "POST", "/v1/annotate", goodKey, `[]`).errorBody(t, 400, quire.CodeValidation)
	if got := detail(t, b, "body"); got != "must be a JSON object" {
		t.Errorf("[]: issue %q", got)
	}
}

// TestFakeAnnotateAnswer: the filled document comes as {"document":
// {"base64","contentType"}}, and the fields no control took are listed,
// percent-encoded, in X-Quire-Unmatched-Fields; the filler's refusal is
// the answer.
func TestFakeAnnotateAnswer(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.filler = &fakeFiller{unmatched: []string{"a,b", "group:g h"}}
	a := f.serve(t)
	r := fakeDo(t, a, "POST", "/v1/annotate", goodKey, `{"document":`+inline([]byte("PK docx"))+`,"fields":[]}`)
	var got struct {
		Document struct{ Base64, ContentType string }
	}
	r.json(t, &got)
	if doc, _ := base64.StdEncoding.DecodeString(got.Document.Base64); r.status != 200 || string(doc) != "PK docx" || !strings.Contains(got.Document.ContentType, "wordprocessingml") {
		t.Errorf("%d %s", r.status, r.body)
	}
	want := url.PathEscape("a,b") + "," + url.PathEscape("group:g h")
	if h := r.header.Get("X-Quire-Unmatched-Fields"); h != want {
		t.Errorf("X-Quire-Unmatched-Fields %q, want %q", h, want)
	}
	f.filler.err = quire.Errorf(quire.CodeUnprocessable, "The template is not a DOCX.")
	fakeDo(t, a, "POST", "/v1/annotate", goodKey, `{"document":`+inline([]byte("x"))+`,"fields":[]}`).errorBody(t, 422, quire.CodeUnprocessable)
}

// TestFakePDFToolsQuery: each operation is a route; its query is decoded
// (allow as a list, set.KEY as properties, page and dpi with their
// defaults) and what does not decode is named in one 400.
func TestFakePDFToolsQuery(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.pdf = &fakePDFTools{res: pdftools.Result{Data: []byte("%PDF-out"), ContentType: "application/pdf"}, got: make(chan pdftools.Request, 1)}
	a := f.serve(t)
	r := a.postFiles("/v1/pdf/encrypt?userPassword=u&allow=print,copy&set.title=T&force=true", map[string]string{"a.pdf": "%PDF-"})
	if r.status != 200 || string(r.body) != "%PDF-out" || r.header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	req := <-f.pdf.got
	if req.Op != "encrypt" || req.UserPassword != "u" || strings.Join(req.Allow, "|") != "print|copy" || req.Set["title"] != "T" ||
		!req.Force || req.Page != pdftools.DefaultPage || req.DPI != pdftools.DefaultDPI || len(req.Files) != 1 {
		t.Errorf("the service got %+v", req)
	}
	b := a.postFiles("/v1/pdf/split?rangs=1-2&every=two&opacity=half&page=x", map[string]string{"a.pdf": "%PDF-"}).errorBody(t, 400, quire.CodeValidation)
	for field, issue := range map[string]string{"rangs": "did you mean ranges?", "every": "whole number", "opacity": "must be a number", "page": "whole number"} {
		if got := detail(t, b, field); !strings.Contains(got, issue) {
			t.Errorf("%s: issue %q, want %q", field, got, issue)
		}
	}
	b = a.postFiles("/v1/pdf/merge", map[string]string{"a.pdf": "%PDF-", "b.pdf": "%PDF-", "c.pdf": "%PDF-"}).errorBody(t, 400, quire.CodeValidation)
	if got := detail(t, b, "file"); got != "at most 2 files per request" {
		t.Errorf("three files: %q", got)
	}
	select {
	case req := <-f.pdf.got:
		t.Errorf("a refused request reached the service: %+v", req)
	default:
	}
}

// TestFakePDFToolsSplitAndErrors: a split answers a ZIP whose PDFs are
// named after the upload and their pages; the service's refusal (a
// signed PDF that the operation would break: 422) is the answer.
func TestFakePDFToolsSplitAndErrors(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.pdf = &fakePDFTools{res: pdftools.Result{ContentType: "application/zip",
		Parts: []pdftools.Part{{Pages: "1-2", Data: []byte("%PDF-a")}, {Pages: "3", Data: []byte("%PDF-b")}}}}
	a := f.serve(t)
	r := a.postFiles("/v1/pdf/split?every=2", map[string]string{"report.pdf": "%PDF-"})
	if r.status != 200 || r.header.Get("Content-Type") != "application/zip" {
		t.Fatalf("%d %v %s", r.status, r.header, r.body)
	}
	zr, err := zip.NewReader(bytes.NewReader(r.body), int64(len(r.body)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, zf := range zr.File {
		names = append(names, zf.Name)
	}
	if strings.Join(names, " ") != "report_1-2.pdf report_3.pdf" {
		t.Errorf("ZIP holds %v", names)
	}
	f.pdf.err = quire.Errorf(quire.CodeUnprocessable, "The PDF is signed; rotating it would break the signature.")
	a.postFiles("/v1/pdf/rotate?angle=90", map[string]string{"a.pdf": "%PDF-"}).errorBody(t, 422, quire.CodeUnprocessable)
}
