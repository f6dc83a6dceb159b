package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/quire-dev/quire/internal/units"
)

// Blocks limits rates like Limiter, but takes the shared counter's
// tokens in blocks, so that most calls are decided in memory rather than
// by a database round trip. The sum of the blocks every instance takes
// never exceeds the rate: the counter hands out distinct ranges of its
// count, and an instance keeps only the part of its range under the
// limit. Blocks shrink as the window's tokens run out (a quarter of what
// is left, as last seen), so that few tokens lie unused in one instance
// while another refuses calls; the tokens an instance holds when its
// window ends, or when it stops, are lost to that window.
type Blocks struct {
	limiter *Limiter
	mu      sync.Mutex
	held    map[string]*block
}

// block is one bucket's tokens on this instance, in the current window.
type block struct {
	mu    sync.Mutex
	start time.Time // of the window the tokens belong to
	reset time.Time
	left  int // tokens held, not yet used
	seen  int // the shared count at the last refill
}

// Status is a bucket's state after a call, for the RateLimit header.
type Status struct {
	Remaining int           // calls left in the window: held here plus those not yet taken anywhere, as last seen
	Reset     time.Duration // until the window ends
}

// maxBlock bounds the tokens taken at once: what a crash may waste.
const maxBlock = 100

// NewBlocks returns a block limiter over l's counter and bucket names.
func NewBlocks(l *Limiter) *Blocks {
	return &Blocks{limiter: l, held: map[string]*block{}}
}

// Take counts one call of scope by value against r, as Limiter.Allow
// does, and returns the bucket's status.
func (b *Blocks) Take(ctx context.Context, scope, value string, r Rate) (Status, error) {
	if r.N == 0 {
		return Status{}, nil
	}
	// One counter per window length: a changed N applies to the count so far.
	name := b.limiter.bucket(scope, value) + "/" + units.ShortDuration(r.Per)
	b.mu.Lock()
	bl := b.held[name]
	if bl == nil {
		bl = &block{}
		b.held[name] = bl
	}
	b.mu.Unlock()

	bl.mu.Lock()
	defer bl.mu.Unlock()
	now := b.limiter.now()
	w := r.Per.Milliseconds()
	if start := time.UnixMilli(now.UnixMilli() / w * w); !start.Equal(bl.start) {
		bl.start, bl.reset, bl.left, bl.seen = start, start.Add(r.Per), 0, 0
	}
	if bl.left == 0 && bl.seen < r.N {
		if err := bl.refill(ctx, b.limiter.counter, name, now, r); err != nil {
			return Status{}, fmt.Errorf("rate limit %s: %w", scope, err)
		}
	}
	st := Status{Remaining: bl.left + max(0, r.N-bl.seen), Reset: bl.reset.Sub(now)}
	if bl.left == 0 {
		return st, tooMany(r, scope, st.Reset)
	}
	bl.left--
	st.Remaining--
	return st, nil
}

// refill takes a block of tokens from the shared counter.
func (bl *block) refill(ctx context.Context, c Counter, name string, now time.Time, r Rate) error {
	want := min(maxBlock, max(1, (r.N-bl.seen)/4), r.N-bl.seen)
	hits, reset, err := c.Hit(ctx, name, now, r.Per, want)
	if err != nil {
		return err
	}
	// This instance owns the counts (hits-want, hits]; those up to r.N are tokens.
	bl.left = max(0, min(want, r.N-(hits-want)))
	bl.seen, bl.reset = hits, reset
	return nil
}

// Forget drops the blocks of windows that have ended, so that the map
// does not grow with every key ever seen.
func (b *Blocks) Forget() {
	now := b.limiter.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	for name, bl := range b.held {
		if bl.mu.TryLock() {
			if !now.Before(bl.reset) {
				delete(b.held, name)
			}
			bl.mu.Unlock()
		}
	}
}
