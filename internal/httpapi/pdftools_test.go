package httpapi_test

import (
	"archive/zip"
	"bytes"
	"context"
	"image/png"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// pdfOp posts files as multipart "file" parts to /v1/pdf/op?query.
func (e *env) pdfOp(key, op, query string, files ...upload) response {
	e.t.Helper()
	return e.pdfOpWith(nil, key, op, query, files...)
}

// pdfOpWith is pdfOp with the request headers extra.
func (e *env) pdfOpWith(extra map[string]string, key, op, query string, files ...upload) response {
	e.t.Helper()
	h := map[string]string{}
	for k, v := range extra {
		h[k] = v
	}
	if key != "" {
		h["Authorization"] = "Bearer " + key
	}
	return e.postFiles("/v1/pdf/"+op+"?"+query, h, files...)
}

// TestPDFToolsAsJobs: a PDF operation asked for as a job (Prefer:
// respond-async) is answered 202, and its result is what the synchronous
// call answers: a render's PNG byte for byte, a merge's PDF with its pages.
func TestPDFToolsAsJobs(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withJobs(1))
	key := e.key("jobs@example.com")
	auth := map[string]string{"Authorization": "Bearer " + key}
	async := map[string]string{"Prefer": "respond-async"}
	a, b := upload{"a.pdf", pdftest.OnePage("Alpha")}, upload{"b.pdf", pdftest.Generated(3, false, 0)}

	sync := e.pdfOp(key, "render", "page=1&dpi=36", a)
	j := e.waitJob(key, e.pdfOpWith(async, key, "render", "page=1&dpi=36", a))
	res := e.do("GET", "/v1/jobs/"+j.ID+"/result", nil, auth)
	if j.Status != quire.JobSucceeded || j.Operation != quire.OpPDF || sync.status != 200 || res.status != 200 ||
		!bytes.Equal(res.body, sync.body) || res.header.Get("Content-Type") != "image/png" {
		t.Fatalf("render as a job %+v: %d, %d bytes; synchronous %d, %d bytes", j, res.status, len(res.body), sync.status, len(sync.body))
	}
	j = e.waitJob(key, e.pdfOpWith(async, key, "merge", "", a, b))
	res = e.do("GET", "/v1/jobs/"+j.ID+"/result", nil, auth)
	if pages := pageTexts(t, res.body); j.Status != quire.JobSucceeded || len(pages) != 4 || !strings.Contains(pages[0], "Alpha") {
		t.Errorf("merge as a job %+v: %d pages", j, len(pages))
	}
	// The file to attach is not a PDF: the job's submission does not read it as one.
	accepted := e.pdfOpWith(async, key, "attach", "", a, upload{"data.csv", []byte("a,b\n")})
	if accepted.status != 202 {
		t.Fatalf("attach as a job: %d %s, want 202", accepted.status, accepted.body)
	}
	if j = e.waitJob(key, accepted); j.Status != quire.JobSucceeded {
		t.Errorf("attach as a job: %+v", j)
	}
}

func TestPDFTools(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	key := e.key("tools@example.com")
	a, b := upload{"a.pdf", pdftest.OnePage("Alpha")}, upload{"b.pdf", pdftest.Generated(3, false, 0)}

	r := e.pdfOp(key, "merge", "", a, b)
	if r.status != 200 || r.header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("merge: %d %s", r.status, r.body)
	}
	if pages := pageTexts(t, r.body); len(pages) != 4 || !strings.Contains(pages[0], "Alpha") {
		t.Errorf("merged pages: %q", pages)
	}
	r = e.pdfOp(key, "merge", "", a, upload{"padded.pdf", pdftest.Generated(1, false, 64<<10)}) // past what net/http measures by itself
	if cl := r.header.Get("Content-Length"); r.status != 200 || cl != strconv.Itoa(len(r.body)) || len(r.body) < 64<<10 {
		t.Errorf("merge: %d, Content-Length %q of %d bytes", r.status, cl, len(r.body))
	}

	r = e.pdfOp(key, "split", "ranges=1-2,3-", b)
	if r.status != 200 || r.header.Get("Content-Type") != "application/zip" {
		t.Fatalf("split: %d %s", r.status, r.body)
	}
	z, err := zip.NewReader(bytes.NewReader(r.body), int64(len(r.body)))
	if err != nil || len(z.File) != 2 || z.File[0].Name != "b_1-2.pdf" || z.File[1].Name != "b_3.pdf" {
		t.Fatalf("split ZIP: %v %v", err, z)
	}

	for _, query := range []string{"page=1&dpi=36", ""} { // "": page 1 at 150 dpi
		r = e.pdfOp(key, "render", query, a)
		if _, err := png.Decode(bytes.NewReader(r.body)); r.status != 200 || r.header.Get("Content-Type") != "image/png" || err != nil {
			t.Fatalf("render?%s: %d %v", query, r.status, err)
		}
	}

	r = e.pdfOp(key, "metadata", "set.title=Hello", a)
	if r.status != 200 {
		t.Fatalf("metadata set: %d %s", r.status, r.body)
	}
	r = e.pdfOp(key, "metadata", "", upload{"titled.pdf", r.body})
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" || !strings.Contains(string(r.body), `"title":"Hello"`) {
		t.Fatalf("metadata: %d %s", r.status, r.body)
	}

	// Errors of the contract: no key, unknown operation and option, bad
	// values, a signed PDF, an unreadable one.
	e.pdfOp("", "merge", "", a, b).errorBody(t, 401, quire.CodeAuthentication)
	e.pdfOp(key, "shred", "", a).errorBody(t, 404, quire.CodeNotFound)
	for _, c := range []struct {
		op, query   string
		files       []upload
		field, want string
	}{
		{"rotate", "angle=45", []upload{a}, "angle", "90, 180 or 270"},
		{"rotate", "Angle=90", []upload{a}, "Angle", "did you mean angle?"},
		{"split", "", []upload{a}, "ranges", "either ranges"},
		{"merge", "", []upload{a}, "file", "two PDFs or more"},
		{"encrypt", "userPassword=pw&allow=print,fly", []upload{a}, "allow", `"fly" is not a permission`},
		{"metadata", "set.colour=red", []upload{a}, "set.colour", "is not a known query parameter"},
		{"render", "dpi=5000", []upload{a}, "dpi", "between 1 and"},
		{"render", "dpi=0", []upload{a}, "dpi", "between 1 and"},
		{"render", "page=0", []upload{a}, "page", "1 or more"},
		{"split", "ranges=0-2", []upload{a}, "ranges", "numbered from 1"},
		{"metadata", "set.title=a%0D%0Ab", []upload{a}, "set.title", "control characters"},
	} {
		body := e.pdfOp(key, c.op, c.query, c.files...).errorBody(t, 400, quire.CodeValidation)
		if len(body.Details) == 0 || body.Details[0].Field != c.field || !strings.Contains(body.Details[0].Issue, c.want) {
			t.Errorf("%s?%s: %+v, want %s: %s", c.op, c.query, body.Details, c.field, c.want)
		}
	}
	signed := signedPDF(t, e.signPDF(key, signBody(inline(pdftest.OnePage("Signed")))))
	if body := e.pdfOp(key, "rotate", "angle=90", upload{"s.pdf", signed}).errorBody(t, 422, quire.CodeUnprocessable); !strings.Contains(body.Message, "force=true") {
		t.Errorf("rotate of a signed PDF: %s", body.Message)
	}
	if r := e.pdfOp(key, "rotate", "angle=90&force=true", upload{"s.pdf", signed}); r.status != 200 {
		t.Errorf("forced rotate: %d %s", r.status, r.body)
	}
	e.pdfOp(key, "rotate", "angle=90", upload{"x.pdf", []byte("%PDF-1.7\nnot really")}).errorBody(t, 422, quire.CodeUnprocessable)

	// Metered as pdf: merge, split, render twice, metadata twice, forced rotate.
	// (The signing is metered as sign.)
	r = e.do("GET", "/v1/usage/api?groupBy=month", nil, map[string]string{"Authorization": "Bearer " + key})
	var rep metering.Report
	if r.json(t, &rep); r.status != 200 || len(rep.Keys) != 1 || len(rep.Keys[0].Periods) != 1 {
		t.Fatalf("usage: %d %s", r.status, r.body)
	}
	if u := rep.Keys[0].Periods[0].Operations.PDF; u.Requests != 8 || u.Documents != 10 {
		t.Errorf("pdf usage: %+v, want 8 requests of 10 documents", u)
	}
}

// TestHostilePDFsThroughThePDFTools: internal/pdftools passes every
// pathological PDF of pdftest through every operation
// (TestHostileInputsAreRefused); here every operation's route answers an
// unrepairable and a repairable one, and every one reaches the server
// through one route (rotate): an answer before the deadline of e.bounded,
// never a 5xx, a refusal (422) for those that cannot be repaired, and the
// server answers afterwards.
func TestHostilePDFsThroughThePDFTools(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	key := e.key("hostile@example.com")
	hostile := pdftest.HostileFiles()
	var unrepairable, repairable pdftest.Hostile
	for _, h := range hostile {
		if h.Repairable && repairable.PDF == nil {
			repairable = h
		} else if !h.Repairable && unrepairable.PDF == nil {
			unrepairable = h
		}
	}
	for _, op := range []string{"merge", "split", "flatten", "metadata", "encrypt", "watermark", "attach", "render"} {
		e.hostileThrough(t, key, op, unrepairable)
		e.hostileThrough(t, key, op, repairable)
	}
	for _, h := range hostile {
		e.hostileThrough(t, key, "rotate", h)
	}
}

// hostileThrough sends h through the PDF operation op: never a 5xx, a
// refusal (422) when it cannot be repaired, and the server answers after.
func (e *env) hostileThrough(t *testing.T, key, op string, h pdftest.Hostile) {
	t.Helper()
	queries := map[string]string{"split": "every=1", "rotate": "angle=90", "encrypt": "userPassword=x", "watermark": "text=x"}
	files := []upload{{"hostile.pdf", h.PDF}}
	if op == "merge" || op == "attach" {
		files = append(files, upload{"other.pdf", pdftest.OnePage("x")})
	}
	body, ctype := multipartFiles(files...)
	r := e.bounded(t, "POST", "/v1/pdf/"+op+"?"+queries[op], body, "Bearer "+key, ctype)
	switch {
	case r.status >= 500:
		t.Errorf("%s through %s: %d %s", h.Name, op, r.status, r.body)
	case !h.Repairable && r.status != 422:
		t.Errorf("%s through %s: %d, want 422", h.Name, op, r.status)
	}
	if r := e.bounded(t, "GET", "/v1/health", nil, "", ""); r.status != 200 {
		t.Fatalf("health after %s through %s: %d", h.Name, op, r.status)
	}
}

// TestPDFClientLeavingStopsTheWorker: a client that hangs up while
// pdfcpu splits a 200,000-page PDF (issue #46) ends the work through the
// whole server: the worker process is soon gone (quire_pdf_workers
// back at 0), where before the split went on for minutes.
func TestPDFClientLeavingStopsTheWorker(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	key := e.key("leaving@example.com")
	body, ctype := multipartFiles(upload{"huge.pdf", pdftest.WidePageTree(200_000)})
	ctx, hangUp := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "POST", e.URL+"/v1/pdf/split?every=1", body)
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", "Bearer "+key)
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			t.Errorf("the split answered %d before the client left", res.StatusCode)
		}
	}()
	workers := regexp.MustCompile(`(?m)^quire_pdf_workers (\d+)$`)
	running := func() string {
		m := workers.FindStringSubmatch(string(e.get("/metrics").body))
		if m == nil {
			t.Fatal("no quire_pdf_workers in /metrics")
		}
		return m[1]
	}
	waitFor(t, 3*time.Minute, "a pdfcpu worker running the split", func() bool { return running() == "1" })
	hangUp()
	<-answered
	// Uncancelled, the split runs for minutes: a worker gone well within
	// one proves that the hang-up stopped it.
	waitFor(t, 30*time.Second, "the worker gone after the client left", func() bool { return running() == "0" })
}
