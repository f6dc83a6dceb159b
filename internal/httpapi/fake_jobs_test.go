package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/jobs"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/pdftools"
	"github.com/quire-dev/quire/internal/ratelimit"
)

// jobsFakes are fakes with jobs, the filler and the PDF tools, whose
// routes may run as jobs.
func jobsFakes() *fakes {
	f := newFakes()
	f.jobs = &fakeJobs{}
	f.filler = &fakeFiller{}
	f.pdf = &fakePDFTools{res: pdftools.Result{Data: []byte("%PDF-"), ContentType: "application/pdf"}}
	return f
}

const async = "respond-async, wait=0"

// TestFakeJobSubmission: Prefer: respond-async answers 202 with
// Location, Preference-Applied and the job (docs/api.md "Jobs and
// webhooks"); the job keeps the request as sent, without the credentials
// and the asynchrony, and its webhook.
func TestFakeJobSubmission(t *testing.T) {
	t.Parallel()
	f := jobsFakes()
	a := f.serve(t)
	r := a.postFiles("/v1/convert?from=docx", map[string]string{"a.docx": "PK"}, "Prefer", async, "Quire-Webhook-Url", "https://app.example/hook")
	if r.status != 202 || r.header.Get("Location") != "/v1/jobs/j1" || r.header.Get("Preference-Applied") != "respond-async" {
		t.Fatalf("%d %v %s", r.status, r.header, r.body)
	}
	var job jobs.Resource
	r.json(t, &job)
	if job.ID != "j1" || job.Operation != quire.OpConvert || job.Status != "queued" || job.StartedAt != nil || job.Webhook == nil || job.Webhook.URL != "https://app.example/hook" {
		t.Errorf("job %s", r.body)
	}
	if len(f.jobs.submitted) != 1 {
		t.Fatalf("%d jobs stored, want 1", len(f.jobs.submitted))
	}
	req := f.jobs.submitted[0]
	h := http.Header(req.Header)
	if req.Method != "POST" || req.Target != "/v1/convert?from=docx" || !strings.Contains(string(req.Body), "PK") ||
		h.Get("Authorization") != "" || h.Get("Prefer") != "" || h.Get("Quire-Webhook-Url") != "" || !strings.HasPrefix(h.Get("Content-Type"), "multipart/form-data") {
		t.Errorf("stored %s %s %v", req.Method, req.Target, req.Header)
	}
	for _, path := range []string{"/v1/sign", "/v1/annotate"} {
		body := signBody(inline([]byte("%PDF-")))
		if path == "/v1/annotate" {
			body = `{"document":` + inline([]byte("PK")) + `,"fields":[]}`
		}
		if r := a.send("POST", path, strings.NewReader(body), "Authorization", "Bearer "+goodKey, "Prefer", async); r.status != 202 {
			t.Errorf("%s as a job: %d %s", path, r.status, r.body)
		}
	}
	if r := a.postFiles("/v1/pdf/rotate?angle=90", map[string]string{"a.pdf": "%PDF-"}, "Prefer", async); r.status != 202 {
		t.Errorf("a PDF tool as a job: %d %s", r.status, r.body)
	}
}

// TestFakeJobRefusedAtSubmission: what the request would be refused for
// before any work is refused at submission, with the same answer, and
// nothing is stored: a bad webhook address, a spent quota (429 with
// Retry-After), the route's checks (query, body, the service's Check),
// a body over the limit, and the store's own refusal (too many jobs).
func TestFakeJobRefusedAtSubmission(t *testing.T) {
	t.Parallel()
	f := jobsFakes()
	f.limits = &fakeLimits{}
	a := f.serve(t)
	post := func(path, body string, header ...string) response {
		return a.send("POST", path, strings.NewReader(body), append([]string{"Authorization", "Bearer " + goodKey, "Prefer", async}, header...)...)
	}
	f.jobs.webhookErr = quire.Invalid("The webhook URL is not valid.", quire.Detail{Field: "Quire-Webhook-Url", Issue: "must be http or https"})
	post("/v1/sign", signBody(inline([]byte("%PDF-"))), "Quire-Webhook-Url", "ftp://x").errorBody(t, 400, quire.CodeValidation)
	f.jobs.webhookErr = nil

	f.limits.quotaErr = &quire.Error{Code: quire.CodeRateLimit, Message: "The monthly quota of this API key is used up.", RetryAfter: 90 * time.Second}
	if r := post("/v1/sign", signBody(inline([]byte("%PDF-")))); r.errorBody(t, 429, quire.CodeRateLimit).Message == "" || r.header.Get("Retry-After") != "90" {
		t.Errorf("spent quota: Retry-After %q", r.header.Get("Retry-After"))
	}
	f.limits.quotaErr = nil

	post("/v1/sign?levle=B-B", signBody(inline([]byte("%PDF-")))).errorBody(t, 400, quire.CodeValidation)
	post("/v1/sign", `{"signer":{"emial":"x"}}`).errorBody(t, 400, quire.CodeValidation)
	post("/v1/annotate", `[]`).errorBody(t, 400, quire.CodeValidation)
	post("/v1/annotate?to=xml", `{}`).errorBody(t, 400, quire.CodeValidation)
	a.postFiles("/v1/convert?qualty=9", map[string]string{"a.docx": "PK"}, "Prefer", async).errorBody(t, 400, quire.CodeValidation)
	a.postFiles("/v1/convert", nil, "Prefer", async).errorBody(t, 400, quire.CodeValidation)
	a.postFiles("/v1/pdf/split?every=x", map[string]string{"a.pdf": "%PDF-"}, "Prefer", async).errorBody(t, 400, quire.CodeValidation)
	f.pdf.err = quire.Errorf(quire.CodeUnprocessable, "The PDF is encrypted.")
	a.postFiles("/v1/pdf/split?every=1", map[string]string{"a.pdf": "%PDF-"}, "Prefer", async).errorBody(t, 422, quire.CodeUnprocessable)
	f.filler.err = quire.Errorf(quire.CodeUnprocessable, "The template is not a DOCX.")
	post("/v1/annotate", `{"document":`+inline([]byte("x"))+`,"fields":[]}`).errorBody(t, 422, quire.CodeUnprocessable)
	a.send("POST", "/v1/sign", strings.NewReader(strings.Repeat(" ", 200<<10)), "Authorization", "Bearer "+goodKey, "Prefer", async).
		errorBody(t, 413, quire.CodePayloadTooLarge)
	if len(f.jobs.submitted) != 0 {
		t.Fatalf("refused requests were stored: %+v", f.jobs.submitted)
	}

	f.jobs.submitErr = &quire.Error{Code: quire.CodeRateLimit, Message: "This API key has 1000 jobs not yet ended.", RetryAfter: time.Second}
	if r := post("/v1/sign", signBody(inline([]byte("%PDF-")))); r.errorBody(t, 429, quire.CodeRateLimit).Message == "" || r.header.Get("Retry-After") != "1" {
		t.Errorf("too many jobs: Retry-After %q", r.header.Get("Retry-After"))
	}
}

// TestFakeJobReading: a job and its result belong to the key that
// submitted it (docs/api.md: any other id is 404, as for a job that does
// not exist); the result is the synchronous answer, status, headers and
// body; every path under /v1/jobs needs a key, even one that does not
// exist, so that a caller without one learns nothing.
func TestFakeJobReading(t *testing.T) {
	t.Parallel()
	f := jobsFakes()
	created := time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)
	f.jobs.job = quire.Job{ID: "j1", KeyID: fakeKey.ID, Operation: quire.OpSign, Status: "succeeded", CreatedAt: created, StartedAt: created, FinishedAt: created.Add(time.Second)}
	f.jobs.result = quire.JobResult{Status: 200, Header: map[string][]string{"Content-Type": {"application/json"}, "X-Request-Id": {"run-1"}}, Body: []byte(`{"document":{}}`)}
	a := f.serve(t)
	r := fakeDo(t, a, "GET", "/v1/jobs/j1", goodKey, "")
	var job jobs.Resource
	if r.json(t, &job); r.status != 200 || job.Status != "succeeded" || job.FinishedAt == nil || !job.FinishedAt.Equal(created.Add(time.Second)) || job.Error != nil {
		t.Errorf("job: %d %s", r.status, r.body)
	}
	r = fakeDo(t, a, "GET", "/v1/jobs/j1/result", goodKey, "")
	if r.status != 200 || string(r.body) != `{"document":{}}` || r.header.Get("X-Request-Id") != "run-1" || r.header.Get("Content-Length") != "15" {
		t.Errorf("result: %d %v %s", r.status, r.header, r.body)
	}
	fakeDo(t, a, "GET", "/v1/jobs/j2", goodKey, "").errorBody(t, 404, quire.CodeNotFound)
	fakeDo(t, a, "GET", "/v1/jobs/j2/result", goodKey, "").errorBody(t, 404, quire.CodeNotFound)
	fakeDo(t, a, "GET", "/v1/jobs/j1", "", "").errorBody(t, 401, quire.CodeAuthentication)
	fakeDo(t, a, "GET", "/v1/jobs/j1/nothing", "", "").errorBody(t, 401, quire.CodeAuthentication)
	fakeDo(t, a, "GET", "/v1/jobs/j1/nothing", goodKey, "").errorBody(t, 404, quire.CodeNotFound)
	fakeDo(t, a, "DELETE", "/v1/jobs/j1", goodKey, "").errorBody(t, 405, quire.CodeMethodNotAllowed)
}

// TestFakeRunJob: a job's request runs through the routes as its key:
// the answer is the job's result, without the headers of the moment; an
// answer that says "not now" (429, 503) is not a result but a wait of
// its Retry-After; a key revoked since gets the answer of a revoked key.
func TestFakeRunJob(t *testing.T) {
	t.Parallel()
	f := jobsFakes()
	f.limits = &fakeLimits{lim: keylimit.Limits{Concurrent: 10, Rate: ratelimit.Rate{N: 600, Per: time.Minute}}}
	a := f.serve(t)
	job := quire.Job{ID: "j1", KeyID: fakeKey.ID}
	req := quire.JobRequest{Method: "POST", Target: "/v1/sign", Header: map[string][]string{"Content-Type": {"application/json"}},
		Body: []byte(signBody(inline([]byte("%PDF-"))))}
	res, err := a.api.RunJob(context.Background(), job, req)
	if err != nil || res.Status != 200 || !strings.Contains(string(res.Body), `"eventId":"ev"`) {
		t.Fatalf("run: %v %d %s", err, res.Status, res.Body)
	}
	h := http.Header(res.Header)
	if h.Get("RateLimit") != "" || h.Get("X-Quire-Event-Id") != "ev" || h.Get("X-Request-Id") == "" {
		t.Errorf("result headers %v: want the answer's, without RateLimit", res.Header)
	}

	f.limits.err = &quire.Error{Code: quire.CodeRateLimit, Message: "Too many requests.", RetryAfter: 42 * time.Second}
	_, err = a.api.RunJob(context.Background(), job, req)
	var later *jobs.Later
	if !errors.As(err, &later) || later.After != 42*time.Second || later.Result.Status != 429 {
		t.Errorf("over the rate: %v, want a wait of 42s", err)
	}
	f.limits.err = nil

	f.keys.revoked = true
	revoked := f.serve(t)
	res, err = revoked.api.RunJob(context.Background(), job, req)
	if err != nil || res.Status != 401 || !strings.Contains(string(res.Body), "revoked") {
		t.Errorf("revoked key: %v %d %s", err, res.Status, res.Body)
	}
	if _, err := a.api.RunJob(context.Background(), job, quire.JobRequest{Method: "BAD METHOD", Target: "/v1/sign"}); err == nil {
		t.Error("a request that cannot be made ran")
	}
}
