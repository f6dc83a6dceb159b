package annotate

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	_ "image/jpeg" // decodes signature images and the sizes of JPEG images
	_ "image/png"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/ooxml"
)

// emuPerPixel converts pixels at 96 dpi to English Metric Units.
const emuPerPixel = 9525

// Default signature box: 990000 x 495000 EMU, the size the editor
// library's older field format gave signatures.
const (
	signatureWidthEMU  = 990000
	signatureHeightEMU = 495000
)

// picture is an image to place: its bytes and format, its size in pixels.
type picture struct {
	data          []byte
	ext           string // "png" or "jpeg"
	width, height int
}

// loadPicture obtains the image a value names (data: URI or URL) and checks it.
func (f *filling) loadPicture(value, at string) (picture, error) {
	var data []byte
	if strings.HasPrefix(strings.ToLower(value), "data:") {
		var err error
		if data, err = decodeDataURI(value, f.engine.limits.MaxImageBytes); err != nil {
			return picture{}, quire.Invalid("The annotate request is not valid.", quire.Detail{Field: at + ".value", Issue: err.Error()})
		}
	} else {
		var err error
		if data, err = f.engine.fetch(f.ctx, value); err != nil {
			return picture{}, fetch.ToAPIError(err, at+".value")
		}
		if int64(len(data)) > f.engine.limits.MaxImageBytes {
			return picture{}, quire.Invalid("The annotate request is not valid.", quire.Detail{Field: at + ".value",
				Issue: fmt.Sprintf("the image is larger than the limit of %d bytes", f.engine.limits.MaxImageBytes)})
		}
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	bad := func(issue string) error {
		return quire.Invalid("The annotate request is not valid.", quire.Detail{Field: at + ".value", Issue: issue})
	}
	switch {
	case err != nil || format != "png" && format != "jpeg":
		return picture{}, bad("is not a PNG or JPEG image")
	case cfg.Width <= 0 || cfg.Height <= 0:
		return picture{}, bad("is an image without pixels")
	case int64(cfg.Width)*int64(cfg.Height) > f.engine.limits.MaxImagePixels:
		return picture{}, bad(fmt.Sprintf("is an image of %dx%d pixels, more than the %d pixels allowed", cfg.Width, cfg.Height, f.engine.limits.MaxImagePixels))
	}
	return picture{data: data, ext: format, width: cfg.Width, height: cfg.Height}, nil
}

// decodeDataURI returns the bytes of a base64 data: URI of at most max bytes.
func decodeDataURI(v string, max int64) ([]byte, error) {
	meta, payload, ok := strings.Cut(v[len("data:"):], ",")
	if !ok || !strings.HasSuffix(strings.ToLower(meta), ";base64") {
		return nil, fmt.Errorf("must be a base64 data: URI such as data:image/png;base64,...")
	}
	payload = strings.Join(strings.Fields(payload), "")
	if int64(base64.StdEncoding.DecodedLen(len(payload))) > max+2 {
		return nil, fmt.Errorf("the image is larger than the limit of %d bytes", max)
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		data, err = base64.RawStdEncoding.DecodeString(payload)
	}
	if err != nil || len(data) == 0 {
		return nil, fmt.Errorf("is not valid base64")
	}
	return data, nil
}

// imageRun makes the run of an image or signature field: the picture (or
// the stamp composed from it) as a new media part of the story.
func (f *filling) imageRun(c *sdt, field *Field, at string) (string, error) {
	pic, err := f.loadPicture(field.Value, at)
	if err != nil {
		return "", err
	}
	var cx, cy int64
	if field.Type == TypeSignature {
		cx, cy = signatureWidthEMU, signatureHeightEMU
		if field.Options.Width > 0 || field.Options.Height > 0 {
			cx, cy = boxEMU(field.Options, pic)
		}
		if pic, err = f.engine.stamp(pic, field.Options, cx, cy, f.edits.Uncompressed); err != nil {
			return "", err
		}
	} else if field.Options.Width > 0 || field.Options.Height > 0 {
		cx, cy = boxEMU(field.Options, pic)
	} else {
		cx, cy = naturalEMU(pic, f.textWidthEMU())
	}
	rel, err := f.addMedia(c.story, pic)
	if err != nil {
		return "", err
	}
	f.docPrID++
	return c.drawing(rel, f.docPrID, cx, cy), nil
}

// boxEMU is the size of the requested box; a missing side keeps the
// picture's proportions.
func boxEMU(o Options, pic picture) (cx, cy int64) {
	w, h := o.Width, o.Height
	switch {
	case w == 0:
		w = h * float64(pic.width) / float64(pic.height)
	case h == 0:
		h = w * float64(pic.height) / float64(pic.width)
	}
	return emu(w), emu(h)
}

// emu converts pixels to EMU, at least 1.
func emu(px float64) int64 { return max(1, int64(math.Round(px*emuPerPixel))) }

// naturalEMU is the picture's size at 96 dpi, scaled down to fit the text width.
func naturalEMU(pic picture, textWidth int64) (cx, cy int64) {
	cx, cy = int64(pic.width)*emuPerPixel, int64(pic.height)*emuPerPixel
	if textWidth > 0 && cx > textWidth {
		cy = max(1, int64(math.Round(float64(cy)*float64(textWidth)/float64(cx))))
		cx = textWidth
	}
	return cx, cy
}

// textWidthEMU is the width between the margins of the document's last
// section, 0 when unknown.
func (f *filling) textWidthEMU() int64 {
	body := f.stories[0].doc.Root.Child(nsW, "body")
	if body == nil {
		return 0
	}
	sect := body.Child(nsW, "sectPr")
	if sect == nil {
		return 0
	}
	twips := func(e *ooxml.Element, attr string) int64 {
		if e == nil {
			return 0
		}
		v, _ := e.AttrValue(nsW, attr)
		n, _ := strconv.ParseFloat(v, 64)
		return int64(n)
	}
	mar := sect.Child(nsW, "pgMar")
	w := twips(sect.Child(nsW, "pgSz"), "w") - twips(mar, "left") - twips(mar, "right")
	return max(0, w*635) // 635 EMU per twip
}

// addMedia adds the picture as a new media part with a relationship from
// the story, and returns the relationship id.
func (f *filling) addMedia(s *story, pic picture) (string, error) {
	var name string
	for {
		f.media++
		name = fmt.Sprintf("word/media/quire-image%d.%s", f.media, pic.ext)
		if _, added := f.edits.Get(name); !f.pkg.Has(name) && !added {
			break
		}
	}
	f.edits.Set(f.pkg, name, pic.data)
	id, err := f.relID(s)
	if err != nil {
		return "", err
	}
	target := "/" + name
	if strings.HasPrefix(s.name, "word/") && !strings.Contains(s.name[len("word/"):], "/") {
		target = strings.TrimPrefix(name, "word/")
	}
	s.rels = append(s.rels, `<Relationship Id="`+id+`" Type="`+relImage+`" Target="`+target+`"/>`)
	if !slices.Contains(f.types, pic.ext) {
		f.types = append(f.types, pic.ext)
	}
	return id, nil
}

// drawing is the run of an inline picture. The DrawingML namespaces are
// declared on the elements, so the story's root needs no change.
func (c *sdt) drawing(rel string, id int, cx, cy int64) string {
	ext := fmt.Sprintf(`cx="%d" cy="%d"`, cx, cy)
	name := fmt.Sprintf(`id="%d" name="Picture %d"`, id, id)
	return "<" + c.w("r") + "><" + c.w("drawing") + ">" +
		`<wp:inline distT="0" distB="0" distL="0" distR="0" xmlns:wp="` + nsWP + `" xmlns:a="` + nsA +
		`" xmlns:pic="` + nsPic + `" xmlns:r="` + nsR + `">` +
		`<wp:extent ` + ext + `/><wp:effectExtent l="0" t="0" r="0" b="0"/><wp:docPr ` + name + `/>` +
		`<wp:cNvGraphicFramePr><a:graphicFrameLocks noChangeAspect="1"/></wp:cNvGraphicFramePr>` +
		`<a:graphic><a:graphicData uri="` + nsPic + `"><pic:pic>` +
		`<pic:nvPicPr><pic:cNvPr ` + name + `/><pic:cNvPicPr><a:picLocks noChangeAspect="1" noChangeArrowheads="1"/></pic:cNvPicPr></pic:nvPicPr>` +
		`<pic:blipFill><a:blip r:embed="` + rel + `"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>` +
		`<pic:spPr bwMode="auto"><a:xfrm><a:off x="0" y="0"/><a:ext ` + ext + `/></a:xfrm>` +
		`<a:prstGeom prst="rect"><a:avLst/></a:prstGeom><a:noFill/></pic:spPr>` +
		`</pic:pic></a:graphicData></a:graphic></wp:inline>` +
		"</" + c.w("drawing") + "></" + c.w("r") + ">"
}
