package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestSubmittedJobStartsAtOnce: an instance whose River polls only once
// a minute runs a job submitted to it at once, woken by the commit; the
// second job is submitted after the first ran, when River's fetch at
// start has long passed.
func TestSubmittedJobStartsAtOnce(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := newService(t, storetest.URL(t, backend), func(o *Options) { o.Workers, o.PollInterval = 1, time.Minute })
			ran := make(chan string, 2)
			start(t, s, func(_ context.Context, j quire.Job, _ quire.JobRequest) (quire.JobResult, error) {
				ran <- j.ID
				return quire.JobResult{Status: 200}, nil
			})
			ctx := context.Background()
			for i := range 2 {
				j, err := s.Submit(ctx, "A", quire.OpConvert, "", quire.JobRequest{Method: "POST", Target: "/v1/convert", Body: []byte("{}")})
				if err != nil {
					t.Fatal(err)
				}
				select {
				case id := <-ran:
					if id != j.ID {
						t.Fatalf("ran %s, want %s", id, j.ID)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("job %d not run 10 s after its submission (River polls once a minute)", i+1)
				}
			}
		})
	}
}
