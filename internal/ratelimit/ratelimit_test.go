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

func TestRateText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]ratelimit.Rate{"5/1h": {5, time.Hour}, "30/15m": {30, 15 * time.Minute}, "0": {}} {
		var r ratelimit.Rate
		if err := r.Set(in); err != nil || r != want {
			t.Errorf("Set(%q) = %v, %v", in, r, err)
		}
		if r.String() != in {
			t.Errorf("String() = %q, want %q", r.String(), in)
		}
	}
	for _, bad := range []string{"", "5", "x/1h", "0/1h", "-1/1h", "5/1ms", "5/soon"} {
		var r ratelimit.Rate
		if err := r.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

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
