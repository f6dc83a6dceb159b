package keylimit_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/ratelimit"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// countingStore is the database, with its round trips for the holds of
// requests counted.
type countingStore struct {
	*store.DB
	holds, releases atomic.Int64
}

func (c *countingStore) HoldRequest(ctx context.Context, h quire.RequestHold) (quire.RequestHeld, error) {
	c.holds.Add(1)
	return c.DB.HoldRequest(ctx, h)
}

func (c *countingStore) ReleaseRequest(ctx context.Context, id string) error {
	c.releases.Add(1)
	return c.DB.ReleaseRequest(ctx, id)
}

// enforcer returns an instance's enforcer of lim on st, counting the
// requests in progress in the database when shared; closed at cleanup.
func enforcer(t *testing.T, st keylimit.Store, db *store.DB, lim keylimit.Limits, shared bool) *keylimit.Enforcer {
	e := keylimit.New(lim, st, ratelimit.NewBlocks(ratelimit.New(db, []byte("test"), time.Now)), time.Now,
		keylimit.Options{Lease: time.Minute, Shared: shared})
	t.Cleanup(e.Close)
	return e
}

func admitted(t *testing.T, e *keylimit.Enforcer, key string) *keylimit.Admission {
	t.Helper()
	a, err := e.Admit(t.Context(), key)
	if err != nil {
		t.Fatalf("a request of %s refused: %v", key, err)
	}
	return a
}

// refused wants a request of key refused with a RATE_LIMIT_ERROR whose
// message has text and whose wait is retry (at least retry, when the
// wait runs to the month's end); it returns the refused admission.
func refused(t *testing.T, e *keylimit.Enforcer, key, text string, retry time.Duration) *keylimit.Admission {
	t.Helper()
	a, err := e.Admit(t.Context(), key)
	var qe *quire.Error
	if !errors.As(err, &qe) || qe.Code != quire.CodeRateLimit || !strings.Contains(qe.Message, text) ||
		qe.RetryAfter < retry || retry == time.Second && qe.RetryAfter != retry {
		t.Fatalf("a request of %s: %v, want a RATE_LIMIT_ERROR %q, Retry-After %v", key, err, text, retry)
	}
	return a
}

const busy = "Too many requests in progress"

// rows counts the rows of table in the database at u.
func rows(t *testing.T, u, table string) int {
	t.Helper()
	var n int
	if err := storetest.SQL(t, u).QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Two instances sharing a PostgreSQL database let no more requests of a
// key in progress, together, than its limit: a request in progress on one
// counts on the other, its end frees its place there, and the requests of
// an instance that crashed count no more when its lease expires. Refused
// requests leave no row.
func TestConcurrencyAcrossInstances(t *testing.T) {
	u := storetest.URL(t, "postgres")
	lim := keylimit.Limits{Concurrent: 2}
	dba, dbb := storetest.Open(t, u), storetest.Open(t, u)
	a, b := enforcer(t, dba, dba, lim, true), enforcer(t, dbb, dbb, lim, true)
	a1 := admitted(t, a, "k")
	if b1 := admitted(t, b, "k"); b1.Running != 2 {
		t.Errorf("instance b's request counts %d in progress, want 2 with instance a's", b1.Running)
	}
	// Instance a has one request of the key in progress: the database
	// refuses its second.
	if r := refused(t, a, "k", busy, time.Second); r.Running != 2 {
		t.Errorf("refused with %d in progress, want 2", r.Running)
	}
	refused(t, b, "k", busy, time.Second)
	admitted(t, a, "other").Done() // another key's own limit
	a1.Done()
	b2 := admitted(t, b, "k")
	// Instance b crashes: its lease, renewed no more, expires (at once
	// here), and its requests in progress count no more.
	b.Close()
	if _, err := storetest.SQL(t, u).Exec(`UPDATE job_leases SET expires_at = 0 WHERE id IN (SELECT lease FROM key_requests)`); err != nil {
		t.Fatal(err)
	}
	a2, a3 := admitted(t, a, "k"), admitted(t, a, "k")
	refused(t, a, "k", busy, time.Second)
	for _, r := range []*keylimit.Admission{a2, a3, b2} {
		r.Done()
	}
	if n := rows(t, u, "key_requests"); n != 1 {
		t.Errorf("%d requests left in progress, want instance b's first one only", n)
	}
}

// One instance serves a SQLite database: it counts requests in progress in
// memory only, with no round trip to the database.
func TestConcurrencyInMemoryOnSQLite(t *testing.T) {
	u := storetest.URL(t, "sqlite")
	db := storetest.Open(t, u)
	st := &countingStore{DB: db}
	e := enforcer(t, st, db, keylimit.Limits{Concurrent: 2}, false)
	first, second := admitted(t, e, "k"), admitted(t, e, "k")
	if r := refused(t, e, "k", busy, time.Second); r.Running != 2 {
		t.Errorf("refused with %d in progress, want 2", r.Running)
	}
	first.Done()
	admitted(t, e, "k").Done()
	second.Done()
	if st.holds.Load() != 0 || st.releases.Load() != 0 || rows(t, u, "key_requests") != 0 {
		t.Errorf("%d holds and %d releases in the database, want none", st.holds.Load(), st.releases.Load())
	}
}

// A key with a limit of requests at once and a quota: each admission that
// reaches the database is one round trip for both; a request refused by
// the quota holds no place among those in progress; a count ends the hold
// on the quota, and its request's end the rest; a count past the quota is
// refused; a quota used up is refused with no round trip at all.
func TestQuotaAndConcurrencyInOneRoundTrip(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			u := storetest.URL(t, backend)
			db := storetest.Open(t, u)
			st := &countingStore{DB: db}
			shared := backend != "sqlite"
			e := enforcer(t, st, db, keylimit.Limits{Concurrent: 4, Quota: 4}, shared)
			testQuotaAndConcurrency(t, u, db, e, st, shared)
		})
	}
}

func testQuotaAndConcurrency(t *testing.T, u string, db *store.DB, e *keylimit.Enforcer, st *countingStore, shared bool) {
	count := func(a *keylimit.Admission, documents int64) error {
		c := quire.Charge{KeyID: "k", Quota: a.Limits.Quota, Hold: a.Hold(), Rows: []quire.APIUsageRow{{KeyID: "k", Period: quire.Day(time.Now()),
			Operation: quire.OpSign, OperationUsage: quire.OperationUsage{Requests: 1, Documents: documents}}}}
		res, err := db.AddAPIUsage(t.Context(), []quire.Charge{c})
		if err != nil {
			t.Fatal(err)
		}
		return a.Settle(res[0], documents)
	}
	first := admitted(t, e, "k")
	if first.Hold() == "" || st.holds.Load() != 1 {
		t.Fatalf("hold %q after %d round trips, want one hold in one", first.Hold(), st.holds.Load())
	}
	if err := count(first, 1); err != nil || first.Hold() != "" || first.QuotaUsed != 1 {
		t.Fatalf("counted: %v, hold %q, %d documents used", err, first.Hold(), first.QuotaUsed)
	}
	first.Done()
	if want := map[bool]int64{true: 1, false: 0}[shared]; st.releases.Load() != want {
		t.Errorf("%d releases after a counted request, want %d (its place in progress)", st.releases.Load(), want)
	}
	second, third, fourth := admitted(t, e, "k"), admitted(t, e, "k"), admitted(t, e, "k")
	// One document used and three held: the quota refuses, with a place
	// among those in progress free.
	refused(t, e, "k", "held by its requests in progress", time.Second)
	if shared && rows(t, u, "key_requests") != 3 {
		t.Errorf("%d requests in progress in the database, want 3", rows(t, u, "key_requests"))
	}
	second.Done() // uncounted: its holds end together
	if err := count(third, 2); err != nil {
		t.Fatal(err)
	}
	third.Done()
	// Three documents used and one held: a count of two more is refused.
	if err := count(fourth, 2); quire.ErrorCode(err) != quire.CodeRateLimit || !strings.Contains(err.Error(), "would pass the monthly quota") {
		t.Errorf("a count past the quota: %v", err)
	}
	fourth.Done()
	last := admitted(t, e, "k")
	if err := count(last, 1); err != nil {
		t.Fatal(err)
	}
	last.Done()
	// Six admissions asked the database, and those that ended with holds
	// left released them in one round trip each.
	holds, releases := st.holds.Load(), map[bool]int64{true: 5, false: 2}[shared]
	if holds != 6 || st.releases.Load() != releases {
		t.Errorf("%d holds and %d releases, want 6 and %d", holds, st.releases.Load(), releases)
	}
	month := time.Until(quire.MonthStart(quire.Month(time.Now()) + 1))
	if r := refused(t, e, "k", "quota of this API key is used up", month-time.Minute); r.QuotaUsed != 4 || st.holds.Load() != holds {
		t.Errorf("used up: %d documents, %d round trips more", r.QuotaUsed, st.holds.Load()-holds)
	}
	if err := e.CheckQuota(t.Context(), "k"); quire.ErrorCode(err) != quire.CodeRateLimit {
		t.Errorf("a job's submission with the quota used up: %v", err)
	}
	if n, m := rows(t, u, "key_requests"), rows(t, u, "key_reservations"); n+m != 0 {
		t.Errorf("%d requests in progress and %d holds on the quota left", n, m)
	}
}

// A change of a key's limits applies at once on its instance and keeps
// the overrides it does not set; a cleared key has the defaults again; an
// unknown key is NOT_FOUND.
func TestChangeAppliesAtOnce(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		def := keylimit.Limits{Concurrent: 10}
		e := enforcer(t, db, db, def, db.Backend() != "sqlite")
		if err := db.CreateKey(t.Context(), quire.APIKey{ID: "key_a", Email: "a@example.com", Prefix: "sd_a", Hash: "hash_a", CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		admitted(t, e, "key_a").Done() // the overrides are loaded, and fresh
		change := func(c keylimit.Change, want keylimit.Limits) {
			t.Helper()
			if got, err := e.Change(t.Context(), c); err != nil || got != want {
				t.Fatalf("%+v: %+v, %v, want %+v", c, got, err, want)
			}
		}
		change(keylimit.Change{KeyID: "key_a", Concurrent: "1"}, keylimit.Limits{Concurrent: 1})
		change(keylimit.Change{KeyID: "key_a", Quota: "5/month"}, keylimit.Limits{Concurrent: 1, Quota: 5})
		a := admitted(t, e, "key_a")
		refused(t, e, "key_a", busy, time.Second)
		a.Done()
		o, err := e.Overrides(t.Context())
		if k := o["key_a"]; err != nil || k.Concurrent == nil || *k.Concurrent != 1 || k.Quota == nil || *k.Quota != 5 {
			t.Errorf("overrides %+v, %v", o, err)
		}
		change(keylimit.Change{KeyID: "key_a", Clear: true}, def)
		if _, err := e.Change(t.Context(), keylimit.Change{KeyID: "key_b", Concurrent: "1"}); quire.ErrorCode(err) != quire.CodeNotFound {
			t.Errorf("an unknown key: %v", err)
		}
	})
}
