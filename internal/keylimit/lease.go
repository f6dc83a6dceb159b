package keylimit

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"sync"
	"time"
)

// The holds an instance's requests in progress have in the database, on
// their keys' quotas and (Options.Shared) as their keys' requests in
// progress, are rows under the instance's lease (store.HoldRequest),
// which counts them only while it holds: an instance renews its lease
// leaseRenewals times per lease period from its first hold until Close,
// so that the holds of an instance that crashed count no more a lease
// period after its last renewal, and are then deleted by the next
// renewal of any instance.

// leaseRenewals is how many times the lease is renewed per lease period:
// the holds survive one failed renewal.
const leaseRenewals = 3

// lease is the enforcer's lease in the database, kept from its first
// hold until Close.
type lease struct {
	id  string
	ttl time.Duration

	mu   sync.Mutex
	kept bool
	stop context.CancelFunc
	done chan struct{}
}

func newLease(ttl time.Duration) *lease {
	host, _ := os.Hostname()
	b := make([]byte, 8)
	rand.Read(b)
	return &lease{id: fmt.Sprintf("holds-%s-%x", host, b), ttl: ttl}
}

// keepLease makes sure the lease is kept: the first time (or until a
// first renewal succeeds), it renews it and starts renewing it until
// Close.
func (e *Enforcer) keepLease(ctx context.Context) error {
	l := e.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kept {
		return nil
	}
	if err := e.store.RenewLease(ctx, l.id, l.ttl); err != nil {
		return fmt.Errorf("lease of the holds of requests: %w", err)
	}
	ctx, l.stop = context.WithCancel(context.WithoutCancel(ctx))
	l.kept, l.done = true, make(chan struct{})
	go e.renewLease(ctx, l.done)
	return nil
}

func (e *Enforcer) renewLease(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(e.lease.ttl / leaseRenewals)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := e.renewOnce(ctx); err != nil && ctx.Err() == nil {
			e.log.Error("lease of the holds of requests not renewed", "lease", e.lease.id, "err", err)
		}
	}
}

// renewOnce renews the lease and forgets the holds of expired ones, within
// a renewal period: a renewal stuck longer is late anyway.
func (e *Enforcer) renewOnce(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, e.lease.ttl/leaseRenewals)
	defer cancel()
	if err := e.store.RenewLease(ctx, e.lease.id, e.lease.ttl); err != nil {
		return err
	}
	return e.store.ForgetHolds(ctx)
}

// Close stops renewing the lease of the holds of requests, once the
// requests in progress have ended: it expires a lease period later.
func (e *Enforcer) Close() {
	l := e.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kept {
		l.stop()
		<-l.done
		l.kept = false
	}
}
