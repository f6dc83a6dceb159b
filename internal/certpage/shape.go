package certpage

import (
	"cmp"
	"slices"
	"unicode"

	"github.com/go-text/typesetting/bidi"
	"github.com/go-text/typesetting/di"
	"github.com/go-text/typesetting/font"
	"github.com/go-text/typesetting/shaping"
	"golang.org/x/image/math/fixed"
)

// placedGlyph is one glyph of a laid-out line.
type placedGlyph struct {
	font int     // index into the renderer's fonts
	gid  int     // glyph id in the original font
	x, y float64 // pen position plus the shaper's offset, from the line's origin, in points
	// text is set on the first glyph of each cluster only: the characters,
	// in logical order, that the cluster's glyphs stand for together. The
	// glyphs of a cluster are consecutive.
	text string
}

// line is one line of shaped text, its glyphs in visual (left to right) order.
type line struct {
	glyphs []placedGlyph
	width  float64
	// indent aligns the lines of a right-to-left paragraph on their right
	// edge: the widest line has none, so the paragraph's block still starts
	// next to its label rather than at the far side of the page.
	indent float64
}

// shaper lays out paragraphs: bidi and script segmentation, font fallback,
// OpenType shaping (HarfBuzz port) and line breaking (UAX #14). Its state is
// not safe for concurrent use; renders take one from a pool.
type shaper struct {
	faces     []*font.Face // by font index, as in the renderer
	fallback  faceMap      // the text fonts, in fallback order
	signature faceMap      // the signature face alone
	hb        shaping.HarfbuzzShaper
	seg       shaping.Segmenter
	wrap      shaping.LineWrapper
	bidi      bidi.Paragraph
	outs      []shaping.Output
	level     []bidi.Level // embedding level of each rune of the current paragraph
}

// newShaper takes the renderer's fonts: the text fonts in fallback order,
// then the signature face.
func newShaper(fonts []*loadedFont) *shaper {
	faces := make([]*font.Face, len(fonts))
	for i, f := range fonts {
		faces[i] = font.NewFace(f.font)
	}
	n := len(faces) - 1
	return &shaper{faces: faces, fallback: faces[:n], signature: faces[n:]}
}

// faceMap picks, for each character, the first font that has a glyph for it:
// DejaVu Sans first, then the CJK font. A character no font has is drawn
// with the first font's .notdef glyph.
type faceMap []*font.Face

func (m faceMap) ResolveFace(r rune) *font.Face { return cmp.Or(m.find(r), m[0]) }

// find is the first font of m that has a glyph for r, nil if none has.
func (m faceMap) find(r rune) *font.Face {
	for _, f := range m {
		if _, ok := f.NominalGlyph(r); ok {
			return f
		}
	}
	return nil
}

// covers reports whether the first font has every character of text that
// is drawn: spaces need no glyph.
func (m faceMap) covers(text string) bool {
	for _, r := range text {
		if _, ok := m[0].NominalGlyph(r); !ok && !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// lines shapes text at size points and breaks it into lines no wider than
// width points. The paragraph direction follows the first strong character
// (as HTML's dir=auto does), so a Hebrew or Arabic value reads right to left
// and its lines are aligned right, while its embedded numbers and Latin words
// keep their own order (Unicode bidi algorithm).
func (s *shaper) lines(text string, size, width float64) []line {
	return s.linesIn(s.fallback, text, size, width)
}

// signatureLines lays out a typed signature as lines does, in the signature
// face when it has every character of text; otherwise, rather than mix two
// styles in one name, in the text fonts.
func (s *shaper) signatureLines(text string, size, width float64) []line {
	if s.signature.covers(text) {
		return s.linesIn(s.signature, text, size, width)
	}
	return s.lines(text, size, width)
}

func (s *shaper) linesIn(faces faceMap, text string, size, width float64) []line {
	runes := []rune(text)
	if len(runes) == 0 {
		return nil
	}
	dir := paragraphDirection(runes)
	s.resolveLevels(runes, dir)
	inputs := s.seg.Split(shaping.Input{
		Text:      runes,
		RunEnd:    len(runes),
		Direction: dir,
		Size:      fixed.I(shapeSize),
	}, faces)
	s.outs = s.outs[:0]
	for _, in := range inputs {
		s.shapeByLevel(in)
	}
	// The wrapper's own trimming of trailing whitespace picks the glyph to
	// trim from its simplified visual order, and so can zero the advance of
	// a visible glyph in mixed-direction lines: it is turned off, and a
	// trailing space costs at most its width in a right-aligned line.
	cfg := shaping.WrapConfig{Direction: dir, BreakPolicy: shaping.WhenNecessary, DisableTrailingWhitespaceTrim: true}
	wrapped, _ := s.wrap.WrapParagraphF(cfg, toFixed(width*shapeSize/size), runes, shaping.NewSliceIterator(s.outs))
	out := make([]line, 0, len(wrapped))
	for _, l := range wrapped {
		out = append(out, s.placeLine(l, runes, size/shapeSize))
	}
	if dir.Progression() == di.TowardTopLeft {
		w := widest(out)
		for i := range out {
			out[i].indent = w - out[i].width
		}
	}
	return out
}

// widest is the width of the widest line.
func widest(lines []line) float64 {
	w := 0.0
	for _, ln := range lines {
		w = max(w, ln.width)
	}
	return w
}

// resolveLevels runs the Unicode bidi algorithm on the paragraph and keeps
// each rune's embedding level, which the visual reordering of a line needs:
// the segmenter only tells runs' directions, and directions alone misplace
// numbers inside right-to-left text in a left-to-right paragraph.
func (s *shaper) resolveLevels(runes []rune, dir di.Direction) {
	def := bidi.LeftToRight
	if dir.Progression() == di.TowardTopLeft {
		def = bidi.RightToLeft
	}
	runs := s.bidi.Segment(runes, def)
	s.level = s.level[:0]
	for i := range runs.NumRuns() {
		r := runs.Run(i)
		for range r.End - r.Start {
			s.level = append(s.level, r.Level)
		}
	}
	for len(s.level) < len(runes) { // no runs at all: the paragraph level
		s.level = append(s.level, bidi.Level(def-bidi.LeftToRight))
	}
}

// shapeByLevel shapes one segment, split further where the embedding level
// changes, so that every shaped run has a single level.
func (s *shaper) shapeByLevel(in shaping.Input) {
	for start := in.RunStart; start < in.RunEnd; {
		end := start + 1
		for end < in.RunEnd && s.level[end] == s.level[start] {
			end++
		}
		part := in
		part.RunStart, part.RunEnd = start, end
		s.outs = append(s.outs, s.hb.ShapeNoExtents(part))
		start = end
	}
}

// placeLine puts a wrapped line's runs in visual order and gives each glyph
// its position. The first glyph of each cluster carries the cluster's
// characters for text extraction; for a ligature such as Arabic lam-alef
// that is two characters for one glyph. In a right-to-left run they are
// given in visual order: extractors (poppler's pdftotext) spread a glyph's
// characters over its width from left to right and then read right-to-left
// text from right to left, which gives back the order as typed.
func (s *shaper) placeLine(l shaping.Line, runes []rune, scale float64) line {
	runs := slices.Clone(l)
	slices.SortFunc(runs, func(a, b shaping.Output) int { return a.Runes.Offset - b.Runes.Offset })
	s.reorder(runs)
	var out line
	var pen fixed.Int26_6
	for _, run := range runs {
		fi := max(slices.Index(s.faces, run.Face), 0)
		rtl := run.Direction.Progression() == di.TowardTopLeft
		lastCluster := -1
		for _, g := range run.Glyphs {
			pg := placedGlyph{
				font: fi,
				gid:  int(g.GlyphID),
				x:    fromFixed(pen+g.XOffset) * scale,
				y:    fromFixed(g.YOffset) * scale,
			}
			if g.ClusterIndex != lastCluster {
				lastCluster = g.ClusterIndex
				text := runes[g.ClusterIndex:min(g.ClusterIndex+g.RuneCount, len(runes))]
				if rtl && len(text) > 1 {
					text = slices.Clone(text)
					slices.Reverse(text)
				}
				pg.text = string(text)
			}
			out.glyphs = append(out.glyphs, pg)
			pen += g.Advance
		}
	}
	out.width = fromFixed(pen) * scale
	return out
}

// reorder applies rule L2 of the bidi algorithm to runs in logical order:
// from the highest level down to the lowest odd one, every maximal sequence
// of runs at that level or above is reversed. (Glyphs within a run are
// already in visual order: the shaper returns right-to-left runs reversed.)
func (s *shaper) reorder(runs []shaping.Output) {
	level := func(o shaping.Output) bidi.Level { return s.level[min(o.Runes.Offset, len(s.level)-1)] }
	var hi, lowOdd bidi.Level = 0, 127
	for _, r := range runs {
		lv := level(r)
		hi = max(hi, lv)
		if lv%2 == 1 {
			lowOdd = min(lowOdd, lv)
		}
	}
	for lv := hi; lv >= lowOdd && lv > 0; lv-- {
		for i := 0; i < len(runs); {
			if level(runs[i]) < lv {
				i++
				continue
			}
			j := i
			for j < len(runs) && level(runs[j]) >= lv {
				j++
			}
			slices.Reverse(runs[i:j])
			i = j
		}
	}
}

// shapeSize is the size text is shaped at; positions are then scaled to the
// size drawn. The shaper rounds sizes up to a whole number, which at a small
// size such as 5.1 points would space letters as if they were 6 points, so
// shaping happens at a size where that rounding is nil and the 1/64 unit
// precision of its results is far below a visible distance.
const shapeSize = 1000

// paragraphDirection applies rules P2 and P3 of the Unicode bidi algorithm in
// a simplified form: the first letter decides, right-to-left for the scripts
// written that way.
func paragraphDirection(runes []rune) di.Direction {
	for _, r := range runes {
		if unicode.In(r, unicode.Hebrew, unicode.Arabic, unicode.Syriac, unicode.Thaana, unicode.Nko, unicode.Samaritan, unicode.Mandaic) {
			return di.DirectionRTL
		}
		if unicode.IsLetter(r) {
			return di.DirectionLTR
		}
	}
	return di.DirectionLTR
}

func toFixed(v float64) fixed.Int26_6   { return fixed.Int26_6(v*64 + 0.5) }
func fromFixed(v fixed.Int26_6) float64 { return float64(v) / 64 }
