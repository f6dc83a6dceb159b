// Package groupcommit shares one transaction, and so one fsync, among the
// writes that arrive together (a group commit). A caller's Do returns
// once its write is committed, so that what it answers (a count, a 202)
// is already durable; callers that come while a commit runs queue, and
// the next commit takes all of them. One goroutine commits, so commits
// never wait for each other's locks.
//
// The metering's counts and the jobs' submissions use it; telemetry
// intake has a writer of its own, which also waits briefly for more
// requests and answers 503 when its bounded queue is full.
package groupcommit

import (
	"context"
	"errors"
	"sync"
)

// Commit writes a batch in one transaction and returns the outcome of
// each of its items, in order; an error fails them all.
type Commit[T, R any] func(batch []T) ([]R, error)

// Committer commits items of type T, each with an outcome of type R.
type Committer[T, R any] struct {
	commit  Commit[T, R]
	max     int
	queue   chan *item[T, R]
	quit    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

type item[T, R any] struct {
	v    T
	done chan outcome[R]
}

type outcome[R any] struct {
	r   R
	err error
}

// ErrClosed is returned by Do after Close.
var ErrClosed = errors.New("groupcommit: closed")

// New starts a committer of at most maxBatch items per commit.
func New[T, R any](maxBatch int, commit Commit[T, R]) *Committer[T, R] {
	c := &Committer[T, R]{commit: commit, max: maxBatch, queue: make(chan *item[T, R], maxBatch),
		quit: make(chan struct{}), stopped: make(chan struct{})}
	go c.run()
	return c
}

// Do commits v with the items that arrive with it, and returns its
// outcome once committed, or the error that kept it from being so.
func (c *Committer[T, R]) Do(ctx context.Context, v T) (R, error) {
	it := &item[T, R]{v: v, done: make(chan outcome[R], 1)}
	var zero R
	select {
	case c.queue <- it:
	case <-c.stopped:
		return zero, ErrClosed
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	// Once queued, the item is committed or failed whatever ctx does:
	// wait for the outcome, so that nothing is stored without its caller
	// knowing.
	select {
	case o := <-it.done:
		return o.r, o.err
	case <-c.stopped:
		select {
		case o := <-it.done:
			return o.r, o.err
		default:
			return zero, ErrClosed
		}
	}
}

// Close commits what is queued and stops.
func (c *Committer[T, R]) Close() {
	c.once.Do(func() { close(c.quit) })
	<-c.stopped
}

func (c *Committer[T, R]) run() {
	defer close(c.stopped)
	for {
		var first *item[T, R]
		select {
		case first = <-c.queue:
		case <-c.quit:
			select {
			case first = <-c.queue: // commit what was queued before Close
			default:
				return
			}
		}
		c.write(c.gather(first))
	}
}

// gather takes first and whatever else is queued already.
func (c *Committer[T, R]) gather(first *item[T, R]) []*item[T, R] {
	batch := []*item[T, R]{first}
	for len(batch) < c.max {
		select {
		case it := <-c.queue:
			batch = append(batch, it)
		default:
			return batch
		}
	}
	return batch
}

// write commits batch and answers its items.
func (c *Committer[T, R]) write(batch []*item[T, R]) {
	vs := make([]T, len(batch))
	for i, it := range batch {
		vs[i] = it.v
	}
	rs, err := c.commit(vs)
	for i, it := range batch {
		o := outcome[R]{err: err}
		if err == nil {
			o.r = rs[i]
		}
		it.done <- o
	}
}
