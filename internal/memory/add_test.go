package memory

import (
	"context"
	"errors"
	"runtime/debug"
	"testing"

	"github.com/quire-dev/quire"
)

// TestAddThroughContext: Add raises the reservation that a context carries
// by its argument, piece by piece, within the budget; a refused piece
// changes nothing; without a reservation, Add does nothing and HeldBy is 0.
func TestAddThroughContext(t *testing.T) {
	t.Parallel()
	if err := Add(context.Background(), 1<<40); err != nil {
		t.Errorf("Add without a reservation: %v", err)
	}
	if n := HeldBy(context.Background()); n != 0 {
		t.Errorf("HeldBy without a reservation: %d, want 0", n)
	}
	b := NewBudget(100, 100)
	if b.Size() != 100 {
		t.Errorf("Size = %d, want 100", b.Size())
	}
	r, err := b.Reserve(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	ctx := With(context.Background(), r)
	for range 3 {
		if err := Add(ctx, 20); err != nil {
			t.Fatalf("Add within the budget: %v", err)
		}
	}
	if HeldBy(ctx) != 70 || b.Held() != 70 {
		t.Fatalf("after three pieces of 20 on 10: the reservation holds %d, the budget %d; want 70", HeldBy(ctx), b.Held())
	}
	other, err := b.Reserve(context.Background(), 20)
	if err != nil {
		t.Fatal(err)
	}
	mustFail(t, "a piece past the budget's free room", Add(ctx, 11))
	var qe *quire.Error
	if err := Add(ctx, 31); !errors.As(err, &qe) || qe.Code != quire.CodePayloadTooLarge {
		t.Errorf("a piece past the whole budget: %v, want 413", err)
	}
	if HeldBy(ctx) != 70 || b.Held() != 90 {
		t.Errorf("refused pieces changed the holdings: the reservation %d, the budget %d; want 70 and 90", HeldBy(ctx), b.Held())
	}
	other.Release()
	if err := Add(ctx, 30); err != nil || HeldBy(ctx) != 100 {
		t.Errorf("a piece filling the budget once freed: %v, holds %d, want 100", err, HeldBy(ctx))
	}
}

// TestLimitRuntime sets the runtime's soft memory limit to the budget plus
// the margin, unless the operator set GOMEMLIMIT or there is no budget.
// Not parallel: it changes the process's limit and environment.
func TestLimitRuntime(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	const size = 1 << 30
	limit := func() int64 { return debug.SetMemoryLimit(-1) } // -1 reads without changing

	t.Setenv("GOMEMLIMIT", "3GiB")
	LimitRuntime(size)
	if got := limit(); got != before {
		t.Errorf("with GOMEMLIMIT set: the limit became %d, want the operator's (%d) kept", got, before)
	}
	t.Setenv("GOMEMLIMIT", "")
	LimitRuntime(0)
	if got := limit(); got != before {
		t.Errorf("without a budget: the limit became %d, want %d kept", got, before)
	}
	LimitRuntime(size)
	if got := limit(); got != size+Margin {
		t.Errorf("limit %d, want the budget plus the margin, %d", got, size+Margin)
	}
}
