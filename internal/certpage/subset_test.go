package certpage

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/go-text/typesetting/font"
)

// TestSubset subsets glyphs including composite ones and checks, by parsing
// the result, that each keeps its outline and advance under its new id.
func TestSubset(t *testing.T) {
	t.Parallel()
	r := testRenderer(t)
	for _, lf := range r.fonts {
		orig := font.NewFace(lf.font)
		var order []int
		order = append(order, 0)
		for _, c := range "Åëğ王김ال" {
			if g, ok := orig.NominalGlyph(c); ok {
				order = append(order, int(g))
			}
		}
		data, final := lf.sf.subset(order)
		sub, err := font.ParseTTF(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: subset does not parse: %v", lf.name, err)
		}
		if len(final) < len(order) || !reflect.DeepEqual(final[:len(order)], order) {
			t.Fatalf("%s: final order %v does not start with %v", lf.name, final, order)
		}
		if lf.name == "DejaVuSans" && len(final) == len(order) {
			t.Errorf("DejaVuSans: no composite component was added for Å or ë")
		}
		for newID, oldID := range final {
			want, _ := orig.GlyphDataOutline(font.GID(oldID))
			got, _ := sub.GlyphDataOutline(font.GID(newID))
			if !reflect.DeepEqual(want, got) {
				t.Errorf("%s: glyph %d (was %d) outline differs after subsetting", lf.name, newID, oldID)
			}
			if a, b := orig.HorizontalAdvance(font.GID(oldID)), sub.HorizontalAdvance(font.GID(newID)); a != b {
				t.Errorf("%s: glyph %d advance %v, want %v", lf.name, newID, b, a)
			}
		}
		t.Logf("%s: %d glyphs (%d requested), %d bytes", lf.name, len(final), len(order), len(data))
	}
}
