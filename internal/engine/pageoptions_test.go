package engine

import (
	"math"
	"testing"
)

// TestPaperAndMargins: named and measured paper sizes and margins in
// inches.
func TestPaperAndMargins(t *testing.T) {
	for paper, want := range map[string][2]float64{"a4": {8.2677, 11.6929}, "Letter": {8.5, 11}, "100x150mm": {3.937, 5.9055}, "8x10in": {8, 10}, "10x20cm": {3.937, 7.874}} {
		w, h, err := JobOptions{Paper: paper}.PaperSize()
		if err != nil || math.Abs(w-want[0]) > 0.001 || math.Abs(h-want[1]) > 0.001 {
			t.Errorf("paper %s: %g x %g, %v; want %v", paper, w, h, err, want)
		}
	}
	m, err := JobOptions{Margin: "1in, 25.4mm,2.54cm,0in"}.Margins()
	if err != nil || math.Abs(m[0]-1)+math.Abs(m[1]-1)+math.Abs(m[2]-1)+m[3] > 1e-9 {
		t.Errorf("four margins: %v, %v", m, err)
	}
	for _, bad := range []JobOptions{{Paper: "B5"}, {Paper: "0x10in"}, {Paper: "10x"}, {Margin: "1,2"}, {Margin: "-1mm"}, {Margin: "5"}, {Margin: "110mm"}, {Scale: 0.05}} {
		if err := bad.Validate(FromHTML, ToPDF); err == nil {
			t.Errorf("%+v: valid, want an error", bad)
		}
	}
}
