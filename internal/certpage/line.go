package certpage

import (
	"fmt"
	"unicode"

	"github.com/quire-dev/quire/internal/pdf"
)

// Line is one line of text shaped with the certificate page's fonts, for
// other drawings (a watermark): its content draws it with its origin at
// (0, 0), in the fonts of Fonts (by resource name), at the size asked.
type Line struct {
	Content []byte
	Fonts   pdf.Dict
	Width   float64 // its advance, in points
}

// Missing returns the characters of text that none of the text fonts has,
// each once, in order; spaces and format characters need no glyph.
func (r *Renderer) Missing(text string) []rune {
	sh := r.shapers.Get().(*shaper)
	defer r.shapers.Put(sh)
	var out []rune
	seen := map[rune]bool{}
	for _, c := range text {
		if seen[c] || unicode.IsSpace(c) || unicode.Is(unicode.Cf, c) || unicode.Is(unicode.Mn, c) {
			continue
		}
		seen[c] = true
		if sh.fallback.find(c) == nil {
			out = append(out, c)
		}
	}
	return out
}

// unbroken is a line width, in ems, that no text of a line reaches, within
// the range of the shaper's fixed-point numbers.
const unbroken = 1 << 14

// Line shapes text (bidi, script and font fallback, OpenType shaping, as
// the certificate's own text) on one line of size points, filled at gray
// level gray (0 black), its fonts subset to the glyphs it uses.
func (r *Renderer) Line(text string, size, gray float64) (ln Line, err error) {
	defer func() {
		if v := recover(); v != nil {
			ln, err = Line{}, fmt.Errorf("certpage: shaping failed: %v", v)
		}
	}()
	sh := r.shapers.Get().(*shaper)
	shaped := sh.lines(text, size, unbroken*size)
	r.shapers.Put(sh) // not reached after a panic: that state is dropped
	doc := newDocument(r.fonts, A4)
	p := doc.addPage()
	for _, l := range shaped { // one, unless text holds line breaks
		p.text(doc, l, 0, 0, textStyle{size: size, gray: gray})
	}
	return Line{Content: p.buf, Fonts: doc.pageObjects()[0].Resources["Font"].(pdf.Dict), Width: widest(shaped)}, nil
}
