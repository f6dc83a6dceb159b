package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// badRequest is a request that its operation refuses before any work.
type badRequest struct {
	name, target, contentType string
	body                      []byte
}

// jsonBad is a bad request with a JSON body.
func jsonBad(name, target, body string) badRequest {
	return badRequest{name, target, "application/json", []byte(body)}
}

// filesBad is a bad request with files as multipart fields "file".
func filesBad(name, target string, files ...upload) badRequest {
	body, ctype := multipartFiles(files...)
	return badRequest{name, target, ctype, body.Bytes()}
}

// TestBadJobsAreRefusedAtSubmission: each kind of input that a request is
// refused for before any work (its options, its documents' formats, sizes
// and expansion, the key's spent quota) is refused as a job
// (Prefer: respond-async) when it is submitted, with the synchronous
// request's status and body, rather than accepted (202) to fail later.
// No job runs here (no job workers): an accepted bad job would show as 202.
func TestBadJobsAreRefusedAtSubmission(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConversion(), withChromium())
	key := e.key("bad-jobs@example.com")
	pdf := pdftest.OnePage("bad jobs")
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	signer := `"signer":{"email":"s@example.com","name":"Sam"},"auditTrail":[{"type":"submit","timestamp":"2026-11-22T10:00:00Z"}]`
	deep := strings.Repeat("<div>", 5000) + "deep" + strings.Repeat("</div>", 5000)
	cases := []badRequest{
		filesBad("convert: not a DOCX, said to be one", "/v1/convert?from=docx", upload{"letter.docx", []byte("this is plain text, not a DOCX")}),
		filesBad("convert: an unknown option", "/v1/convert?nosuch=1", upload{"a.txt", []byte("hello")}),
		filesBad("convert: an output it cannot make", "/v1/convert?from=txt&to=docx", upload{"a.txt", []byte("hello")}),
		filesBad("convert: a package that declares 1 GiB", "/v1/convert?from=docx", upload{"bomb.docx", declaredBomb(t)}),
		filesBad("convert: a page nested too deep (Chromium)", "/v1/convert?from=html", upload{"deep.html", []byte(deep)}),
		filesBad("convert: a Chromium option on a document", "/v1/convert?from=txt&javascript=true", upload{"a.txt", []byte("hello")}),
		jsonBad("sign: no signer", "/v1/sign", `{"document":{"base64":"`+b64(pdf)+`"}}`),
		jsonBad("sign: not JSON", "/v1/sign", `{"document":`),
		jsonBad("sign: an unknown query parameter", "/v1/sign?nosuch=1", `{"document":{"base64":"`+b64(pdf)+`"},`+signer+`}`),
		jsonBad("sign: neither a PDF nor a DOCX", "/v1/sign", `{"document":{"base64":"`+b64([]byte("plain text"))+`"},`+signer+`}`),
		jsonBad("sign: pdfa for a PDF", "/v1/sign?pdfa=PDF/A-2b", `{"document":{"base64":"`+b64(pdf)+`"},`+signer+`}`),
		jsonBad("sign: an unreadable PDF", "/v1/sign", `{"document":{"base64":"`+b64([]byte("%PDF-1.7\n"+strings.Repeat("garbage ", 50)))+`"},`+signer+`}`),
		jsonBad("annotate: no fields", "/v1/annotate", `{"document":{"base64":"UEs="}}`),
		jsonBad("annotate: a template that is not a ZIP", "/v1/annotate", `{"document":{"base64":"`+b64([]byte("not a zip"))+`"},"fields":[]}`),
		jsonBad("annotate: a template that declares 1 GiB", "/v1/annotate", `{"document":{"base64":"`+b64(declaredBomb(t))+`"},"fields":[]}`),
		filesBad("pdf: ranges that do not parse", "/v1/pdf/split?ranges=abc", upload{"a.pdf", pdf}),
		filesBad("pdf: not a PDF", "/v1/pdf/rotate?angle=90", upload{"a.pdf", []byte("not a PDF at all")}),
		filesBad("pdf: an angle that is not a right angle", "/v1/pdf/rotate?angle=45", upload{"a.pdf", pdf}),
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { sameRefusal(t, e, key, c) })
	}
}

// TestJobOfASpentQuotaIsRefused: a key whose monthly quota is used up has
// its job refused when submitted, as its request is (429).
func TestJobOfASpentQuotaIsRefused(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withKeyLimits(keylimit.Limits{Quota: 1}))
	key := e.key("quota-jobs@example.com")
	doc := `{"document":{"base64":"` + base64.StdEncoding.EncodeToString(pdftest.OnePage("quota")) +
		`"},"signer":{"email":"s@example.com","name":"Sam"},"auditTrail":[{"type":"submit","timestamp":"2026-11-22T10:00:00Z"}]}`
	if r := e.do("POST", "/v1/sign", strings.NewReader(doc), map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}); r.status != 200 {
		t.Fatalf("the quota's one document: %d %s", r.status, r.body)
	}
	sameRefusal(t, e, key, jsonBad("sign past the quota", "/v1/sign", doc))
}

// sameRefusal sends c synchronously and as a job, and checks that both
// are refused alike: one status (4xx), one error body but its request id.
func sameRefusal(t *testing.T, e *env, key string, c badRequest) {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + key, "Content-Type": c.contentType}
	sync := e.do("POST", c.target, bytes.NewReader(c.body), h)
	h["Prefer"] = "respond-async"
	job := e.do("POST", c.target, bytes.NewReader(c.body), h)
	if sync.status < 400 || sync.status >= 500 {
		t.Fatalf("the synchronous request answered %d %s: not a bad request", sync.status, sync.body)
	}
	if job.status != sync.status {
		t.Fatalf("as a job: %d %s; synchronously: %d %s", job.status, job.body, sync.status, sync.body)
	}
	var a, b httpapi.ErrorBody
	if json.Unmarshal(sync.body, &a) != nil || json.Unmarshal(job.body, &b) != nil {
		t.Fatalf("error bodies: %s / %s", sync.body, job.body)
	}
	a.RequestID, b.RequestID = "", ""
	aj, _ := json.Marshal(a)
	bj, _ := json.Marshal(b)
	if !bytes.Equal(aj, bj) {
		t.Errorf("as a job: %s\nsynchronously: %s", bj, aj)
	}
	if job.header.Get("Retry-After") != sync.header.Get("Retry-After") || job.status == http.StatusAccepted {
		t.Errorf("Retry-After: %q as a job, %q synchronously", job.header.Get("Retry-After"), sync.header.Get("Retry-After"))
	}
}
