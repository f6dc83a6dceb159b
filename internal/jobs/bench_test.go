package jobs

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/libc"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// BenchmarkJobBookkeeping measures what a job costs the server beside
// its work (issue #28): its submission by one of 16 submitters per core
// (32 on the 2-core machine of bench/RESULTS.md), River's
// fetch and completion, its start (which reads its request) and its
// answer stored. The work is an engine turn taken and a 64 KiB answer
// given at once, for a 32 KiB request. It reports the process's CPU per
// job (on PostgreSQL without the database server's own), with malloc
// tuned as quire serve tunes it.
func BenchmarkJobBookkeeping(b *testing.B) {
	if err := libc.KeepFreed(); err != nil { // as quire serve does
		b.Fatal(err)
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			s := newService(b, storetest.URL(b, backend), func(o *Options) {
				o.Workers, o.PollInterval, o.Logger = 2, 0, slog.New(slog.DiscardHandler)
			})
			b.Cleanup(s.Close)
			var done sync.WaitGroup
			answer := make([]byte, 64<<10)
			start(b, s, func(ctx context.Context, _ quire.Job, _ quire.JobRequest) (quire.JobResult, error) {
				defer done.Done()
				give, err := quire.TakeEngineTurn(ctx)
				if err != nil {
					return quire.JobResult{}, err
				}
				give()
				return quire.JobResult{Status: 200, Body: answer}, nil
			})
			req := quire.JobRequest{Method: "POST", Target: "/v1/convert", Body: make([]byte, 32<<10)}
			ctx := context.Background()
			done.Add(b.N)
			cpu0 := storetest.CPUTime()
			b.ResetTimer()
			b.SetParallelism(16) // goroutines per GOMAXPROCS
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.Submit(ctx, "A", quire.OpConvert, "", req); err != nil {
						b.Error(err)
						done.Done()
					}
				}
			})
			done.Wait()
			b.StopTimer()
			b.ReportMetric(float64(storetest.CPUTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/job")
		})
	}
}
