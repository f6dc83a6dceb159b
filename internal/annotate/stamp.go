package annotate

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"strconv"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// Stamp geometry: pixels per EMU of the composed image (2 pixels per
// display pixel, about 192 dpi: sharp on paper, and cheap enough to
// compose on every request), and its cap.
const (
	stampScale    = 2.0 / emuPerPixel
	maxStampPixel = 2400
)

// Default stamp colours.
const (
	defaultArcColor   = "#1f4e8c"
	defaultLabelColor = "#666666"
)

// stamp composes the signature stamp of a cx x cy EMU box as one PNG: the
// top label, the drawn signature over an arc, the bottom label; its PNG
// is not compressed when uncompressed is set.
func (e *Engine) stamp(sig picture, o Options, cx, cy int64, uncompressed bool) (picture, error) {
	src, _, err := image.Decode(bytes.NewReader(sig.data))
	if err != nil {
		return picture{}, fmt.Errorf("annotate: decoding the signature image: %w", err)
	}
	w := clampPixels(float64(cx) * stampScale)
	h := clampPixels(float64(cy) * stampScale)
	canvas := image.NewRGBA(image.Rect(0, 0, w, h)) // premultiplied: the fast paths of the scaler
	label := h / 5
	top, bottom := 0, h
	if o.TopLabel.Text != "" {
		top = label
	}
	if o.BottomLabel.Text != "" {
		bottom = h - label
	}
	area := image.Rect(0, top, w, bottom).Inset(max(1, h/40))
	drawArc(canvas, area, parseColor(o.ArcColor, defaultArcColor), max(1, float64(h)/60))
	xdraw.ApproxBiLinear.Scale(canvas, fit(src.Bounds(), area), src, src.Bounds(), xdraw.Over, nil)
	if err := e.label(canvas, o.TopLabel, image.Rect(0, 0, w, top)); err != nil {
		return picture{}, err
	}
	if err := e.label(canvas, o.BottomLabel, image.Rect(0, bottom, w, h)); err != nil {
		return picture{}, err
	}
	var out bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if uncompressed {
		enc.CompressionLevel = png.NoCompression
	}
	if err := enc.Encode(&out, canvas); err != nil {
		return picture{}, fmt.Errorf("annotate: encoding the signature stamp: %w", err)
	}
	return picture{data: out.Bytes(), ext: "png", width: w, height: h}, nil
}

func clampPixels(v float64) int { return min(maxStampPixel, max(8, int(math.Round(v)))) }

// fit is the largest rectangle of src's proportions centred in area.
func fit(src, area image.Rectangle) image.Rectangle {
	sw, sh := float64(src.Dx()), float64(src.Dy())
	scale := min(float64(area.Dx())/sw, float64(area.Dy())/sh)
	w, h := int(sw*scale), int(sh*scale)
	x := area.Min.X + (area.Dx()-w)/2
	y := area.Min.Y + (area.Dy()-h)/2
	return image.Rect(x, y, x+w, y+h)
}

// drawArc draws the lower half of an ellipse inscribed in area: a swash
// under the signature.
func drawArc(img *image.RGBA, area image.Rectangle, c color.NRGBA, width float64) {
	cx, cy := float64(area.Min.X+area.Max.X)/2, float64(area.Min.Y)+float64(area.Dy())*0.45
	rx, ry := float64(area.Dx())/2-width, float64(area.Dy())*0.5
	steps := int(2 * (rx + ry)) // about two discs per pixel of arc
	for i := 0; i <= steps; i++ {
		t := math.Pi * (0.15 + 0.7*float64(i)/float64(steps))
		disc(img, cx+rx*math.Cos(t), cy+ry*math.Sin(t), width/2, c)
	}
}

// disc paints a filled circle, its edge anti-aliased, on a canvas that
// holds nothing else yet where it paints.
func disc(img *image.RGBA, x, y, r float64, c color.NRGBA) {
	b := img.Bounds()
	for py := int(y - r - 1); py <= int(y+r+1); py++ {
		for px := int(x - r - 1); px <= int(x+r+1); px++ {
			if !(image.Point{px, py}.In(b)) {
				continue
			}
			d := math.Hypot(float64(px)+0.5-x, float64(py)+0.5-y)
			cover := math.Min(1, math.Max(0, r+0.5-d))
			if cover == 0 {
				continue
			}
			i := img.PixOffset(px, py)
			if a := uint32(float64(c.A) * cover); uint8(a) > img.Pix[i+3] {
				img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(uint32(c.R)*a/255), uint8(uint32(c.G)*a/255), uint8(uint32(c.B)*a/255), uint8(a)
			}
		}
	}
}

// label writes a label centred in area, its size shrunk to fit the width.
func (e *Engine) label(img *image.RGBA, l Label, area image.Rectangle) error {
	if l.Text == "" || area.Empty() {
		return nil
	}
	size := float64(area.Dy()) * 0.75
	face, err := opentype.NewFace(e.font, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return fmt.Errorf("annotate: label font: %w", err)
	}
	width := font.MeasureString(face, l.Text).Ceil()
	if width > area.Dx() {
		face.Close()
		size *= float64(area.Dx()) / float64(width)
		if face, err = opentype.NewFace(e.font, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingNone}); err != nil {
			return fmt.Errorf("annotate: label font: %w", err)
		}
		width = font.MeasureString(face, l.Text).Ceil()
	}
	defer face.Close()
	m := face.Metrics()
	baseline := area.Min.Y + (area.Dy()+m.Ascent.Ceil()-m.Descent.Ceil())/2
	d := font.Drawer{Dst: img, Src: image.NewUniform(parseColor(l.Color, defaultLabelColor)), Face: face,
		Dot: fixed.P(area.Min.X+(area.Dx()-width)/2, baseline)}
	d.DrawString(l.Text)
	return nil
}

// parseColor reads "#rgb" or "#rrggbb" (Validate checked it), else def.
func parseColor(s, def string) color.NRGBA {
	if s == "" {
		s = def
	}
	hex := s[1:]
	if len(hex) == 3 {
		hex = string([]byte{hex[0], hex[0], hex[1], hex[1], hex[2], hex[2]})
	}
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil {
		return parseColor(def, def)
	}
	return color.NRGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}
