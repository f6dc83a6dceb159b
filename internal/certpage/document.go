package certpage

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/quire-dev/quire/internal/pdf"
)

// maxTotalPixels bounds the pixels of all images of one certificate together,
// so that many large images cannot add up to a large render.
const maxTotalPixels = 4 * maxImageSide * maxImageSide

// document collects the pages of one render and the fonts and images they
// use, then writes them as a PDF.
type document struct {
	size   PageSize
	fonts  []*fontUse
	images []*imageUse
	byURI  map[[32]byte]imageResult // decoded images by URI hash: one image sent twice is embedded once
	pixels int
	pages  []*page
}

// imageUse is an embedded image, its samples compressed as soon as decoded.
type imageUse struct {
	name          string
	width, height int
	gray          bool
	colorZ        []byte // zlib-compressed samples
}

type imageResult struct {
	img *imageUse
	err error
}

// page is one page's content stream under construction.
type page struct {
	buf []byte
}

func newDocument(fonts []*loadedFont, size PageSize) *document {
	d := &document{size: size, byURI: map[[32]byte]imageResult{}}
	for _, lf := range fonts {
		d.fonts = append(d.fonts, newFontUse(lf))
	}
	return d
}

func (d *document) addPage() *page {
	p := &page{}
	d.pages = append(d.pages, p)
	return p
}

// image decodes a data: URI image, once per distinct URI, within the count
// and pixel limits. The error explains why an image is not shown.
func (d *document) image(uri string) (*imageUse, error) {
	key := sha256.Sum256([]byte(uri))
	if r, ok := d.byURI[key]; ok {
		return r.img, r.err
	}
	img, err := d.decodeImage(uri)
	d.byURI[key] = imageResult{img, err}
	return img, err
}

func (d *document) decodeImage(uri string) (*imageUse, error) {
	if len(d.images) >= maxImages {
		return nil, fmt.Errorf("more than %d images; later ones are not shown", maxImages)
	}
	r, err := decodeImageURI(uri)
	if err != nil {
		return nil, err
	}
	if d.pixels+r.width*r.height > maxTotalPixels {
		return nil, errors.New("the images of this certificate exceed the total size limit")
	}
	d.pixels += r.width * r.height
	img := &imageUse{
		name:   "Im" + strconv.Itoa(len(d.images)),
		width:  r.width,
		height: r.height,
		gray:   r.gray,
		colorZ: pdf.Deflate(r.color),
	}
	d.images = append(d.images, img)
	return img, nil
}

// pageObjects assembles the pages: their content, and one resource
// dictionary that they share, with the fonts (subset now that every glyph
// is known) and images as objects.
func (d *document) pageObjects() []pdf.Page {
	fonts, xobjects := pdf.Dict{}, pdf.Dict{}
	for i, u := range d.fonts {
		if u.used() {
			fonts[pdf.Name(fmt.Sprintf("F%d", i))] = u.object()
		}
	}
	for _, img := range d.images {
		xobjects[pdf.Name(img.name)] = imageObject(img)
	}
	res := pdf.Dict{"Font": fonts, "XObject": xobjects}
	mediaBox := [4]float64{0, 0, roundNum(d.size.Width), roundNum(d.size.Height)}
	pages := make([]pdf.Page, len(d.pages))
	for i, p := range d.pages {
		pages[i] = pdf.Page{MediaBox: mediaBox, Content: p.buf, Resources: res}
	}
	return pages
}

// imageObject is the image XObject of img: opaque, as toRaster composed
// any transparency onto white.
func imageObject(img *imageUse) *pdf.Stream {
	space := "DeviceRGB"
	if img.gray {
		space = "DeviceGray"
	}
	return &pdf.Stream{Data: img.colorZ, Dict: pdf.Dict{"Type": pdf.Name("XObject"), "Subtype": pdf.Name("Image"),
		"Width": pdf.Int(img.width), "Height": pdf.Int(img.height), "ColorSpace": pdf.Name(space), "BitsPerComponent": pdf.Int(8),
		"Filter": pdf.Name("FlateDecode")}}
}

// textStyle is how a line of text is drawn.
type textStyle struct {
	size float64
	gray float64 // fill level, 0 black
	bold bool    // drawn filled and stroked: a bold look without a second font
}

// text draws a shaped line with its origin at (x, y), PDF coordinates. Glyphs
// are shown with TJ; where the shaper's position differs from where the PDF
// viewer would put the glyph by its /W width (kerning, marks, the rounding of
// /W) by half a thousandth of an em or more, the difference is written as a
// TJ adjustment (smaller ones accumulate until they reach that), and a glyph
// moved up or down (a mark) starts a new text matrix.
//
// Text extraction reads a glyph's characters from the font's /ToUnicode
// CMap, which gives one text per glyph. That suffices for a cluster of one
// glyph whose entry holds the cluster's characters. Any other cluster (a
// Devanagari syllable drawn as a vowel sign placed before its consonant, a
// Thai vowel and tone mark over a consonant, a glyph that earlier stood for
// other characters) is wrapped in marked content whose /ActualText holds its
// characters in logical order (ISO 32000-1 14.9.4), which extractors such as
// pdftotext and mutool give instead of the glyphs' own text.
func (p *page) text(d *document, ln line, x, y float64, st textStyle) {
	if len(ln.glyphs) == 0 {
		return
	}
	w := textWriter{b: p.buf, d: d, x: x, y: y, st: st, curFont: -1}
	if st.bold {
		w.b = append(w.b, "q 2 Tr "...)
		w.b = appendNum(w.b, st.size*0.035)
		w.b = append(w.b, " w "...)
		w.b = appendNum(w.b, st.gray)
		w.b = append(w.b, " G "...)
	}
	w.b = appendNum(w.b, st.gray)
	w.b = append(w.b, " g BT\n"...)
	for gs := ln.glyphs; len(gs) > 0; {
		n := 1
		for n < len(gs) && gs[n].text == "" {
			n++
		}
		w.cluster(gs[:n])
		gs = gs[n:]
	}
	w.closeTJ()
	w.b = append(w.b, "ET\n"...)
	if st.bold {
		w.b = append(w.b, "Q\n"...)
	}
	p.buf = w.b
}

// textWriter writes the glyphs of one line inside BT ... ET, keeping track of
// the open TJ array and where the viewer's pen is.
type textWriter struct {
	b           []byte
	d           *document
	x, y        float64
	st          textStyle
	curFont     int
	segY, pen   float64
	open, inHex bool
}

// cluster draws the glyphs of one cluster, with its characters as
// /ActualText unless the /ToUnicode entry of its single glyph says them.
func (w *textWriter) cluster(gs []placedGlyph) {
	text := gs[0].text
	if len(gs) == 1 {
		u := w.d.fonts[gs[0].font]
		if cid := u.cid(gs[0].gid, text); u.text[cid] == text {
			w.glyph(gs[0], cid)
			return
		}
	}
	w.closeTJ()
	w.b = append(w.b, "/Span <</ActualText <FEFF"...)
	w.b = append(w.b, utf16Hex(text)...)
	w.b = append(w.b, ">>> BDC\n"...)
	for _, g := range gs {
		u := w.d.fonts[g.font]
		w.glyph(g, u.cid(g.gid, u.charOf(g.gid, text)))
	}
	w.closeTJ()
	w.b = append(w.b, "EMC\n"...)
}

// glyph shows one glyph by its CID.
func (w *textWriter) glyph(g placedGlyph, cid int) {
	gx, gy := w.x+g.x, w.y+g.y
	if g.font != w.curFont {
		w.closeTJ()
		w.b = fmt.Appendf(w.b, "/F%d ", g.font)
		w.b = appendNum(w.b, w.st.size)
		w.b = append(w.b, " Tf\n"...)
		w.curFont = g.font
	}
	if !w.open || gy != w.segY {
		w.closeTJ()
		w.b = append(w.b, "1 0 0 1 "...)
		w.b = appendNum(w.b, gx)
		w.b = append(w.b, ' ')
		w.b = appendNum(w.b, gy)
		w.b = append(w.b, " Tm ["...)
		w.open, w.segY, w.pen = true, gy, gx
	} else if adj := (w.pen - gx) * 1000 / w.st.size; math.Abs(adj) >= 0.5 {
		if w.inHex {
			w.b = append(w.b, '>')
			w.inHex = false
		}
		w.b = append(w.b, ' ')
		w.b = appendNum(w.b, adj)
		w.b = append(w.b, ' ')
		w.pen = gx
	}
	if !w.inHex {
		w.b = append(w.b, '<')
		w.inHex = true
	}
	w.b = fmt.Appendf(w.b, "%04X", cid)
	w.pen += float64(w.d.fonts[g.font].width(cid)) * w.st.size / 1000
}

// closeTJ ends the open TJ array, if any; the next glyph sets the text
// matrix anew.
func (w *textWriter) closeTJ() {
	if w.inHex {
		w.b = append(w.b, '>')
		w.inHex = false
	}
	if w.open {
		w.b = append(w.b, "] TJ\n"...)
		w.open = false
	}
}

// rect strokes a rectangle; dashed for the reserved signature area.
func (p *page) rect(x, y, w, h, gray, width float64, dashed bool) {
	b := appendNums(append(p.buf, "q "...), gray)
	b = appendNums(append(b, " G "...), width)
	b = append(b, " w "...)
	if dashed {
		b = append(b, "[3 2] 0 d "...)
	}
	p.buf = append(appendNums(b, x, y, w, h), " re S Q\n"...)
}

// clip saves the graphics state and limits drawing to a rectangle, until
// restore.
func (p *page) clip(x, y, w, h float64) {
	b := appendNums(append(p.buf, "q "...), x, y, w, h)
	p.buf = append(b, " re W n\n"...)
}

func (p *page) restore() { p.buf = append(p.buf, "Q\n"...) }

// rule draws a horizontal line.
func (p *page) rule(x1, x2, y, gray, width float64) {
	b := appendNums(append(p.buf, "q "...), gray)
	b = appendNums(append(b, " G "...), width)
	b = appendNums(append(b, " w "...), x1, y)
	b = appendNums(append(b, " m "...), x2, y)
	p.buf = append(b, " l S Q\n"...)
}

// image draws an image XObject scaled to w × h points at (x, y).
func (p *page) image(img *imageUse, x, y, w, h float64) {
	b := appendNums(append(p.buf, "q "...), w, 0, 0, h, x, y)
	p.buf = append(b, " cm /"+img.name+" Do Q\n"...)
}

// appendNums appends numbers separated by spaces.
func appendNums(b []byte, vs ...float64) []byte {
	for i, v := range vs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendNum(b, v)
	}
	return b
}
