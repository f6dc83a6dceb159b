// Package memory is the one accounting of the memory that operations on
// documents hold (sign, verify, annotate, convert): a Budget of bytes, of
// which each operation holds a Reservation, charged before the work by
// what the operation will hold, grown once the input's shape is known,
// and released when the operation has answered.
//
// An operation that does not fit is refused at once (a 503 with
// Retry-After), never queued, so that a burst cannot pile up in memory.
// One tenant (API key, quire.Tenant) holds at most its share of the
// budget, so that one key's flood leaves room for the others; a single
// operation larger than the share may run while its key holds nothing
// else.
package memory

import (
	"context"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quire-dev/quire"
)

// PerBodyByte is the first charge of an operation for each byte of its
// request body, before the body is read: what a signing or verification
// holds for a PDF of ordinary shape (the body, the decoded document, the
// parsed and the signed PDF, the answer). Measured on an 18 MB PDF of 200
// pages (24 MB body, certificate page on): the server's RSS rose by 6 to 9
// times the body signing it alone (GC timing), and 5 at once peaked at 680
// MB. Operations grow their reservation once they know their input's
// shape (Grow).
const PerBodyByte = 8

// Margin is what the process's heap may hold beyond the budget: the
// bodies of requests read before their shape is charged, the service's own
// state, and the collector's lag (see LimitRuntime). Eight signings at once
// of a 200,000-page PDF against a 1 GiB budget peaked at 1292 MiB of heap
// with the runtime limited to the budget plus 256 MiB, on a machine loaded
// 17 times over its cores (the collector lagging): 512 MiB leaves room.
const Margin = 512 << 20

// LimitRuntime sets the Go runtime's soft memory limit to size plus
// Margin, unless the operator set GOMEMLIMIT: the garbage that operations
// leave behind is then collected before the heap passes what the budget
// stands for, rather than when it has doubled (GOGC). It is for the
// server's process, once; tests that measure the heap call it too.
func LimitRuntime(size int64) {
	if size > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(size + Margin)
	}
}

// RetryAfter is the wait suggested to an operation refused for want of
// memory: the largest operations take seconds.
const RetryAfter = 5 * time.Second

// Budget bounds the bytes that the reservations of all tenants hold at
// once. It is safe for concurrent use.
type Budget struct {
	size       int64
	perKey     int64 // the most one tenant holds
	mu         sync.Mutex
	held       int64
	tenants    map[string]int64 // bytes held per tenant, tenants holding nothing absent
	refused    atomic.Uint64
	givingBack atomic.Bool // a return of the heap to the system runs
}

// giveBackAt is the smallest release that, leaving the budget empty,
// returns the process's free heap to the system: the collector would keep
// it until the next collection, which an idle server does not start, so
// one large document would leave the server's resident size at its peak.
const giveBackAt = 64 << 20

// NewBudget returns a budget of size bytes of which one tenant may hold
// at most keyShare percent (1 to 100).
func NewBudget(size int64, keyShare int) *Budget {
	return &Budget{size: size, perKey: max(1, size*int64(min(max(keyShare, 1), 100))/100), tenants: map[string]int64{}}
}

// Held returns the bytes the reservations hold now.
func (b *Budget) Held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

// Size is the budget's size in bytes.
func (b *Budget) Size() int64 { return b.size }

// Refused counts the charges refused since the budget was made.
func (b *Budget) Refused() uint64 { return b.refused.Load() }

// Reserve charges n bytes to ctx's tenant and returns the reservation. n
// is an upper bound, made before anything is known of the input (a body
// of unknown length may be as large as the route allows): more than the
// whole budget is charged the whole budget, and runs alone.
func (b *Budget) Reserve(ctx context.Context, n int64) (*Reservation, error) {
	r := &Reservation{b: b, tenant: quire.Tenant(ctx)}
	return r, r.Grow(min(n, b.size))
}

// take moves a reservation of tenant's from held to n bytes, if the
// budget and the tenant's share allow it. An operation larger than the
// share runs only while its tenant holds nothing else.
func (b *Budget) take(tenant string, held, n int64) (int64, error) {
	if n <= held {
		return held, nil
	}
	if n > b.size {
		b.refused.Add(1)
		return held, quire.Errorf(quire.CodePayloadTooLarge,
			"This document would take %d MiB of memory to process, more than the server's budget of %d MiB for all documents.", n>>20, b.size>>20)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	more, others := n-held, b.tenants[tenant]-held
	if b.held+more > b.size || (others > 0 && others+n > b.perKey) {
		b.refused.Add(1)
		return held, &quire.Error{Code: quire.CodeEngineBusy, RetryAfter: RetryAfter,
			Message: "The server is handling as many documents as its memory allows; retry later."}
	}
	b.held += more
	b.tenants[tenant] += more
	return n, nil
}

// give returns n bytes of tenant's to the budget.
func (b *Budget) give(tenant string, n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
	if b.tenants[tenant] -= n; b.tenants[tenant] == 0 {
		delete(b.tenants, tenant)
	}
	if b.held == 0 && n >= giveBackAt && b.givingBack.CompareAndSwap(false, true) {
		go func() {
			defer b.givingBack.Store(false)
			debug.FreeOSMemory()
		}()
	}
}

// Reservation is the share of the budget one operation holds. It is safe
// for concurrent use.
type Reservation struct {
	b      *Budget
	tenant string
	mu     sync.Mutex
	held   int64
}

// Grow raises the reservation to n bytes, when n is more than it holds.
// Beyond the budget's free room (or the tenant's share of it) it fails
// with 503 ENGINE_UNAVAILABLE and Retry-After; beyond the whole budget,
// which no wait would make room for, with 413 PAYLOAD_TOO_LARGE. A
// refused reservation is unchanged.
func (r *Reservation) Grow(n int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.growTo(n)
}

// Add raises the reservation by n bytes, as Grow does.
func (r *Reservation) Add(n int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.growTo(r.held + n)
}

// growTo is Grow; r.mu is held.
func (r *Reservation) growTo(n int64) error {
	held, err := r.b.take(r.tenant, r.held, n)
	r.held = held
	return err
}

// Held is the bytes the reservation holds.
func (r *Reservation) Held() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// Release gives the reservation back to the budget.
func (r *Reservation) Release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.b.give(r.tenant, r.held)
	r.held = 0
}

type reservationCtx struct{}

// With returns ctx carrying r, for the operation's code to Grow it once it
// knows its input's shape.
func With(ctx context.Context, r *Reservation) context.Context {
	return context.WithValue(ctx, reservationCtx{}, r)
}

// Grow raises the reservation that ctx carries to n bytes. Work that is
// not charged to a budget (the command line, tests) carries none: then
// Grow does nothing.
func Grow(ctx context.Context, n int64) error {
	if r, ok := ctx.Value(reservationCtx{}).(*Reservation); ok {
		return r.Grow(n)
	}
	return nil
}

// Add raises the reservation that ctx carries by n bytes, for work whose
// cost adds up piece by piece (the tables of an annotate request); like
// Grow, it does nothing without a reservation.
func Add(ctx context.Context, n int64) error {
	if r, ok := ctx.Value(reservationCtx{}).(*Reservation); ok {
		return r.Add(n)
	}
	return nil
}

// HeldBy is what the reservation that ctx carries holds, 0 without one:
// the bound of work done outside the process's heap (a worker process).
func HeldBy(ctx context.Context) int64 {
	if r, ok := ctx.Value(reservationCtx{}).(*Reservation); ok {
		return r.Held()
	}
	return 0
}
