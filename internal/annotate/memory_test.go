package annotate

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/annotate/annotatetest"
	"github.com/quire-dev/quire/internal/memory"
)

// tableField is a table field of rows rows of cols short values.
func tableField(rows, cols int) []Field {
	values := make([][]string, rows)
	for i := range values {
		values[i] = make([]string, cols)
		for j := range values[i] {
			values[i][j] = fmt.Sprintf("r%dc%d", i, j)
		}
	}
	return []Field{{ID: annotatetest.TableID, Type: TypeTable, Rows: values}}
}

// TestTableIsChargedBeforeItIsWritten: the rows of a table field are
// charged to the request's memory reservation by their shape, at least
// the 145 bytes a cell (short values) that filling a DOCX was measured to hold (twice
// that for a converter's package), before they are written; beyond the
// budget the fill is refused with 503 and holds nothing more.
func TestTableIsChargedBeforeItIsWritten(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t, nil)
	tmpl := annotatetest.TableTemplate(10)
	fields := tableField(2600, 10)

	b := memory.NewBudget(1<<30, 100)
	r, _ := b.Reserve(context.Background(), 0)
	ctx := memory.With(context.Background(), r)
	if _, rep, err := e.Fill(ctx, tmpl, fields); err != nil || len(rep.Unmatched) > 0 {
		t.Fatalf("fill: %v %v", err, rep.Unmatched)
	}
	if got, least := r.Held(), int64(145*2600*10); got < least || got > 2*least {
		t.Errorf("charged %d bytes for 26,000 cells, want from %d (measured) to %d", got, least, 2*least)
	}
	r.Release()
	r, _ = b.Reserve(context.Background(), 0)
	if _, _, _, err := e.FillForConversion(memory.With(context.Background(), r), tmpl, fields); err != nil {
		t.Fatal(err)
	}
	if got, least := r.Held(), int64(2*145*2600*10); got < least || got > 2*least {
		t.Errorf("charged %d bytes for 26,000 cells going to a converter, want from %d (measured) to %d", got, least, 2*least)
	}
	r.Release()

	small := memory.NewBudget(1<<20, 100)
	r, _ = small.Reserve(context.Background(), 0)
	_, _, err := e.Fill(memory.With(context.Background(), r), tmpl, fields)
	var qe *quire.Error
	if !errors.As(err, &qe) || qe.Code != quire.CodePayloadTooLarge || r.Held() != 0 {
		t.Errorf("fill beyond a 1 MiB budget: %v, holding %d, want 413 before any charge", err, r.Held())
	}
	other, _ := small.Reserve(context.Background(), 1<<20-1000)
	defer other.Release()
	_, _, err = e.Fill(memory.With(context.Background(), r), tmpl, tableField(2, 10))
	if !errors.As(err, &qe) || qe.Code != quire.CodeEngineBusy || qe.RetryAfter == 0 || r.Held() != 0 {
		t.Errorf("fill beyond the budget's free room: %v, holding %d, want 503 with Retry-After", err, r.Held())
	}
}

// TestCancelledFillStops: a fill whose request has ended stops with the
// context's error instead of writing its rows.
func TestCancelledFillStops(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := e.Fill(ctx, annotatetest.TableTemplate(10), tableField(100, 10)); !errors.Is(err, context.Canceled) {
		t.Errorf("fill of an ended request: %v, want context.Canceled", err)
	}
}
