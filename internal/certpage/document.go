package certpage

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
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
		colorZ: compress(r.color),
	}
	d.images = append(d.images, img)
	return img, nil
}

// write assembles the PDF: catalog, page tree, pages sharing one resource
// dictionary, fonts (subset now that every glyph is known) and images.
func (d *document) write() []byte {
	w := newPDFWriter()
	catalog, pagesObj, resources := w.alloc(), w.alloc(), w.alloc()
	pageObjs := make([]int, len(d.pages))
	kids := make([]string, len(d.pages))
	for i := range d.pages {
		pageObjs[i] = w.alloc()
		kids[i] = fmt.Sprintf("%d 0 R", pageObjs[i])
	}
	w.object(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesObj))
	w.object(pagesObj, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(d.pages)))
	mediaBox := "[" + string(appendNums(nil, 0, 0, d.size.Width, d.size.Height)) + "]"
	for i, p := range d.pages {
		content := w.alloc()
		w.object(pageObjs[i], fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox %s /Resources %d 0 R /Contents %d 0 R >>",
			pagesObj, mediaBox, resources, content))
		w.stream(content, "", p.buf)
	}
	var fonts, xobjects strings.Builder
	fontObjs := map[int]int{}
	for i, u := range d.fonts {
		if u.used() {
			fontObjs[i] = w.alloc()
			fmt.Fprintf(&fonts, " /F%d %d 0 R", i, fontObjs[i])
		}
	}
	imageObjs := make([]int, len(d.images))
	for i, img := range d.images {
		imageObjs[i] = w.alloc()
		fmt.Fprintf(&xobjects, " /%s %d 0 R", img.name, imageObjs[i])
	}
	w.object(resources, fmt.Sprintf("<< /Font <<%s >> /XObject <<%s >> >>", fonts.String(), xobjects.String()))
	for i, u := range d.fonts {
		if u.used() {
			u.write(w, fontObjs[i])
		}
	}
	for i, img := range d.images {
		writeImage(w, imageObjs[i], img)
	}
	return w.finish(catalog)
}

func writeImage(w *pdfWriter, num int, img *imageUse) {
	space := "/DeviceRGB"
	if img.gray {
		space = "/DeviceGray"
	}
	w.compressedStream(num, fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace %s /BitsPerComponent 8",
		img.width, img.height, space), img.colorZ)
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
