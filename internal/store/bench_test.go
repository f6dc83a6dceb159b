package store_test

import (
	"context"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// BenchmarkRecordOpens measures one group commit of 30 new documents, the
// average batch that 64 concurrent clients produced in the wrk rounds of
// make bench (quire_telemetry_batch_events).
func BenchmarkRecordOpens(b *testing.B) {
	for _, backend := range storetest.Backends {
		b.Run(backend, func(b *testing.B) {
			db := storetest.Open(b, storetest.URL(b, backend))
			b.ResetTimer()
			cpu := storetest.CPUTime()
			for i := 0; i < b.N; i++ {
				if err := db.RecordOpens(context.Background(), newDocuments(i, 30)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((storetest.CPUTime()-cpu).Microseconds())/float64(b.N*30), "cpu-µs/event")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*30), "µs/event")
		})
	}
}

// BenchmarkCountPending measures the counting of 4096 committed opens of
// new documents (the telemetry writer's cadence) into the per-document
// and per-day counts; the commits themselves are not timed.
func BenchmarkCountPending(b *testing.B) {
	const opens = 4096
	for _, backend := range storetest.Backends {
		b.Run(backend, func(b *testing.B) {
			db := storetest.Open(b, storetest.URL(b, backend))
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				for j := range opens / 64 {
					if err := db.RecordOpens(ctx, newDocuments(i*opens/64+j, 64)); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if err := db.CountPending(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*opens), "µs/event")
		})
	}
}

// newDocuments returns n opens of documents no other batch number opens,
// named as the editor library names them: CRC-32 hashes, scattered over
// the key space as real ones are.
func newDocuments(batch, n int) []quire.OpenEvent {
	now := time.Now()
	events := make([]quire.OpenEvent, n)
	for j := range events {
		events[j] = quire.OpenEvent{LicenseKey: quire.CommunityLicenseKey, DocumentID: fmt.Sprintf("HASH-%08X", crc32.ChecksumIEEE(fmt.Append(nil, batch*n+j))),
			ReceivedAt: now, OccurredAt: "2026-11-22T09:34:00.123Z", LibraryVersion: "1.46.3", Metadata: "{}"}
	}
	return events
}

// BenchmarkAddAPIUsage measures the metering commit of one conversion's
// answer (one key, one row), the commit every metered answer waits for.
func BenchmarkAddAPIUsage(b *testing.B) {
	for _, backend := range storetest.Backends {
		b.Run(backend, func(b *testing.B) {
			db := storetest.Open(b, storetest.URL(b, backend))
			ctx := context.Background()
			day := quire.Day(time.Now())
			c := quire.Charge{KeyID: "k", Quota: 1 << 40, Rows: []quire.APIUsageRow{{KeyID: "k", Period: day, Operation: quire.OpConvert,
				OperationUsage: quire.OperationUsage{Requests: 1, Documents: 1, Pages: 3, InputBytes: 30000, EngineSeconds: 0.027}}}}
			b.ResetTimer()
			cpu := storetest.CPUTime()
			for i := 0; i < b.N; i++ {
				if _, err := db.AddAPIUsage(ctx, []quire.Charge{c}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((storetest.CPUTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/commit")
		})
	}
}

// BenchmarkHoldRequest measures a request's holds on its key's limit of
// requests at once and on its quota, and their release (which, for the
// quota, a counted answer folds into the commit of its count).
func BenchmarkHoldRequest(b *testing.B) {
	for _, backend := range storetest.Backends {
		b.Run(backend, func(b *testing.B) {
			db := storetest.Open(b, storetest.URL(b, backend))
			ctx := context.Background()
			if err := db.RenewLease(ctx, "bench", time.Hour); err != nil {
				b.Fatal(err)
			}
			h := quire.RequestHold{KeyID: "k", Lease: "bench", Concurrent: 1 << 20, Month: quire.Month(time.Now()), Quota: 1 << 40}
			cpu := storetest.CPUTime()
			for i := 0; b.Loop(); i++ {
				h.ID = fmt.Sprint(i)
				if held, err := db.HoldRequest(ctx, h); err != nil || !held.Taken {
					b.Fatal(held, err)
				}
				if err := db.ReleaseRequest(ctx, h.ID); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((storetest.CPUTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// BenchmarkRequestStatements measures, one by one, the statements an
// API key's request runs on the database besides its usage commit
// (BenchmarkAddAPIUsage), so that what each costs is known (issue #41):
// the key's lookup by hash (every request), the record of its last use
// (at most once a minute per key; here every time), a block of the rate
// limit's shared tokens (at most once per 100 requests at the default
// rate) and the per-key limits (once per keylimit.Refresh).
func BenchmarkRequestStatements(b *testing.B) {
	for _, backend := range storetest.Backends {
		b.Run(backend, func(b *testing.B) {
			db := storetest.Open(b, storetest.URL(b, backend))
			ctx := context.Background()
			key := quire.APIKey{ID: "k", Email: "bench@example.com", Prefix: "sd_bench", Hash: "h", CreatedAt: time.Now()}
			if err := db.CreateKey(ctx, key); err != nil {
				b.Fatal(err)
			}
			// Each call is a millisecond later than the one before, in
			// every run, so that TouchKey always has a later use to write.
			now := time.Now()
			statements := []struct {
				name string
				run  func() error
			}{
				{"KeyByHash", func() error { _, err := db.KeyByHash(ctx, key.Hash); return err }},
				{"TouchKey", func() error { return db.TouchKey(ctx, key.ID, now, 0) }},
				{"Hit", func() error { _, _, err := db.Hit(ctx, "key:k/1m", now, time.Minute, 100); return err }},
				{"KeyLimits", func() error { _, err := db.KeyLimits(ctx); return err }},
			}
			for _, st := range statements {
				b.Run(st.name, func(b *testing.B) {
					cpu := storetest.CPUTime()
					for b.Loop() {
						now = now.Add(time.Millisecond)
						if err := st.run(); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64((storetest.CPUTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
				})
			}
		})
	}
}
