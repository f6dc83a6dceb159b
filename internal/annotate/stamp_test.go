package annotate

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
)

// TestStampComposition composes a stamp and finds its pieces where they
// belong: the label's colour in the top and bottom bands, the arc's colour
// and the signature's black in the middle.
func TestStampComposition(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t, nil)
	uri := pngDataURI(t, 300, 100) // a black line across the middle
	data, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(uri, "data:image/png;base64,"))
	o := Options{ArcColor: "#00f", TopLabel: Label{Text: "Signed", Color: "#f00"}, BottomLabel: Label{Text: "ip: 127.0.0.1", Color: "#0f0"}}
	pic, err := e.stamp(picture{data: data, ext: "png"}, o, signatureWidthEMU, signatureHeightEMU, false)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(pic.data))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() != 208 || b.Dy() != 104 {
		t.Errorf("stamp of %v, want 208x104 (2 pixels per display pixel)", b)
	}
	band := b.Dy() / 5
	// count counts the pixels close to want (resampling blurs the signature).
	count := func(r image.Rectangle, want color.NRGBA) int {
		n := 0
		near := func(a, b uint8) bool { return max(a, b)-min(a, b) < 64 }
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
				if near(c.R, want.R) && near(c.G, want.G) && near(c.B, want.B) && c.A > 160 {
					n++
				}
			}
		}
		return n
	}
	middle := image.Rect(0, band, b.Dx(), b.Dy()-band)
	for _, c := range []struct {
		what string
		r    image.Rectangle
		col  color.NRGBA
	}{
		{"top label", image.Rect(0, 0, b.Dx(), band), color.NRGBA{255, 0, 0, 255}},
		{"bottom label", image.Rect(0, b.Dy()-band, b.Dx(), b.Dy()), color.NRGBA{0, 255, 0, 255}},
		{"arc", middle, color.NRGBA{0, 0, 255, 255}},
		{"signature", middle, color.NRGBA{0, 0, 0, 255}},
	} {
		if count(c.r, c.col) == 0 {
			t.Errorf("no %s pixels (%v) in %v", c.what, c.col, c.r)
		}
	}
	if n := count(middle, color.NRGBA{255, 0, 0, 255}) + count(middle, color.NRGBA{0, 255, 0, 255}); n > 0 {
		t.Errorf("%d label pixels over the signature", n)
	}
}
