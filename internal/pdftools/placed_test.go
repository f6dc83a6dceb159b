package pdftools

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// wordBox is pdftotext's box of the first word of page 1 that is word,
// in points from the page's top left corner.
func wordBox(t *testing.T, b []byte, word string) (xMin, yMin, xMax, yMax float64) {
	t.Helper()
	pdftest.RequireTool(t, "pdftotext", "poppler-utils")
	out := runOut(t, "pdftotext", "-bbox", "-f", "1", "-l", "1", pdftest.WriteTemp(t, b), "-")
	re := regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">` + regexp.QuoteMeta(word) + `</word>`)
	m := re.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("pdftotext finds no word %q:\n%s", word, out)
	}
	var v [4]float64
	for i := range v {
		v[i], _ = strconv.ParseFloat(m[i+1], 64)
	}
	return v[0], v[1], v[2], v[3]
}

// uncompressed is the PDF with its streams decoded and its objects out
// of object streams (qpdf's QDF form), to read its content streams.
func uncompressed(t *testing.T, b []byte) string {
	t.Helper()
	pdftest.RequireTool(t, "qpdf", "qpdf")
	return runOut(t, "qpdf", "--qdf", "--object-streams=disable", pdftest.WriteTemp(t, b), "-")
}

func near(got, want, tolerance float64) bool { return math.Abs(got-want) <= tolerance }

// TestPlacedTextLandsWhereAsked: a text placed at (x, y) has its
// baseline's left end there, at the size, colour and opacity asked,
// drawn over the content; turned by 90 degrees it rises from that point.
func TestPlacedTextLandsWhereAsked(t *testing.T) {
	const h = 842 // pdftest.OnePage's height
	at := &Placement{X: 100, Y: 200, FontSize: 24, Color: "#ff0000"}
	res := do(t, Request{Op: OpWatermark, Files: one("in.pdf", pdftest.OnePage("Body")), Text: "STAMPED", Opacity: 0.8, Stamp: true, At: at})
	qpdfClean(t, res.Data)
	xMin, yMin, xMax, yMax := wordBox(t, res.Data, "STAMPED")
	if !near(xMin, at.X, 2) || !(yMin < h-at.Y && h-at.Y < yMax) {
		t.Errorf("the word's box is x %g-%g, y %g-%g from the top; want it starting at x %g, its baseline (%g from the top) within it", xMin, xMax, yMin, yMax, at.X, h-at.Y)
	}
	if height := yMax - yMin; height < at.FontSize || height > 1.5*at.FontSize {
		t.Errorf("the word's box is %g points high, want about the font size, %g", height, at.FontSize)
	}
	qdf := uncompressed(t, res.Data)
	if !strings.Contains(qdf, "1.0000 0.0000 0.0000 rg") {
		t.Error("the content streams do not fill with red (1 0 0 rg)")
	}
	if !regexp.MustCompile(`/ca 0\.80*\b`).MatchString(qdf) || !regexp.MustCompile(`/CA 0\.80*\b`).MatchString(qdf) {
		t.Error("no ExtGState has the opacity 0.8 (/ca, /CA)")
	}
	if text := textOf(t, res.Data, 1); !strings.Contains(text, "Body") {
		t.Errorf("the page lost its content: %q", text)
	}

	turned := do(t, Request{Op: OpWatermark, Files: one("in.pdf", pdftest.OnePage("Body")), Text: "STAMPED", Angle: 90, At: at})
	xMin, yMin, xMax, yMax = wordBox(t, turned.Data, "STAMPED")
	if !near(yMax, h-at.Y, 2) || !(xMin < at.X && at.X < xMax) || yMax-yMin < 3*(xMax-xMin) {
		t.Errorf("turned by 90 degrees, the word's box is x %g-%g, y %g-%g from the top; want it rising from y %g, its baseline (x %g) within it", xMin, xMax, yMin, yMax, h-at.Y, at.X)
	}
}

// TestPlacedTextOfSignedPDFKeepsSignatures: on a signed PDF a placed text
// is an annotation too, drawn, and the signature stays valid.
func TestPlacedTextOfSignedPDFKeepsSignatures(t *testing.T) {
	in := signed(t, 1)
	res := do(t, Request{Op: OpWatermark, Files: one("signed.pdf", in), Text: "PAID", At: &Placement{X: 50, Y: 50, FontSize: 30}})
	qpdfClean(t, res.Data)
	signaturesValid(t, res.Data, 1)
	if bytes.Equal(renderPNG(t, in, 1), renderPNG(t, res.Data, 1)) {
		t.Error("the page renders as before: the stamp's appearance is not drawn")
	}
}

// redBox is the box of the red pixels of page 1 rendered at 72 dpi (a
// pixel a point), in points from the page's top left corner.
func redBox(t *testing.T, b []byte) image.Rectangle {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(do(t, Request{Op: OpRender, Files: one("in.pdf", b), Page: 1, DPI: 72}).Data))
	if err != nil {
		t.Fatal(err)
	}
	box := image.Rectangle{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r > 0xc000 && g < 0x6000 && bl < 0x6000 {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return box
}

// solid is a w x h image of red pixels, the left half of them half
// transparent when translucent.
func solid(w, h int, translucent bool) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			a := uint8(0xff)
			if translucent && x < w/2 {
				a = 0x80
			}
			img.SetNRGBA(x, y, color.NRGBA{0xff, 0, 0, a})
		}
	}
	return img
}

func encoded(t *testing.T, img image.Image, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	err := png.Encode(&b, img)
	if format == "jpeg" {
		b.Reset()
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 95})
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestPlacedImageHasTheAskedSize: a placed image covers the box asked,
// from its lower left corner at (x, y), sized by width and height, one of
// them, or neither (a point a pixel), turned around that corner; a PNG's
// alpha is its soft mask, a JPEG is embedded as it is.
func TestPlacedImageHasTheAskedSize(t *testing.T) {
	const h = 842
	png40x20 := encoded(t, solid(40, 20, false), "png")
	for _, c := range []struct {
		name  string
		image []byte
		at    Placement
		angle int
		want  image.Rectangle // in points from the top left corner
	}{
		{"both", png40x20, Placement{X: 50, Y: 60, Width: 100, Height: 300}, 0, image.Rect(50, h-360, 150, h-60)},
		{"width", png40x20, Placement{X: 50, Y: 60, Width: 200}, 0, image.Rect(50, h-160, 250, h-60)},
		{"height", encoded(t, solid(40, 20, false), "jpeg"), Placement{X: 300, Y: 400, Height: 50}, 0, image.Rect(300, h-450, 400, h-400)},
		{"neither", png40x20, Placement{X: 10, Y: 10}, 0, image.Rect(10, h-30, 50, h-10)},
		{"turned", png40x20, Placement{X: 300, Y: 100, Width: 200}, 90, image.Rect(200, h-300, 300, h-100)},
	} {
		res := do(t, Request{Op: OpWatermark, Files: []File{{"in.pdf", pdftest.OnePage("Body")}, {"logo", c.image}}, Angle: c.angle, Opacity: 1, Stamp: true, At: &c.at})
		qpdfClean(t, res.Data)
		got := redBox(t, res.Data)
		if d := 2; absInt(got.Min.X-c.want.Min.X) > d || absInt(got.Min.Y-c.want.Min.Y) > d || absInt(got.Max.X-c.want.Max.X) > d || absInt(got.Max.Y-c.want.Max.Y) > d {
			t.Errorf("%s: the image covers %v, want %v", c.name, got, c.want)
		}
	}
	res := do(t, Request{Op: OpWatermark, Files: []File{{"in.pdf", pdftest.OnePage("Body")}, {"logo.png", encoded(t, solid(40, 20, true), "png")}}, At: &Placement{X: 50, Y: 60, Width: 200}})
	if qdf := uncompressed(t, res.Data); !strings.Contains(qdf, "200.0000 0.0000 -0.0000 100.0000 50.00 60.00 cm") || !strings.Contains(qdf, "/SMask") {
		t.Error("a translucent PNG is not drawn by the matrix 200 0 0 100 50 60 with a soft mask")
	}
	res = do(t, Request{Op: OpWatermark, Files: []File{{"in.pdf", pdftest.OnePage("Body")}, {"logo.jpg", encoded(t, solid(40, 20, false), "jpeg")}}, At: &Placement{}})
	if qdf := uncompressed(t, res.Data); !strings.Contains(qdf, "/DCTDecode") {
		t.Error("a JPEG is not embedded as DCTDecode")
	}
}

func absInt(v int) int { return max(v, -v) }

// pngHeader is the start of a PNG of w x h pixels: as far as its size,
// which is all that image.DecodeConfig reads.
func pngHeader(w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte("IHDR"), w), h)
	ihdr = append(ihdr, 8, 6, 0, 0, 0) // 8-bit RGBA
	b := binary.BigEndian.AppendUint32([]byte("\x89PNG\r\n\x1a\n"), 13)
	return binary.BigEndian.AppendUint32(append(b, ihdr...), crc32.ChecksumIEEE(ihdr))
}

// TestPlacedImageRefusals: an image over the pixels allowed, one that is
// not a PNG or JPEG, and a damaged one are 422s naming the file; a signed
// PDF is refused unless forced, as an image watermark is.
func TestPlacedImageRefusals(t *testing.T) {
	at := &Placement{X: 10, Y: 10}
	whole := encoded(t, solid(40, 20, false), "png")
	for _, c := range []struct {
		image []byte
		says  string
	}{
		{pngHeader(10_000, 5_001), "at most 50 million"},
		{[]byte("GIF89a not supported"), "is not a PNG or JPEG"},
		{whole[:len(whole)-30], "is damaged"},
	} {
		got, err := code(t, Request{Op: OpWatermark, Files: []File{{"in.pdf", pdftest.OnePage("x")}, {"dir/logo.png", c.image}}, At: at})
		if got != quire.CodeUnprocessable || !strings.Contains(err.Error(), `"logo.png"`) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q: %q %v, want %s naming logo.png and saying %q", c.image[:8], got, err, quire.CodeUnprocessable, c.says)
		}
	}
	req := Request{Op: OpWatermark, Files: []File{{"signed.pdf", signed(t, 1)}, {"logo.png", whole}}, At: at}
	if got, err := code(t, req); got != quire.CodeUnprocessable || !strings.Contains(err.Error(), "force=true") {
		t.Errorf("a placed image on a signed PDF: %q %v, want %s asking for force=true", got, err, quire.CodeUnprocessable)
	}
	req.Force = true
	qpdfClean(t, do(t, req).Data)
}
