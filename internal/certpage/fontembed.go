package certpage

import (
	"crypto/sha256"
	"fmt"
	"math"
	"strings"
	"unicode/utf16"
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

// used reports whether any glyph besides .notdef is drawn with the font.
func (u *fontUse) used() bool { return len(u.order) > 1 }

// width is the advance of a CID in the PDF's glyph space (1/1000 of the font
// size), rounded as written in /W, so content positioning can compensate
// for the rounding exactly.
func (u *fontUse) width(cid int) int {
	sf := u.lf.sf
	return int(math.Round(float64(sf.advance(u.order[cid])) * 1000 / float64(sf.upem)))
}

// write emits the Type0 font at object num and the objects it refers to: the
// CIDFontType2 descendant, its descriptor, the subset font file and the
// /ToUnicode CMap that lets pdftotext and copy-paste recover the text.
func (u *fontUse) write(w *pdfWriter, num int) {
	cidFont, desc, file, toUni := w.alloc(), w.alloc(), w.alloc(), w.alloc()
	data, glyphs := u.lf.sf.subset(u.order)
	name := subsetTag(glyphs) + "+" + u.lf.name
	w.object(num, fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /%s /Encoding /Identity-H /DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>",
		name, cidFont, toUni))
	w.object(cidFont, fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType2 /BaseFont /%s /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor %d 0 R /DW 1000 /W %s /CIDToGIDMap /Identity >>",
		name, desc, u.widths()))
	w.object(desc, u.descriptor(name, file))
	w.stream(file, fmt.Sprintf("/Length1 %d", len(data)), data)
	w.stream(toUni, "", []byte(u.toUnicode()))
}

func (u *fontUse) widths() string {
	var b strings.Builder
	b.WriteString("[0 [")
	for c := range u.order {
		if c > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, u.width(c))
	}
	b.WriteString("]]")
	return b.String()
}

func (u *fontUse) descriptor(name string, file int) string {
	sf := u.lf.sf
	scale := func(v int) int { return int(math.Round(float64(v) * 1000 / float64(sf.upem))) }
	// Flags 4: symbolic, as the font is addressed by glyph id, not by a
	// standard encoding. StemV is required but only a rendering hint.
	return fmt.Sprintf("<< /Type /FontDescriptor /FontName /%s /Flags 4 /FontBBox [%d %d %d %d] /ItalicAngle 0 /Ascent %d /Descent %d /CapHeight %d /StemV 80 /FontFile2 %d 0 R >>",
		name, scale(sf.bbox[0]), scale(sf.bbox[1]), scale(sf.bbox[2]), scale(sf.bbox[3]),
		scale(sf.ascent), scale(sf.descent), scale(sf.capHeight), file)
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
