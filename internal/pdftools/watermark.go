package pdftools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/certpage"
	"github.com/quire-dev/quire/internal/pdf"
)

// watermark puts text, or an image, on the chosen pages. A signed PDF
// gets a Watermark annotation over each page, in an incremental update
// that keeps its signatures valid. An unsigned one gets the mark drawn
// into each page's content, under it (over it with stamp=true), by
// quire's model, then rewritten by pdfcpu, so that the unmarked pages do
// not survive as an earlier revision; an image watermark that is not
// placed (At) is pdfcpu's.
func (s *Service) watermark(ctx context.Context, in *input, req Request) (Result, error) {
	image := req.Text == ""
	switch {
	case image && in.signed && !req.Force:
		return Result{}, quire.Errorf(quire.CodeUnprocessable,
			"%s is signed: an image watermark rewrites its pages, which would break its signatures; a text watermark is added as an annotation that keeps them. Send force=true to rewrite anyway.", display(File{Name: in.name}))
	case image && req.At == nil:
		return s.rewrite(ctx, taskWatermark, in, req, req.Files[1].Data)
	}
	pages, err := in.doc.Pages()
	if err != nil {
		return Result{}, s.documentError(File{Name: in.name}, err)
	}
	chosen, err := chosenPages(req.Pages, len(pages))
	if err != nil {
		return Result{}, err
	}
	annotate := in.signed && !req.Force
	form, err := s.markForm(ctx, req)
	if err != nil {
		return Result{}, err
	}
	for _, n := range chosen {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		p := pages[n-1]
		w, h, err := pageSize(in.doc, n)
		if err != nil {
			return Result{}, s.documentError(File{Name: in.name}, err)
		}
		x0, y0 := origin(in.doc, p)
		xo := form(w, h)
		page := p.Dict.Clone()
		if annotate {
			err = in.doc.AppendRef(page, "Annots", in.doc.Add(watermarkAnnotation(req.Text, xo, x0, y0, w, h)))
		} else {
			draw := fmt.Sprintf("q 1 0 0 1 %.4f %.4f cm /QuireWatermark Do Q\n", x0, y0)
			err = addDrawing(in.doc, p, page, pdf.Dict{"QuireWatermark": xo}, []byte(draw), !req.Stamp)
		}
		if err != nil {
			return Result{}, s.documentError(File{Name: in.name}, fmt.Errorf("%w: %v", pdf.ErrUnreadable, err))
		}
		in.doc.Replace(p.Ref, page)
	}
	if annotate {
		return s.saved(in)
	}
	return s.rewritten(ctx, in, req)
}

// markForm returns what draws the request's mark on a page of w x h
// points: a form of the page's size, whose origin is the lower left
// corner of the page's visible box.
func (s *Service) markForm(ctx context.Context, req Request) (func(w, h float64) *pdf.Stream, error) {
	if req.Text == "" {
		img, err := imageXObject(ctx, req.Files[1])
		if err != nil {
			return nil, err
		}
		return func(w, h float64) *pdf.Stream { return placedImageXObject(img, opacity(req), req.Angle, *req.At, w, h) }, nil
	}
	text, err := s.shapedText(req.Text)
	if err != nil {
		return nil, err
	}
	if req.At == nil {
		return func(w, h float64) *pdf.Stream { return watermarkXObject(text, opacity(req), req.Angle, w, h) }, nil
	}
	if text, err = coloured(text, req.At.Color); err != nil {
		return nil, err
	}
	return func(w, h float64) *pdf.Stream { return placedTextXObject(text, opacity(req), req.Angle, *req.At, w, h) }, nil
}

// rewritten saves the document's changes and has pdfcpu write the whole
// file anew, so that the state before them does not survive as an
// earlier revision.
func (s *Service) rewritten(ctx context.Context, in *input, req Request) (Result, error) {
	updated, err := in.doc.Save()
	if err != nil {
		return Result{}, s.documentError(File{Name: in.name}, fmt.Errorf("%w: %v", pdf.ErrUnreadable, err))
	}
	a, err := s.inWorker(ctx, task{Kind: taskRewrite, Inputs: [][]byte{updated}, Req: req}, []string{in.name})
	if err != nil {
		return Result{}, err
	}
	return pdfResult(a.Data, 1, in.pages), nil
}

// chosenPages are the pages of a selection ("" is every page).
func chosenPages(sel string, n int) ([]int, error) {
	if sel == "" {
		sel = "1-"
	}
	spans, err := ranges("pages", sel, n)
	if err != nil {
		return nil, err
	}
	var out []int
	seen := map[int]bool{}
	for _, sp := range spans {
		for p := sp[0]; p <= sp[1]; p++ {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// origin is the lower left corner of the page's visible box.
func origin(d *pdf.Document, p pdf.PageObject) (float64, float64) {
	box := attr(p, "CropBox")
	if box == nil {
		box = attr(p, "MediaBox")
	}
	arr, err := d.Array(box)
	if err != nil || len(arr) != 4 {
		return 0, 0
	}
	x0, _ := d.Resolve(arr[0])
	y0, _ := d.Resolve(arr[1])
	return number(x0), number(y0)
}

// watermarkSize is the text's size on a page of w x h points (a twelfth
// of its shorter side) for a text shaped at size 1.
func watermarkSize(w, h float64) float64 { return math.Min(w, h) / 12 }

// shapedText is the watermark's text shaped at size 1 with the fonts of
// the certificate page (every script it supports, right-to-left ones and
// emoji included), or a 400 naming the characters none of them has.
func (s *Service) shapedText(text string) (certpage.Line, error) {
	r, err := s.opt.Fonts.Renderer()
	if err != nil {
		s.opt.Logger.Error("the fonts of text watermarks are missing", "err", err)
		return certpage.Line{}, &quire.Error{Code: quire.CodeEngineBusy, Message: "The fonts of text watermarks are not installed on this server.", RetryAfter: time.Minute}
	}
	if missing := r.Missing(text); len(missing) > 0 {
		names := make([]string, len(missing))
		for i, c := range missing {
			names[i] = fmt.Sprintf("%q (U+%04X)", c, c)
		}
		return certpage.Line{}, quire.Invalid("The watermark text cannot be drawn.",
			quire.Detail{Field: "text", Issue: "no font of this server has " + strings.Join(names, ", ")})
	}
	return r.Line(text, 1, watermarkGray)
}

// watermarkGray is the gray level of a watermark's text.
const watermarkGray = 0.5

// watermarkXObject is a form of the page's size showing the shaped text,
// centred, turned by angle degrees.
func watermarkXObject(text certpage.Line, opacity float64, angle int, w, h float64) *pdf.Stream {
	size := watermarkSize(w, h)
	width := text.Width * size
	c, sn := turn(angle)
	// The text's centre goes to the page's centre: start at minus half its
	// width and height along the turned axes.
	tx := w/2 - c*width/2 + sn*size/3
	ty := h/2 - sn*width/2 - c*size/3
	return markXObject(placing(size, size, angle, tx, ty), text.Content, pdf.Dict{"Font": text.Fonts}, opacity, w, h)
}

// placedTextXObject is a form of the page's size showing the shaped text
// at at.FontSize, its baseline starting at (at.X, at.Y) and turned by
// angle degrees around it.
func placedTextXObject(text certpage.Line, opacity float64, angle int, at Placement, w, h float64) *pdf.Stream {
	return markXObject(placing(at.FontSize, at.FontSize, angle, at.X, at.Y), text.Content, pdf.Dict{"Font": text.Fonts}, opacity, w, h)
}

// placedImageXObject is a form of the page's size showing the image, its
// lower left corner at (at.X, at.Y), sized by at (imageSize), turned by
// angle degrees around that corner.
func placedImageXObject(img *pdf.Stream, opacity float64, angle int, at Placement, w, h float64) *pdf.Stream {
	iw, ih := imageSize(img, at)
	return markXObject(placing(iw, ih, angle, at.X, at.Y), []byte("/Im Do\n"), pdf.Dict{"XObject": pdf.Dict{"Im": img}}, opacity, w, h)
}

// placing is the matrix (the operands of cm) that scales the unit square
// to sx by sy, turns it by angle degrees counter-clockwise around its
// origin, and puts the origin at (x, y).
func placing(sx, sy float64, angle int, x, y float64) string {
	c, s := turn(angle)
	return fmt.Sprintf("%.4f %.4f %.4f %.4f %.2f %.2f", c*sx, s*sx, -s*sy, c*sy, x, y)
}

// turn is the cosine and sine of angle degrees.
func turn(angle int) (float64, float64) {
	rad := float64(angle) * math.Pi / 180
	return math.Cos(rad), math.Sin(rad)
}

// markXObject is a form of the page's size (w x h) drawing content, with
// the resources res, through the matrix cm, at opacity.
func markXObject(cm string, content []byte, res pdf.Dict, opacity, w, h float64) *pdf.Stream {
	res["ExtGState"] = pdf.Dict{"GS": pdf.Dict{"Type": pdf.Name("ExtGState"), "ca": pdf.Real(opacity), "CA": pdf.Real(opacity)}}
	data := fmt.Appendf(nil, "q /GS gs %s cm\n", cm)
	data = append(append(data, content...), "Q"...)
	return &pdf.Stream{Dict: pdf.Dict{"Type": pdf.Name("XObject"), "Subtype": pdf.Name("Form"),
		"BBox":      pdf.Array{pdf.Int(0), pdf.Int(0), pdf.Real(w), pdf.Real(h)},
		"Resources": res}, Data: data}
}

// coloured is the shaped text filled with color ("#rrggbb", "": black)
// rather than with shapedText's gray: certpage's line opens by setting
// its gray level, which is replaced.
func coloured(text certpage.Line, color string) (certpage.Line, error) {
	rest, ok := bytes.CutPrefix(text.Content, fmt.Appendf(nil, "%g g ", watermarkGray))
	if !ok {
		return text, errors.New("pdftools: the shaped text does not open with its gray level")
	}
	var rgb uint64
	if color != "" {
		rgb, _ = strconv.ParseUint(color[1:], 16, 32) // Validate checked hexColor
	}
	fill := fmt.Appendf(nil, "%.4f %.4f %.4f rg ", float64(rgb>>16)/255, float64(rgb>>8&0xff)/255, float64(rgb&0xff)/255)
	text.Content = append(fill, rest...)
	return text, nil
}

// watermarkAnnotation is a Watermark annotation over the page's visible
// box whose appearance is xo.
func watermarkAnnotation(text string, xo *pdf.Stream, x0, y0, w, h float64) pdf.Dict {
	return pdf.Dict{"Type": pdf.Name("Annot"), "Subtype": pdf.Name("Watermark"), "F": pdf.Int(4 | 128), // Print, Locked
		"Rect":     pdf.Array{pdf.Real(x0), pdf.Real(y0), pdf.Real(x0 + w), pdf.Real(y0 + h)},
		"Contents": pdf.TextString(text), "AP": pdf.Dict{"N": xo}}
}
