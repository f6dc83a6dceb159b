package store_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

func TestKeyLimitsOverrides(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		now := time.UnixMilli(1_790_000_000_000).UTC()
		if err := db.CreateKey(ctx, quire.APIKey{ID: "k1", Email: "a@example.com", Prefix: "sd_a", Hash: "h1", CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		five, rate, quota := 5, 30, int64(1000)
		if err := db.SetKeyLimits(ctx, quire.KeyLimits{KeyID: "nope", Concurrent: &five, UpdatedAt: now}); !errors.Is(err, quire.ErrNotFound) {
			t.Errorf("limits of an unknown key: %v, want ErrNotFound", err)
		}
		if err := db.SetKeyLimits(ctx, quire.KeyLimits{KeyID: "k1", Concurrent: &five, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		if err := db.SetKeyLimits(ctx, quire.KeyLimits{KeyID: "k1", Concurrent: &five, Rate: &rate, RatePer: time.Minute, Quota: &quota, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		all, err := db.KeyLimits(ctx)
		l := all["k1"]
		if err != nil || len(all) != 1 || *l.Concurrent != 5 || *l.Rate != 30 || l.RatePer != time.Minute || *l.Quota != 1000 || !l.UpdatedAt.Equal(now) {
			t.Fatalf("= %+v, %v", all, err)
		}
		if err := db.SetKeyLimits(ctx, quire.KeyLimits{KeyID: "k1", Quota: &quota, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		if all, _ := db.KeyLimits(ctx); all["k1"].Concurrent != nil || all["k1"].Rate != nil || *all["k1"].Quota != 1000 {
			t.Errorf("after replacing: %+v, want only the quota", all["k1"])
		}
		if err := db.ClearKeyLimits(ctx, "k1"); err != nil {
			t.Fatal(err)
		}
		if all, err := db.KeyLimits(ctx); err != nil || len(all) != 0 {
			t.Errorf("after clearing: %+v, %v", all, err)
		}
	})
}

func TestAPIUsageSums(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		day := quire.Day(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
		use := func(key string, d int64, op string, docs int64) quire.APIUsageRow {
			return quire.APIUsageRow{KeyID: key, Period: d, Operation: op,
				OperationUsage: quire.OperationUsage{Requests: 1, Documents: docs, Pages: 2 * docs, InputBytes: 100, EngineSeconds: 0.25}}
		}
		// Two commits of the same key, day and operation add up; the
		// next day is in December.
		for _, rows := range [][]quire.APIUsageRow{
			{use("k1", day, quire.OpConvert, 3), use("k1", day, quire.OpSign, 1), use("k2", day, quire.OpSign, 1)},
			{use("k1", day, quire.OpConvert, 2), use("k1", day+1, quire.OpConvert, 4)},
		} {
			var charges []quire.Charge
			for _, r := range rows {
				charges = append(charges, quire.Charge{KeyID: r.KeyID, Rows: []quire.APIUsageRow{r}})
			}
			if res, err := db.AddAPIUsage(ctx, charges); err != nil || len(res) != len(rows) || res[0].Refused {
				t.Fatal(res, err)
			}
		}
		rows, err := db.APIUsage(ctx, day, day+2, false, []string{"k1"})
		want := []quire.APIUsageRow{
			{KeyID: "k1", Period: day, Operation: quire.OpConvert, OperationUsage: quire.OperationUsage{Requests: 2, Documents: 5, Pages: 10, InputBytes: 200, EngineSeconds: 0.5}},
			{KeyID: "k1", Period: day, Operation: quire.OpSign, OperationUsage: quire.OperationUsage{Requests: 1, Documents: 1, Pages: 2, InputBytes: 100, EngineSeconds: 0.25}},
			{KeyID: "k1", Period: day + 1, Operation: quire.OpConvert, OperationUsage: quire.OperationUsage{Requests: 1, Documents: 4, Pages: 8, InputBytes: 100, EngineSeconds: 0.25}},
		}
		if err != nil || len(rows) != len(want) {
			t.Fatalf("by day = %+v, %v", rows, err)
		}
		for i := range want {
			if rows[i] != want[i] {
				t.Errorf("row %d = %+v, want %+v", i, rows[i], want[i])
			}
		}
		nov := quire.Month(quire.DayStart(day))
		rows, err = db.APIUsage(ctx, day, day+2, true, nil)
		if err != nil || len(rows) != 4 || rows[0].Period != nov || rows[0].Documents != 5 || rows[2].Period != nov+1 || rows[3].KeyID != "k2" {
			t.Errorf("by month = %+v, %v", rows, err)
		}
		for _, c := range []struct {
			key   string
			month int64
			want  int64
		}{{"k1", nov, 6}, {"k1", nov + 1, 4}, {"k2", nov, 1}, {"k3", nov, 0}} {
			if n, err := db.MonthDocuments(ctx, c.key, c.month); err != nil || n != c.want {
				t.Errorf("MonthDocuments(%s, %d) = %d, %v, want %d", c.key, c.month, n, err, c.want)
			}
		}
	})
}

// Charges that arrive together hold a key's monthly quota exactly: those
// that fit are counted, the others count nothing; a signing whose charge
// is refused is not recorded either.
func TestChargesHoldTheQuota(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		charge := func(docs int64) quire.Charge {
			return quire.Charge{KeyID: "k1", Quota: 20, Rows: []quire.APIUsageRow{{KeyID: "k1", Period: quire.Day(now), Operation: quire.OpConvert,
				OperationUsage: quire.OperationUsage{Requests: 1, Documents: docs}}}}
		}
		if res, err := db.AddAPIUsage(ctx, []quire.Charge{charge(21)}); err != nil || !res[0].Refused || res[0].MonthDocuments != 0 {
			t.Fatalf("a first charge over the quota: %+v, %v", res, err)
		}
		var counted, refused atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 10 {
					res, err := db.AddAPIUsage(ctx, []quire.Charge{charge(1), charge(2)})
					if err != nil {
						t.Error(err)
						return
					}
					for i, r := range res {
						if r.Refused {
							refused.Add(1)
						} else {
							counted.Add(int64(i + 1))
						}
						if r.MonthDocuments > 20 {
							t.Errorf("month's documents %d, over the quota", r.MonthDocuments)
						}
					}
				}
			})
		}
		wg.Wait()
		month := quire.Month(now)
		if n, err := db.MonthDocuments(ctx, "k1", month); err != nil || n != 20 || counted.Load() != 20 {
			t.Errorf("month's documents %d (%v), charges counted %d, want 20 and 20", n, err, counted.Load())
		}
		if rows, err := db.APIUsage(ctx, quire.Day(now), quire.Day(now)+1, false, nil); err != nil || len(rows) != 1 || rows[0].Documents != 20 {
			t.Errorf("usage %+v, %v, want 20 documents", rows, err)
		}
		s := quire.Signing{SignedDigest: "d1", EventID: "e1", APIKeyID: "k1", SignedAt: now}
		if res, err := db.RecordSigningCharged(ctx, s, charge(1)); err != nil || !res.Refused || res.MonthDocuments != 20 {
			t.Errorf("signing over the quota: %+v, %v", res, err)
		}
		if _, err := db.SigningByDigest(ctx, "d1"); !errors.Is(err, quire.ErrNotFound) {
			t.Errorf("the refused signing was recorded: %v", err)
		}
		c := charge(1)
		c.Quota = 0
		if res, err := db.RecordSigningCharged(ctx, s, c); err != nil || res.Refused || res.MonthDocuments != 21 {
			t.Errorf("signing without a quota: %+v, %v", res, err)
		}
		if _, err := db.SigningByDigest(ctx, "d1"); err != nil {
			t.Errorf("the signing was not recorded: %v", err)
		}
	})
}
