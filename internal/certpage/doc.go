// Package certpage renders the certificate pages that quire appends to a
// signed PDF: who signed, when, from where, the signing certificate, how to
// verify, the request's metadata and the whole audit trail, with any drawn
// signature shown as an image, or else the signer's name typed.
//
// Pages returns the pages (content, and the resources they share: fonts and
// images as objects) that the signer appends to the document it signs
// (pdf.Document.AppendPages), and the rectangle on the first page reserved
// for a visible signature widget; Render writes the same pages as a small
// standalone PDF. Pages take the size of the document's last page; margins
// and type scale with the page, and narrow pages put labels above values.
//
// # Text: shaping, bidi and fonts
//
// Names and data may be in any script, so text is not drawn character by
// character with a simple font encoding, which cannot join Arabic letters,
// order right-to-left text or reach more than 256 glyphs per font. Instead:
//
//   - github.com/go-text/typesetting (a Go port of HarfBuzz) segments each
//     paragraph by bidi level, script and font, shapes it with the font's
//     OpenType tables (Arabic initial/medial/final forms and ligatures, mark
//     positioning, kerning) and breaks lines (UAX #14). The paragraph direction
//     follows its first strong character, and lines are put in visual order by
//     rule L2 of the Unicode bidi algorithm from the resolved embedding levels,
//     so numbers and Latin words inside Arabic or Hebrew keep their place.
//   - Glyphs are written by glyph id with Type0 fonts (Identity-H encoding,
//     CIDFontType2 descendant, /CIDToGIDMap /Identity), so that pdftotext and
//     copy-paste give the text as typed, each shaped cluster says its
//     characters: a /ToUnicode CMap maps a glyph that is a cluster alone to
//     them, and any other cluster (an Indic syllable whose glyphs are
//     reordered or merged, Thai marks, a glyph that stood for other
//     characters before) is wrapped in marked content with /ActualText.
//   - Fonts are subset here: only the glyphs drawn (plus the components of
//     composite glyphs) are kept, renumbered in order of use, so one page of
//     Latin text embeds a few kilobytes of font. Only TrueType (glyf) outlines
//     are supported, since they subset by copying bytes; this is why the CJK
//     font is WenQuanYi Zen Hei rather than the CFF-based Noto CJK.
//
// The simpler alternative of a PDF library that subsets TrueType fonts but
// does not shape (such as gopdf) was rejected: without shaping, Arabic shows
// isolated letters in the wrong order and marks are misplaced.
//
// Fonts, in fallback order (each character uses the first font that has it):
// DejaVu Sans (Debian package fonts-dejavu-core: Latin, Greek, Cyrillic,
// Hebrew, Arabic), Noto Sans for Thai and the Indic scripts (fonts-noto-core),
// WenQuanYi Zen Hei (fonts-wqy-zenhei: Chinese, Japanese kana, Korean Hangul)
// and Symbola (fonts-symbola: emoji, in outlines; colour emoji fonts are
// bitmaps, which a PDF cannot embed as a font); see DefaultFonts. Without a
// drawn signature, the signature box shows the signer's typed name in Kristi
// (fonts-kristi), a cursive face, or in the fonts above when Kristi lacks one
// of its characters; see DefaultSignatureFont. All fonts are read from
// /usr/share/fonts by default; see Options. Fonts are parsed once
// per Renderer and shared read-only by concurrent renders; a missing font is
// an error naming its package.
//
// # Untrusted input
//
// Every string is cleaned (control, bidi-override and other format
// characters removed, invalid UTF-8 replaced, stacked combining marks capped)
// and shortened with an ellipsis and a note saying the limit. Nested objects
// are flattened to "a.b: value" rows up to a depth and a row count; at most
// maxEvents events and maxTotalRunes characters are drawn, with a note saying
// what was left out. Drawn signatures (data:image/png;base64 URIs) are
// checked for encoded size and pixel dimensions before decoding, and an
// image that cannot be shown is replaced by a note saying why.
package certpage
