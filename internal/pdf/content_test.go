package pdf

import (
	"fmt"
	"strings"
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

// contentPage is a one-page document whose page content is the given
// streams and whose resources hold F1 (a simple font), F2 (a composite
// one) and Fm (a form XObject of the given content).
func contentPage(t *testing.T, form string, streams ...string) (*Document, PageObject) {
	t.Helper()
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"", // the page, once the streams' numbers are known
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		"<< /Type /Font /Subtype /Type0 /BaseFont /Dummy /Encoding /Identity-H >>",
		fmt.Sprintf("<< /Type /XObject /Subtype /Form /BBox [0 0 100 100] /Length %d >>\nstream\n%s\nendstream", len(form), form),
	}
	var refs []string
	for _, s := range streams {
		objs = append(objs, fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(s), s))
		refs = append(refs, fmt.Sprintf("%d 0 R", len(objs)))
	}
	objs[2] = fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents [%s] /Resources << /Font << /F1 4 0 R /F2 5 0 R >> /XObject << /Fm 6 0 R >> >> >>", strings.Join(refs, " "))
	d, err := Read(pdftest.File(objs...), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := d.Pages()
	if err != nil {
		t.Fatal(err)
	}
	return d, pages[0]
}

// TestPaintedBoxesTextState: the text operators that move to the next
// line (T*, ', "), set the leading (TL, TD), the spacing, the horizontal
// scale and the rise (which last past ET), a text matrix, two-byte codes
// of a composite font, and an inline image whose data holds "EI", place
// the boxes where the text and image are; extra Q and stray delimiters
// are ignored.
func TestPaintedBoxesTextState(t *testing.T) {
	t.Parallel()
	d, page := contentPage(t, "",
		"BT /F1 10 Tf 12 TL 100 500 Td (ab) Tj T* (cd) Tj ET Q Q",
		"BT /F1 10 Tf 100 400 Td 14 TL (x) ' 2 1 (a b) \" ET ) ]",
		"BT /F1 10 Tf 50 Tz 5 Ts 2 0 0 2 300 300 Tm (ab) Tj ET",
		"BT /F2 10 Tf 0 -20 TD 200 200 Td <00410042> Tj T* <0041> Tj ET",
		"q 10 0 0 10 50 50 cm BI /W 1 /H 1 /CS /G /BPC 8 ID xEIx EI Q")
	boxes, err := d.PaintedBoxes(t.Context(), page)
	if err != nil {
		t.Fatal(err)
	}
	want := []Box{
		{100, 497.5, 112, 510}, {100, 485.5, 112, 498}, // T* by the leading TL set
		{100, 383.5, 106, 396}, {100, 369.5, 123, 382}, // ' and ", its word and character spacing
		{300, 305, 314, 330}, // half scale, rise 5, text matrix scaled twice, the spacing of "
		// The text state outlives ET (ISO 32000-1, 9.3.1): the spacing,
		// scale and rise still apply; two bytes a glyph; T* by the leading TD set.
		{200, 182.5, 207, 195}, {200, 162.5, 203.5, 175},
		{50, 50, 60, 60}, // the inline image's unit square
	}
	if len(boxes) != len(want) {
		t.Fatalf("boxes %v, want %v", boxes, want)
	}
	for i := range want {
		for k := range 4 {
			if d := boxes[i][k] - want[i][k]; d > 0.01 || d < -0.01 {
				t.Errorf("box %d: %v, want %v", i, boxes[i], want[i])
				break
			}
		}
	}
}

// TestPaintedBoxesRefusesWhatItCannotRead: an inline image without its
// end, a form that paints itself, and more operators than are read fail
// rather than report fewer boxes than the page paints.
func TestPaintedBoxesRefusesWhatItCannotRead(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, form, content, want string
	}{
		{"inline image without ID", "", "BI /W 1 /H 1", "inline image without ID"},
		{"inline image without EI", "", "BI /W 1 /H 1 ID xEIx", "inline image without EI"},
		{"form painting itself", "/Fm Do", "/Fm Do", errContentTooComplex.Error()},
		{"too many operators", "", strings.Repeat("n\n", maxContentOps+1), errContentTooComplex.Error()},
	} {
		d, page := contentPage(t, c.form, c.content)
		if _, err := d.PaintedBoxes(t.Context(), page); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestBoxOf: a rectangle in any corner order, and what is none.
func TestBoxOf(t *testing.T) {
	t.Parallel()
	d := readOK(t, pdftest.OnePage("box"))
	if b, ok := d.BoxOf(Array{Int(30), Real(40), Real(10), Int(5)}); !ok || b != (Box{10, 5, 30, 40}) || b.Empty() {
		t.Errorf("BoxOf: %v %v", b, ok)
	}
	for _, o := range []Object{Array{Int(1), Int(2), Int(3)}, Array{Int(1), Int(2), Int(3), Name("x")}, Int(4)} {
		if b, ok := d.BoxOf(o); ok {
			t.Errorf("BoxOf(%v): %v", o, b)
		}
	}
	if !(Box{0, 0, 0, 5}).Empty() || !(Box{0, 5, 5, 5}).Empty() {
		t.Error("a box without width or height is not empty")
	}
}
