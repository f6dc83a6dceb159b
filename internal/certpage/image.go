package certpage

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
)

// Bounds on drawn-signature images. The image comes from the caller, so its
// encoded size is checked before decoding and its pixel size (read from the
// PNG header) before any pixel is allocated: a small, highly compressed PNG
// cannot make a render allocate gigabytes.
const (
	maxImageBytes = 2 << 20 // decoded (binary) PNG size
	maxImageSide  = 2000    // pixels, for width and height
	maxImages     = 20      // distinct images embedded in one certificate
)

// raster is a decoded image ready to embed in a PDF: 8-bit samples, gray or
// RGB, opaque. Transparent pixels are composed onto white, the page's
// colour, so the page has no soft mask: PDF/A-1 forbids transparency, and a
// document that claims PDF/A keeps to it.
type raster struct {
	width, height int
	gray          bool
	color         []byte // width*height samples of 1 (gray) or 3 (RGB) bytes
}

// decodeImageURI decodes a data:image/png;base64 URI. Its errors are shown on
// the certificate in place of the image, so they say, in plain words, why the
// image is not shown.
func decodeImageURI(uri string) (*raster, error) {
	comma := strings.IndexByte(uri, ',')
	if comma < 0 {
		return nil, errors.New("not a valid data URI (no comma)")
	}
	header := uri[len("data:"):comma]
	if !strings.EqualFold(header, "image/png;base64") {
		return nil, fmt.Errorf("only base64 PNG images are rendered, not %q", cleanShort(header, 40))
	}
	payload := uri[comma+1:]
	if len(payload) > base64.StdEncoding.EncodedLen(maxImageBytes) {
		return nil, fmt.Errorf("the PNG is larger than the %d MB limit", maxImageBytes>>20)
	}
	raw, err := decodeBase64(payload)
	if err != nil {
		return nil, errors.New("the base64 data is malformed")
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not a valid PNG (%v)", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > maxImageSide || cfg.Height > maxImageSide {
		return nil, fmt.Errorf("the PNG is %dx%d px; the limit is %dx%d px", cfg.Width, cfg.Height, maxImageSide, maxImageSide)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not a valid PNG (%v)", err)
	}
	return toRaster(img), nil
}

// decodeBase64 accepts padded and unpadded standard base64, as browsers'
// canvas.toDataURL and hand-written clients produce either.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	return base64.RawStdEncoding.DecodeString(s)
}

// toRaster converts any decoded image to 8-bit samples composed onto
// white, keeping one channel when the image is gray (a signature drawn in
// black is both small and gray).
func toRaster(img image.Image) *raster {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	rgb := make([]byte, 0, w*h*3)
	gray := true
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := nrgbaAt(img, x, y)
			c.R, c.G, c.B = onWhite(c.R, c.A), onWhite(c.G, c.A), onWhite(c.B, c.A)
			rgb = append(rgb, c.R, c.G, c.B)
			gray = gray && c.R == c.G && c.G == c.B
		}
	}
	r := &raster{width: w, height: h, gray: gray, color: rgb}
	if gray {
		r.color = make([]byte, w*h)
		for i := range r.color {
			r.color[i] = rgb[3*i]
		}
	}
	return r
}

// onWhite composes a non-premultiplied sample of opacity a onto white.
func onWhite(v, a uint8) uint8 {
	return uint8((int(v)*int(a) + 255*(255-int(a)) + 127) / 255)
}

// nrgbaAt reads one pixel, without the per-pixel allocation of img.At for
// the layouts image/png produces most often.
func nrgbaAt(img image.Image, x, y int) color.NRGBA {
	switch m := img.(type) {
	case *image.NRGBA:
		return m.NRGBAAt(x, y)
	case *image.Gray:
		g := m.GrayAt(x, y).Y
		return color.NRGBA{g, g, g, 0xff}
	case *image.Paletted:
		if i := int(m.ColorIndexAt(x, y)); i < len(m.Palette) {
			return color.NRGBAModel.Convert(m.Palette[i]).(color.NRGBA)
		}
		return color.NRGBA{}
	default:
		return color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
	}
}
