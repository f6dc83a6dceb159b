package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// BenchmarkRecordOpens measures one group commit of 64 new documents, the
// batch size that 64 concurrent clients produce.
func BenchmarkRecordOpens(b *testing.B) {
	for _, backend := range storetest.Backends {
		b.Run(backend, func(b *testing.B) {
			db := storetest.Open(b, storetest.URL(b, backend))
			now := time.Now()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				events := make([]quire.OpenEvent, 64)
				for j := range events {
					events[j] = quire.OpenEvent{LicenseKey: quire.CommunityLicenseKey, DocumentID: fmt.Sprintf("HASH-%08X", i*64+j),
						ReceivedAt: now, OccurredAt: "2026-11-22T09:34:00.123Z", LibraryVersion: "1.46.3", Metadata: "{}"}
				}
				if err := db.RecordOpens(context.Background(), events); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*64), "µs/event")
		})
	}
}
