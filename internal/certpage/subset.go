package certpage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	ot "github.com/go-text/typesetting/font/opentype"
)

// sfnt holds the raw TrueType tables needed to build a subset, read once when
// the font is loaded. Only glyph outlines (glyf) are supported: they can be
// subset by copying bytes, unlike CFF charstrings.
type sfnt struct {
	head, hhea, maxp, hmtx, glyf []byte
	cvt, fpgm, prep              []byte // hinting programs, kept as they are: glyph instructions call them
	loca                         []uint32
	numGlyphs, numHMetrics       int
	upem                         int
	ascent, descent, capHeight   int // font units
	bbox                         [4]int
}

// readSfnt reads the tables a subset needs and checks their sizes, so that
// later accesses cannot go out of range.
func readSfnt(ld *ot.Loader) (*sfnt, error) {
	get := func(tag string, required bool) ([]byte, error) {
		b, err := ld.RawTable(ot.MustNewTag(tag))
		if err != nil && required {
			return nil, fmt.Errorf("no %q table (only TrueType fonts with glyf outlines are supported)", tag)
		}
		return b, nil
	}
	s := &sfnt{}
	var err error
	for _, t := range []struct {
		tag      string
		dst      *[]byte
		required bool
	}{
		{"head", &s.head, true}, {"hhea", &s.hhea, true}, {"maxp", &s.maxp, true},
		{"hmtx", &s.hmtx, true}, {"glyf", &s.glyf, true}, {"cvt ", &s.cvt, false},
		{"fpgm", &s.fpgm, false}, {"prep", &s.prep, false},
	} {
		if *t.dst, err = get(t.tag, t.required); err != nil {
			return nil, err
		}
	}
	if len(s.head) < 54 || len(s.hhea) < 36 || len(s.maxp) < 6 {
		return nil, errors.New("truncated head, hhea or maxp table")
	}
	s.upem = int(be16(s.head, 18))
	s.numGlyphs = int(be16(s.maxp, 4))
	s.numHMetrics = int(be16(s.hhea, 34))
	s.ascent, s.descent = int(int16(be16(s.hhea, 4))), int(int16(be16(s.hhea, 6)))
	for i := range s.bbox {
		s.bbox[i] = int(int16(be16(s.head, 36+2*i)))
	}
	if s.upem < 16 || s.numGlyphs == 0 || s.numHMetrics == 0 || s.numHMetrics > s.numGlyphs ||
		len(s.hmtx) < 4*s.numHMetrics+2*(s.numGlyphs-s.numHMetrics) {
		return nil, errors.New("inconsistent head, maxp, hhea or hmtx table")
	}
	if s.loca, err = readLoca(ld, s); err != nil {
		return nil, err
	}
	s.capHeight = capHeight(ld, s)
	return s, nil
}

// readLoca decodes the glyph offsets, checking they stay within glyf.
func readLoca(ld *ot.Loader, s *sfnt) ([]uint32, error) {
	raw, err := ld.RawTable(ot.MustNewTag("loca"))
	if err != nil {
		return nil, errors.New("no loca table")
	}
	long := be16(s.head, 50) == 1
	n := s.numGlyphs + 1
	if (long && len(raw) < 4*n) || (!long && len(raw) < 2*n) {
		return nil, errors.New("loca table shorter than maxp.numGlyphs says")
	}
	loca := make([]uint32, n)
	for i := range loca {
		if long {
			loca[i] = binary.BigEndian.Uint32(raw[4*i:])
		} else {
			loca[i] = 2 * uint32(be16(raw, 2*i))
		}
		if loca[i] > uint32(len(s.glyf)) || (i > 0 && loca[i] < loca[i-1]) {
			return nil, fmt.Errorf("loca entry %d out of order or beyond the glyf table", i)
		}
	}
	return loca, nil
}

// capHeight reads OS/2 sCapHeight (version 2 and later), or estimates it from
// the ascent; PDF viewers only use it as a hint.
func capHeight(ld *ot.Loader, s *sfnt) int {
	os2, err := ld.RawTable(ot.MustNewTag("OS/2"))
	if err == nil && len(os2) >= 90 && be16(os2, 0) >= 2 {
		return int(int16(be16(os2, 88)))
	}
	return s.ascent * 7 / 10
}

func be16(b []byte, off int) uint16 { return binary.BigEndian.Uint16(b[off:]) }

// advance returns a glyph's advance width in font units.
func (s *sfnt) advance(gid int) int {
	if gid >= s.numHMetrics {
		gid = s.numHMetrics - 1
	}
	return int(be16(s.hmtx, 4*gid))
}

// lsb returns a glyph's left side bearing (hmtx stores it apart from the
// advance for glyphs past numberOfHMetrics).
func (s *sfnt) lsb(gid int) uint16 {
	if gid < s.numHMetrics {
		return be16(s.hmtx, 4*gid+2)
	}
	return be16(s.hmtx, 4*s.numHMetrics+2*(gid-s.numHMetrics))
}

func (s *sfnt) glyphData(gid int) []byte {
	if gid < 0 || gid >= s.numGlyphs {
		return nil
	}
	return s.glyf[s.loca[gid]:s.loca[gid+1]]
}

// Composite glyph flags (OpenType glyf table).
const (
	argsAreWords   = 0x0001
	haveScale      = 0x0008
	moreComponents = 0x0020
	haveXYScale    = 0x0040
	haveTwoByTwo   = 0x0080
)

// components calls fn with the offset of each component's glyph index in a
// composite glyph; it does nothing for a simple glyph. It stops, without
// failing, at a truncated record: the glyph is then drawn incompletely, which
// is the font's own defect.
func components(data []byte, fn func(off int)) {
	if len(data) < 10 || int16(be16(data, 0)) >= 0 {
		return
	}
	for off := 10; off+4 <= len(data); {
		flags := be16(data, off)
		fn(off + 2)
		off += 4
		if flags&argsAreWords != 0 {
			off += 4
		} else {
			off += 2
		}
		switch {
		case flags&haveScale != 0:
			off += 2
		case flags&haveXYScale != 0:
			off += 4
		case flags&haveTwoByTwo != 0:
			off += 8
		}
		if flags&moreComponents == 0 {
			return
		}
	}
}

// subset builds a TrueType font holding the glyphs of order, renumbered
// 0..len-1 in that order (order[0] must be .notdef, glyph 0), plus the
// components of composite glyphs, appended after them. It returns the font
// and the final glyph list (new glyph id → original glyph id).
//
// The font keeps only what a PDF CIDFontType2 with /CIDToGIDMap /Identity
// needs (ISO 32000 9.9): head, hhea, maxp, hmtx, loca, glyf and the hinting
// tables, plus an empty cmap that font parsers insist on. The real cmap,
// post, name and the layout tables are dropped: the PDF selects glyphs by
// id, and text extraction uses the /ToUnicode CMap.
func (s *sfnt) subset(order []int) ([]byte, []int) {
	order = slices.Clone(order)
	newID := make(map[int]int, len(order))
	for i, g := range order {
		newID[g] = i
	}
	for i := 0; i < len(order); i++ {
		data := s.glyphData(order[i])
		components(data, func(off int) {
			g := int(be16(data, off))
			if _, ok := newID[g]; !ok && g < s.numGlyphs {
				newID[g] = len(order)
				order = append(order, g)
			}
		})
	}
	glyf, loca := s.subsetGlyf(order, newID)
	hmtx := make([]byte, 4*len(order))
	for i, g := range order {
		binary.BigEndian.PutUint16(hmtx[4*i:], uint16(s.advance(g)))
		binary.BigEndian.PutUint16(hmtx[4*i+2:], s.lsb(g))
	}
	head := slices.Clone(s.head)
	binary.BigEndian.PutUint32(head[8:], 0)  // checkSumAdjustment, set below
	binary.BigEndian.PutUint16(head[50:], 1) // long loca offsets
	hhea := slices.Clone(s.hhea)
	binary.BigEndian.PutUint16(hhea[34:], uint16(len(order)))
	maxp := slices.Clone(s.maxp)
	binary.BigEndian.PutUint16(maxp[4:], uint16(len(order)))

	tables := map[string][]byte{"head": head, "hhea": hhea, "maxp": maxp, "hmtx": hmtx, "loca": loca, "glyf": glyf, "cmap": emptyCmap}
	for tag, b := range map[string][]byte{"cvt ": s.cvt, "fpgm": s.fpgm, "prep": s.prep} {
		if len(b) > 0 {
			tables[tag] = b
		}
	}
	return writeSfnt(tables), order
}

// emptyCmap is a cmap table with one Windows Unicode (3,1) format 4
// subtable that maps no character: only its mandatory final 0xFFFF segment.
var emptyCmap = []byte{
	0, 0, 0, 1, // version 0, one subtable
	0, 3, 0, 1, 0, 0, 0, 12, // platform 3, encoding 1, at offset 12
	0, 4, 0, 24, 0, 0, // format 4, length 24, language 0
	0, 2, 0, 2, 0, 0, 0, 0, // segCountX2 2, searchRange 2, entrySelector 0, rangeShift 0
	0xff, 0xff, 0, 0, // endCode[0], reservedPad
	0xff, 0xff, 0, 1, 0, 0, // startCode[0], idDelta[0], idRangeOffset[0]
}

// subsetGlyf copies the glyphs of order, rewriting the glyph ids inside
// composite glyphs, and builds the matching long-format loca table.
func (s *sfnt) subsetGlyf(order []int, newID map[int]int) (glyf, loca []byte) {
	loca = make([]byte, 4*(len(order)+1))
	for i, g := range order {
		binary.BigEndian.PutUint32(loca[4*i:], uint32(len(glyf)))
		start := len(glyf)
		glyf = append(glyf, s.glyphData(g)...)
		data := glyf[start:]
		components(data, func(off int) {
			if n, ok := newID[int(be16(data, off))]; ok {
				binary.BigEndian.PutUint16(data[off:], uint16(n))
			}
		})
		for len(glyf)%4 != 0 {
			glyf = append(glyf, 0)
		}
	}
	binary.BigEndian.PutUint32(loca[4*len(order):], uint32(len(glyf)))
	return glyf, loca
}

// writeSfnt assembles tables into a font file, with the table directory
// sorted by tag and the checksums the format requires.
func writeSfnt(tables map[string][]byte) []byte {
	tags := make([]string, 0, len(tables))
	for t := range tables {
		tags = append(tags, t)
	}
	slices.Sort(tags)
	n := len(tags)
	entrySelector := 0
	for 1<<(entrySelector+1) <= n {
		entrySelector++
	}
	searchRange := 16 << entrySelector
	out := make([]byte, 12+16*n)
	binary.BigEndian.PutUint32(out[0:], 0x00010000)
	binary.BigEndian.PutUint16(out[4:], uint16(n))
	binary.BigEndian.PutUint16(out[6:], uint16(searchRange))
	binary.BigEndian.PutUint16(out[8:], uint16(entrySelector))
	binary.BigEndian.PutUint16(out[10:], uint16(16*n-searchRange))
	headOffset := 0
	for i, tag := range tags {
		data := tables[tag]
		rec := out[12+16*i:]
		copy(rec, tag)
		binary.BigEndian.PutUint32(rec[4:], checksum(data))
		binary.BigEndian.PutUint32(rec[8:], uint32(len(out)))
		binary.BigEndian.PutUint32(rec[12:], uint32(len(data)))
		if tag == "head" {
			headOffset = len(out)
		}
		out = append(out, data...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
	}
	binary.BigEndian.PutUint32(out[headOffset+8:], 0xB1B0AFBA-checksum(out))
	return out
}

// checksum is the OpenType table checksum: the sum of big-endian uint32
// words, the last one zero-padded.
func checksum(b []byte) uint32 {
	var sum uint32
	for i := 0; i < len(b); i += 4 {
		var w [4]byte
		copy(w[:], b[i:])
		sum += binary.BigEndian.Uint32(w[:])
	}
	return sum
}
