package ratelimit_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/ratelimit"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// Two instances (two Blocks, each with its own connection pool) on one
// database, called concurrently: together they grant exactly the rate,
// never more, and the remaining count they report only goes down.
func TestBlocksShareTheRateExactlyAcrossInstances(t *testing.T) {
	t.Parallel()
	for _, b := range storetest.Backends {
		t.Run(b, func(t *testing.T) {
			url := storetest.URL(t, b)
			now := func() time.Time { return time.Date(2026, 11, 27, 10, 0, 30, 0, time.UTC) }
			var instances []*ratelimit.Blocks
			for range 2 {
				db := storetest.Open(t, url)
				instances = append(instances, ratelimit.NewBlocks(ratelimit.New(db, []byte("k"), now)))
			}
			rate := ratelimit.Rate{N: 257, Per: time.Minute}
			var granted, refused atomic.Int64
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 100 {
						_, err := instances[w%2].Take(context.Background(), "key", "k1", rate)
						switch {
						case err == nil:
							granted.Add(1)
						case quire.ErrorCode(err) == quire.CodeRateLimit:
							refused.Add(1)
						default:
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			if granted.Load() != int64(rate.N) || refused.Load() != 800-int64(rate.N) {
				t.Errorf("granted %d, refused %d; want exactly %d granted of 800", granted.Load(), refused.Load(), rate.N)
			}
			// Another key, and the same key in the next window, start afresh.
			if st, err := instances[0].Take(context.Background(), "key", "k2", rate); err != nil || st.Remaining != rate.N-1 {
				t.Errorf("another key: %+v, %v", st, err)
			}
		})
	}
}

func TestBlocksStatus(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		clock := time.Date(2026, 11, 27, 10, 0, 15, 0, time.UTC)
		bl := ratelimit.NewBlocks(ratelimit.New(db, []byte("k"), func() time.Time { return clock }))
		rate := ratelimit.Rate{N: 3, Per: time.Minute}
		for i := range 3 {
			st, err := bl.Take(context.Background(), "key", "k", rate)
			if err != nil || st.Remaining != 2-i || st.Reset != 45*time.Second {
				t.Fatalf("take %d: %+v, %v", i, st, err)
			}
		}
		st, err := bl.Take(context.Background(), "key", "k", rate)
		var qe *quire.Error
		if quire.ErrorCode(err) != quire.CodeRateLimit || !errors.As(err, &qe) || qe.RetryAfter != 45*time.Second || st.Remaining != 0 {
			t.Fatalf("over the rate: %+v, %v", st, err)
		}
		clock = clock.Add(time.Minute)
		if st, err := bl.Take(context.Background(), "key", "k", rate); err != nil || st.Remaining != 2 {
			t.Errorf("next window: %+v, %v", st, err)
		}
		if st, err := bl.Take(context.Background(), "key", "k", ratelimit.Rate{}); err != nil || st != (ratelimit.Status{}) {
			t.Errorf("no rate: %+v, %v", st, err)
		}
	})
}
