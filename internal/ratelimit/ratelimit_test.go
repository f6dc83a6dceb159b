package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/ratelimit"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

func TestAllow(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		now := time.UnixMilli(1_700_000_400_000).UTC() // a window boundary for 10 minutes
		l := ratelimit.New(db, []byte("k"), func() time.Time { return now })
		r := ratelimit.Rate{N: 2, Per: 10 * time.Minute}
		ctx := context.Background()
		for i := 0; i < 2; i++ {
			if err := l.Allow(ctx, "register", "a@example.com", r); err != nil {
				t.Fatalf("call %d: %v", i+1, err)
			}
		}
		now = now.Add(4 * time.Minute)
		err := l.Allow(ctx, "register", "a@example.com", r)
		var qe *quire.Error
		if !errors.As(err, &qe) || qe.Code != quire.CodeRateLimit || qe.RetryAfter != 6*time.Minute {
			t.Fatalf("third call = %v (%+v), want RATE_LIMIT_ERROR retrying after 6m", err, qe)
		}
		if err := l.Allow(ctx, "register", "b@example.com", r); err != nil {
			t.Errorf("another value is limited separately: %v", err)
		}
		if err := l.Allow(ctx, "verify", "a@example.com", r); err != nil {
			t.Errorf("another scope is limited separately: %v", err)
		}
		if err := l.Allow(ctx, "register", "a@example.com", ratelimit.Rate{}); err != nil {
			t.Errorf("zero rate is unlimited: %v", err)
		}
	})
}
