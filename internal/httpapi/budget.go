package httpapi

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire/internal/memory"
)

// BytesPerBodyByte is the first charge of a budgeted request for each
// byte of its body (memory.PerBodyByte).
const BytesPerBodyByte = memory.PerBodyByte

// withBudget charges the request to the memory budget before the handler
// reads its body, by its declared length (or, without one, the route's
// limit) times BytesPerBodyByte, and releases the charge once the handler
// has answered: a client that does not read its answer keeps its share
// until the write timeout. The reservation travels in the request's
// context, for the operation to grow.
func (s *Server) withBudget(limit int64, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		size := r.ContentLength
		if size < 0 { // chunked: it may be as large as the limit allows
			size = limit
		}
		res, err := s.budget.Reserve(r.Context(), size*BytesPerBodyByte)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		defer res.Release()
		next(w, r.WithContext(memory.With(r.Context(), res)))
	}
}

// chargeDownload raises the request's reservation for a document of up to
// n bytes that the service will download (document.url): its small body
// did not pay for it. n is an upper bound, so the charge is at most the
// whole budget; the service charges the document's shape once it has it.
func (s *Server) chargeDownload(ctx context.Context, n int64) error {
	if s.budget == nil {
		return nil
	}
	return memory.Grow(ctx, min(n*BytesPerBodyByte, s.budget.Size()))
}

// memoryCollectors are the metrics of the memory budget.
func memoryCollectors(b *memory.Budget) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "quire_memory_budget_bytes",
			Help: "Size of the memory budget of the document operations (QUIRE_SIGN_MEMORY_BUDGET)."},
			func() float64 { return float64(b.Size()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "quire_memory_budget_held_bytes",
			Help: "Bytes of the memory budget that the operations in progress hold."},
			func() float64 { return float64(b.Held()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "quire_memory_budget_refused_total",
			Help: "Charges to the memory budget refused (answered 503), beyond the budget or a key's share of it."},
			func() float64 { return float64(b.Refused()) }),
	}
}
