package convert

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/quire-dev/quire"
)

// jobOf is a job of tenant, named by its from field.
func jobOf(tenant, name string) *job { return &job{tenant: tenant, from: name} }

// TestQueueServesTenantsInTurn: with 2 workers, the workers alternate
// between the tenants, and while B waits A holds at most one worker, even
// on its turn; once B has nothing waiting, A may take both.
func TestQueueServesTenantsInTurn(t *testing.T) {
	q := newQueue(10, 2)
	jobs := map[string]*job{}
	for _, n := range []string{"a1", "a2", "a3", "b1", "b2", "b3", "b4"} {
		jobs[n] = jobOf(n[:1], n)
		q.push(jobs[n])
	}
	// A worker freed by the end of a job (if any) takes the next job.
	step := func(ended, want string) {
		t.Helper()
		if ended != "" {
			q.done(jobs[ended])
		}
		if j := q.pop(); j == nil || j.from != want {
			t.Fatalf("after %q ended, a worker took %v, want %s", ended, j, want)
		}
	}
	step("", "a1")
	step("", "b1")   // B's turn
	step("b1", "b2") // A's turn, but A holds one worker while B waits
	step("a1", "a2") // A's turn
	step("a2", "a3") // B's turn, but B holds one worker while A waits
	step("b2", "b3")
	step("a3", "b4") // A has nothing waiting: B may take both workers
	for _, n := range []string{"b3", "b4"} {
		q.done(jobs[n])
	}
	if q.len() != 0 || len(q.tenants) != 0 {
		t.Errorf("after every job: %d waiting, %d tenants remembered", q.len(), len(q.tenants))
	}
}

// TestQueueBoundsEachTenant: a tenant whose line is full is refused, and
// another tenant is still admitted.
func TestQueueBoundsEachTenant(t *testing.T) {
	q := newQueue(2, 2)
	for i := range 2 {
		if r := q.push(jobOf("A", "a")); r != pushed {
			t.Fatalf("A's job %d: %d, want pushed", i+1, r)
		}
	}
	if r := q.push(jobOf("A", "a")); r != pushFull {
		t.Errorf("A's third job: %d, want pushFull", r)
	}
	b := jobOf("B", "b")
	if r := q.push(b); r != pushed {
		t.Errorf("B's job beside A's full line: %d, want pushed", r)
	}
	if !q.remove(b) || q.remove(b) || q.len() != 2 {
		t.Errorf("remove: %d waiting, want A's 2", q.len())
	}
	if got := len(q.drain()); got != 2 || q.len() != 0 || len(q.tenants) != 0 {
		t.Errorf("drain returned %d jobs and left %d waiting, %d tenants", got, q.len(), len(q.tenants))
	}
}

// TestFloodingKeyDoesNotStarveAnother: key A fills both workers and its
// own line; key B is admitted all the same and runs as soon as one of A's
// jobs ends, before A's queued jobs. A's first two jobs are running
// before its next three are sent (sent at once, on a loaded machine all
// five could be waiting before a worker took one, and two refused).
func TestFloodingKeyDoesNotStarveAnother(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: PoolOptions{Workers: 2, QueueLength: 3}})
	ctxA := quire.WithTenant(context.Background(), "A")
	var doneA atomic.Int32
	errs := make(chan error, 5)
	send := func(n int) {
		for range n {
			go func() {
				_, err := p.Convert(ctxA, []byte("sleep 5s"), "md")
				doneA.Add(1)
				errs <- err
			}()
		}
	}
	send(2)
	waitFor(t, p, "A holds both workers", func(s Status) bool { return s.Busy == 2 })
	send(3)
	waitFor(t, p, "A holds both workers and fills its line", func(s Status) bool { return s.Busy == 2 && s.Queued == 3 })
	if _, err := p.Convert(ctxA, []byte("sleep 1s"), "md"); !errors.Is(err, ErrBusy) {
		t.Errorf("A's sixth job: %v, want ErrBusy", err)
	}
	if _, err := p.Convert(quire.WithTenant(context.Background(), "B"), []byte("b"), "md"); err != nil {
		t.Fatalf("B's job beside A's flood: %v", err)
	}
	// B's job started when A's first two ended, before any of A's queued
	// jobs (each 5 s long) could: at most A's first two had ended.
	if n := doneA.Load(); n > 2 {
		t.Errorf("%d of A's jobs ended before B's one, want at most the 2 running when B came", n)
	}
	for range 5 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
