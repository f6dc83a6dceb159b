// Package keylimit enforces the per-key limits of the API before work
// starts: requests in progress at once, a rate shared by every instance on
// the database (ratelimit.Blocks), and a monthly quota of documents
// counted by the metering of API operations.
//
// Requests in progress are counted by each instance in memory, which
// refuses at once the requests of a key past its limit there. The
// instances sharing a PostgreSQL database also count them in it, so that
// together they let no more requests of a key in progress than its limit:
// each request of a key with a limit is a row of the database while it is
// in progress, written in one atomic step with the count of the key's
// rows on every instance (store.HoldRequest) and deleted when it ends. A
// SQLite database is served by one instance, whose count in memory is
// exact: it writes no row.
//
// The quota is exact across instances because the database decides it:
// an answer's count is committed only if the month's documents stay within
// the quota (quire.Charge), and a request whose count is refused is
// answered 429 instead. Admission keeps work from starting that would be
// refused: each request of a key with a quota holds one document of it in
// the database while it is in progress, taken in one atomic step with the
// check of the month's documents and of the holds of every instance
// (store.HoldRequest, the same step and round trip as the row of a request
// in progress), so that the instances together let no more requests of a
// key in progress than its quota has documents left. The rows of an
// instance that crashed count no more when its lease ends (lease.go).
package keylimit

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/ratelimit"
	"github.com/quire-dev/quire/internal/units"
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
	HoldRequest(ctx context.Context, h quire.RequestHold) (quire.RequestHeld, error)
	ReleaseRequest(ctx context.Context, id string) error
	RenewLease(ctx context.Context, id string, ttl time.Duration) error
	ForgetHolds(ctx context.Context) error
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
	lease    *lease
	shared   bool // requests in progress are counted in the database too
	log      *slog.Logger

	mu        sync.Mutex
	overrides map[string]quire.KeyLimits
	loaded    time.Time
	running   map[string]int // requests in progress per key, on this instance
	months    map[string]*monthCount
}

// monthCount is a key's documents this month, as last read or committed
// here.
type monthCount struct {
	month     int64
	documents int64
	read      time.Time
}

// nearQuota is how close to its quota, in documents, a key's count is
// read before each job submission rather than once per Refresh.
const nearQuota = 10

// Options are an enforcer's lease, database and log.
type Options struct {
	// Lease is the period of the lease under which the holds of its
	// requests in the database count (QUIRE_JOB_LEASE).
	Lease time.Duration
	// Shared says that other instances may share the database
	// (PostgreSQL): the requests of keys in progress are then counted in
	// it, across the instances, and not only in memory.
	Shared bool
	Logger *slog.Logger // nil: slog's default
}

// New returns an enforcer of defaults, overridden per key from st, taking
// rate tokens from rate. Close ends its lease.
func New(defaults Limits, st Store, rate *ratelimit.Blocks, now func() time.Time, o Options) *Enforcer {
	return &Enforcer{defaults: defaults, store: st, rate: rate, now: now, lease: newLease(o.Lease), shared: o.Shared, log: cmp.Or(o.Logger, slog.Default()),
		running: map[string]int{}, months: map[string]*monthCount{}}
}

// Admission is an admitted request, or the state of a refused one.
type Admission struct {
	Limits    Limits
	Running   int              // requests of the key in progress (Options.Shared: on every instance), this one included
	Rate      ratelimit.Status // after this request
	QuotaUsed int64            // documents this month before this request (when there is a quota)
	Month     time.Duration    // the length of the quota's month
	MonthEnd  time.Duration    // until the quota's month ends
	release   func()           // ends the request's count in memory
	// id names the request's holds in the database: as one of its key's
	// requests in progress (running) and on its key's quota (quotaHeld),
	// while it has them.
	id                 string
	running, quotaHeld bool
	e                  *Enforcer
	key                string
}

// Hold names the request's hold on its key's quota, if it has one: the
// commit of its charge ends it (quire.Charge.Hold).
func (a *Admission) Hold() string {
	if !a.quotaHeld {
		return ""
	}
	return a.id
}

// Done ends an admitted request: it no longer counts against concurrency,
// nor, if it was not counted, against the quota. The database forgets it
// before the memory does, so that a request here is never refused for a
// row of a request that ended here.
func (a *Admission) Done() {
	a.releaseHolds()
	if a.release != nil {
		a.release()
		a.release = nil
	}
}

// releaseHolds ends the request's holds in the database, if it still has
// any; a failure only leaves them to end with the lease.
func (a *Admission) releaseHolds() {
	if !a.running && !a.quotaHeld {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.e.lease.ttl)
	defer cancel()
	if err := a.e.store.ReleaseRequest(ctx, a.id); err != nil {
		a.e.log.Error("holds of a request in progress not released", "key", a.key, "err", err)
	}
	a.running, a.quotaHeld = false, false
}

// Settle takes the outcome of the commit of the request's count (which,
// unless refused, ended its hold on the quota; Done ends a refused one):
// the key's documents this month are known here at once, and a count the
// quota refused is a RATE_LIMIT_ERROR, the request's answer.
func (a *Admission) Settle(res quire.ChargeResult, documents int64) error {
	if !res.Refused {
		a.quotaHeld = false
	}
	if a.Limits.Quota == 0 {
		return nil
	}
	a.e.counted(a.key, quire.Month(a.e.now()), res.MonthDocuments)
	a.QuotaUsed = res.MonthDocuments
	if !res.Refused {
		return nil
	}
	if res.MonthDocuments >= a.Limits.Quota {
		return a.usedUp()
	}
	return &quire.Error{Code: quire.CodeRateLimit, RetryAfter: a.MonthEnd,
		Message: fmt.Sprintf("This request's %d documents would pass the monthly quota of this API key: %d documents of %d used this month (UTC).", documents, res.MonthDocuments, a.Limits.Quota)}
}

func (a *Admission) usedUp() error {
	return &quire.Error{Code: quire.CodeRateLimit, RetryAfter: a.MonthEnd,
		Message: fmt.Sprintf("The monthly quota of this API key is used up: %d documents of %d this month (UTC).", a.QuotaUsed, a.Limits.Quota)}
}

// Admit checks key's limits for one more request: concurrency first (here,
// where it costs nothing to refuse, then with the quota in the database),
// then the rate (which spends a token). A refusal is a RATE_LIMIT_ERROR
// with the time to wait; the Admission describes the key's state either
// way, for the RateLimit headers. The caller calls Done when the request
// ends.
func (e *Enforcer) Admit(ctx context.Context, key string) (*Admission, error) {
	lim, err := e.limitsOf(ctx, key)
	if err != nil {
		return nil, err
	}
	a := &Admission{Limits: lim, e: e, key: key}
	if err := e.enter(key, a); err != nil {
		return a, err
	}
	if err := e.hold(ctx, key, a); err != nil {
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
		return a.tooMany()
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

// CheckQuota refuses, as Admit does (429 with the wait until the month's
// end), a request of key whose monthly quota is used up; it takes nothing
// and reserves nothing. A job's submission asks it: the job's run is
// admitted and counted as any request.
func (e *Enforcer) CheckQuota(ctx context.Context, key string) error {
	lim, err := e.limitsOf(ctx, key)
	if err != nil || lim.Quota == 0 {
		return err
	}
	a := &Admission{Limits: lim, e: e, key: key}
	month := a.setMonth(e.now())
	if err := e.readCount(ctx, key, month, a.Limits.Quota); err != nil {
		return fmt.Errorf("quota of key %s: %w", key, err)
	}
	e.mu.Lock()
	a.QuotaUsed = e.months[key].documents
	e.mu.Unlock()
	if a.QuotaUsed >= a.Limits.Quota {
		return a.usedUp()
	}
	return nil
}

// setMonth sets the length of the quota's month at now, and the time
// until its end; it returns the month's number.
func (a *Admission) setMonth(now time.Time) int64 {
	month := quire.Month(now)
	a.MonthEnd = quire.MonthStart(month + 1).Sub(now)
	a.Month = quire.MonthStart(month + 1).Sub(quire.MonthStart(month))
	return month
}

// hold admits the request in the database, for the limits of its key
// counted there, in one round trip: as one of the key's requests in
// progress on every instance (Options.Shared), and as the holder of one
// document of its quota, unless the month's documents and the holds of the
// key's requests in progress on every instance use it all.
func (e *Enforcer) hold(ctx context.Context, key string, a *Admission) error {
	h := quire.RequestHold{KeyID: key, Lease: e.lease.id}
	if e.shared {
		h.Concurrent = int64(a.Limits.Concurrent)
	}
	if a.Limits.Quota > 0 {
		h.Month, h.Quota = a.setMonth(e.now()), a.Limits.Quota
		if used, spent := e.spent(key, h.Month, h.Quota); spent {
			a.QuotaUsed = used
			return a.usedUp()
		}
	}
	if h.Concurrent == 0 && h.Quota == 0 {
		return nil // nothing to ask the database: not even an id to draw
	}
	h.ID = uuid.NewString()
	if err := e.keepLease(ctx); err != nil {
		return err
	}
	held, err := e.store.HoldRequest(ctx, h)
	if err != nil {
		return fmt.Errorf("limits of key %s: %w", key, err)
	}
	if h.Quota > 0 {
		e.counted(key, h.Month, held.Documents)
		a.QuotaUsed = held.Documents
	}
	if h.Concurrent > 0 {
		a.Running = int(held.Running)
	}
	if !held.Taken {
		return a.refused(h, held)
	}
	if h.Concurrent > 0 {
		a.Running++
	}
	a.id, a.running, a.quotaHeld = h.ID, h.Concurrent > 0, h.Quota > 0
	return nil
}

// refused is the error of a request h that the database refused: for its
// key's requests in progress, first checked, or for its quota.
func (a *Admission) refused(h quire.RequestHold, held quire.RequestHeld) error {
	switch {
	case h.Concurrent > 0 && held.Running >= h.Concurrent:
		return a.tooMany()
	case held.Documents >= h.Quota:
		return a.usedUp()
	}
	return &quire.Error{Code: quire.CodeRateLimit, RetryAfter: time.Second,
		Message: fmt.Sprintf("The rest of the monthly quota of this API key (%d documents of %d) is held by its requests in progress. Try again when one has finished.", h.Quota-held.Documents, h.Quota)}
}

// tooMany is the error of a request past its key's requests in progress.
func (a *Admission) tooMany() error {
	return &quire.Error{Code: quire.CodeRateLimit, RetryAfter: time.Second,
		Message: fmt.Sprintf("Too many requests in progress: at most %d at once for this API key. Try again when one has finished.", a.Limits.Concurrent)}
}

// spent returns key's documents in month as known here, and whether they
// use up quota: a count only grows within its month, so the requests of a
// key used up are refused without asking the database.
func (e *Enforcer) spent(key string, month, quota int64) (int64, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.months[key]
	if c == nil || c.month != month {
		return 0, false
	}
	return c.documents, c.documents >= quota
}

// readCount reads key's documents this month from the database unless
// the count known here will do: it is used up (a count only grows within
// its month), or it is younger than Refresh and far from quota.
func (e *Enforcer) readCount(ctx context.Context, key string, month, quota int64) error {
	now := e.now()
	e.mu.Lock()
	c := e.months[key]
	known := c != nil && c.month == month && (c.documents >= quota ||
		now.Sub(c.read) < Refresh && !now.Before(c.read) && quota-c.documents > nearQuota)
	e.mu.Unlock()
	if known {
		return nil
	}
	n, err := e.store.MonthDocuments(ctx, key, month)
	if err != nil {
		return err
	}
	e.counted(key, month, n)
	return nil
}

// counted learns that key's documents in month were n at now.
func (e *Enforcer) counted(key string, month, n int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.months[key]
	if c == nil || c.month != month {
		if c != nil && c.month > month {
			return // a late answer of the month before
		}
		c = &monthCount{month: month}
		e.months[key] = c
	}
	c.documents, c.read = max(c.documents, n), e.now()
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

// Quota is a monthly quota of documents; its text form ("10000/month")
// is read by settings and the CLI.
type Quota = units.Quota
