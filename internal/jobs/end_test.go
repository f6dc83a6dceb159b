package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/store/storetest"
	"github.com/riverqueue/river"
)

// TestCancelDeliversTheWebhook: a queued job cancelled by the operator
// ends failed and its webhook says so (job.failed), as for any end; the
// job never runs.
func TestCancelDeliversTheWebhook(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			events := make(chan Event, 4)
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var ev Event
				b, _ := io.ReadAll(r.Body)
				if err := json.Unmarshal(b, &ev); err != nil {
					t.Errorf("webhook %s: %v", b, err)
				}
				events <- ev
				w.WriteHeader(http.StatusNoContent)
			}))
			defer hook.Close()
			db := storetest.Open(t, storetest.URL(t, backend))
			opt := Options{Timeout: time.Minute, Retention: time.Hour, WebhookRetryFor: time.Minute, WebhookSecret: make([]byte, 32),
				PollInterval: 20 * time.Millisecond, Webhooks: fetch.New(fetch.Options{AllowPrivate: true, Timeout: 10 * time.Second})}
			operator, err := New(db, opt) // submits and cancels; runs nothing
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			j, err := operator.Submit(ctx, "A", quire.OpSign, hook.URL+"/hook", quire.JobRequest{Method: "POST", Target: "/v1/sign", Body: []byte("{}")})
			if err != nil {
				t.Fatal(err)
			}
			if j, err = operator.Cancel(ctx, j.ID); err != nil || j.Status != quire.JobFailed || j.Error != "cancelled" {
				t.Fatalf("cancel: %+v %v", j, err)
			}
			opt.Workers = 1
			worker, err := New(db, opt)
			if err != nil {
				t.Fatal(err)
			}
			start(t, worker, func(context.Context, quire.Job, quire.JobRequest) (quire.JobResult, error) {
				t.Error("a cancelled job ran")
				return quire.JobResult{Status: 200}, nil
			})
			select {
			case ev := <-events:
				if ev.Type != "job.failed" || ev.Data.ID != j.ID || ev.Data.Status != quire.JobFailed || ev.Data.Error == nil || *ev.Data.Error != "cancelled" {
					t.Errorf("event %+v", ev)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("no webhook within 60 s of the cancel")
			}
		})
	}
}

// TestJobPastItsTimeoutEnds: a run whose time (QUIRE_JOB_TIMEOUT) ran out
// still has its answer stored: the job ends, it does not stay running.
func TestJobPastItsTimeoutEnds(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := newService(t, storetest.URL(t, backend), func(o *Options) { o.Workers, o.Timeout = 1, time.Second })
			ctx := context.Background()
			j, err := s.Submit(ctx, "A", quire.OpSign, "", quire.JobRequest{Method: "POST", Target: "/v1/sign", Body: []byte("{}")})
			if err != nil {
				t.Fatal(err)
			}
			start(t, s, func(ctx context.Context, _ quire.Job, _ quire.JobRequest) (quire.JobResult, error) {
				<-ctx.Done() // as an engine does, it answers once its time is up
				return quire.JobResult{Status: 500, Body: []byte(`{"message":"out of time"}`)}, nil
			})
			for deadline, tick := time.Now().Add(60*time.Second), time.Tick(50*time.Millisecond); time.Now().Before(deadline); <-tick {
				if j, err = s.Get(ctx, "", j.ID); err != nil || j.Status == quire.JobFailed {
					break
				}
			}
			if j.Status != quire.JobFailed || j.Error != "out of time" || j.Runs != 1 {
				t.Fatalf("job past its timeout: %+v %v", j, err)
			}
		})
	}
}

// TestJobWaitsAtMostMaxWait: a job sent back to wait again and again (a
// limit that does not free, an engine that is off) ends failed with that
// answer as its result once QUIRE_JOB_MAX_WAIT has passed since its
// submission; until then it waits queued, saying why.
func TestJobWaitsAtMostMaxWait(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := newService(t, storetest.URL(t, backend), func(o *Options) { o.Workers, o.MaxWait = 1, 3*time.Second })
			ctx := context.Background()
			j, err := s.Submit(ctx, "A", quire.OpConvert, "", quire.JobRequest{Method: "POST", Target: "/v1/convert", Body: []byte("x")})
			if err != nil {
				t.Fatal(err)
			}
			off := quire.JobResult{Status: 503, Header: map[string][]string{"Content-Type": {"application/json"}}, Body: []byte(`{"message":"Conversion is disabled on this server."}`)}
			start(t, s, func(context.Context, quire.Job, quire.JobRequest) (quire.JobResult, error) {
				return quire.JobResult{}, &Later{After: time.Second, Result: off}
			})
			sawWaiting := false
			for deadline, tick := time.Now().Add(60*time.Second), time.Tick(20*time.Millisecond); time.Now().Before(deadline); <-tick {
				if j, err = s.Get(ctx, "", j.ID); err != nil || j.Status == quire.JobFailed {
					break
				}
				sawWaiting = sawWaiting || (j.Status == quire.JobQueued && j.Waiting == "Conversion is disabled on this server.")
			}
			if j.Status != quire.JobFailed || j.Error != "Conversion is disabled on this server." || !sawWaiting {
				t.Fatalf("job past QUIRE_JOB_MAX_WAIT: %+v %v (seen waiting: %v)", j, err, sawWaiting)
			}
			res, err := s.Result(ctx, "", j.ID)
			if err != nil || res.Status != 503 || string(res.Body) != string(off.Body) {
				t.Errorf("result %d %s (%v), want the 503", res.Status, res.Body, err)
			}
		})
	}
}

// TestCancelStopsARunningJob: cancelling a job while it runs, from
// another instance (as quire jobs cancel does), stops its run: River
// cancels the run's context, so the engine stops. The job stays cancelled.
func TestCancelStopsARunningJob(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			u := storetest.URL(t, backend)
			s := newService(t, u, func(o *Options) { o.Workers, o.Timeout = 1, 5*time.Minute })
			cli := newService(t, u, nil) // runs nothing, as quire jobs cancel
			ctx := context.Background()
			j, err := s.Submit(ctx, "A", quire.OpConvert, "", quire.JobRequest{Method: "POST", Target: "/v1/convert", Body: []byte("x")})
			if err != nil {
				t.Fatal(err)
			}
			running, stopped := make(chan struct{}), make(chan error, 1)
			completed, unsubscribe := s.river.Subscribe(river.EventKindJobCompleted)
			defer unsubscribe()
			start(t, s, func(ctx context.Context, _ quire.Job, _ quire.JobRequest) (quire.JobResult, error) {
				close(running)
				<-ctx.Done() // as an engine does: it stops when its context ends
				stopped <- ctx.Err()
				return quire.JobResult{Status: 503, Body: []byte(`{"message":"stopped"}`)}, nil
			})
			select {
			case <-running:
			case <-time.After(60 * time.Second):
				t.Fatal("the job did not start within 60 s")
			}
			if _, err := cli.Cancel(ctx, j.ID); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-stopped:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("the run's context ended with %v, want it cancelled", err)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("the run of a cancelled job still ran 60 s after the cancel")
			}
			// The run's end (its 503, stored for no one: the job is no
			// longer its run's) changes nothing: River completes its job.
			for done := false; !done; {
				select {
				case ev := <-completed:
					done = ev.Job.Kind == (runArgs{}).Kind()
				case <-time.After(60 * time.Second):
					t.Fatal("River did not complete the cancelled job's run within 60 s")
				}
			}
			if j, err = s.Get(ctx, "", j.ID); err != nil || j.Status != quire.JobFailed || j.Error != "cancelled" {
				t.Fatalf("cancelled job: %+v %v", j, err)
			}
		})
	}
}
