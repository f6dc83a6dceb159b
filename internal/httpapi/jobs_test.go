package httpapi_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/jobs"
	"github.com/quire-dev/quire/internal/store/storetest"
)

func withJobs(workers int) envOption { return func(c *apitest.Config) { c.JobWorkers = workers } }

// submit sends an annotate request asking for a job, with header added.
func (e *env) submitAnnotate(key string, body []byte, header map[string]string) response {
	e.t.Helper()
	h := map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json", "Prefer": "respond-async"}
	for k, v := range header {
		h[k] = v
	}
	return e.do("POST", "/v1/annotate", bytes.NewReader(body), h)
}

// waitJob polls the job of r (a 202) until it has ended, and returns it.
func (e *env) waitJob(key string, r response) jobs.Resource {
	e.t.Helper()
	if r.status != http.StatusAccepted {
		e.t.Fatalf("submit: %d %s", r.status, r.body)
	}
	var j jobs.Resource
	r.json(e.t, &j)
	if j.Status != quire.JobQueued || r.header.Get("Location") != "/v1/jobs/"+j.ID {
		e.t.Fatalf("202 %+v, Location %q", j, r.header.Get("Location"))
	}
	for deadline, tick := time.Now().Add(60*time.Second), time.Tick(50*time.Millisecond); time.Now().Before(deadline); <-tick {
		g := e.do("GET", "/v1/jobs/"+j.ID, nil, map[string]string{"Authorization": "Bearer " + key})
		if g.status != 200 {
			e.t.Fatalf("GET job: %d %s", g.status, g.body)
		}
		g.json(e.t, &j)
		if j.Status == quire.JobSucceeded || j.Status == quire.JobFailed {
			return j
		}
	}
	e.t.Fatalf("job %s still %s after 60 s", j.ID, j.Status)
	return j
}

func annotateBody(t *testing.T) []byte {
	t.Helper()
	docx, err := os.ReadFile(filepath.Join(annotateCorpus, "synthetic-sc-template.docx"))
	if err != nil {
		t.Skipf("the shared corpus is not here (%s): %v", annotateCorpus, err)
	}
	b, _ := json.Marshal(map[string]any{"document": docField(docx), "fields": []any{
		map[string]any{"group": "company", "type": "text", "value": "ACME Inc"},
		map[string]any{"id": "missing", "type": "text", "value": "x"},
	}})
	return b
}

// A job's result is byte for byte the synchronous answer, with the
// headers that carry meaning; another key sees no such job.
func TestJobResultIsTheSynchronousAnswer(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := newEnv(t, storetest.Open(t, storetest.URL(t, backend)), unlimited(), withJobs(2))
			body := annotateBody(t)
			key, other := e.key("jobs@example.com"), e.key("other@example.com")
			auth := map[string]string{"Authorization": "Bearer " + key}

			sync := e.do("POST", "/v1/annotate", bytes.NewReader(body), map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"})
			if sync.status != 200 {
				t.Fatalf("synchronous: %d %s", sync.status, sync.body)
			}
			j := e.waitJob(key, e.submitAnnotate(key, body, nil))
			if j.Status != quire.JobSucceeded || j.Operation != quire.OpAnnotate || j.StartedAt == nil || j.FinishedAt == nil || j.Error != nil {
				t.Fatalf("job %+v", j)
			}
			res := e.do("GET", "/v1/jobs/"+j.ID+"/result", nil, auth)
			if res.status != sync.status || !bytes.Equal(res.body, sync.body) {
				t.Fatalf("result %d, %d bytes; synchronous %d, %d bytes", res.status, len(res.body), sync.status, len(sync.body))
			}
			for _, h := range []string{"Content-Type", "Content-Disposition", httpapi.UnmatchedFieldsHeader} {
				if res.header.Get(h) != sync.header.Get(h) {
					t.Errorf("%s: %q, synchronous %q", h, res.header.Get(h), sync.header.Get(h))
				}
			}
			for _, path := range []string{"/v1/jobs/" + j.ID, "/v1/jobs/" + j.ID + "/result"} {
				e.do("GET", path, nil, map[string]string{"Authorization": "Bearer " + other}).errorBody(t, 404, quire.CodeNotFound)
				e.do("GET", path, nil, nil).errorBody(t, 401, quire.CodeAuthentication)
			}

			// A request the operation refuses before any work is refused
			// when submitted, as it is synchronously
			// (TestBadJobsAreRefusedAtSubmission has every kind).
			bad := []byte(`{"document":{"base64":"UEs="}}`)
			syncBad := e.do("POST", "/v1/annotate", bytes.NewReader(bad), map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"})
			refused := e.submitAnnotate(key, bad, nil).errorBody(t, 400, quire.CodeValidation)
			if refused.Message != syncBad.errorBody(t, 400, quire.CodeValidation).Message {
				t.Fatalf("submission refused with %q, the request with %q", refused.Message, syncBad.body)
			}
		})
	}
}

// receiver is a webhook endpoint on loopback answering the statuses of
// answers in turn (then 204), keeping what it received.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	answers []int
	got     []delivery
}

type delivery struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, answers ...int) *receiver {
	rc := &receiver{answers: answers}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.got = append(rc.got, delivery{r.Header.Clone(), b})
		status := http.StatusNoContent
		if len(rc.answers) > 0 {
			status, rc.answers = rc.answers[0], rc.answers[1:]
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

// verifySignature checks a delivery as a receiver following Standard
// Webhooks does.
func verifySignature(t *testing.T, d delivery, secret []byte) {
	t.Helper()
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(d.header.Get("webhook-id") + "." + d.header.Get("webhook-timestamp") + "."))
	mac.Write(d.body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if d.header.Get("webhook-signature") != want {
		t.Errorf("webhook-signature %q, want %q", d.header.Get("webhook-signature"), want)
	}
}

// A receiver that answers 500 gets the delivery again, with the same
// webhook-id, and the job shows both attempts.
func TestWebhookRetriedAfter500(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withJobs(1), withPrivateFetch())
	rc := newReceiver(t, 500)
	key := e.key("hook@example.com")
	j := e.waitJob(key, e.submitAnnotate(key, annotateBody(t), map[string]string{"Quire-Webhook-Url": rc.URL + "/hook"}))
	var got []delivery
	for deadline, tick := time.Now().Add(30*time.Second), time.Tick(50*time.Millisecond); len(got) < 2 && time.Now().Before(deadline); <-tick {
		got = rc.deliveries()
	}
	if len(got) != 2 {
		t.Fatalf("%d deliveries, want 2 (500, then 204)", len(got))
	}
	for _, d := range got {
		verifySignature(t, d, apitest.WebhookSecret)
		if d.header.Get("webhook-id") != got[0].header.Get("webhook-id") {
			t.Errorf("webhook-id %q, then %q", got[0].header.Get("webhook-id"), d.header.Get("webhook-id"))
		}
		var ev jobs.Event
		if err := json.Unmarshal(d.body, &ev); err != nil || ev.Type != "job.succeeded" || ev.Data.ID != j.ID || ev.Data.Status != quire.JobSucceeded {
			t.Errorf("event %s: %v", d.body, err)
		}
	}
	for deadline, tick := time.Now().Add(10*time.Second), time.Tick(50*time.Millisecond); time.Now().Before(deadline); <-tick {
		e.do("GET", "/v1/jobs/"+j.ID, nil, map[string]string{"Authorization": "Bearer " + key}).json(t, &j)
		if j.Webhook != nil && j.Webhook.DeliveredAt != nil {
			break
		}
	}
	if w := j.Webhook; w == nil || w.Attempts != 2 || w.DeliveredAt == nil || w.URL != rc.URL+"/hook" {
		t.Fatalf("webhook on the job: %+v", w)
	}
	metrics := string(e.get("/metrics").body)
	for _, m := range []string{`quire_webhook_attempts_total{outcome="delivered"} 1`, `quire_webhook_attempts_total{outcome="failed"} 1`,
		`quire_jobs{state="queued"} 0`, `quire_jobs_finished_total{operation="annotate",status="succeeded"} 1`} {
		if !strings.Contains(metrics, m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
}

// A webhook address on a private network is refused at submission, as a
// document.url is; one that is not an http(s) URL is a bad request.
func TestWebhookPrivateAddressRefused(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withJobs(1))
	key := e.key("ssrf@example.com")
	body := []byte(`{"document":{"base64":"UEs="},"fields":[]}`)
	for _, u := range []string{"http://127.0.0.1:8080/hook", "http://10.0.0.1/hook", "http://[::1]/hook", "http://169.254.169.254/latest"} {
		b := e.submitAnnotate(key, body, map[string]string{"Quire-Webhook-Url": u}).errorBody(t, 422, quire.CodeUnprocessable)
		if len(b.Details) != 1 || b.Details[0].Field != "Quire-Webhook-Url" {
			t.Errorf("%s: %+v", u, b)
		}
	}
	e.submitAnnotate(key, body, map[string]string{"Quire-Webhook-Url": "ftp://example.com/hook"}).errorBody(t, 400, quire.CodeValidation)
	var list []quire.Job
	list, err := e.Jobs.List(t.Context(), "", 10)
	if err != nil || len(list) != 0 {
		t.Fatalf("jobs stored: %v %v", list, err)
	}
}

// TestJobsOfOneKeyAreBounded: a key with QUIRE_JOB_MAX_QUEUED jobs waiting
// is refused another with 429 and Retry-After; another key is not.
func TestJobsOfOneKeyAreBounded(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			// No job workers: what is submitted waits.
			e := newEnv(t, storetest.Open(t, storetest.URL(t, backend)), unlimited(),
				withSettings(func(c *config.Config) { c.JobMaxQueued = 2 }))
			body := annotateBody(t)
			a, b := e.key("a@example.com"), e.key("b@example.com")
			for i := range 2 {
				if r := e.submitAnnotate(a, body, nil); r.status != http.StatusAccepted {
					t.Fatalf("A's job %d: %d %s", i+1, r.status, r.body)
				}
			}
			r := e.submitAnnotate(a, body, nil)
			r.errorBody(t, http.StatusTooManyRequests, quire.CodeRateLimit)
			if r.header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
			if r := e.submitAnnotate(b, body, nil); r.status != http.StatusAccepted {
				t.Errorf("B's job beside A's full line: %d %s", r.status, r.body)
			}
		})
	}
}
