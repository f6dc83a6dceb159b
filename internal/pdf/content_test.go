package pdf

import (
	"fmt"
	"testing"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

func TestPaintedBoxes(t *testing.T) {
	t.Parallel()
	content := "q 2 0 0 2 0 0 cm BT /F1 10 Tf 50 300 Td (Hello) Tj ET Q BT 3 Tr /F1 10 Tf 300 300 Td (hidden) Tj ET " +
		"q 100 0 0 50 400 100 cm /Im1 Do Q q 1 0 0 1 10 10 cm /Fm1 Do Q"
	form := "BT /F1 20 Tf 0 0 Td [(AB) -1000 (C)] TJ ET"
	b := pdftest.File(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> /XObject << /Im1 6 0 R /Fm1 7 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		"<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8 /Length 1 >>\nstream\n\x00\nendstream",
		fmt.Sprintf("<< /Type /XObject /Subtype /Form /BBox [0 0 100 100] /Matrix [1 0 0 1 500 700] /Length %d >>\nstream\n%s\nendstream", len(form), form))
	d, err := Read(b, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := d.Pages()
	boxes, err := d.PaintedBoxes(t.Context(), pages[0])
	if err != nil {
		t.Fatal(err)
	}
	// "Hello" at (50,300) in 10 pt, scaled twice: 5 glyphs of 6 units, 60 wide.
	want := []Box{{100, 595, 160, 620}, {400, 100, 500, 150}, {510, 705, 534, 730}, {554, 705, 566, 730}}
	if len(boxes) != len(want) {
		t.Fatalf("boxes %v, want %v", boxes, want)
	}
	for i := range want {
		for k := range 4 {
			if d := boxes[i][k] - want[i][k]; d > 0.01 || d < -0.01 {
				t.Fatalf("box %d: %v, want %v", i, boxes[i], want[i])
			}
		}
	}
	if !(Box{150, 600, 200, 700}).Overlaps(boxes[0]) || (Box{300, 590, 400, 650}).Overlaps(boxes[0]) {
		t.Error("Overlaps")
	}
}
