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
func (p *page) text(d *document, ln line, x, y float64, st textStyle) {
	if len(ln.glyphs) == 0 {
		return
	}
	b := p.buf
	if st.bold {
		b = append(b, "q 2 Tr "...)
		b = appendNum(b, st.size*0.035)
		b = append(b, " w "...)
		b = appendNum(b, st.gray)
		b = append(b, " G "...)
	}
	b = appendNum(b, st.gray)
	b = append(b, " g BT\n"...)
	curFont, segY, pen := -1, math.NaN(), 0.0
	open, inHex := false, false
	closeTJ := func() {
		if inHex {
			b = append(b, '>')
			inHex = false
		}
		if open {
			b = append(b, "] TJ\n"...)
			open = false
		}
	}
	for _, g := range ln.glyphs {
		gx, gy := x+g.x, y+g.y
		if g.font != curFont {
			closeTJ()
			b = fmt.Appendf(b, "/F%d ", g.font)
			b = appendNum(b, st.size)
			b = append(b, " Tf\n"...)
			curFont, segY = g.font, math.NaN()
		}
		if !open || gy != segY {
			closeTJ()
			b = append(b, "1 0 0 1 "...)
			b = appendNum(b, gx)
			b = append(b, ' ')
			b = appendNum(b, gy)
			b = append(b, " Tm ["...)
			open, segY, pen = true, gy, gx
		} else if adj := (pen - gx) * 1000 / st.size; math.Abs(adj) >= 0.5 {
			if inHex {
				b = append(b, '>')
				inHex = false
			}
			b = append(b, ' ')
			b = appendNum(b, adj)
			b = append(b, ' ')
			pen = gx
		}
		u := d.fonts[g.font]
		cid := u.cid(g.gid, g.text)
		if !inHex {
			b = append(b, '<')
			inHex = true
		}
		b = fmt.Appendf(b, "%04X", cid)
		pen += float64(u.width(cid)) * st.size / 1000
	}
	closeTJ()
	b = append(b, "ET\n"...)
	if st.bold {
		b = append(b, "Q\n"...)
	}
	p.buf = b
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
