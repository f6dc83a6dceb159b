package gotenberg_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/ratelimit"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestMain lets the test binary serve as the conversion and PDF workers
// that the server it starts runs.
func TestMain(m *testing.M) {
	apitest.RunWorkerIfAsked()
	os.Exit(m.Run())
}

// env is a quire server and an API key of it.
type env struct {
	*apitest.Server
	key string
}

func start(t *testing.T, cfg apitest.Config) *env {
	t.Helper()
	s := apitest.Start(t, storetest.Open(t, storetest.URL(t, "sqlite")), cfg)
	key, _, err := s.Auth.CreateKey(context.Background(), "dev@example.com")
	if err != nil {
		t.Fatal(err)
	}
	return &env{Server: s, key: key}
}

// part is a part of a form: a file when name is set.
type part struct{ field, name, value string }

func file(name string, data []byte) part {
	return part{field: "files", name: name, value: string(data)}
}
func field(name, value string) part { return part{field: name, value: value} }

// answer is an answer of the server.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// post sends a form to path, with the headers (key: value pairs).
func (e *env) post(t *testing.T, path string, header map[string]string, parts ...part) answer {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		var w io.Writer
		var err error
		if p.name != "" {
			w, err = mw.CreateFormFile(p.field, p.name)
		} else {
			w, err = mw.CreateFormField(p.field)
		}
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, p.value)
	}
	mw.Close()
	req, _ := http.NewRequest("POST", e.URL+path, &b)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) answer {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: res.StatusCode, header: res.Header, body: body}
}

func (e *env) bearer() map[string]string {
	return map[string]string{"Authorization": "Bearer " + e.key}
}

// plainError checks a is an error of status in Gotenberg's form, its
// message holding want, and returns the message.
func (a answer) plainError(t *testing.T, status int, want string) string {
	t.Helper()
	if a.status != status || !strings.HasPrefix(a.header.Get("Content-Type"), "text/plain") || !strings.Contains(string(a.body), want) {
		t.Fatalf("got %d %s %q, want %d text/plain with %q", a.status, a.header.Get("Content-Type"), a.body, status, want)
	}
	if a.header.Get("Gotenberg-Trace") == "" {
		t.Error("no Gotenberg-Trace on the error")
	}
	return string(a.body)
}

// pdf checks a is a PDF that qpdf finds clean, and returns it.
func (a answer) pdf(t *testing.T) []byte {
	t.Helper()
	if a.status != http.StatusOK || a.header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("got %d %s %.300q, want a PDF", a.status, a.header.Get("Content-Type"), a.body)
	}
	pdftest.RequireTool(t, "qpdf", "qpdf")
	if out, ok := pdftest.QPDFClean(t, a.body); !ok {
		t.Fatalf("qpdf --check: %s", out)
	}
	return a.body
}

// text is the text of pdf, by pdftotext.
func text(t *testing.T, pdf []byte) string {
	t.Helper()
	pdftest.RequireTool(t, "pdftotext", "poppler-utils")
	out, err := exec.Command("pdftotext", "-layout", pdftest.WriteTemp(t, pdf), "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// info is what pdfinfo tells of pdf: "Pages", "Page size"...
func info(t *testing.T, pdf []byte, key string) string {
	t.Helper()
	pdftest.RequireTool(t, "pdfinfo", "poppler-utils")
	out, err := exec.Command("pdfinfo", pdftest.WriteTemp(t, pdf)).Output()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + `:\s*(.*)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("pdfinfo tells no %s:\n%s", key, out)
	}
	return strings.TrimSpace(string(m[1]))
}

// unzip returns the entries of a ZIP answer, by name.
func (a answer) unzip(t *testing.T) map[string][]byte {
	t.Helper()
	if a.status != http.StatusOK || a.header.Get("Content-Type") != "application/zip" {
		t.Fatalf("got %d %s %.300q, want a ZIP", a.status, a.header.Get("Content-Type"), a.body)
	}
	z, err := zip.NewReader(bytes.NewReader(a.body), int64(len(a.body)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range z.File {
		r, _ := f.Open()
		out[f.Name], _ = io.ReadAll(r)
		r.Close()
	}
	return out
}

// TestGotenberg runs the routes on one server with both engines.
func TestGotenberg(t *testing.T) {
	e := start(t, apitest.Config{ConvertWorkers: 1, ChromiumBrowsers: 1, AllowPrivateFetch: true, JobWorkers: 1})
	for _, test := range []func(*testing.T, *env){
		keyAsBearerOrBasicPassword,
		healthAndVersion,
		filesInAlphanumericOrder,
		splitAnswersAZIPNamedAsAsked,
		selectAndSplitUnifyKeepTheListedPages,
		fieldsQuireCannotHonourAreRefusedByName,
		libreOffice,
		libreOfficeRefusals,
		libreOfficeExportOptions,
		chromiumHTML,
		chromiumMarkdown,
		chromiumURL,
		chromiumRefusals,
		chromiumPageFields,
		chromiumPageChecks,
		chromiumURLDownloadFields,
		screenshots,
		chromiumPDFA,
		referenceRoutesAndFields,
		npmClients,
		meteredAsOnV1,
		watermarkAndStamp,
		metadataReadInEachVersionsNames,
		embedsInEveryPDF,
		postProcessing,
		pipeRunsTheStagesInOrder,
		stagesOfGotenberg9,
		archivesAreUnpackedAsFiles,
		downloadFromAddsFiles,
		webhooksDeliverTheFileOrTheError,
		webhookEventsTellHowTheJobEnded,
	} {
		name := runtime.FuncForPC(reflect.ValueOf(test).Pointer()).Name()
		t.Run(name[strings.LastIndex(name, ".")+1:], func(t *testing.T) { test(t, e) })
	}
}

func keyAsBearerOrBasicPassword(t *testing.T, e *env) {
	pdfs := []part{file("a.pdf", pdftest.OnePage("alpha")), file("b.pdf", pdftest.OnePage("beta"))}
	e.post(t, "/forms/pdfengines/merge", nil, pdfs...).plainError(t, 401, "An API key is required")
	e.post(t, "/forms/pdfengines/merge", map[string]string{"Authorization": "Bearer sd_wrong"}, pdfs...).plainError(t, 401, "")
	e.post(t, "/forms/pdfengines/merge", e.bearer(), pdfs...).pdf(t)
	req, _ := http.NewRequest("POST", e.URL+"/forms/pdf/merge", nil)
	req.SetBasicAuth("any-user", e.key)
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range pdfs {
		w, _ := mw.CreateFormFile("files", p.name)
		io.WriteString(w, p.value)
	}
	mw.Close()
	req.Body, req.ContentLength = io.NopCloser(&b), int64(b.Len())
	req.Header.Set("Content-Type", mw.FormDataContentType())
	a := do(t, req)
	if got := text(t, a.pdf(t)); !strings.Contains(got, "alpha") || !strings.Contains(got, "beta") {
		t.Errorf("merged text %q", got)
	}
	if a.header.Get("Gotenberg-Trace") == "" || a.header.Get("Gotenberg-Trace") != a.header.Get("X-Request-Id") {
		t.Errorf("Gotenberg-Trace %q, X-Request-Id %q", a.header.Get("Gotenberg-Trace"), a.header.Get("X-Request-Id"))
	}
}

// TestAnonymousAndKeyLimits: callers without a key are served on loopback
// when the operator allows it, unlimited; a key is held to its limits.
func TestAnonymousAndKeyLimits(t *testing.T) {
	e := start(t, apitest.Config{Settings: func(c *config.Config) { c.GotenbergAnonymous = "loopback" },
		KeyLimits: keylimit.Limits{Rate: ratelimit.Rate{N: 1, Per: time.Hour}}})
	pdfs := []part{file("a.pdf", pdftest.OnePage("alpha")), file("b.pdf", pdftest.OnePage("beta"))}
	for range 2 {
		a := e.post(t, "/forms/pdfengines/merge", map[string]string{"Gotenberg-Trace": "my-trace-1"}, pdfs...)
		a.pdf(t)
		if a.header.Get("Gotenberg-Trace") != "my-trace-1" {
			t.Errorf("Gotenberg-Trace %q, want the caller's", a.header.Get("Gotenberg-Trace"))
		}
	}
	// A key presented is still checked, and held to its limits.
	e.post(t, "/forms/pdfengines/merge", map[string]string{"Authorization": "Bearer sd_wrong"}, pdfs...).plainError(t, 401, "")
	e.post(t, "/forms/pdfengines/merge", e.bearer(), pdfs...).pdf(t)
	a := e.post(t, "/forms/pdfengines/merge", e.bearer(), pdfs...)
	a.plainError(t, 429, "")
	if a.header.Get("RateLimit-Policy") == "" || a.header.Get("Retry-After") == "" {
		t.Errorf("429 without RateLimit-Policy or Retry-After: %v", a.header)
	}
}

// meteredAsOnV1: each answer is counted for its key as /v1's are.
func meteredAsOnV1(t *testing.T, e *env) {
	key, _, err := e.Auth.CreateKey(context.Background(), "metered@example.com")
	if err != nil {
		t.Fatal(err)
	}
	bearer := map[string]string{"Authorization": "Bearer " + key}
	e.post(t, "/forms/pdf/merge", bearer, file("a.pdf", pdftest.OnePage("alpha")), file("b.pdf", pdftest.OnePage("beta"))).pdf(t)
	e.post(t, "/forms/libreoffice/convert", bearer, file("report.docx", convtest.DOCX(2))).pdf(t)
	e.post(t, "/forms/libreoffice/convert", bearer, field("merge", "maybe")).plainError(t, 400, "merge") // not counted
	req := must(http.NewRequest("GET", e.URL+"/v1/usage/api", nil))
	req.Header.Set("Authorization", "Bearer "+key)
	var usage struct {
		Keys []struct {
			Periods []struct {
				Operations map[string]struct{ Requests, Documents, Pages int64 }
			}
		}
	}
	if err := json.Unmarshal(do(t, req).body, &usage); err != nil || len(usage.Keys) != 1 || len(usage.Keys[0].Periods) != 1 {
		t.Fatalf("usage %+v (%v)", usage, err)
	}
	ops := usage.Keys[0].Periods[0].Operations
	if pdf := ops["pdf"]; pdf.Requests != 1 || pdf.Documents != 2 || pdf.Pages != 2 {
		t.Errorf("pdf usage %+v, want 1 request of 2 documents, 2 pages", pdf)
	}
	if conv := ops["convert"]; conv.Requests != 1 || conv.Documents != 1 || conv.Pages != 2 {
		t.Errorf("convert usage %+v, want 1 request of 1 document, 2 pages", conv)
	}
}

func healthAndVersion(t *testing.T, e *env) {
	a := do(t, must(http.NewRequest("GET", e.URL+"/health", nil)))
	if a.status != 200 || !strings.Contains(string(a.body), `"status":"up"`) {
		t.Errorf("/health: %d %s", a.status, a.body)
	}
	a = do(t, must(http.NewRequest("GET", e.URL+"/version", nil)))
	if a.status != 200 || string(a.body) != "quire test" {
		t.Errorf("/version: %d %q", a.status, a.body)
	}
}

func must(r *http.Request, err error) *http.Request {
	if err != nil {
		panic(err)
	}
	return r
}

func filesInAlphanumericOrder(t *testing.T, e *env) {
	a := e.post(t, "/forms/pdfengines/merge", e.bearer(),
		file("10.pdf", pdftest.OnePage("tenth")), file("2.pdf", pdftest.OnePage("second")), file("1.pdf", pdftest.OnePage("first")))
	got := text(t, a.pdf(t))
	if i, j, k := strings.Index(got, "first"), strings.Index(got, "second"), strings.Index(got, "tenth"); !(i >= 0 && i < j && j < k) {
		t.Errorf("merged in another order: %q", got)
	}
}

func splitAnswersAZIPNamedAsAsked(t *testing.T, e *env) {
	merged := e.post(t, "/forms/pdf/merge", e.bearer(), file("a.pdf", pdftest.OnePage("alpha")), file("b.pdf", pdftest.OnePage("beta"))).pdf(t)
	header := e.bearer()
	header["Gotenberg-Output-Filename"] = "parts"
	a := e.post(t, "/forms/pdfengines/split", header, file("doc.pdf", merged), field("splitMode", "intervals"), field("splitSpan", "1"))
	if cd := a.header.Get("Content-Disposition"); cd != `attachment; filename=parts.zip` {
		t.Errorf("Content-Disposition %q", cd)
	}
	entries := a.unzip(t)
	if len(entries) != 2 || !strings.Contains(text(t, entries["doc_1.pdf"]), "alpha") || !strings.Contains(text(t, entries["doc_2.pdf"]), "beta") {
		t.Errorf("entries %v", keys(entries))
	}
}

func selectAndSplitUnifyKeepTheListedPages(t *testing.T, e *env) {
	doc := file("doc.pdf", e.post(t, "/forms/pdf/merge", e.bearer(), file("1.pdf", pdftest.OnePage("alpha")),
		file("2.pdf", pdftest.OnePage("beta")), file("3.pdf", pdftest.OnePage("gamma"))).pdf(t))
	inOrder := func(route string, pdf []byte, want ...string) {
		t.Helper()
		got, at := text(t, pdf), 0
		for _, w := range want {
			i := strings.Index(got[at:], w)
			if i < 0 {
				t.Fatalf("%s: %q lacks %v in this order", route, got, want)
			}
			at += i + len(w)
		}
		if n := strings.Count(got, "\f"); n != len(want) {
			t.Errorf("%s: %d pages, want %d", route, n, len(want))
		}
	}
	inOrder("select 3,1", e.post(t, "/forms/pdf/select", e.bearer(), doc, field("pages", "3,1")).pdf(t), "gamma", "alpha")
	inOrder("select 2-", e.post(t, "/forms/pdf/select", e.bearer(), doc, field("pages", "2-")).pdf(t), "beta", "gamma")
	inOrder("select all", e.post(t, "/forms/pdf/select", e.bearer(), doc, field("pages", "all")).pdf(t), "alpha", "beta", "gamma")
	inOrder("splitUnify 1,3", e.post(t, "/forms/pdfengines/split", e.bearer(), doc, field("splitMode", "pages"),
		field("splitSpan", "1,3"), field("splitUnify", "true")).pdf(t), "alpha", "gamma")
	e.post(t, "/forms/pdf/select", e.bearer(), doc, field("pages", "odd")).
		plainError(t, 400, "form field 'pages' is not supported by quire with 'odd'")
	e.post(t, "/forms/pdf/select", e.bearer(), doc).plainError(t, 400, "form field 'pages' is required")
	if a := e.post(t, "/forms/pdfengines/select", e.bearer(), doc, field("pages", "1")); a.status != http.StatusNotFound {
		t.Errorf("select at 8.x's path, which Gotenberg 8 never had: %d, want 404", a.status)
	}
}

func keys(m map[string][]byte) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}

func fieldsQuireCannotHonourAreRefusedByName(t *testing.T, e *env) {
	pdfs := []part{file("a.pdf", pdftest.OnePage("alpha")), file("b.pdf", pdftest.OnePage("beta"))}
	e.post(t, "/forms/pdfengines/merge", e.bearer(), append(pdfs, field("noSuchField", "1"))...).
		plainError(t, 400, "Invalid form data: form field 'noSuchField' is unknown to this route")
	e.post(t, "/forms/pdfengines/merge", e.bearer(), append(pdfs, field("flatten", "true"))...).
		plainError(t, 400, "form field 'flatten' is not supported by quire")
	// At Gotenberg's default, the field asks for what quire does.
	e.post(t, "/forms/pdfengines/merge", e.bearer(), append(pdfs, field("flatten", "false"), field("pdfua", "false"))...).pdf(t)
	e.post(t, "/forms/pdfengines/split", e.bearer(), pdfs[0], field("splitMode", "chunks"), field("splitSpan", "1")).
		plainError(t, 400, "form field 'splitMode' is invalid (got 'chunks', want intervals or pages, with 'splitSpan')")
}

func watermarkAndStamp(t *testing.T, e *env) {
	doc := file("doc.pdf", pdftest.OnePage("body text"))
	for _, prefix := range []string{"watermark", "stamp"} {
		pdf := e.post(t, "/forms/pdfengines/"+prefix, e.bearer(), doc, field(prefix+"Source", "text"),
			field(prefix+"Expression", "CONFIDENTIAL"), field(prefix+"Options", `{"opacity":0.4,"rotation":0}`)).pdf(t)
		if got := text(t, pdf); !strings.Contains(got, "CONFIDENTIAL") || !strings.Contains(got, "body text") {
			t.Errorf("%s: text %q", prefix, got)
		}
		e.post(t, "/forms/pdf/"+prefix, e.bearer(), doc, field(prefix+"Source", "text"), field(prefix+"Expression", "X"),
			field(prefix+"Options", `{"font":"Courier"}`)).plainError(t, 400, "form field '"+prefix+"Options' is not supported by quire for the option 'font'")
		// An image: the upload its expression names, drawn on the PDFs, the
		// others.
		logo := file("logo.png", pngOf(t))
		marked := e.post(t, "/forms/pdf/"+prefix, e.bearer(), doc, logo, field(prefix+"Source", "image"), field(prefix+"Expression", "logo.png")).pdf(t)
		pdftest.RequireTool(t, "pdfimages", "poppler-utils")
		if out, err := exec.Command("pdfimages", "-list", pdftest.WriteTemp(t, marked)).Output(); err != nil || !strings.Contains(string(out), "image") {
			t.Errorf("%s with an image: pdfimages -list %q %v, want the image", prefix, out, err)
		}
		e.post(t, "/forms/pdf/"+prefix, e.bearer(), doc, field(prefix+"Source", "image"), field(prefix+"Expression", "logo.png")).
			plainError(t, 400, "form field '"+prefix+"Expression' names no file uploaded ('logo.png')")
		e.post(t, "/forms/pdf/"+prefix, e.bearer(), doc, field(prefix+"Source", "pdf"), field(prefix+"Expression", "a.pdf")).
			plainError(t, 400, "form field '"+prefix+"Source' is not supported by quire with 'pdf'")
	}
}

// pngOf is a small opaque PNG image.
func pngOf(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 40, 20))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{200, 0, 0, 255}}, image.Point{}, draw.Src)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func metadataReadInEachVersionsNames(t *testing.T, e *env) {
	pdf := e.post(t, "/forms/pdfengines/metadata/write", e.bearer(), file("report.pdf", pdftest.OnePage("x")),
		field("metadata", `{"Title":"Quarterly report","Author":"Finance"}`)).pdf(t)
	files := []part{file("report.pdf", pdf), file("plain.pdf", pdftest.OnePage("y"))}
	read := func(path string) map[string]map[string]any {
		a := e.post(t, path, e.bearer(), files...)
		var got map[string]map[string]any
		if a.status != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") || json.Unmarshal(a.body, &got) != nil {
			t.Fatalf("%s: %d %s %.300q, want JSON", path, a.status, a.header.Get("Content-Type"), a.body)
		}
		return got
	}
	nine := read("/forms/pdf/metadata")
	if r := nine["report.pdf"]; r["title"] != "Quarterly report" || r["author"] != "Finance" || r["modDate"] == nil || len(nine["plain.pdf"]) != 0 {
		t.Errorf("9.x metadata: %v, want report.pdf's title, author and modDate, nothing for plain.pdf", nine)
	}
	eight := read("/forms/pdfengines/metadata/read")
	r := eight["report.pdf"]
	date, _ := r["ModifyDate"].(string)
	if r["Title"] != "Quarterly report" || r["Author"] != "Finance" || r["PageCount"] != 1.0 || r["MIMEType"] != "application/pdf" ||
		!regexp.MustCompile(`^\d{4}:\d\d:\d\d \d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$`).MatchString(date) {
		t.Errorf("8.x metadata of report.pdf: %v, want ExifTool's tags (Title, Author, PageCount 1, MIMEType, ModifyDate 2006:01:02 15:04:05Z)", r)
	}
	e.post(t, "/forms/pdf/metadata", e.bearer(), file("report.pdf", pdf), field("password", "x")).plainError(t, 400, "password")
	info := read("/forms/pdf/info")["plain.pdf"]
	want := map[string]any{"pages": 1.0, "version": "1.7", "encrypted": false, "tagged": false, "linearized": false, "formFields": false}
	if !maps.Equal(info, want) {
		t.Errorf("9.x info of plain.pdf: %v, want %v", info, want)
	}
}

func embedsInEveryPDF(t *testing.T, e *env) {
	pdfs := []part{file("a.pdf", pdftest.OnePage("alpha")), file("b.pdf", pdftest.OnePage("beta"))}
	embeds := []part{{field: "embeds", name: "factur-x.xml", value: "<Invoice/>"}, {field: "embeds", name: "data.csv", value: "a,b\n"}}
	for name, pdf := range e.post(t, "/forms/pdf/embed", e.bearer(), append(pdfs, embeds...)...).unzip(t) {
		pdftest.RequireTool(t, "pdfdetach", "poppler-utils")
		out, err := exec.Command("pdfdetach", "-list", pdftest.WriteTemp(t, pdf)).Output()
		if err != nil || !strings.Contains(string(out), "2 embedded files") || !strings.Contains(string(out), "factur-x.xml") || !strings.Contains(string(out), "data.csv") {
			t.Errorf("%s: pdfdetach -list: %v %s, want factur-x.xml and data.csv", name, err, out)
		}
	}
	e.post(t, "/forms/pdfengines/embed", e.bearer(), pdfs[0]).plainError(t, 400, "embeds")
	e.post(t, "/forms/pdfengines/merge", e.bearer(), append(pdfs, embeds[0])...).plainError(t, 400, "form field 'embeds' is not supported by quire on this route")
}
