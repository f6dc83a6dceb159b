package certpage

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-text/typesetting/font"
	ot "github.com/go-text/typesetting/font/opentype"
)

// DefaultFontDir is where the default fonts are looked for.
const DefaultFontDir = "/usr/share/fonts"

// FontFile names one font file used to render text.
type FontFile struct {
	// Path is the font file: a TrueType font (.ttf) or collection (.ttc)
	// with glyf outlines. CFF-flavoured OpenType fonts are not supported.
	Path string
	// Index selects the font within a collection; 0 for a plain font file.
	Index int
	// Package is the Debian package that ships the file; errors about a
	// missing or unreadable file name it so an operator knows what to install.
	Package string
}

// DefaultFonts returns the fonts used when Options.Fonts is empty, in fallback
// order, under dir (DefaultFontDir when empty):
//   - DejaVu Sans (fonts-dejavu-core): Latin, Greek, Cyrillic, Hebrew and
//     Arabic, with the OpenType tables needed to join Arabic letters;
//   - Noto Sans (fonts-noto-core) for Thai and the Indic scripts: Devanagari,
//     Bengali, Gurmukhi, Gujarati, Oriya, Tamil, Telugu, Kannada, Malayalam
//     and Sinhala, whose conjuncts and vowel signs their OpenType tables form;
//   - WenQuanYi Zen Hei (fonts-wqy-zenhei): Chinese, Japanese kana and Korean
//     Hangul, with TrueType outlines;
//   - Symbola (fonts-symbola): emoji and other symbols, in outlines. Colour
//     emoji fonts (bitmaps) cannot be embedded as a TrueType font in a PDF.
//
// Each font is parsed once per process, and only the glyphs drawn are
// embedded, so the length of the list costs start-up time, not render time.
func DefaultFonts(dir string) []FontFile {
	if dir == "" {
		dir = DefaultFontDir
	}
	fonts := []FontFile{{Path: filepath.Join(dir, "truetype/dejavu/DejaVuSans.ttf"), Package: "fonts-dejavu-core"}}
	for _, script := range notoScripts {
		fonts = append(fonts, FontFile{Path: filepath.Join(dir, "truetype/noto/NotoSans"+script+"-Regular.ttf"), Package: "fonts-noto-core"})
	}
	return append(fonts,
		FontFile{Path: filepath.Join(dir, "truetype/wqy/wqy-zenhei.ttc"), Package: "fonts-wqy-zenhei"},
		FontFile{Path: filepath.Join(dir, "truetype/ancient-scripts/Symbola_hint.ttf"), Package: "fonts-symbola"})
}

// DefaultSignatureFont returns the face of typed signatures, under dir
// (DefaultFontDir when empty): Kristi (fonts-kristi, SIL Open Font License
// 1.1, which allows embedding), a felt-tip cursive hand with TrueType
// outlines covering Latin-1; names it lacks a character of are shown in the
// text fonts.
func DefaultSignatureFont(dir string) FontFile {
	if dir == "" {
		dir = DefaultFontDir
	}
	return FontFile{Path: filepath.Join(dir, "truetype/kristi/Kristi.ttf"), Package: "fonts-kristi"}
}

// notoScripts are the Noto Sans fonts of DefaultFonts, by script.
var notoScripts = []string{"Thai", "Devanagari", "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil", "Telugu", "Kannada", "Malayalam", "Sinhala"}

// loadedFont is a font parsed once and shared, read-only, by every render.
type loadedFont struct {
	font *font.Font // for shaping; safe for concurrent use
	name string     // PostScript-style name, used as the PDF BaseFont
	sf   *sfnt      // raw tables, for subsetting
}

// loadFont reads and parses one font file.
func loadFont(ff FontFile) (*loadedFont, error) {
	data, err := os.ReadFile(ff.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("certpage: font file %s not found: install the Debian package %s", ff.Path, packageName(ff))
		}
		return nil, fmt.Errorf("certpage: reading font file %s (Debian package %s): %w", ff.Path, packageName(ff), err)
	}
	lds, err := ot.NewLoaders(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("certpage: parsing font file %s: %w", ff.Path, err)
	}
	if ff.Index < 0 || ff.Index >= len(lds) {
		return nil, fmt.Errorf("certpage: font file %s holds %d fonts; index %d does not exist", ff.Path, len(lds), ff.Index)
	}
	ld := lds[ff.Index]
	f, err := font.NewFont(ld)
	if err != nil {
		return nil, fmt.Errorf("certpage: parsing font %d of %s: %w", ff.Index, ff.Path, err)
	}
	sf, err := readSfnt(ld)
	if err != nil {
		return nil, fmt.Errorf("certpage: font %d of %s: %w", ff.Index, ff.Path, err)
	}
	return &loadedFont{font: f, name: baseFontName(f), sf: sf}, nil
}

func packageName(ff FontFile) string {
	if ff.Package == "" {
		return "that provides it"
	}
	return ff.Package
}

// baseFontName derives a PDF name from the font's family, keeping only the
// characters a PostScript name may hold ("DejaVu Sans" → "DejaVuSans").
func baseFontName(f *font.Font) string {
	var b strings.Builder
	for _, r := range f.Describe().Family {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "Font"
	}
	return b.String()
}

// loadFonts loads every font of the list, failing on the first one missing.
func loadFonts(files []FontFile) ([]*loadedFont, error) {
	if len(files) == 0 {
		return nil, errors.New("certpage: no font configured")
	}
	out := make([]*loadedFont, 0, len(files))
	for _, ff := range files {
		lf, err := loadFont(ff)
		if err != nil {
			return nil, err
		}
		out = append(out, lf)
	}
	return out, nil
}
