// Package memory is the one accounting of the memory that operations on
// documents hold (sign, verify, annotate, convert): a Budget of bytes, of
// which each operation holds a Reservation, charged before the work by
// what the operation will hold, grown once the input's shape is known,
// and released when the operation has answered.
//
// An operation that does not fit is refused at once (a 503 with
// Retry-After), never queued, so that a burst cannot pile up in memory.
// One tenant (API key, quire.Tenant) holds at most KeyShare of the
// budget, so that one key's flood leaves room for the others.
package memory

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quire-dev/quire"
)

// RetryAfter is the wait suggested to an operation refused for want of
// memory: the largest operations take seconds.
const RetryAfter = 5 * time.Second

// Budget bounds the bytes that the reservations of all tenants hold at
// once. It is safe for concurrent use.
type Budget struct {
	size    int64
	perKey  int64 // the most one tenant holds
	mu      sync.Mutex
	held    int64
	tenants map[string]int64 // bytes held per tenant, tenants holding nothing absent
	refused atomic.Uint64
}

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

// Reserve charges n bytes to ctx's tenant and returns the reservation.
func (b *Budget) Reserve(ctx context.Context, n int64) (*Reservation, error) {
	r := &Reservation{b: b, tenant: quire.Tenant(ctx)}
	return r, r.Grow(n)
}

// take moves the reservation r from held to n bytes, if the budget and
// the tenant's share allow it. A charge larger than the tenant's share is
// charged the share: the operation runs with nothing else of its tenant.
func (b *Budget) take(tenant string, held, n int64) (int64, bool) {
	n = min(n, b.perKey)
	if n <= held {
		return held, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	more := n - held
	if b.held+more > b.size || b.tenants[tenant]+more > b.perKey {
		b.refused.Add(1)
		return held, false
	}
	b.held += more
	b.tenants[tenant] += more
	return n, true
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
}

// Reservation is the share of the budget one operation holds. It is safe
// for concurrent use.
type Reservation struct {
	b      *Budget
	tenant string
	mu     sync.Mutex
	held   int64
}

// Grow raises the reservation to n bytes, when n is more than it holds;
// beyond the budget (or the tenant's share of it) it fails with 503
// ENGINE_UNAVAILABLE and Retry-After, and the reservation is unchanged.
func (r *Reservation) Grow(n int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	held, ok := r.b.take(r.tenant, r.held, n)
	r.held = held
	if !ok {
		return &quire.Error{Code: quire.CodeEngineBusy, RetryAfter: RetryAfter,
			Message: "The server is handling as many documents as its memory allows; retry later."}
	}
	return nil
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
	r, ok := ctx.Value(reservationCtx{}).(*Reservation)
	if !ok {
		return nil
	}
	return r.Grow(n)
}
