package metering_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// Concurrent records are all durable when Record returns, summed per key,
// day and operation; after Close, Record fails rather than lose a count.
func TestRecorderCommitsEveryRecord(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 11, 27, 23, 0, 0, 0, time.UTC)
		rec := metering.NewRecorder(db, func() time.Time { return now }, prometheus.NewRegistry())
		var wg sync.WaitGroup
		for i := range 200 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := &metering.Tally{Key: []string{"k1", "k2"}[i%2], Operation: quire.OpSign, Start: time.Now(),
					OperationUsage: quire.OperationUsage{Requests: 1, Documents: 1, Pages: 3, InputBytes: 10, EngineSeconds: 0.5}}
				if i%20 < 2 { // a sign of a DOCX also counts a conversion: 10 per key
					a.Converted = 1
				}
				if res, err := rec.Record(ctx, a.Charge(now)); err != nil || res.Refused {
					t.Error(res, err)
				}
			}()
		}
		wg.Wait()
		rec.Close()
		if _, err := rec.Record(ctx, quire.Charge{KeyID: "k1"}); !errors.Is(err, metering.ErrClosed) {
			t.Errorf("Record after Close: %v", err)
		}
		q, err := metering.ParseQuery("2026-11-27T00:00:00Z", "2026-11-28T00:00:00Z", "day", now)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.CreateKey(ctx, quire.APIKey{ID: "k1", Email: "a@example.com", Prefix: "sd_a", Hash: "h", CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		rep, err := metering.Build(ctx, db, q)
		if err != nil || len(rep.Keys) != 2 || rep.Keys[0].Email != "a@example.com" || rep.Keys[1].Email != "" {
			t.Fatalf("report: %+v, %v", rep, err)
		}
		for _, k := range rep.Keys {
			ops := k.Periods[0].Operations
			if ops.Sign != (quire.OperationUsage{Requests: 100, Documents: 100, Pages: 300, InputBytes: 1000, EngineSeconds: 50}) || ops.Convert.Documents != 10 || ops.Convert.Requests != 0 {
				t.Errorf("%s: %+v", k.KeyID, ops)
			}
		}
	})
}
