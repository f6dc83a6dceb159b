package chromium

import (
	"log/slog"
	"os"
	"time"
	"context"
	"testing"

	"github.com/quire-dev/quire/internal/convert"
)

// find returns the first word of pages whose text is w.
func find(t *testing.T, pages [][]word, w string) (int, word) {
	t.Helper()
	for i, p := range pages {
		for _, x := range p {
			if x.Text == w {
				return i, x
			}
		}
	}
	t.Fatalf("%q is not in the PDF: %v", w, pages)
	return 0, word{}
}

// TestGridSideBySide: a CSS grid of two cells comes out side by side
// (LibreOffice's HTML import stacks them).
func TestGridSideBySide(t *testing.T) {
	p := newPool(t, 1, nil)
	doc := `<!DOCTYPE html><html><head><style>
.grid { display: grid; grid-template-columns: 1fr 1fr; gap: 1cm }
</style></head><body><div class="grid"><div>Leftcell</div><div>Rightcell</div></div></body></html>`
	r, err := p.Convert(context.Background(), Page{Doc: []byte(doc), From: convert.FromHTML}, convert.JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pages := pdfWords(t, r.PDF)
	_, l := find(t, pages, "Leftcell")
	_, rt := find(t, pages, "Rightcell")
	if rt.XMin <= l.XMax || abs(rt.YMin-l.YMin) > 1 {
		t.Errorf("the cells are not side by side: left %+v, right %+v", l, rt)
	}
}

func abs(x float64) float64 { return max(x, -x) }

func TestSmokeTiming(t *testing.T) {
	t0 := time.Now()
	p := newPool(t, 1, func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil)) })
	t.Logf("start %v", time.Since(t0))
	for range 3 {
		r, err := p.Convert(context.Background(), Page{Doc: []byte("<p>hi</p>"), From: convert.FromHTML}, convert.JobOptions{})
		t.Logf("%v %v %d", r.Engine, err, len(r.PDF))
	}
}
