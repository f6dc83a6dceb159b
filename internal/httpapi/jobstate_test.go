package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/jobs"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// keyID is the id of the key issued to email.
func (e *env) keyID(email string) string {
	e.t.Helper()
	keys, err := e.Auth.Keys(e.t.Context())
	i := slices.IndexFunc(keys, func(k quire.APIKey) bool { return k.Email == email })
	if err != nil || i < 0 {
		e.t.Fatalf("no key of %s: %v", email, err)
	}
	return keys[i].ID
}

// endedJob waits until job id has ended, reading it as the operator does
// (without a key: its own may be revoked).
func (e *env) endedJob(id string) quire.Job {
	e.t.Helper()
	for deadline, tick := time.Now().Add(90*time.Second), time.Tick(50*time.Millisecond); time.Now().Before(deadline); <-tick {
		j, err := e.Jobs.Get(e.t.Context(), "", id)
		if err != nil {
			e.t.Fatal(err)
		}
		if j.Status == quire.JobSucceeded || j.Status == quire.JobFailed {
			return j
		}
	}
	e.t.Fatalf("job %s has not ended after 90 s", id)
	return quire.Job{}
}

// submitSign asks for a signing job of a one-page PDF, with header added.
func (e *env) submitSign(key string, header map[string]string) response {
	e.t.Helper()
	h := map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json", "Prefer": "respond-async"}
	for k, v := range header {
		h[k] = v
	}
	return e.do("POST", "/v1/sign", strings.NewReader(signBody(inline(pdftest.OnePage("job")))), h)
}

func jobOf(t *testing.T, r response) jobs.Resource {
	t.Helper()
	if r.status != http.StatusAccepted {
		t.Fatalf("submit: %d %s", r.status, r.body)
	}
	var j jobs.Resource
	r.json(t, &j)
	return j
}

// TestRevokedKeysJobsDoNotRun: jobs submitted by a key revoked before
// they could start (this instance runs no jobs; the one that does starts
// after the revocation) end failed with the 401 a request with the key
// gets, their webhooks delivered, and nothing run or metered for the key;
// another key's job beside them runs and is metered.
func TestRevokedKeysJobsDoNotRun(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			db := storetest.Open(t, storetest.URL(t, backend))
			submitter := newEnv(t, db, unlimited(), withPrivateFetch())
			gone, kept := submitter.key("gone@example.com"), submitter.key("kept@example.com")
			rc := newReceiver(t)
			hook := map[string]string{"Quire-Webhook-Url": rc.URL + "/hook"}
			var ids []string
			for range 3 {
				ids = append(ids, jobOf(t, submitter.submitSign(gone, hook)).ID)
			}
			keptJob := jobOf(t, submitter.submitSign(kept, nil)).ID
			goneID := submitter.keyID("gone@example.com")
			if err := submitter.Auth.Revoke(t.Context(), goneID); err != nil {
				t.Fatal(err)
			}
			syncAnswer := submitter.signPDF(gone, signBody(inline(pdftest.OnePage("sync")))).errorBody(t, 401, quire.CodeAuthentication)

			runner := newEnv(t, db, unlimited(), withJobs(2), withPrivateFetch())
			for _, id := range ids {
				j := runner.endedJob(id)
				if j.Status != quire.JobFailed || j.Error != syncAnswer.Message || j.Runs != 1 {
					t.Errorf("job %s of the revoked key: %+v, want failed with %q", id, j, syncAnswer.Message)
				}
				res, err := runner.Jobs.Result(t.Context(), "", id)
				var b httpapi.ErrorBody
				if err != nil || res.Status != 401 || json.Unmarshal(res.Body, &b) != nil || b.Code != quire.CodeAuthentication || b.Message != syncAnswer.Message {
					t.Errorf("result of %s: %d %s (%v), want 401 %s", id, res.Status, res.Body, err, quire.CodeAuthentication)
				}
			}
			if j := runner.endedJob(keptJob); j.Status != quire.JobSucceeded {
				t.Errorf("the other key's job: %+v", j)
			}
			usage, err := db.APIUsage(t.Context(), 0, 1<<40, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			keptID := runner.keyID("kept@example.com")
			if slices.IndexFunc(usage, func(r quire.APIUsageRow) bool { return r.KeyID == goneID }) >= 0 ||
				slices.IndexFunc(usage, func(r quire.APIUsageRow) bool { return r.KeyID == keptID && r.Requests == 1 }) < 0 {
				t.Errorf("metering %+v: want one request of the kept key %s, none of the revoked %s", usage, keptID, goneID)
			}
			var got []delivery
			for deadline, tick := time.Now().Add(60*time.Second), time.Tick(50*time.Millisecond); len(got) < len(ids) && time.Now().Before(deadline); <-tick {
				got = rc.deliveries()
			}
			seen := map[string]bool{}
			for _, d := range got {
				var ev jobs.Event
				if err := json.Unmarshal(d.body, &ev); err != nil || ev.Type != "job.failed" || ev.Data.Error == nil || *ev.Data.Error != syncAnswer.Message {
					t.Errorf("webhook %s: %v", d.body, err)
				}
				seen[ev.Data.ID] = true
			}
			for _, id := range ids {
				if !seen[id] {
					t.Errorf("no webhook for job %s (%d deliveries)", id, len(got))
				}
			}
		})
	}
}

// TestJobWaitingOnALimitIsQueued: a job whose key is at its limit of
// requests in progress waits queued, saying why, not running; the
// metrics count it queued; once the limit frees it runs, started then,
// counted as one run.
func TestJobWaitingOnALimitIsQueued(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			e := newEnv(t, storetest.Open(t, storetest.URL(t, backend)), unlimited(), withPrivateFetch(), withJobs(1),
				withKeyLimits(keylimit.Limits{Concurrent: 1}))
			key := e.key("busy@example.com")
			slow, arrived, free := heldDocument(t)
			first := make(chan response)
			go func() { first <- e.signPDF(key, signBody(`{"url":"`+slow+`/doc.pdf"}`)) }()
			<-arrived // the key's one request in progress
			auth := map[string]string{"Authorization": "Bearer " + key}
			id := jobOf(t, e.submitSign(key, nil)).ID

			var j jobs.Resource
			for deadline, tick := time.Now().Add(60*time.Second), time.Tick(20*time.Millisecond); j.Waiting == "" && time.Now().Before(deadline); <-tick {
				e.do("GET", "/v1/jobs/"+id, nil, auth).json(t, &j)
			}
			if j.Status != quire.JobQueued || j.StartedAt != nil || !strings.Contains(j.Waiting, "Too many requests in progress") {
				t.Fatalf("job waiting on the key's limit: %+v", j)
			}
			list, err := e.Jobs.List(t.Context(), "", 10)
			if err != nil || len(list) != 1 || list[0].Status != quire.JobQueued || list[0].Waiting != j.Waiting {
				t.Errorf("the list shows %+v (%v)", list, err)
			}
			metrics := string(e.get("/metrics").body)
			for _, m := range []string{`quire_jobs{state="queued"} 1`, `quire_jobs{state="running"} 0`} {
				if !strings.Contains(metrics, m) {
					t.Errorf("/metrics lacks %s", m)
				}
			}

			released := time.Now().Add(-time.Second) // the server's clock may be a little behind this one's
			free()
			signedPDF(t, <-first)
			ended := e.endedJob(id)
			if ended.Status != quire.JobSucceeded || ended.Runs != 1 || ended.Waiting != "" || ended.StartedAt.Before(released) {
				t.Errorf("job after the limit freed: %+v (released at %s)", ended, released)
			}
			var shown jobs.Resource
			e.do("GET", "/v1/jobs/"+id, nil, auth).json(t, &shown)
			if shown.Waiting != "" || shown.StartedAt == nil || shown.Status != quire.JobSucceeded {
				t.Errorf("ended job shows %+v", shown)
			}
		})
	}
}
