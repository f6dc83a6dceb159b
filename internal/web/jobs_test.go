package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/httpapi/apitest"
)

// The dashboard shows the jobs' progress: counts and the newest jobs.
func TestAdminShowsJobs(t *testing.T) {
	s := server(t, apitest.Config{JobWorkers: 1})
	ctx := context.Background()
	key, _, err := s.Auth.CreateKey(ctx, "jobs@example.com")
	if err != nil {
		t.Fatal(err)
	}
	// A document named by URL is checked only when the job runs (a bad inline
	// one is refused at submission), so a URL to a private address makes a
	// job that is accepted and then fails.
	req, _ := http.NewRequest("POST", s.URL+"/v1/annotate", strings.NewReader(`{"document":{"url":"http://127.0.0.1:1/template.docx"},"fields":[]}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Prefer", "respond-async")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusAccepted {
		t.Fatalf("submit: %v %v", res, err)
	}
	res.Body.Close()
	var jobs []quire.Job
	for deadline, tick := time.Now().Add(30*time.Second), time.Tick(50*time.Millisecond); time.Now().Before(deadline); <-tick {
		if jobs, err = s.Jobs.List(ctx, "", 10); err == nil && len(jobs) == 1 && jobs[0].Status == quire.JobFailed {
			break
		}
	}
	if len(jobs) != 1 || jobs[0].Status != quire.JobFailed {
		t.Fatalf("jobs %+v", jobs)
	}
	b := newBrowser(t, s.URL)
	b.login(s.URL, apitest.AdminToken)
	b.waitFor("the jobs", `!!document.querySelector('#jobs')`)
	got := b.text("#jobs")
	for _, want := range []string{"Queued\n0", "Running\n0 (all instances)", jobs[0].ID, "annotate", "failed: The document could not be downloaded from a public address."} {
		if !strings.Contains(got, want) {
			t.Errorf("the jobs section lacks %q:\n%s", want, got)
		}
	}
}
