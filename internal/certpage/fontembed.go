package certpage

import (
	"crypto/sha256"
	"fmt"
	"math"
	"strings"
	"unicode/utf16"

	"github.com/quire-dev/quire/internal/pdf"
)

// fontUse records which glyphs of one font a render draws. Glyphs are
// numbered in order of first use: that number is both the character code
// written in the content stream (Identity-H) and the glyph id in the subset
// font (/CIDToGIDMap /Identity), so the subset holds no unused glyph slots.
type fontUse struct {
	lf    *loadedFont
	cids  map[int]int // original glyph id → CID
	order []int       // CID → original glyph id; CID 0 is .notdef
	text  []string    // CID → characters for /ToUnicode ("" when unknown)
}

func newFontUse(lf *loadedFont) *fontUse {
	return &fontUse{lf: lf, cids: map[int]int{0: 0}, order: []int{0}, text: []string{""}}
}

// cid returns the code for a glyph, adding the glyph to the subset on first
// use. The first characters seen for a glyph are the ones text extraction
// gives for it.
func (u *fontUse) cid(gid int, text string) int {
	c, ok := u.cids[gid]
	if !ok {
		c = len(u.order)
		u.cids[gid] = c
		u.order = append(u.order, gid)
		u.text = append(u.text, text)
	} else if u.text[c] == "" {
		u.text[c] = text
	}
	return c
}

// charOf returns the character of text that the font's cmap maps to glyph
// gid, or "" when none does (a conjunct, a contextual form). It is the
// /ToUnicode entry of a glyph first drawn within a cluster of several
// glyphs: extractors that do not read /ActualText then still find the
// characters that have glyphs of their own.
func (u *fontUse) charOf(gid int, text string) string {
	for _, r := range text {
		if g, ok := u.lf.font.NominalGlyph(r); ok && int(g) == gid {
			return string(r)
		}
	}
	return ""
}

// used reports whether any glyph besides .notdef is drawn with the font.
func (u *fontUse) used() bool { return len(u.order) > 1 }

// width is the advance of a CID in the PDF's glyph space (1/1000 of the font
// size), rounded as written in /W, so content positioning can compensate
// for the rounding exactly.
func (u *fontUse) width(cid int) int {
	sf := u.lf.sf
	return int(math.Round(float64(sf.advance(u.order[cid])) * 1000 / float64(sf.upem)))
}

// object is the Type0 font with what it refers to: the CIDFontType2
// descendant, its descriptor, the subset font file and the /ToUnicode CMap
// that lets pdftotext and copy-paste recover the text; each an object of
// its own, which the pages share.
func (u *fontUse) object() *pdf.Indirect {
	data, glyphs := u.lf.sf.subset(u.order)
	name := pdf.Name(subsetTag(glyphs) + "+" + u.lf.name)
	file := &pdf.Stream{Dict: pdf.Dict{"Length1": pdf.Int(len(data)), "Filter": pdf.Name("FlateDecode")}, Data: pdf.Deflate(data)}
	desc := u.descriptor(name, file)
	desc["CIDSet"] = cidSet(len(glyphs))
	toUnicode := &pdf.Stream{Dict: pdf.Dict{"Filter": pdf.Name("FlateDecode")}, Data: pdf.Deflate([]byte(u.toUnicode()))}
	cidFont := pdf.Dict{"Type": pdf.Name("Font"), "Subtype": pdf.Name("CIDFontType2"), "BaseFont": name,
		"CIDSystemInfo":  pdf.Dict{"Registry": pdf.String("Adobe"), "Ordering": pdf.String("Identity"), "Supplement": pdf.Int(0)},
		"FontDescriptor": &pdf.Indirect{Object: desc}, "DW": pdf.Int(1000), "W": u.widths(), "CIDToGIDMap": pdf.Name("Identity")}
	return &pdf.Indirect{Object: pdf.Dict{"Type": pdf.Name("Font"), "Subtype": pdf.Name("Type0"), "BaseFont": name, "Encoding": pdf.Name("Identity-H"),
		"DescendantFonts": pdf.Array{&pdf.Indirect{Object: cidFont}}, "ToUnicode": toUnicode}}
}

// cidSet is the /CIDSet stream of a subset holding n glyphs: one bit per
// CID, high bit first, set for CIDs 0 to n-1 (CID is glyph id, by the
// identity /CIDToGIDMap). PDF/A-1 requires it of every subset CID font
// (veraPDF 6.3.5-3); PDF/A-2 and -3 require that, if present, it lists
// every glyph of the font program, as it does.
func cidSet(n int) *pdf.Stream {
	b := make([]byte, (n+7)/8)
	for i := range n {
		b[i/8] |= 0x80 >> (i % 8)
	}
	return &pdf.Stream{Dict: pdf.Dict{"Filter": pdf.Name("FlateDecode")}, Data: pdf.Deflate(b)}
}

// widths is the /W array: the width of each CID from 0 on.
func (u *fontUse) widths() pdf.Array {
	ws := make(pdf.Array, len(u.order))
	for c := range u.order {
		ws[c] = pdf.Int(u.width(c))
	}
	return pdf.Array{pdf.Int(0), ws}
}

func (u *fontUse) descriptor(name pdf.Name, file *pdf.Stream) pdf.Dict {
	sf := u.lf.sf
	scale := func(v int) pdf.Int { return pdf.Int(math.Round(float64(v) * 1000 / float64(sf.upem))) }
	// Flags 4: symbolic, as the font is addressed by glyph id, not by a
	// standard encoding. StemV is required but only a rendering hint.
	return pdf.Dict{"Type": pdf.Name("FontDescriptor"), "FontName": name, "Flags": pdf.Int(4),
		"FontBBox":    pdf.Array{scale(sf.bbox[0]), scale(sf.bbox[1]), scale(sf.bbox[2]), scale(sf.bbox[3])},
		"ItalicAngle": pdf.Int(0), "Ascent": scale(sf.ascent), "Descent": scale(sf.descent), "CapHeight": scale(sf.capHeight),
		"StemV": pdf.Int(80), "FontFile2": file}
}

// toUnicode builds the CMap mapping each CID to its characters (UTF-16BE),
// in blocks of at most 100 entries as the CMap format requires.
func (u *fontUse) toUnicode() string {
	var b strings.Builder
	b.WriteString("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n" +
		"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n" +
		"/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n" +
		"1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n")
	var entries []string
	for c, t := range u.text {
		if t != "" {
			entries = append(entries, fmt.Sprintf("<%04X> <%s>", c, utf16Hex(t)))
		}
	}
	for len(entries) > 0 {
		n := min(len(entries), 100)
		fmt.Fprintf(&b, "%d beginbfchar\n%s\nendbfchar\n", n, strings.Join(entries[:n], "\n"))
		entries = entries[n:]
	}
	b.WriteString("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n")
	return b.String()
}

func utf16Hex(s string) string {
	var b strings.Builder
	for _, u := range utf16.Encode([]rune(s)) {
		fmt.Fprintf(&b, "%04X", u)
	}
	return b.String()
}

// subsetTag derives the six capital letters that prefix a subset font's name
// (ISO 32000 9.6.4) from the glyphs it holds: different subsets get
// different names, and the same input always gives the same file.
func subsetTag(glyphs []int) string {
	h := sha256.New()
	for _, g := range glyphs {
		h.Write([]byte{byte(g >> 8), byte(g)})
	}
	sum := h.Sum(nil)
	tag := make([]byte, 6)
	for i := range tag {
		tag[i] = 'A' + sum[i]%26
	}
	return string(tag)
}
