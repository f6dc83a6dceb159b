package pdftools

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/certpage"
	"github.com/quire-dev/quire/internal/pdf"
)

// watermark puts text, or an image, on the chosen pages. A signed PDF
// gets a Watermark annotation over each page, in an incremental update
// that keeps its signatures valid. An unsigned one gets the text drawn
// into each page's content, under it (over it with stamp=true), by
// quire's model, then rewritten by pdfcpu, so that the unmarked pages do
// not survive as an earlier revision; an image watermark is pdfcpu's.
func (s *Service) watermark(ctx context.Context, in *input, req Request) (Result, error) {
	switch {
	case req.Text == "" && in.signed && !req.Force:
		return Result{}, quire.Errorf(quire.CodeUnprocessable,
			"%s is signed: an image watermark rewrites its pages, which would break its signatures; a text watermark is added as an annotation that keeps them. Send force=true to rewrite anyway.", display(File{Name: in.name}))
	case req.Text == "":
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
	text, err := s.shapedText(req.Text)
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
		xo := watermarkXObject(text, opacity(req), req.Angle, w, h)
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
	return r.Line(text, 1, 0.5)
}

// watermarkXObject is a form of the page's size showing the shaped text,
// centred, turned by angle degrees.
func watermarkXObject(text certpage.Line, opacity float64, angle int, w, h float64) *pdf.Stream {
	size := watermarkSize(w, h)
	width := text.Width * size
	rad := float64(angle) * math.Pi / 180
	c, sn := math.Cos(rad), math.Sin(rad)
	// The text's centre goes to the page's centre: start at minus half its
	// width and height along the turned axes.
	tx := w/2 - c*width/2 + sn*size/3
	ty := h/2 - sn*width/2 - c*size/3
	content := fmt.Appendf(nil, "q /GS gs %.4f %.4f %.4f %.4f %.2f %.2f cm\n", c*size, sn*size, -sn*size, c*size, tx, ty)
	content = append(append(content, text.Content...), "Q"...)
	return &pdf.Stream{Dict: pdf.Dict{"Type": pdf.Name("XObject"), "Subtype": pdf.Name("Form"),
		"BBox": pdf.Array{pdf.Int(0), pdf.Int(0), pdf.Real(w), pdf.Real(h)},
		"Resources": pdf.Dict{
			"Font":      text.Fonts,
			"ExtGState": pdf.Dict{"GS": pdf.Dict{"Type": pdf.Name("ExtGState"), "ca": pdf.Real(opacity), "CA": pdf.Real(opacity)}},
		}}, Data: content}
}

// watermarkAnnotation is a Watermark annotation over the page's visible
// box whose appearance is xo.
func watermarkAnnotation(text string, xo *pdf.Stream, x0, y0, w, h float64) pdf.Dict {
	return pdf.Dict{"Type": pdf.Name("Annot"), "Subtype": pdf.Name("Watermark"), "F": pdf.Int(4 | 128), // Print, Locked
		"Rect":     pdf.Array{pdf.Real(x0), pdf.Real(y0), pdf.Real(x0 + w), pdf.Real(y0 + h)},
		"Contents": pdf.TextString(text), "AP": pdf.Dict{"N": xo}}
}
