package keylimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/ratelimit"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// BenchmarkQuotaRequest measures what the quota costs one request of a key
// that has one, far from it: its admission and the commit of its answer's
// count (alone, not grouped with others'), as the request path does them.
// Sequential: the latency each request waits for; parallel: one key's
// requests at once, whose holds are serialised per key.
func BenchmarkQuotaRequest(b *testing.B) {
	benchRequests(b, keylimit.Limits{Quota: 1 << 40}, countRequest)
}

// BenchmarkQuotaAndConcurrencyRequest is BenchmarkQuotaRequest for a key
// that also has a limit of requests at once, far from it: on PostgreSQL
// the same round trip takes both holds, and the end of the request adds
// one to delete its row of a request in progress.
func BenchmarkQuotaAndConcurrencyRequest(b *testing.B) {
	benchRequests(b, keylimit.Limits{Concurrent: 1000, Quota: 1 << 40}, countRequest)
}

// countRequest commits the count of the answer of request a, alone.
func countRequest(ctx context.Context, db *store.DB, a *keylimit.Admission) error {
	c := quire.Charge{KeyID: "k", Quota: a.Limits.Quota, Hold: a.Hold(), Rows: []quire.APIUsageRow{{KeyID: "k", Period: quire.Day(time.Now()),
		Operation: quire.OpConvert, OperationUsage: quire.OperationUsage{Requests: 1, Documents: 1}}}}
	res, err := db.AddAPIUsage(ctx, []quire.Charge{c})
	if err == nil {
		err = a.Settle(res[0], 1)
	}
	return err
}

// BenchmarkConcurrencyRequest measures what the concurrency limit costs one
// request of a key without a quota, far from its limit: its admission and
// its end (the count of its answer, the same with or without the limit,
// is left out).
func BenchmarkConcurrencyRequest(b *testing.B) {
	benchRequests(b, keylimit.Limits{Concurrent: 1000}, func(context.Context, *store.DB, *keylimit.Admission) error { return nil })
}

// benchRequests runs requests of one key with limits lim, sequential and
// parallel, on each backend, as the service does (requests in progress
// counted in a PostgreSQL database): each is admitted, then work runs,
// then it ends.
func benchRequests(b *testing.B, lim keylimit.Limits, work func(context.Context, *store.DB, *keylimit.Admission) error) {
	for _, backend := range storetest.Backends {
		b.Run(backend, func(b *testing.B) {
			db := storetest.Open(b, storetest.URL(b, backend))
			e := keylimit.New(lim, db, ratelimit.NewBlocks(ratelimit.New(db, []byte("bench"), time.Now)), time.Now, keylimit.Options{Lease: 10 * time.Second, Shared: backend != "sqlite"})
			b.Cleanup(e.Close)
			request := func(b *testing.B) {
				ctx := context.Background()
				a, err := e.Admit(ctx, "k")
				if err == nil {
					err = work(ctx, db, a)
					a.Done()
				}
				if err != nil {
					b.Error(err) // not Fatal: RunParallel's goroutines may not end the benchmark
				}
			}
			b.Run("sequential", func(b *testing.B) {
				for b.Loop() {
					request(b)
				}
			})
			b.Run("parallel", func(b *testing.B) {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						request(b)
					}
				})
			})
		})
	}
}
