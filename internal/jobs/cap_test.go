package jobs

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestCapIsExactUnderConcurrentSubmissions: many submissions of one key at
// once, with QUIRE_JOB_MAX_QUEUED 5: exactly 5 are accepted, the others
// refused with 429, and another key is not held by that key's cap.
func TestCapIsExactUnderConcurrentSubmissions(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			const limit, tries = 5, 40
			s := newService(t, storetest.URL(t, backend), func(o *Options) { o.MaxQueued = limit })
			req := quire.JobRequest{Method: "POST", Target: "/v1/sign", Body: []byte("{}")}
			var wg sync.WaitGroup
			errs := make(chan error, tries)
			start := make(chan struct{})
			for range tries {
				wg.Go(func() {
					<-start
					_, err := s.Submit(context.Background(), "A", quire.OpSign, "", req)
					errs <- err
				})
			}
			close(start)
			wg.Wait()
			close(errs)
			accepted := 0
			for err := range errs {
				var qe *quire.Error
				switch {
				case err == nil:
					accepted++
				case !errors.As(err, &qe) || qe.Code != quire.CodeRateLimit || qe.RetryAfter <= 0:
					t.Errorf("refusal %v, want RATE_LIMIT_ERROR with Retry-After", err)
				}
			}
			if accepted != limit {
				t.Errorf("%d of %d concurrent submissions accepted, want exactly %d", accepted, tries, limit)
			}
			list, err := s.List(context.Background(), "A", 100)
			if err != nil || len(list) != limit {
				t.Errorf("A has %d jobs stored (%v), want %d", len(list), err, limit)
			}
			if _, err := s.Submit(context.Background(), "B", quire.OpSign, "", req); err != nil {
				t.Errorf("B beside A's full line: %v", err)
			}
		})
	}
}

// TestCapHoldsWhileJobsRunAndWaitAgain: 2,000 submissions of one key, 8 at
// a time, while its jobs run: the first ones succeed, the others run into
// the key's limits and wait again (as QUIRE_KEY_RATE sends them back).
// The key ends with exactly QUIRE_JOB_MAX_QUEUED jobs not yet ended, and
// every submission past them was refused with 429.
func TestCapHoldsWhileJobsRunAndWaitAgain(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			const limit, tries, allowed = 1000, 2000, 50
			s := newService(t, storetest.URL(t, backend), func(o *Options) { o.MaxQueued, o.Workers = limit, 2 })
			var mu sync.Mutex
			ran := 0
			limited := quire.JobResult{Status: 429, Body: []byte(`{"message":"Rate limit exceeded"}`)}
			succeeded := make(chan struct{}, allowed)
			start(t, s, func(context.Context, quire.Job, quire.JobRequest) (quire.JobResult, error) {
				mu.Lock()
				defer mu.Unlock()
				if ran++; ran <= allowed {
					succeeded <- struct{}{}
					return quire.JobResult{Status: 200}, nil
				}
				return quire.JobResult{}, &Later{After: time.Hour, Result: limited}
			})
			req := quire.JobRequest{Method: "POST", Target: "/v1/sign", Body: []byte("{}")}
			submit := func(count int) (accepted int) {
				var wg sync.WaitGroup
				var amu sync.Mutex
				next := make(chan struct{})
				for range 8 {
					wg.Go(func() {
						for range next {
							_, err := s.Submit(context.Background(), "A", quire.OpSign, "", req)
							var qe *quire.Error
							switch {
							case err == nil:
								amu.Lock()
								accepted++
								amu.Unlock()
							case !errors.As(err, &qe) || qe.Code != quire.CodeRateLimit:
								t.Errorf("refusal %v, want RATE_LIMIT_ERROR", err)
							}
						}
					})
				}
				for range count {
					next <- struct{}{}
				}
				close(next)
				wg.Wait()
				return accepted
			}
			accepted := submit(tries)
			for range allowed { // the runs that end jobs have all ended
				<-succeeded
			}
			accepted += submit(100) // and the key is full again
			c, err := s.db.CountJobs(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d of %d submissions accepted; %d queued and %d running at the end", accepted, tries+100, c.Queued, c.Running)
			if c.Queued+c.Running != limit {
				t.Errorf("%d jobs of the key not ended, want exactly %d (QUIRE_JOB_MAX_QUEUED)", c.Queued+c.Running, limit)
			}
			if accepted != limit+allowed {
				t.Errorf("%d submissions accepted, want %d: the cap and the %d that ended", accepted, limit+allowed, allowed)
			}
		})
	}
}
