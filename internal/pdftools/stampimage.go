package pdftools

import (
	"bytes"
	"compress/zlib"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/memory"
	"github.com/quire-dev/quire/internal/pdf"
)

// maxImagePixels bounds a placed image: decoded (up to 8 bytes a pixel,
// 16-bit RGBA), with its colour and alpha planes and their compression,
// a pixel costs at most perImagePixel bytes.
const (
	maxImagePixels = 50_000_000
	perImagePixel  = 16
)

// imageXObject is the PNG or JPEG image f as an Image XObject: a JPEG of
// gray or YCbCr pixels as it is (DCTDecode), any other image as 8-bit
// RGB, compressed, with its alpha as a soft mask when it has one. An
// image that is neither, damaged, or over maxImagePixels is a 422 naming
// the file.
func imageXObject(ctx context.Context, f File) (*pdf.Stream, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(f.Data))
	if err != nil || (format != "png" && format != "jpeg") || cfg.Width < 1 || cfg.Height < 1 {
		return nil, quire.Errorf(quire.CodeUnprocessable, "The image %q is not a PNG or JPEG image.", baseName(f.Name))
	}
	pixels := int64(cfg.Width) * int64(cfg.Height)
	if pixels > maxImagePixels {
		return nil, quire.Errorf(quire.CodeUnprocessable, "The image %q has %dx%d pixels: a stamp may have at most %d million.",
			baseName(f.Name), cfg.Width, cfg.Height, maxImagePixels/1_000_000)
	}
	if err := memory.Add(ctx, pixels*perImagePixel); err != nil {
		return nil, err
	}
	var img image.Image
	if format == "png" {
		img, err = png.Decode(bytes.NewReader(f.Data))
	} else {
		img, err = jpeg.Decode(bytes.NewReader(f.Data))
	}
	if err != nil {
		return nil, quire.Errorf(quire.CodeUnprocessable, "The image %q is damaged: it cannot be decoded as a %s image.", baseName(f.Name), format)
	}
	switch {
	case format == "jpeg" && cfg.ColorModel == color.YCbCrModel:
		return imageStream(cfg, "DeviceRGB", "DCTDecode", f.Data), nil
	case format == "jpeg" && cfg.ColorModel == color.GrayModel:
		return imageStream(cfg, "DeviceGray", "DCTDecode", f.Data), nil
	}
	return flateImage(ctx, img) // CMYK JPEGs too: their inversion varies by writer
}

// flateImage is img as 8-bit RGB, compressed, with a soft mask of its
// alpha unless every pixel is opaque.
func flateImage(ctx context.Context, img image.Image) (*pdf.Stream, error) {
	b := img.Bounds()
	rgb := make([]byte, 0, 3*b.Dx()*b.Dy())
	alpha := make([]byte, 0, b.Dx()*b.Dy())
	opaque := true
	for y := b.Min.Y; y < b.Max.Y; y++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			rgb = append(rgb, c.R, c.G, c.B)
			alpha = append(alpha, c.A)
			opaque = opaque && c.A == 0xff
		}
	}
	cfg := image.Config{Width: b.Dx(), Height: b.Dy()}
	st := imageStream(cfg, "DeviceRGB", "FlateDecode", deflated(rgb))
	if !opaque {
		st.Dict["SMask"] = imageStream(cfg, "DeviceGray", "FlateDecode", deflated(alpha))
	}
	return st, nil
}

// imageStream is an Image XObject of 8-bit pixels in space, encoded by
// filter.
func imageStream(cfg image.Config, space pdf.Name, filter pdf.Name, data []byte) *pdf.Stream {
	return &pdf.Stream{Dict: pdf.Dict{"Type": pdf.Name("XObject"), "Subtype": pdf.Name("Image"),
		"Width": pdf.Int(cfg.Width), "Height": pdf.Int(cfg.Height), "ColorSpace": space, "BitsPerComponent": pdf.Int(8),
		"Filter": filter}, Data: data}
}

// deflated is b compressed for FlateDecode, at zlib's fastest level: an
// image of many megapixels would otherwise take seconds.
func deflated(b []byte) []byte {
	var out bytes.Buffer
	w, _ := zlib.NewWriterLevel(&out, zlib.BestSpeed) // a valid level: no error
	w.Write(b)                                        // a bytes.Buffer takes every write
	w.Close()
	return out.Bytes()
}

// imageSize is the size in points the image is drawn at: at's width and
// height; one of them and the other in the image's proportions; or,
// neither given, a point per pixel.
func imageSize(img *pdf.Stream, at Placement) (w, h float64) {
	pw, ph := number(img.Dict["Width"]), number(img.Dict["Height"])
	switch {
	case at.Width > 0 && at.Height > 0:
		return at.Width, at.Height
	case at.Width > 0:
		return at.Width, at.Width * ph / pw
	case at.Height > 0:
		return at.Height * pw / ph, at.Height
	}
	return pw, ph
}
