package convert

import (
	"container/list"
	"sync"
)

// queue holds the jobs waiting for a worker, fairly across tenants (the
// API key of each job's context, quire.Tenant):
//
//   - each tenant has its own FIFO, bounded by limit: one key's flood fills
//     its own line and is refused with ErrBusy, while another key's job is
//     still admitted (what all keys hold at once is bounded by the memory
//     budget that conversions are charged to, and by the per-key limits);
//   - workers take from the tenants in turn (round-robin), one job each;
//   - while another tenant has a job waiting, a tenant may hold at most all
//     workers but one, so a newcomer waits for at most one running job of
//     the flooding tenant.
//
// A job leaves the queue when a worker takes it (pop; the pool reports its
// end with done) or when its client gives up (remove). wake tells an idle
// worker that there may be something to take.
type queue struct {
	mu      sync.Mutex
	limit   int // jobs one tenant may have waiting
	workers int
	tenants map[string]*tenantLine
	turns   list.List // tenants with jobs waiting, the next to serve first
	waiting int       // jobs waiting, all tenants together
	closed  bool      // push refuses new jobs
	wake    chan struct{}
}

// tenantLine is one tenant's place in the queue.
type tenantLine struct {
	id      string
	jobs    list.List     // waiting jobs, oldest first
	running int           // jobs taken by workers and not done yet
	turn    *list.Element // its place in queue.turns, nil when nothing waits
}

func newQueue(limit, workers int) *queue {
	return &queue{limit: limit, workers: workers, tenants: map[string]*tenantLine{}, wake: make(chan struct{}, 1)}
}

// Outcomes of queue.push.
const (
	pushed = iota
	pushFull
	pushClosed
)

// push appends j to its tenant's line, unless that line is full or the
// queue closed.
func (q *queue) push(j *job) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return pushClosed
	}
	t := q.line(j.tenant)
	if t.jobs.Len() >= q.limit {
		q.forget(t)
		return pushFull
	}
	j.elem = t.jobs.PushBack(j)
	q.enqueued(t)
	return pushed
}

// pushFront puts a job that is being retried first in its tenant's line,
// even if the line is full: it was accepted already.
func (q *queue) pushFront(j *job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	t := q.line(j.tenant)
	j.elem = t.jobs.PushFront(j)
	q.enqueued(t)
}

// close makes push refuse new jobs; retries (pushFront) are still taken.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
}

// pop takes the next job a worker may run, or returns nil. The tenant
// served goes to the back of the turns. When jobs remain it passes the
// wake-up on, so that every idle worker gets one.
func (q *queue) pop() *job {
	q.mu.Lock()
	defer q.mu.Unlock()
	for e := q.turns.Front(); e != nil; e = e.Next() {
		t := e.Value.(*tenantLine)
		if !q.mayStart(t) {
			continue
		}
		j := t.jobs.Remove(t.jobs.Front()).(*job)
		j.elem = nil
		t.running++
		q.waiting--
		q.turns.Remove(e)
		t.turn = nil
		if t.jobs.Len() > 0 {
			t.turn = q.turns.PushBack(t)
		}
		if q.waiting > 0 {
			q.signal()
		}
		return j
	}
	return nil
}

// mayStart reports whether a worker may take t's next job: t holds fewer
// than all workers but one, or no other tenant has a job waiting.
func (q *queue) mayStart(t *tenantLine) bool {
	othersWait := q.waiting > t.jobs.Len()
	return !othersWait || t.running < max(1, q.workers-1)
}

// done records the end of a job that pop handed out: its tenant may take
// another worker.
func (q *queue) done(j *job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	t := q.tenants[j.tenant]
	t.running--
	q.forget(t)
	if q.waiting > 0 {
		q.signal()
	}
}

// remove takes j out of the queue, reporting whether it was still there.
func (q *queue) remove(j *job) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if j.elem == nil {
		return false
	}
	t := q.tenants[j.tenant]
	t.jobs.Remove(j.elem)
	j.elem = nil
	q.waiting--
	if t.jobs.Len() == 0 {
		q.turns.Remove(t.turn)
		t.turn = nil
		q.forget(t)
	}
	return true
}

// drain empties the queue, for jobs that no worker will take: they are
// not counted as running.
func (q *queue) drain() []*job {
	q.mu.Lock()
	defer q.mu.Unlock()
	var jobs []*job
	for e := q.turns.Front(); e != nil; e = e.Next() {
		t := e.Value.(*tenantLine)
		for je := t.jobs.Front(); je != nil; je = je.Next() {
			j := je.Value.(*job)
			j.elem = nil
			jobs = append(jobs, j)
		}
		t.jobs.Init()
		t.turn = nil
	}
	q.turns.Init()
	q.waiting = 0
	for _, t := range q.tenants {
		q.forget(t)
	}
	return jobs
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiting
}

// line returns the tenant's line, making it when the tenant has none;
// q.mu is held.
func (q *queue) line(tenant string) *tenantLine {
	t := q.tenants[tenant]
	if t == nil {
		t = &tenantLine{id: tenant}
		q.tenants[tenant] = t
	}
	return t
}

// enqueued counts a job just put in t's line and gives t a turn if it had
// none; q.mu is held.
func (q *queue) enqueued(t *tenantLine) {
	q.waiting++
	if t.turn == nil {
		t.turn = q.turns.PushBack(t)
	}
	q.signal()
}

// forget drops t's line once it holds nothing, so that the map does not
// grow with every key ever seen; q.mu is held.
func (q *queue) forget(t *tenantLine) {
	if t.jobs.Len() == 0 && t.running == 0 {
		delete(q.tenants, t.id)
	}
}

// signal wakes one idle worker; q.mu is held.
func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}
