package jobs

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestAKeysFirstJobRunsBeforeAnothersFlood: with key A's 20 jobs waiting,
// key B's first job is among the jobsHeld that River takes first (A's
// first two, submitted while few of A's waited, then B's), not after all
// 20. The runs are held until River has taken all it can, so that no
// later fetch mixes in: which of the held jobs gets the engine first is
// up to the engine turns, not to River's order.
func TestAKeysFirstJobRunsBeforeAnothersFlood(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			s := newService(t, storetest.URL(t, backend), func(o *Options) { o.Workers = 1 })
			ctx := context.Background()
			req := quire.JobRequest{Method: "POST", Target: "/v1/sign", Body: []byte("{}")}
			for range 20 {
				if _, err := s.Submit(ctx, "A", quire.OpSign, "", req); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Submit(ctx, "B", quire.OpSign, "", req); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var order []string
			ran, release := make(chan struct{}, 21), make(chan struct{})
			start(t, s, func(_ context.Context, j quire.Job, _ quire.JobRequest) (quire.JobResult, error) {
				mu.Lock()
				order = append(order, j.KeyID)
				mu.Unlock()
				ran <- struct{}{}
				<-release
				return quire.JobResult{Status: 200, Body: []byte("{}")}, nil
			})
			wait := func(n int) {
				for range n {
					select {
					case <-ran:
					case <-time.After(60 * time.Second):
						t.Fatalf("jobs still waiting after 60 s; ran %v", order)
					}
				}
			}
			wait(jobsHeld)
			mu.Lock()
			first := slices.Clone(order)
			mu.Unlock()
			close(release)
			wait(21 - jobsHeld)
			if !slices.Contains(first, "B") {
				t.Errorf("B's job is not among the %d River took first (%v; in all %v)", jobsHeld, first, order)
			}
		})
	}
}

// TestPriorityFor: a key's first two waiting jobs go first, then bands of
// 6, 24 and the rest.
func TestPriorityFor(t *testing.T) {
	for waiting, want := range map[int]int{0: 1, 1: 1, 2: 2, 7: 2, 8: 3, 31: 3, 32: 4, 5000: 4} {
		if got := priorityFor(waiting); got != want {
			t.Errorf("priorityFor(%d) = %d, want %d", waiting, got, want)
		}
	}
}

// start starts s's workers with run, and stops them when the test ends.
func start(t testing.TB, s *Service, run func(context.Context, quire.Job, quire.JobRequest) (quire.JobResult, error)) {
	t.Helper()
	if err := s.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Stop(ctx)
	})
}

// newService is a service on the database at url with the tests' options
// (no workers, no cap, a 20 ms poll), as change sets them.
func newService(t testing.TB, url string, change func(*Options)) *Service {
	t.Helper()
	opt := Options{Timeout: time.Minute, Retention: time.Hour, WebhookRetryFor: time.Minute,
		WebhookSecret: make([]byte, 32), PollInterval: 20 * time.Millisecond, Webhooks: fetch.New(fetch.Options{})}
	if change != nil {
		change(&opt)
	}
	s, err := New(storetest.Open(t, url), opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestJobsTakeTurnsOnTheEngines: River runs several jobs at once, but no
// more than Workers of them have a document on an engine (hold a turn)
// at any time.
func TestJobsTakeTurnsOnTheEngines(t *testing.T) {
	s := newService(t, storetest.URL(t, "sqlite"), func(o *Options) { o.Workers = 1 })
	ctx := context.Background()
	req := quire.JobRequest{Method: "POST", Target: "/v1/convert", Body: []byte("{}")}
	const n = 8
	for range n {
		if _, err := s.Submit(ctx, "A", quire.OpConvert, "", req); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	onEngine, most := 0, 0
	ran := make(chan struct{}, n)
	start(t, s, func(ctx context.Context, _ quire.Job, _ quire.JobRequest) (quire.JobResult, error) {
		give, err := quire.TakeEngineTurn(ctx)
		if err != nil {
			return quire.JobResult{}, err
		}
		mu.Lock()
		onEngine++
		most = max(most, onEngine)
		mu.Unlock()
		time.Sleep(10 * time.Millisecond) // a conversion that takes a while, as a real one does: the behaviour under test
		mu.Lock()
		onEngine--
		mu.Unlock()
		give()
		ran <- struct{}{}
		return quire.JobResult{Status: 200, Body: []byte("{}")}, nil
	})
	for range n {
		select {
		case <-ran:
		case <-time.After(60 * time.Second):
			t.Fatal("jobs still waiting after 60 s")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 1 {
		t.Errorf("%d jobs were on the engine at once, want 1 (Workers)", most)
	}
}
