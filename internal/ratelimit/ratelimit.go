// Package ratelimit bounds how often one client may call an operation, with
// fixed-window counters kept in the database so that every instance behind
// a load balancer enforces the same limit.
package ratelimit

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/units"
)

// Rate is at most N events per window Per; the zero Rate means
// unlimited. Its text form ("5/1h") is read by settings and the CLI.
type Rate = units.Rate

// Counter counts hits in fixed windows; *store.DB is one. Hit counts n
// hits and returns the count so far in the window, these n included.
type Counter interface {
	Hit(ctx context.Context, bucket string, now time.Time, window time.Duration, n int) (int, time.Time, error)
}

// Limiter checks rates against shared counters. Buckets are named with a
// keyed hash of the limited value, so the database never holds client
// addresses or e-mail addresses for rate limiting.
type Limiter struct {
	counter Counter
	key     []byte
	now     func() time.Time
}

// New returns a limiter counting in counter and naming buckets with key.
func New(counter Counter, key []byte, now func() time.Time) *Limiter {
	return &Limiter{counter: counter, key: key, now: now}
}

// Allow counts one call of scope by value (an address, an e-mail) and
// returns a RATE_LIMIT_ERROR, with the time until the window ends, when
// the call is over the rate.
func (l *Limiter) Allow(ctx context.Context, scope, value string, r Rate) error {
	if r.N == 0 {
		return nil
	}
	now := l.now()
	hits, reset, err := l.counter.Hit(ctx, l.bucket(scope, value), now, r.Per, 1)
	if err != nil {
		return fmt.Errorf("rate limit %s: %w", scope, err)
	}
	if hits <= r.N {
		return nil
	}
	return tooMany(r, scope, reset.Sub(now))
}

func tooMany(r Rate, scope string, retry time.Duration) error {
	return &quire.Error{
		Code:       quire.CodeRateLimit,
		Message:    fmt.Sprintf("Too many requests: at most %d per %s for %s. Try again later.", r.N, units.ShortDuration(r.Per), scope),
		RetryAfter: retry,
	}
}

func (l *Limiter) bucket(scope, value string) string {
	m := hmac.New(sha256.New, l.key)
	m.Write([]byte(scope + "\x00" + value))
	return scope + ":" + hex.EncodeToString(m.Sum(nil)[:16])
}
