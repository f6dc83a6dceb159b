package engine

import (
	"testing"
	"time"
)

// clock is a time the test moves by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

// fakeEngine is a scheduler of named jobs on workers that the test runs
// by hand: a fake of the engine's workers, for the share rule alone.
type fakeEngine struct {
	t       *testing.T
	s       *Scheduler[string]
	clock   *clock
	tickets map[string]*Ticket[string]
}

func newFakeEngine(t *testing.T, limit, workers int) *fakeEngine {
	c := &clock{t: time.Unix(1e9, 0)}
	s := NewScheduler[string](limit, workers)
	s.now = c.now
	return &fakeEngine{t: t, s: s, clock: c, tickets: map[string]*Ticket[string]{}}
}

// push queues the jobs, each named by its key's letter and a number.
func (e *fakeEngine) push(names ...string) {
	e.t.Helper()
	for _, n := range names {
		tk := NewTicket(n[:1], n)
		if r := e.s.Push(tk); r != Pushed {
			e.t.Fatalf("push %s: %d, want Pushed", n, r)
		}
		e.tickets[n] = tk
	}
}

// end ends a job a worker ran.
func (e *fakeEngine) end(name string) { e.s.Done(e.tickets[name]) }

// take is a free worker taking the next job: want, or none when want is "".
func (e *fakeEngine) take(want string) {
	e.t.Helper()
	got := ""
	if tk := e.s.Pop(); tk != nil {
		got = tk.Job
	}
	if got != want {
		e.t.Fatalf("a free worker took %q, want %q", got, want)
	}
}

// TestSchedulerServesKeysInTurn: with 2 workers, the workers alternate
// between the keys, and while both are active neither holds more than
// one worker, even on its turn.
func TestSchedulerServesKeysInTurn(t *testing.T) {
	e := newFakeEngine(t, 10, 2)
	e.push("a1", "a2", "a3", "b1", "b2", "b3", "b4")
	e.take("a1")
	e.take("b1") // B's turn
	e.end("b1")
	e.take("b2") // A's turn, but A holds its share, one worker
	e.end("a1")
	e.take("a2")
	e.end("a2")
	e.take("a3") // B's turn, but B holds its share
	e.end("b2")
	e.take("b3")
	e.end("a3")
	e.take("") // A has nothing waiting, but ended a job just now: B keeps to its share
	e.clock.advance(Recent)
	e.take("b4") // A is no longer active: B may take both workers
	e.end("b3")
	e.end("b4")
	e.clock.advance(Recent)
	if e.s.Pop() != nil || e.s.Len() != 0 || len(e.s.keys) != 0 {
		t.Errorf("after every job: %d waiting, %d keys remembered", e.s.Len(), len(e.s.keys))
	}
}

// TestSchedulerKeepsAWorkerForAQuietKey: key A floods 2 workers; key B
// sends one job at a time. Between B's jobs, while B has nothing waiting
// or running, A does not take the worker B just freed, so B's next job
// finds it free; once B has been quiet for Recent, A takes both.
func TestSchedulerKeepsAWorkerForAQuietKey(t *testing.T) {
	e := newFakeEngine(t, 10, 2)
	e.push("a1", "a2", "a3", "a4", "a5")
	e.take("a1")
	e.take("a2") // A alone: both workers
	e.push("b1")
	e.end("a1")
	e.take("b1") // B waits: A's share is one worker, the one A holds
	for _, next := range []string{"b2", "b3", "b4"} {
		e.end("b" + string(next[1]-1))
		e.clock.advance(Recent / 2)
		e.take("") // B's worker stays free for B's next job
		e.push(next)
		e.take(next)
	}
	e.end("b4")
	e.clock.advance(Recent - time.Nanosecond)
	e.take("")
	e.clock.advance(time.Nanosecond)
	e.take("a3")
}

// TestSchedulerShareOfManyKeys: with 4 workers and 3 active keys, a key
// holds at most 2 workers (4/3 rounded up); with 2 keys, 2 each.
func TestSchedulerShareOfManyKeys(t *testing.T) {
	e := newFakeEngine(t, 10, 4)
	e.push("a1", "a2", "a3", "a4", "b1", "c1")
	e.take("a1")
	e.take("b1")
	e.take("c1")
	e.take("a2")
	e.take("") // A holds its share of 2
	e.end("c1")
	e.take("") // C ended just now: still 3 active keys
	e.clock.advance(Recent)
	e.take("") // 2 keys: A's share is still 2
	e.push("a5")
	e.end("b1")
	e.clock.advance(Recent)
	e.take("a3") // A alone
	e.take("a4")
}

// TestSchedulerBoundsEachKey: a key whose line is full is refused, and
// another key is still admitted; Remove and Drain empty the lines.
func TestSchedulerBoundsEachKey(t *testing.T) {
	s := NewScheduler[string](2, 2)
	for i := range 2 {
		if r := s.Push(NewTicket("A", "a")); r != Pushed {
			t.Fatalf("A's job %d: %d, want Pushed", i+1, r)
		}
	}
	if r := s.Push(NewTicket("A", "a")); r != Full {
		t.Errorf("A's third job: %d, want Full", r)
	}
	b := NewTicket("B", "b")
	if r := s.Push(b); r != Pushed {
		t.Errorf("B's job beside A's full line: %d, want Pushed", r)
	}
	if !s.Remove(b) || s.Remove(b) || s.Len() != 2 {
		t.Errorf("remove: %d waiting, want A's 2", s.Len())
	}
	if got := len(s.Drain()); got != 2 || s.Len() != 0 || len(s.keys) != 0 {
		t.Errorf("drain returned %d jobs and left %d waiting, %d keys", got, s.Len(), len(s.keys))
	}
	s.Close()
	if r := s.Push(NewTicket("B", "b")); r != Closed {
		t.Errorf("a job after Close: %d, want Closed", r)
	}
}

// TestSchedulerWakesWhenARecentKeyEnds: a worker that found nothing it may
// take is woken once the key that kept it free stops counting, without any
// other event.
func TestSchedulerWakesWhenARecentKeyEnds(t *testing.T) {
	s := NewScheduler[string](10, 2)
	a1, b1 := NewTicket("A", "a1"), NewTicket("B", "b1")
	s.Push(a1)
	s.Push(b1)
	s.Push(NewTicket("A", "a2"))
	if s.Pop() != a1 || s.Pop() != b1 {
		t.Fatal("the two workers did not take a1 and b1")
	}
	s.Done(b1) // A holds one worker, B is recent: a2 waits
	got := make(chan *Ticket[string])
	go func() { got <- s.Next(nil, nil) }()
	if tk := <-got; tk == nil || tk.Job != "a2" {
		t.Fatalf("the idle worker took %v, want a2", tk)
	}
}
