// Package engine holds what every conversion engine shares, whatever the
// engine (the LibreOffice workers of package libreoffice, the browsers of
// package chromium), and what the layers above know of them: the
// supervisor of their pools, of which each engine is a driver
// (Supervisor, Worker), the fair scheduler that hands jobs to an engine's
// workers, the memory watch, the pools' options, status and metrics, the
// confinement of their processes;
// and the vocabulary of a conversion: its formats, options (JobOptions,
// named after the query parameters), Request, Result and errors
// (ToAPIError translates them for the HTTP contract).
package engine

import (
	"container/list"
	"sync"
	"time"
)

// Recent is how long a key stays active after its last job ended: a
// client that sends one request after the other has none waiting or
// running between them, and without it another key's flood would take
// the worker it just freed.
const Recent = time.Second

// Scheduler holds the jobs waiting for an engine's workers, fairly across
// keys (the API key of each job, quire.Tenant):
//
//   - each key has its own FIFO, bounded by the limit: one key's flood
//     fills its own line and is refused, while another key's job is still
//     admitted;
//   - workers take from the keys in turn (round-robin), one job each;
//   - while more than one key is active (a job waiting or running, or one
//     ended within Recent), no key holds more than its share of the
//     workers (the workers divided by the active keys, rounded up): a
//     quiet key finds a worker free, rather than one of the flood's jobs
//     running on it. A key alone may hold every worker.
//
// A job leaves the scheduler when a worker takes it (Pop; the worker
// reports its end with Done) or when its client gives up (Remove). Wake
// tells an idle worker that there may be something to take. J is the
// engine's job. It is safe for concurrent use.
type Scheduler[J any] struct {
	mu      sync.Mutex
	limit   int // jobs one key may have waiting
	workers int
	keys    map[string]*keyLine
	turns   list.List // keys with jobs waiting, the next to serve first
	waiting int       // jobs waiting, all keys together
	closed  bool      // Push refuses new jobs
	done    chan struct{}
	wake    chan struct{}
	timer   *time.Timer // wakes a worker when a recent key stops counting
	now     func() time.Time
}

// keyLine is one key's place in the scheduler.
type keyLine struct {
	id      string
	jobs    list.List     // waiting tickets, oldest first
	running int           // jobs taken by workers and not done yet
	ended   time.Time     // when its last job ended
	turn    *list.Element // its place in Scheduler.turns, nil when nothing waits
}

// Ticket is a job's place in the scheduler.
type Ticket[J any] struct {
	Job  J
	key  string
	elem *list.Element // its place in its key's line, nil when not waiting
}

// Key is the key the job is done for.
func (t *Ticket[J]) Key() string { return t.key }

// NewScheduler returns a scheduler for workers workers, that lets each key
// have limit jobs waiting.
func NewScheduler[J any](limit, workers int) *Scheduler[J] {
	return &Scheduler[J]{limit: limit, workers: workers, keys: map[string]*keyLine{},
		done: make(chan struct{}), wake: make(chan struct{}, 1), now: time.Now}
}

// Outcomes of Push.
const (
	Pushed = iota
	Full   // the key's line is full
	Closed // the scheduler is closed
)

// NewTicket is job's ticket, for key: the job keeps it before it is
// pushed, since a worker may take it as soon as it is.
func NewTicket[J any](key string, job J) *Ticket[J] { return &Ticket[J]{Job: job, key: key} }

// Push appends t to its key's line, unless that line is full or the
// scheduler closed.
func (s *Scheduler[J]) Push(t *Ticket[J]) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Closed
	}
	k := s.line(t.key)
	if k.jobs.Len() >= s.limit {
		s.forget(k)
		return Full
	}
	t.elem = k.jobs.PushBack(t)
	s.enqueued(k)
	return Pushed
}

// PushFront puts back first in its line a job that a worker took and that
// is to be tried again, even if the line is full: it was accepted
// already; its worker calls Done for it as for any job.
func (s *Scheduler[J]) PushFront(t *Ticket[J]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.line(t.key)
	t.elem = k.jobs.PushFront(t)
	s.enqueued(k)
}

// Close makes Push refuse new jobs; retries (PushFront) are still taken,
// and Next hands out what waits.
func (s *Scheduler[J]) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
}

// Pop takes the next job a worker may run, or returns nil. The key served
// goes to the back of the turns. When jobs remain it passes the wake-up
// on, so that every idle worker gets one.
func (s *Scheduler[J]) Pop() *Ticket[J] {
	s.mu.Lock()
	defer s.mu.Unlock()
	share := s.share()
	for e := s.turns.Front(); e != nil; e = e.Next() {
		k := e.Value.(*keyLine)
		if k.running >= share {
			continue
		}
		t := k.jobs.Remove(k.jobs.Front()).(*Ticket[J])
		t.elem = nil
		k.running++
		s.waiting--
		s.turns.Remove(e)
		k.turn = nil
		if k.jobs.Len() > 0 {
			k.turn = s.turns.PushBack(k)
		}
		if s.waiting > 0 {
			s.signal()
		}
		return t
	}
	if s.waiting > 0 {
		s.wakeWhenRecentEnds()
	}
	return nil
}

// share is how many workers one key may hold: all while it is alone, its
// share of them while other keys are active; s.mu is held. A key that is
// only recent stops counting once Recent has passed: it is forgotten here.
func (s *Scheduler[J]) share() int {
	active := 0
	now := s.now()
	for _, k := range s.keys {
		if k.jobs.Len() > 0 || k.running > 0 || now.Sub(k.ended) < Recent {
			active++
		} else {
			delete(s.keys, k.id)
		}
	}
	if active <= 1 {
		return s.workers
	}
	return max(1, (s.workers+active-1)/active)
}

// wakeWhenRecentEnds wakes a worker when the first key that is active only
// because its last job ended recently stops counting: jobs are waiting
// that the share it leaves may then let a worker take; s.mu is held.
func (s *Scheduler[J]) wakeWhenRecentEnds() {
	var first time.Time
	for _, k := range s.keys {
		if k.jobs.Len() == 0 && k.running == 0 && (first.IsZero() || k.ended.Before(first)) {
			first = k.ended
		}
	}
	if first.IsZero() {
		return
	}
	wait := first.Add(Recent).Sub(s.now())
	if s.timer == nil {
		s.timer = time.AfterFunc(wait, s.wakeOne)
	} else {
		s.timer.Reset(wait)
	}
}

func (s *Scheduler[J]) wakeOne() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signal()
}

// Done records the end of a job that Pop handed out: its key may take
// another worker.
func (s *Scheduler[J]) Done(t *Ticket[J]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.line(t.key)
	k.running--
	k.ended = s.now()
	if s.waiting > 0 {
		s.signal()
	}
}

// Remove takes t out of the scheduler, reporting whether it was still
// waiting.
func (s *Scheduler[J]) Remove(t *Ticket[J]) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.elem == nil {
		return false
	}
	k := s.keys[t.key]
	k.jobs.Remove(t.elem)
	t.elem = nil
	s.waiting--
	if k.jobs.Len() == 0 {
		s.turns.Remove(k.turn)
		k.turn = nil
		s.forget(k)
	}
	return true
}

// Drain empties the scheduler, for jobs that no worker will take: they
// are not counted as running.
func (s *Scheduler[J]) Drain() []*Ticket[J] {
	s.mu.Lock()
	defer s.mu.Unlock()
	var tickets []*Ticket[J]
	for e := s.turns.Front(); e != nil; e = e.Next() {
		k := e.Value.(*keyLine)
		for je := k.jobs.Front(); je != nil; je = je.Next() {
			t := je.Value.(*Ticket[J])
			t.elem = nil
			tickets = append(tickets, t)
		}
		k.jobs.Init()
		k.turn = nil
		s.forget(k)
	}
	s.turns.Init()
	s.waiting = 0
	return tickets
}

// Len is the number of jobs waiting.
func (s *Scheduler[J]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waiting
}

// Next waits for a job a worker may run. It returns nil once the
// scheduler is closed and empty, or when abort or lost is closed (lost:
// the worker itself is gone; either may be nil).
func (s *Scheduler[J]) Next(abort, lost <-chan struct{}) *Ticket[J] {
	for {
		if IsClosed(abort) || IsClosed(lost) {
			return nil
		}
		if t := s.Pop(); t != nil {
			return t
		}
		select {
		case <-s.wake:
		case <-s.done:
			if t := s.Pop(); t != nil || s.Len() == 0 {
				return t
			}
			// Jobs remain that this worker may not take yet: wait for
			// another worker to finish one.
			select {
			case <-s.wake:
			case <-abort:
			case <-lost:
			}
		case <-abort:
		case <-lost:
		}
	}
}

// IsClosed reports whether ch is closed, without waiting; nil never is.
func IsClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// line returns the key's line, making it when the key has none; s.mu is
// held.
func (s *Scheduler[J]) line(key string) *keyLine {
	k := s.keys[key]
	if k == nil {
		k = &keyLine{id: key}
		s.keys[key] = k
	}
	return k
}

// enqueued counts a job just put in k's line and gives k a turn if it had
// none; s.mu is held.
func (s *Scheduler[J]) enqueued(k *keyLine) {
	s.waiting++
	if k.turn == nil {
		k.turn = s.turns.PushBack(k)
	}
	s.signal()
}

// forget drops k's line once it holds nothing and is not recent, so that
// the map does not grow with every key ever seen; s.mu is held.
func (s *Scheduler[J]) forget(k *keyLine) {
	if k.jobs.Len() == 0 && k.running == 0 && s.now().Sub(k.ended) >= Recent {
		delete(s.keys, k.id)
	}
}

// signal wakes one idle worker; s.mu is held.
func (s *Scheduler[J]) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
