package memory

import (
	"context"
	"errors"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/quire-dev/quire"
)

func mustFail(t *testing.T, what string, err error) {
	t.Helper()
	var qe *quire.Error
	if !errors.As(err, &qe) || qe.Code != quire.CodeEngineBusy || qe.RetryAfter != RetryAfter || RetryAfter < time.Second {
		t.Errorf("%s: %v, want ENGINE_UNAVAILABLE with Retry-After", what, err)
	}
}

// TestKeyShare: one key holds at most its share, unless one operation
// alone needs more; another key is admitted beside it, the budget bounds
// them together, and everything comes back.
func TestKeyShare(t *testing.T) {
	b := NewBudget(100, 60)
	a := quire.WithTenant(context.Background(), "A")
	bee := quire.WithTenant(context.Background(), "B")

	a1, err := b.Reserve(a, 40)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := b.Reserve(a, 20)
	if err != nil {
		t.Fatalf("A within its share: %v", err)
	}
	_, err = b.Reserve(a, 1)
	mustFail(t, "A beyond its share", err)
	mustFail(t, "A's operation growing beyond its share beside another", a1.Grow(41))
	a2.Release()
	if err := a1.Grow(80); err != nil || a1.Held() != 80 {
		t.Fatalf("A's only operation growing past the share: %v, holds %d, want 80", err, a1.Held())
	}
	b1, err := b.Reserve(bee, 15)
	if err != nil {
		t.Fatalf("B beside A's large operation: %v", err)
	}
	mustFail(t, "B beyond the budget", b1.Grow(25))
	if b1.Held() != 15 || b.Held() != 95 {
		t.Errorf("a refused growth changed the holdings: B %d, all %d", b1.Held(), b.Held())
	}
	if b.Refused() != 3 {
		t.Errorf("Refused = %d, want 3", b.Refused())
	}
	a1.Release()
	b1.Release()
	a1.Release() // twice: nothing more comes back
	if b.Held() != 0 || len(b.tenants) != 0 {
		t.Errorf("after release: %d held, %d tenants remembered", b.Held(), len(b.tenants))
	}
}

// TestGrowThroughContext: Grow raises the reservation a context carries,
// and does nothing for work charged to no budget.
func TestGrowThroughContext(t *testing.T) {
	if err := Grow(context.Background(), 1<<40); err != nil {
		t.Errorf("Grow without a reservation: %v", err)
	}
	b := NewBudget(100, 100)
	r, _ := b.Reserve(context.Background(), 10)
	ctx := With(context.Background(), r)
	if err := Grow(ctx, 70); err != nil || b.Held() != 70 {
		t.Errorf("Grow: %v, %d held, want 70", err, b.Held())
	}
	if err := Grow(ctx, 20); err != nil || b.Held() != 70 {
		t.Errorf("Grow to less than held: %v, %d held, want 70 still", err, b.Held())
	}
	_, err := b.Reserve(context.Background(), 31)
	mustFail(t, "Reserve past the budget", err)
	var qe *quire.Error
	if err := Grow(ctx, 101); !errors.As(err, &qe) || qe.Code != quire.CodePayloadTooLarge || b.Held() != 70 {
		t.Errorf("Grow past the whole budget: %v, %d held, want 413 and 70 held still", err, b.Held())
	}
	r.Release()
	if r, err := b.Reserve(context.Background(), 1000); err != nil || r.Held() != 100 {
		t.Errorf("Reserve of an upper bound past the whole budget: %v, want the whole budget", err)
	}
}

// TestLargeReleaseGivesTheHeapBack: a release of giveBackAt or more that
// empties the budget returns the free heap to the system (a forced
// collection, which an idle process would otherwise never start).
func TestLargeReleaseGivesTheHeapBack(t *testing.T) {
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	b := NewBudget(1<<30, 100)
	before := forced()
	r, err := b.Reserve(context.Background(), giveBackAt)
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
	for deadline := time.Now().Add(time.Minute); forced() == before; <-time.After(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a minute after the release, no collection returned the heap")
		}
	}
}
