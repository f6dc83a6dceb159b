package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/memory"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/ratelimit"
	"github.com/quire-dev/quire/internal/signing"
)

// TestFakeKeyOverLimit: a key over a limit is 429 RATE_LIMIT_ERROR with
// Retry-After and the IETF RateLimit fields of each limit it has
// (docs/api.md, "Per-key limits"), before any work.
func TestFakeKeyOverLimit(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.limits = &fakeLimits{lim: keylimit.Limits{Concurrent: 10, Rate: ratelimit.Rate{N: 600, Per: time.Minute}, Quota: 100},
		err: &quire.Error{Code: quire.CodeRateLimit, Message: "Too many requests: at most 600 per 1m for key.", RetryAfter: 42 * time.Second}}
	a := f.serve(t)
	r := fakeDo(t, a, "POST", "/v1/sign", goodKey, signBody(inline([]byte("%PDF-"))))
	r.errorBody(t, 429, quire.CodeRateLimit)
	for name, want := range map[string]string{
		"Retry-After":      "42",
		"RateLimit-Policy": `"rate";q=600;w=60, "quota";q=100;w=2592000, "concurrency";q=10;qu="concurrent-requests"`,
		"RateLimit":        `"rate";r=0;t=0, "quota";r=100;t=90, "concurrency";r=9`,
	} {
		if got := r.header.Get(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

// TestFakeKeyMetered: an answered request of a key carries the RateLimit
// fields and is counted once, before it is sent: its operation, one
// request, its documents, pages and the bytes of its body; an anonymous verify
// carries neither and counts nothing.
func TestFakeKeyMetered(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.limits = &fakeLimits{lim: keylimit.Limits{Concurrent: 2}}
	f.meter = &fakeMeter{}
	f.filler = &fakeFiller{}
	a := f.serve(t)
	body := signBody(inline([]byte("%PDF-")))
	r := fakeDo(t, a, "POST", "/v1/sign", goodKey, body)
	if r.status != 200 || r.header.Get("RateLimit-Policy") != `"concurrency";q=2;qu="concurrent-requests"` || r.header.Get("RateLimit") != `"concurrency";r=1` {
		t.Fatalf("%d %v %s", r.status, r.header, r.body)
	}
	charges := f.meter.charges
	if len(charges) != 1 || len(charges[0].Rows) != 1 {
		t.Fatalf("charges %+v, want one", charges)
	}
	row := charges[0].Rows[0]
	if row.KeyID != fakeKey.ID || row.Operation != quire.OpSign || row.Requests != 1 || row.Documents != 1 || row.InputBytes != int64(len(body)) {
		t.Errorf("charge %+v", row)
	}
	r = a.postFiles("/v1/convert?from=docx", map[string]string{"a.docx": "PK", "b.docx": "PK"})
	if charges = f.meter.charges; r.status != 200 || len(charges) != 2 || charges[1].Rows[0].Documents != 2 || charges[1].Rows[0].Pages != 1 {
		t.Errorf("convert of two files: %d, charges %+v", r.status, charges)
	}
	// The filler answers its template: here a PDF of one page, as to=pdf makes.
	r = fakeDo(t, a, "POST", "/v1/annotate?to=pdf", goodKey, `{"document":`+inline(pdftest.OnePage("filled"))+`,"fields":[]}`)
	if charges = f.meter.charges; r.status != 200 || len(charges) != 3 || charges[2].Rows[0].Operation != quire.OpAnnotate || charges[2].Rows[0].Pages != 1 {
		t.Errorf("annotate to PDF: %d, charges %+v", r.status, charges)
	}
	r = a.send("POST", "/v1/verify", strings.NewReader(`{"document":`+inline([]byte("%PDF-"))+`}`), "Content-Type", "application/json")
	if r.status != 200 || r.header.Get("RateLimit") != "" || len(f.meter.charges) != 3 {
		t.Errorf("anonymous verify: %d %v, %d charges", r.status, r.header, len(f.meter.charges))
	}
	fakeDo(t, a, "POST", "/v1/sign", goodKey, `{"signer":{}}`).errorBody(t, 400, quire.CodeValidation)
	if n := len(f.meter.charges); n != 3 {
		t.Errorf("a refused request was counted: %d charges", n)
	}
}

// TestFakeUncountedAnswerWithheld: an answer whose count cannot be
// recorded is not sent: 503 SERVICE_UNAVAILABLE with Retry-After instead
// (docs/configuration.md, "Metering"), on every metered route.
func TestFakeUncountedAnswerWithheld(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.meter = &fakeMeter{err: errDown}
	f.filler = &fakeFiller{}
	a := f.serve(t)
	for path, r := range map[string]response{
		"sign":     fakeDo(t, a, "POST", "/v1/sign", goodKey, signBody(inline([]byte("%PDF-")))),
		"convert":  a.postFiles("/v1/convert?from=docx", map[string]string{"a.docx": "%PDF-secret"}),
		"annotate": fakeDo(t, a, "POST", "/v1/annotate", goodKey, `{"document":`+inline([]byte("PK"))+`,"fields":[]}`),
	} {
		b := r.errorBody(t, 503, quire.CodeUnavailable)
		if r.header.Get("Retry-After") != "5" || !strings.Contains(b.Message, "could not be counted") || strings.Contains(string(r.body), "secret") {
			t.Errorf("%s: %v %s", path, r.header, r.body)
		}
		// Nothing of the withheld answer: its headers describe a document
		// the client did not get.
		for _, h := range []string{"X-Quire-Event-Id", "X-Quire-Document-Sha256", "Quire-Signature-Level", "Server-Timing", "Content-Disposition"} {
			if v := r.header.Get(h); v != "" {
				t.Errorf("%s: the 503 carries the withheld answer's %s: %q", path, h, v)
			}
		}
		if r.header.Get("X-Request-Id") == "" {
			t.Errorf("%s: the 503 lost the headers set before the work: %v", path, r.header)
		}
	}
}

// TestFakeMemoryBudget: a budgeted route charges its body to the memory
// budget (BytesPerBodyByte per byte) before reading it: a body that does
// not fit beside the requests in progress is 503 ENGINE_UNAVAILABLE with
// Retry-After, before the signer; a document named by URL is charged as
// the largest it may be. The budget's state is in /metrics.
func TestFakeMemoryBudget(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.memory = memory.NewBudget(2000*httpapi.BytesPerBodyByte, 100)
	f.signer.maxB = 4 << 10
	f.signer.got, f.signer.hold = make(chan signing.Request), make(chan struct{})
	a := f.serve(t)
	first := make(chan response)
	go func() {
		first <- fakeDo(t, a, "POST", "/v1/sign", goodKey, signBody(`{"url":"https://docs.example/a.pdf"}`))
	}()
	<-f.signer.got // the first request holds the whole budget (its document may be as large as the limit)
	r := fakeDo(t, a, "POST", "/v1/sign", goodKey, signBody(inline([]byte("%PDF-"))))
	r.errorBody(t, 503, quire.CodeEngineBusy)
	if r.header.Get("Retry-After") != "5" {
		t.Errorf("Retry-After %q, want 5 (memory.RetryAfter)", r.header.Get("Retry-After"))
	}
	held := string(a.send("GET", "/metrics", nil).body)
	close(f.signer.hold)
	if r := <-first; r.status != 200 {
		t.Errorf("the first request: %d %s", r.status, r.body)
	}
	for _, want := range []string{"quire_memory_budget_bytes 16000", "quire_memory_budget_held_bytes 16000", "quire_memory_budget_refused_total 1"} {
		if !strings.Contains(held, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
