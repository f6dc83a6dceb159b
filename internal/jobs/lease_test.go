package jobs

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestJobsOfALostLeaseRunElsewhereOnce: two instances on one PostgreSQL;
// the first stops renewing its lease while it runs jobs (as a crash or a
// cut from the database would). Its runs are stopped when its lease ends
// there, the other instance makes their jobs available again without
// waiting for the job timeout (10 minutes here) and runs them: each job
// succeeds, its answer stored once (one run of the second instance), and
// no job is ever run by both at once.
func TestJobsOfALostLeaseRunElsewhereOnce(t *testing.T) {
	url := storetest.URL(t, "postgres")
	const n = 6
	opts := func(o *Options) { o.Workers, o.Timeout, o.Lease = 2, 10*time.Minute, time.Second }
	a, b := newService(t, url, opts), newService(t, url, opts)
	ctx := context.Background()
	var ids []string
	for range n {
		j, err := a.Submit(ctx, "A", quire.OpSign, "", quire.JobRequest{Method: "POST", Target: "/v1/sign", Body: []byte("{}")})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	var mu sync.Mutex
	inFlight, twice := map[string]int{}, []string{}
	enter := func(id string) func() {
		mu.Lock()
		defer mu.Unlock()
		if inFlight[id]++; inFlight[id] > 1 {
			twice = append(twice, id)
		}
		return func() { mu.Lock(); inFlight[id]--; mu.Unlock() }
	}
	running := make(chan string, 100)
	start(t, a, func(ctx context.Context, j quire.Job, _ quire.JobRequest) (quire.JobResult, error) {
		defer enter(j.ID)()
		running <- j.ID
		<-ctx.Done() // works until its lease is lost
		return quire.JobResult{}, ctx.Err()
	})
	<-running // a holds jobs; b starts only now, so that it has none of them
	start(t, b, func(_ context.Context, j quire.Job, _ quire.JobRequest) (quire.JobResult, error) {
		defer enter(j.ID)()
		return quire.JobResult{Status: 200, Body: []byte("done by b")}, nil
	})
	lost := time.Now()
	a.unlock() // a's lease is no longer renewed
	for _, id := range ids {
		for deadline, tick := time.Now().Add(2*time.Minute), time.Tick(50*time.Millisecond); ; <-tick {
			j, err := b.Get(ctx, "", id)
			if err == nil && j.Status == quire.JobSucceeded {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s: %+v (%v), not run by the other instance", id, j, err)
			}
		}
		res, err := b.Result(ctx, "", id)
		if err != nil || string(res.Body) != "done by b" {
			t.Errorf("result of %s: %q %v", id, res.Body, err)
		}
	}
	t.Logf("every job of the lost lease (1 s) ended %s after its last renewal stopped", time.Since(lost).Round(100*time.Millisecond))
	mu.Lock()
	defer mu.Unlock()
	if len(twice) > 0 {
		t.Errorf("jobs run by both instances at once: %v", twice)
	}
	// Each answer stored once: one run of b ended each job, a's ended none.
	var ended, runsOfB int
	err := storetest.SQL(t, url).QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(runs), 0) FROM jobs WHERE status = 'succeeded'`).Scan(&ended, &runsOfB)
	if err != nil || ended != n {
		t.Errorf("%d jobs ended (%v), want %d", ended, err, n)
	}
	t.Logf("%d jobs ended after %d runs in all", ended, runsOfB)
}

// TestLeaseLostStopsRuns: a run holds its job under the instance's lease;
// when the lease is lost, the run's context ends.
func TestLeaseLostStopsRuns(t *testing.T) {
	l := &lease{ttl: time.Second, held: map[int]context.CancelFunc{}}
	ctx, release := l.hold(context.Background())
	defer release()
	l.lose()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("run's context after the lease was lost: %v", ctx.Err())
	}
	late, release2 := l.hold(context.Background())
	defer release2()
	if late.Err() == nil {
		t.Fatal("a run started under a lost lease")
	}
}

// TestJobTimeoutFollowsItsOperation: a job's time limit is its
// operation's own plus runMargin, at most Options.Timeout; a job queued
// without its operation (before it was kept) gets Options.Timeout.
func TestJobTimeoutFollowsItsOperation(t *testing.T) {
	s := &Service{opt: Options{Timeout: 10 * time.Minute,
		OperationTimeouts: map[string]time.Duration{quire.OpConvert: 2 * time.Minute, quire.OpSign: time.Hour}}}
	w := &runWorker{s: s}
	for op, want := range map[string]time.Duration{quire.OpConvert: 2*time.Minute + runMargin, quire.OpSign: 10 * time.Minute, "": 10 * time.Minute} {
		if got := w.Timeout(&river.Job[runArgs]{Args: runArgs{Operation: op}}); got != want {
			t.Errorf("%q: %s, want %s", op, got, want)
		}
	}
}
