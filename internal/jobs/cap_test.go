package jobs

import (
	"context"
	"errors"
	"sync"
	"testing"

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
