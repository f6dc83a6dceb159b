package ratelimit

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// countingCounter is a real counter that counts the round trips made to it.
type countingCounter struct {
	Counter
	hits atomic.Int64
}

func (c *countingCounter) Hit(ctx context.Context, bucket string, now time.Time, window time.Duration, n int) (int, time.Time, error) {
	c.hits.Add(1)
	return c.Counter.Hit(ctx, bucket, now, window, n)
}

// TestForget: the blocks of ended windows are dropped, those of windows
// still running are kept with their tokens (the next call is decided in
// memory), and a block in use is left alone.
func TestForget(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		clock := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
		counter := &countingCounter{Counter: db}
		b := NewBlocks(New(counter, []byte("k"), func() time.Time { return clock }))
		minute, hour := Rate{N: 40, Per: time.Minute}, Rate{N: 40, Per: time.Hour}
		take := func(value string, r Rate) {
			t.Helper()
			if _, err := b.Take(context.Background(), "key", value, r); err != nil {
				t.Fatalf("take %s: %v", value, err)
			}
		}
		take("per-minute", minute)
		take("per-hour", hour)
		take("busy", minute)
		if n := counter.hits.Load(); n != 3 {
			t.Fatalf("%d round trips for three buckets' first calls, want 3", n)
		}

		clock = clock.Add(time.Minute) // the minute's windows end, not the hour's
		busy := b.held[b.limiter.bucket("key", "busy")+"/1m"]
		busy.mu.Lock()
		b.Forget()
		busy.mu.Unlock()
		if len(b.held) != 2 || b.held[b.limiter.bucket("key", "per-hour")+"/1h"] == nil || b.held[b.limiter.bucket("key", "busy")+"/1m"] != busy {
			t.Fatalf("after Forget: %d blocks, want the hour's and the one in use", len(b.held))
		}
		take("per-hour", hour)
		if n := counter.hits.Load(); n != 3 {
			t.Errorf("a call on a kept block made a round trip (%d, want 3): its tokens were lost", n)
		}
		take("per-minute", minute)
		if n := counter.hits.Load(); n != 4 {
			t.Errorf("a call on a forgotten bucket: %d round trips in all, want 4 (its refill)", n)
		}
	})
}

// TestCounterFailure: when the shared counter fails, a call is neither
// allowed nor refused as over the rate: the error says which limit failed.
func TestCounterFailure(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		l := New(db, []byte("k"), time.Now)
		db.Close() // a counter that can no longer count
		r := Rate{N: 5, Per: time.Minute}
		_, blockErr := NewBlocks(l).Take(context.Background(), "register", "a@example.com", r)
		for name, err := range map[string]error{"Allow": l.Allow(context.Background(), "register", "a@example.com", r), "Take": blockErr} {
			if err == nil || quire.ErrorCode(err) == quire.CodeRateLimit || !strings.HasPrefix(err.Error(), "rate limit register: ") {
				t.Errorf("%s on a closed database: %v, want the counter's error naming the limit", name, err)
			}
		}
	})
}
