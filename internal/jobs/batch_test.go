package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestABatchCountsItsOwnSubmissions: submissions stored in one
// transaction count, for the per-key cap and the priority, those of their
// batch admitted before them; concurrent submissions never pass the cap.
func TestABatchCountsItsOwnSubmissions(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			s := newService(t, storetest.URL(t, backend), func(o *Options) { o.MaxQueued = 3 })
			t.Cleanup(s.Close)
			ctx := context.Background()
			req := quire.JobRequest{Method: "POST", Target: "/v1/sign", Body: []byte("{}")}
			first, err := s.Submit(ctx, "A", quire.OpSign, "", req)
			if err != nil {
				t.Fatal(err)
			}
			var batch []store.NewJob
			for i, key := range []string{"A", "A", "B", "A", "A"} {
				batch = append(batch, store.NewJob{Request: req, Job: quire.Job{ID: string(rune('1' + i)), KeyID: key,
					Operation: quire.OpSign, Status: quire.JobQueued, CreatedAt: time.Now()}})
			}
			refused, err := s.insert(batch)
			if err != nil {
				t.Fatal(err)
			}
			// A had 1 waiting: its next two make 3, the cap; B is apart.
			for i, want := range []bool{false, false, false, true, true} {
				var e *quire.Error
				if got := errors.As(refused[i], &e) && e.Code == quire.CodeRateLimit; got != want {
					t.Errorf("submission %d (key %s): refused %v (%v), want refused %v", i+1, batch[i].Job.KeyID, got, refused[i], want)
				}
				if _, err := s.Get(ctx, "", batch[i].Job.ID); (err != nil) != want {
					t.Errorf("submission %d stored: %v, want %v", i+1, err == nil, !want)
				}
			}
			// Priorities: A with 0 and 1 waiting, 1; with 2 waiting, 2; B, 1.
			want := map[string]int{first.ID: 1, "1": 1, "2": 2, "3": 1}
			if got := riverPriorities(t, s); !maps.Equal(got, want) {
				t.Errorf("River priorities %v, want %v", got, want)
			}

			var wg sync.WaitGroup
			var mu sync.Mutex
			accepted := 0
			for range 10 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := s.Submit(ctx, "C", quire.OpSign, "", req)
					var e *quire.Error
					if err != nil && !(errors.As(err, &e) && e.Code == quire.CodeRateLimit) {
						t.Error(err)
					}
					if err == nil {
						mu.Lock()
						accepted++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if accepted != 3 {
				t.Errorf("10 concurrent submissions of a key with a cap of 3: %d accepted", accepted)
			}
		})
	}
}

// riverPriorities are the priorities of River's queued jobs, by quire's job.
func riverPriorities(t *testing.T, s *Service) map[string]int {
	t.Helper()
	res, err := s.river.JobList(context.Background(), river.NewJobListParams().First(100))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, j := range res.Jobs {
		var a runArgs
		if err := json.Unmarshal(j.EncodedArgs, &a); err != nil {
			t.Fatal(err)
		}
		out[a.JobID] = j.Priority
	}
	return out
}
