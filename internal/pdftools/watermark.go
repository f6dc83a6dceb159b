package pdftools

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/api"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdf"
)

// watermark puts text, or an image, on the chosen pages. A signed PDF
// gets a Watermark annotation over each page, in an incremental update
// that keeps its signatures valid. An unsigned one gets the text drawn
// into each page's content, under it (over it with stamp=true), by
// quire's model, then rewritten by pdfcpu, so that the unmarked pages do
// not survive as an earlier revision; an image watermark is pdfcpu's.
func (s *Service) watermark(in *input, req Request) (Result, error) {
	switch {
	case req.Text == "" && in.signed && !req.Force:
		return Result{}, quire.Errorf(quire.CodeUnprocessable,
			"%s is signed: an image watermark rewrites its pages, which would break its signatures; a text watermark is added as an annotation that keeps them. Send force=true to rewrite anyway.", display(File{Name: in.name}))
	case req.Text == "":
		return s.imageWatermark(in, req)
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
	for _, n := range chosen {
		p := pages[n-1]
		w, h, err := pageSize(in.doc, n)
		if err != nil {
			return Result{}, s.documentError(File{Name: in.name}, err)
		}
		x0, y0 := origin(in.doc, p)
		xo := watermarkXObject(req.Text, opacity(req), req.Angle, w, h)
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
	return s.rewritten(in, req.Op)
}

// rewritten saves the document's changes and has pdfcpu write the whole
// file anew from its catalog, without the earlier revision (and without
// pdfcpu's optimisation of shared resources, which costs more than the
// rest of the operation: the file keeps its own structure).
func (s *Service) rewritten(in *input, op string) (Result, error) {
	updated, err := in.doc.Save()
	if err != nil {
		return Result{}, s.documentError(File{Name: in.name}, fmt.Errorf("%w: %v", pdf.ErrUnreadable, err))
	}
	pc, err := api.ReadAndValidate(bytes.NewReader(updated), config())
	if err != nil {
		return Result{}, s.libraryError(in.name, op, err)
	}
	var out bytes.Buffer
	if err := api.WriteContext(pc, &out); err != nil {
		return Result{}, s.libraryError(in.name, op, err)
	}
	return pdfResult(out.Bytes(), 1, in.pages), nil
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

// watermarkXObject is a form of the page's size showing text in grey
// Helvetica, centred, turned by angle degrees.
func watermarkXObject(text string, opacity float64, angle int, w, h float64) *pdf.Stream {
	size := math.Min(w, h) / 12
	width := 0.55 * size * float64(len([]rune(text))) // Helvetica's mean advance, near enough to centre
	rad := float64(angle) * math.Pi / 180
	c, sn := math.Cos(rad), math.Sin(rad)
	// The text's centre goes to the page's centre: start at minus half its
	// width and height along the turned axes.
	tx := w/2 - c*width/2 + sn*size/3
	ty := h/2 - sn*width/2 - c*size/3
	content := fmt.Sprintf("q /GS gs 0.5 g BT /F 1 Tf %.4f %.4f %.4f %.4f %.2f %.2f Tm %s Tj ET Q",
		c*size, sn*size, -sn*size, c*size, tx, ty, literal(winAnsi(text)))
	return &pdf.Stream{Dict: pdf.Dict{"Type": pdf.Name("XObject"), "Subtype": pdf.Name("Form"),
		"BBox": pdf.Array{pdf.Int(0), pdf.Int(0), pdf.Real(w), pdf.Real(h)},
		"Resources": pdf.Dict{
			"Font":      pdf.Dict{"F": pdf.Dict{"Type": pdf.Name("Font"), "Subtype": pdf.Name("Type1"), "BaseFont": pdf.Name("Helvetica"), "Encoding": pdf.Name("WinAnsiEncoding")}},
			"ExtGState": pdf.Dict{"GS": pdf.Dict{"Type": pdf.Name("ExtGState"), "ca": pdf.Real(opacity), "CA": pdf.Real(opacity)}},
		}}, Data: []byte(content)}
}

// watermarkAnnotation is a Watermark annotation over the page's visible
// box whose appearance is xo.
func watermarkAnnotation(text string, xo *pdf.Stream, x0, y0, w, h float64) pdf.Dict {
	return pdf.Dict{"Type": pdf.Name("Annot"), "Subtype": pdf.Name("Watermark"), "F": pdf.Int(4 | 128), // Print, Locked
		"Rect":     pdf.Array{pdf.Real(x0), pdf.Real(y0), pdf.Real(x0 + w), pdf.Real(y0 + h)},
		"Contents": pdf.TextString(text), "AP": pdf.Dict{"N": xo}}
}

// winAnsi encodes text for a standard font: Latin-1 as it is (WinAnsi
// agrees there), anything else as "?".
func winAnsi(text string) []byte {
	var b []byte
	for _, r := range text {
		if r < 32 || r > 255 || (r >= 127 && r < 160) {
			r = '?'
		}
		b = append(b, byte(r))
	}
	return b
}

// literal is b as a PDF literal string.
func literal(b []byte) string {
	var out strings.Builder
	out.WriteByte('(')
	for _, c := range b {
		if c == '(' || c == ')' || c == '\\' {
			out.WriteByte('\\')
		}
		out.WriteByte(c)
	}
	out.WriteByte(')')
	return out.String()
}
