package httpapi

import (
	"context"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/quire-dev/quire"
)

// BytesPerBodyByte is what a signing or verification holds in memory for
// each byte of its request body: the body, the decoded document, the
// parsed and the signed PDF, the answer. Measured on an 18 MB PDF of 200
// pages (24 MB body, certificate page on): the server's RSS rose by 6 to 9
// times the body signing it alone (GC timing), and 5 at once, all that
// the 1 GiB default admits, peaked at 680 MB.
const BytesPerBodyByte = 8

// budgetRetryAfter is the wait suggested to a request refused for want of
// memory: signings of the largest documents take seconds.
const budgetRetryAfter = 5 * time.Second

// memoryBudget bounds the memory that the requests of the signing routes
// hold at once. Each is charged before its body is read, by its declared
// length (or, without one, the route's limit) times BytesPerBodyByte; a
// request that does not fit is refused at once with 503 and Retry-After
// rather than queued, so that a burst cannot pile up in memory. The charge
// is held until the answer is written: a client that does not read its
// answer keeps its share until the write timeout.
type memoryBudget struct {
	sem  *semaphore.Weighted
	size int64
}

func newMemoryBudget(size int64) *memoryBudget {
	return &memoryBudget{sem: semaphore.NewWeighted(size), size: size}
}

// reservation is the share of the budget one request holds.
type reservation struct {
	b    *memoryBudget
	mu   sync.Mutex
	held int64
}

// reserve charges n bytes to the budget. A request larger than the whole
// budget is charged the whole budget: it runs, alone.
func (b *memoryBudget) reserve(n int64) (*reservation, error) {
	res := &reservation{b: b}
	return res, res.grow(n)
}

// grow raises the reservation to n bytes, when n is more than it holds.
func (r *reservation) grow(n int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	n = min(n, r.b.size)
	if n <= r.held {
		return nil
	}
	if !r.b.sem.TryAcquire(n - r.held) {
		return &quire.Error{Code: quire.CodeEngineBusy, RetryAfter: budgetRetryAfter,
			Message: "The server is handling as many documents as its memory allows; retry later."}
	}
	r.held = n
	return nil
}

// release gives the reservation back to the budget.
func (r *reservation) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.b.sem.Release(r.held)
	r.held = 0
}

type reservationCtx struct{}

// withBudget charges the request to the budget before the handler reads
// its body, and releases the charge once the handler has answered.
func (s *Server) withBudget(limit int64, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		size := r.ContentLength
		if size < 0 { // chunked: it may be as large as the limit allows
			size = limit
		}
		res, err := s.budget.reserve(size * BytesPerBodyByte)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		defer res.release()
		next(w, r.WithContext(context.WithValue(r.Context(), reservationCtx{}, res)))
	}
}

// chargeDocument raises the request's reservation for a document of up to
// n bytes that the service will download (document.url): its small body
// did not pay for it.
func chargeDocument(ctx context.Context, n int64) error {
	res, ok := ctx.Value(reservationCtx{}).(*reservation)
	if !ok {
		return nil
	}
	return res.grow(n * BytesPerBodyByte)
}
