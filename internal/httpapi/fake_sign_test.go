package httpapi_test

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/signing"
)

// TestFakeSignFieldHints: every field of a sign request that does not
// decode is named in one 400, an unknown one with the nearest known name
// (DESIGN.md: signer.emial -> "did you mean email?"), a value of the wrong
// type with the type it must have.
func TestFakeSignFieldHints(t *testing.T) {
	t.Parallel()
	a := fakeServer(t, &fakeSigner{maxB: 64 << 10})
	body := `{"document":{"bas64":"JVBERi0="},"signer":{"emial":"ann@example.com","name":"Ann"},"auditTrial":[],
		"auditTrail":[{"type":"submit","timestamp":"yesterday","data":"x"}],"eventId":7,"metadata":"m",
		"certificate":{"enabled":"yes"},"zzz":1}`
	b := fakeDo(t, a, "POST", "/v1/sign", goodKey, body).errorBody(t, 400, quire.CodeValidation)
	want := map[string]string{
		"document.bas64":          "did you mean base64?",
		"signer.emial":            "did you mean email?",
		"auditTrial":              "did you mean auditTrail?",
		"auditTrail[0].timestamp": "RFC 3339",
		"auditTrail[0].data":      "must be an object",
		"eventId":                 "must be a string",
		"metadata":                "must be an object",
		"certificate.enabled":     "must be a boolean",
		"zzz":                     "known: document, signer",
	}
	for field, issue := range want {
		if got := detail(t, b, field); !strings.Contains(got, issue) {
			t.Errorf("%s: issue %q, want it to say %q", field, got, issue)
		}
	}
	for i := 1; i < len(b.Details); i++ {
		if b.Details[i-1].Field > b.Details[i].Field {
			t.Errorf("details not sorted by field: %+v", b.Details)
		}
	}
}

// TestFakeSignShapes: a body that is not an object, objects where a
// value is expected, and the contradiction of certificate.enabled and
// its synonym enable are each named.
func TestFakeSignShapes(t *testing.T) {
	t.Parallel()
	a := fakeServer(t, &fakeSigner{maxB: 64 << 10})
	for _, c := range []struct{ body, field, issue string }{
		{`[1]`, "body", "must be a JSON object"},
		{`{"document":"x"}`, "document", "must be an object"},
		{`{"auditTrail":{}}`, "auditTrail", "must be an array"},
		{`{"auditTrail":[7]}`, "auditTrail[0]", "must be an object"},
		{`{"signer":null}`, "signer", "is required"},
		{`{"signer":{"email":3}}`, "signer.email", "must be a string"},
		{`{"certificate":{"enabled":true,"enable":false}}`, "certificate.enable", "contradicts certificate.enabled"},
		{`{"metadata":{"k":"` + strings.Repeat("m", signing.MaxMetadataBytes) + `"}}`, "metadata", "must be at most"},
	} {
		b := fakeDo(t, a, "POST", "/v1/sign", goodKey, c.body).errorBody(t, 400, quire.CodeValidation)
		if got := detail(t, b, c.field); !strings.Contains(got, c.issue) {
			t.Errorf("%s: %s: issue %q, want %q", c.body[:min(len(c.body), 40)], c.field, got, c.issue)
		}
	}
}

// TestFakeSignBase64: document.base64 is plain base64 (padded or not,
// with line breaks as mail tools write them) or a data: URI of base64;
// anything else is named, and so is a document over the limit.
func TestFakeSignBase64(t *testing.T) {
	t.Parallel()
	signer := &fakeSigner{maxB: 1 << 10, got: make(chan signing.Request, 1)}
	a := fakeServer(t, signer)
	pdf := []byte("%PDF-1.7 tiny")
	enc := base64.StdEncoding.EncodeToString(pdf)
	for name, doc := range map[string]string{
		"padded":      enc,
		"unpadded":    strings.TrimRight(enc, "="),
		"line breaks": enc[:8] + `\r\n` + enc[8:],
		"data: URI":   "data:application/pdf;base64," + enc,
	} {
		r := fakeDo(t, a, "POST", "/v1/sign", goodKey, signBody(`{"base64":"`+doc+`"}`))
		if r.status != 200 {
			t.Errorf("%s: %d %s", name, r.status, r.body)
			continue
		}
		if got := <-signer.got; string(got.Document.Bytes) != string(pdf) {
			t.Errorf("%s: the signer got %q, want %q", name, got.Document.Bytes, pdf)
		}
	}
	for _, c := range []struct{ doc, issue string }{
		{"!!!not base64", "is not valid base64"},
		{"data:application/pdf,JVBERi0=", "a data: URI must be base64-encoded"},
		{base64.StdEncoding.EncodeToString(make([]byte, 1100)), "larger than the limit of 1024 bytes"},
		{"data:application/pdf;base64," + base64.StdEncoding.EncodeToString(make([]byte, 1100)), "larger than the limit of 1024 bytes"},
	} {
		b := fakeDo(t, a, "POST", "/v1/sign", goodKey, signBody(`{"base64":"`+c.doc+`"}`)).errorBody(t, 400, quire.CodeValidation)
		if got := detail(t, b, "document.base64"); !strings.Contains(got, c.issue) {
			t.Errorf("%.30s: issue %q, want %q", c.doc, got, c.issue)
		}
		<-signer.got // the request reached the service, which refused it with the adapter's details
	}
}

// TestFakeSignQuery: the query of /v1/sign takes pdfa, level and strict,
// each once; a near miss gets a hint and a repetition is named, in one
// 400 before the body is read; so is a strict that is not a boolean.
func TestFakeSignQuery(t *testing.T) {
	t.Parallel()
	signer := &fakeSigner{maxB: 64 << 10, got: make(chan signing.Request, 1)}
	a := fakeServer(t, signer)
	b := fakeDo(t, a, "POST", "/v1/sign?levle=B-T&pdfa=PDF/A-1b&pdfa=PDF/A-2b", goodKey, `{`).errorBody(t, 400, quire.CodeValidation)
	for field, issue := range map[string]string{"levle": "did you mean level?", "pdfa": "more than once"} {
		if got := detail(t, b, field); !strings.Contains(got, issue) {
			t.Errorf("%s: issue %q, want %q", field, got, issue)
		}
	}
	b = fakeDo(t, a, "POST", "/v1/sign?strict=1", goodKey, signBody(inline([]byte("%PDF-")))).errorBody(t, 400, quire.CodeValidation)
	if got := detail(t, b, "strict"); got != "must be true or false" {
		t.Errorf("strict=1: issue %q", got)
	}
	select {
	case req := <-signer.got:
		t.Fatalf("a request with a bad query reached the signer: %+v", req)
	default:
	}
	if r := fakeDo(t, a, "POST", "/v1/sign?level=B-LT&strict=true&pdfa=PDF/A-2b", goodKey, signBody(inline([]byte("%PDF-")))); r.status != 200 {
		t.Fatalf("a good query: %d %s", r.status, r.body)
	}
	if req := <-signer.got; req.Level != "B-LT" || !req.Strict || req.PDFA != "PDF/A-2b" {
		t.Errorf("the signer got level %q strict %v pdfa %q, want the query's", req.Level, req.Strict, req.PDFA)
	}
}

// TestFakeSignAnswer: the signed PDF comes as DESIGN.md says, plain
// base64 in {"document":{"base64","contentType"}}, with the event id and
// digest in the body and in X-Quire-Event-Id and X-Quire-Document-SHA256,
// the level reached in Quire-Signature-Level, and an exact Content-Length.
func TestFakeSignAnswer(t *testing.T) {
	t.Parallel()
	a := fakeServer(t, &fakeSigner{maxB: 64 << 10})
	r := fakeDo(t, a, "POST", "/v1/sign", goodKey, signBody(inline([]byte("%PDF-"))))
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("%d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	var got struct {
		Document struct{ Base64, ContentType string }
		EventID  string
		SHA256   string
	}
	r.json(t, &got)
	pdf, err := base64.StdEncoding.DecodeString(got.Document.Base64)
	if err != nil || string(pdf) != "%PDF-1.7 signed" || got.Document.ContentType != "application/pdf" || got.EventID != "ev" || got.SHA256 != "00" {
		t.Errorf("answer %s (base64 %v)", r.body, err)
	}
	for name, want := range map[string]string{"X-Quire-Event-Id": "ev", "X-Quire-Document-SHA256": "00", "Quire-Signature-Level": "B-B",
		"Content-Length": strconv.Itoa(len(r.body)), "X-Content-Type-Options": "nosniff"} {
		if r.header.Get(name) != want {
			t.Errorf("%s: %q, want %q", name, r.header.Get(name), want)
		}
	}
}

// TestFakeSignServiceErrors: what the signer answers is the answer: an
// engine or TSA that is down is 503 with Retry-After in whole seconds
// (rounded up), a code without a status is 500, a failure that is no
// error of the contract is 500
// without its text, or 503 SERVICE_UNAVAILABLE when the database does
// not answer either.
func TestFakeSignServiceErrors(t *testing.T) {
	t.Parallel()
	sign := func(t *testing.T, signerErr, dbErr error) response {
		f := newFakes()
		f.signer.err, f.db.err = signerErr, dbErr
		return fakeDo(t, f.serve(t), "POST", "/v1/sign", goodKey, signBody(inline([]byte("%PDF-"))))
	}
	r := sign(t, &quire.Error{Code: quire.CodeEngineBusy, Message: "No time-stamp authority answers.", RetryAfter: 2500e6}, nil)
	r.errorBody(t, 503, quire.CodeEngineBusy)
	if r.header.Get("Retry-After") != "3" {
		t.Errorf("Retry-After %q, want 3 (2.5 s rounded up)", r.header.Get("Retry-After"))
	}
	r = sign(t, errDown, nil)
	if b := r.errorBody(t, 500, quire.CodeInternal); strings.Contains(b.Message, "5432") || r.header.Get("Retry-After") != "" {
		t.Errorf("a 500 tells the machine's details or asks a retry: %s %v", r.body, r.header)
	}
	sign(t, quire.Errorf("NEW_CODE", "A code the contract does not have."), nil).errorBody(t, 500, "NEW_CODE")
	r = sign(t, errDown, errDown)
	r.errorBody(t, 503, quire.CodeUnavailable)
	if r.header.Get("Retry-After") != "5" {
		t.Errorf("database down: Retry-After %q, want 5", r.header.Get("Retry-After"))
	}
}

// TestFakeVerifyInputs: /v1/verify takes the PDF as the multipart part
// "file" or as JSON {"document":{...}}, with or without a key (a wrong
// one is 401); a missing, empty or malformed part and an unknown JSON
// field are 400 naming them.
func TestFakeVerifyInputs(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.signer.verify = signing.VerifyResult{Valid: true, Signers: []signing.SignerResult{}}
	a := f.serve(t)
	r := a.postFiles("/v1/verify", map[string]string{"signed.pdf": "%PDF-12345"})
	var res signing.VerifyResult
	if r.json(t, &res); r.status != 200 || !res.Valid || res.Document.Size != 10 {
		t.Errorf("multipart verify: %d %s", r.status, r.body)
	}
	r = a.send("POST", "/v1/verify", strings.NewReader(`{"document":`+inline([]byte("%PDF-"))+`}`), "Content-Type", "application/json")
	if r.json(t, &res); r.status != 200 || res.Document.Size != 5 || r.header.Get("RateLimit") != "" {
		t.Errorf("anonymous JSON verify: %d %s %v", r.status, r.body, r.header)
	}
	fakeDo(t, a, "POST", "/v1/verify", "qk_wrong", `{}`).errorBody(t, 401, quire.CodeAuthentication)

	b := fakeDo(t, a, "POST", "/v1/verify", goodKey, `{"documnet":{}}`).errorBody(t, 400, quire.CodeValidation)
	if got := detail(t, b, "documnet"); !strings.Contains(got, "did you mean document?") {
		t.Errorf("documnet: %q", got)
	}
	b = a.send("POST", "/v1/verify", strings.NewReader("--x\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nv\r\n--x--\r\n"),
		"Content-Type", "multipart/form-data; boundary=x").errorBody(t, 400, quire.CodeValidation)
	if got := detail(t, b, "file"); !strings.Contains(got, "is required") {
		t.Errorf("no file part: %q", got)
	}
	b = a.postFiles("/v1/verify", map[string]string{"empty.pdf": ""}).errorBody(t, 400, quire.CodeValidation)
	if got := detail(t, b, "file"); got != "must not be empty" {
		t.Errorf("empty file: %q", got)
	}
	b = a.send("POST", "/v1/verify", strings.NewReader("--x\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n%PDF"),
		"Content-Type", "multipart/form-data; boundary=x").errorBody(t, 400, quire.CodeValidation)
	if b.Message != "The multipart body is malformed." {
		t.Errorf("a part cut short: %+v", b)
	}
}

// TestFakeVerifyKeyAndCAFiles: the signing key's description is public
// JSON; the CA's CRL and certificate are DER with their media types and
// caching (a CRL never cached), and an unknown CA is 404.
func TestFakeVerifyKeyAndCAFiles(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.signer.ca = map[string][]byte{"ca1": {0x30, 0x03, 0x02, 0x01, 0x01}}
	a := f.serve(t)
	r := a.send("GET", "/v1/verify/key", nil)
	var key struct{ Version, Algorithm string }
	if r.json(t, &key); r.status != 200 || key.Version != "v-fake" || key.Algorithm != "ECDSA-SHA256" {
		t.Errorf("/v1/verify/key: %d %s", r.status, r.body)
	}
	for path, want := range map[string][2]string{
		"/v1/ca/ca1/crl":         {"application/pkix-crl", "no-cache"},
		"/v1/ca/ca1/certificate": {"application/pkix-cert", "max-age=86400"},
	} {
		r := a.send("GET", path, nil)
		if r.status != 200 || string(r.body) != "\x30\x03\x02\x01\x01" || r.header.Get("Content-Type") != want[0] || r.header.Get("Cache-Control") != want[1] {
			t.Errorf("%s: %d %q %v", path, r.status, r.body, r.header)
		}
	}
	a.send("GET", "/v1/ca/nobody/crl", nil).errorBody(t, 404, quire.CodeNotFound)
}
