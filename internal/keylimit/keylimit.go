// Package keylimit enforces the per-key limits of the API before work
// starts: requests in progress at once (per instance), a rate shared by
// every instance on the database (ratelimit.Blocks), and a monthly quota
// of documents counted by the metering of API operations.
package keylimit

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/ratelimit"
)

// Limits are the limits of one key. Zero values mean no limit.
type Limits struct {
	Concurrent int
	Rate       ratelimit.Rate
	Quota      int64 // documents per calendar month, UTC
}

// Apply returns l with the overrides o.
func (l Limits) Apply(o quire.KeyLimits) Limits {
	if o.Concurrent != nil {
		l.Concurrent = *o.Concurrent
	}
	if o.Rate != nil {
		l.Rate = ratelimit.Rate{N: *o.Rate, Per: o.RatePer}
	}
	if o.Quota != nil {
		l.Quota = *o.Quota
	}
	return l
}

// Store holds the overrides and the month's documents; *store.DB is one.
type Store interface {
	KeyLimits(ctx context.Context) (map[string]quire.KeyLimits, error)
	SetKeyLimits(ctx context.Context, l quire.KeyLimits) error
	ClearKeyLimits(ctx context.Context, id string) error
	MonthDocuments(ctx context.Context, keyID string, month int64) (int64, error)
}

// Refresh is how old the overrides an instance applies may be: a change
// with quire keys limit or on /admin reaches every instance within it.
const Refresh = 2 * time.Second

// Enforcer admits the requests of keys within their limits.
type Enforcer struct {
	defaults Limits
	store    Store
	rate     *ratelimit.Blocks
	now      func() time.Time

	mu        sync.Mutex
	overrides map[string]quire.KeyLimits
	loaded    time.Time
	running   map[string]int // requests in progress per key, on this instance
}

// New returns an enforcer of defaults, overridden per key from st, taking
// rate tokens from rate.
func New(defaults Limits, st Store, rate *ratelimit.Blocks, now func() time.Time) *Enforcer {
	return &Enforcer{defaults: defaults, store: st, rate: rate, now: now, running: map[string]int{}}
}

// Admission is an admitted request, or the state of a refused one.
type Admission struct {
	Limits    Limits
	Running   int              // requests of the key in progress here, this one included
	Rate      ratelimit.Status // after this request
	QuotaUsed int64            // documents this month before this request (when there is a quota)
	Month     time.Duration    // the length of the quota's month
	MonthEnd  time.Duration    // until the quota's month ends
	release   func()
}

// Done ends an admitted request: it no longer counts against concurrency.
func (a *Admission) Done() {
	if a.release != nil {
		a.release()
		a.release = nil
	}
}

// Admit checks key's limits for one more request: concurrency first (it
// costs nothing to refuse), then the quota, then the rate (which spends a
// token). A refusal is a RATE_LIMIT_ERROR with the time to wait; the
// Admission describes the key's state either way, for the RateLimit
// headers. The caller calls Done when the request ends.
func (e *Enforcer) Admit(ctx context.Context, key string) (*Admission, error) {
	lim, err := e.limitsOf(ctx, key)
	if err != nil {
		return nil, err
	}
	a := &Admission{Limits: lim}
	if err := e.enter(key, a); err != nil {
		return a, err
	}
	if err := e.checkQuota(ctx, key, a); err != nil {
		a.Done()
		return a, err
	}
	a.Rate, err = e.rate.Take(ctx, "key", key, lim.Rate)
	if err != nil {
		a.Done()
		return a, err
	}
	return a, nil
}

// Defaults are the limits of keys without overrides.
func (e *Enforcer) Defaults() Limits { return e.defaults }

func (e *Enforcer) enter(key string, a *Admission) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := e.running[key]
	if a.Limits.Concurrent > 0 && n >= a.Limits.Concurrent {
		a.Running = n
		return &quire.Error{Code: quire.CodeRateLimit, RetryAfter: time.Second,
			Message: fmt.Sprintf("Too many requests in progress: at most %d at once for this API key. Try again when one has finished.", a.Limits.Concurrent)}
	}
	e.running[key] = n + 1
	a.Running = n + 1
	a.release = func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.running[key]--; e.running[key] == 0 {
			delete(e.running, key)
		}
	}
	return nil
}

func (e *Enforcer) checkQuota(ctx context.Context, key string, a *Admission) error {
	if a.Limits.Quota == 0 {
		return nil
	}
	now := e.now()
	month := quire.Month(now)
	a.MonthEnd = quire.MonthStart(month + 1).Sub(now)
	a.Month = quire.MonthStart(month + 1).Sub(quire.MonthStart(month))
	used, err := e.store.MonthDocuments(ctx, key, month)
	if err != nil {
		return fmt.Errorf("quota of key %s: %w", key, err)
	}
	a.QuotaUsed = used
	if used >= a.Limits.Quota {
		return &quire.Error{Code: quire.CodeRateLimit, RetryAfter: a.MonthEnd,
			Message: fmt.Sprintf("The monthly quota of this API key is used up: %d documents of %d this month (UTC).", used, a.Limits.Quota)}
	}
	return nil
}

// limitsOf returns key's limits, reloading the overrides when they are
// older than Refresh.
func (e *Enforcer) limitsOf(ctx context.Context, key string) (Limits, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if now := e.now(); now.Sub(e.loaded) >= Refresh || now.Before(e.loaded) {
		o, err := e.store.KeyLimits(ctx)
		if err != nil {
			return Limits{}, fmt.Errorf("key limits: %w", err)
		}
		e.overrides, e.loaded = o, now
		e.rate.Forget()
	}
	return e.defaults.Apply(e.overrides[key]), nil
}

// Quota is a monthly quota of documents; its text form is "N/month", or
// "0" for none. It is a flag.Value, for configuration and the CLI.
type Quota int64

func (q Quota) String() string {
	if q == 0 {
		return "0"
	}
	return strconv.FormatInt(int64(q), 10) + "/month"
}

// Set parses the text form.
func (q *Quota) Set(s string) error {
	if s == "0" {
		*q = 0
		return nil
	}
	n, ok := strings.CutSuffix(s, "/month")
	v, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || v < 1 {
		return fmt.Errorf("quota %q: want N/month such as 10000/month, or 0 for none", s)
	}
	*q = Quota(v)
	return nil
}
