package pdftools

import (
	"bytes"
	"context"
	"fmt"
	"math"

	"github.com/quire-dev/quire/internal/pdf"
)

// flatten draws the normal appearance of every visible annotation (form
// fields' widgets included) into its page's content and removes those
// annotations and the form, with quire's model; annotations without an
// appearance (links, pop-ups) stay. With FormOnly it draws and removes
// the fields' widgets alone, as Gotenberg's flatten-form does: comments,
// stamps and links stay annotations. Either way every widget goes, drawn
// or not, with the form (its fields, NeedAppearances, XFA), a signature
// field's as any other: open refuses a signed PDF unless forced, and a
// forced one keeps the look of its signature's widget as page content
// but holds no signature any more. pdfcpu then rewrites the file, so
// that the former fields and annotations are not left in an earlier
// revision of it.
func (s *Service) flatten(ctx context.Context, in *input, req Request) (Result, error) {
	pages, err := in.doc.Pages()
	if err != nil {
		return Result{}, s.documentError(File{Name: in.name}, err)
	}
	for _, p := range pages {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		if err := flattenPage(in.doc, p, req.FormOnly); err != nil {
			return Result{}, s.documentError(File{Name: in.name}, fmt.Errorf("%w: %v", pdf.ErrUnreadable, err))
		}
	}
	catRef, cat, err := in.doc.Catalog()
	if err != nil {
		return Result{}, s.documentError(File{Name: in.name}, err)
	}
	cat = cat.Clone()
	delete(cat, "AcroForm")
	in.doc.Replace(catRef, cat)
	return s.rewritten(ctx, in, req)
}

// Annotation flags (ISO 32000-1, 12.5.3) of annotations not shown.
const (
	flagHidden = 2
	flagNoView = 32
)

// flattenPage draws page p's annotations that have an appearance, or
// with formOnly its widgets alone, keeping the other annotations as
// they are.
func flattenPage(d *pdf.Document, p pdf.PageObject, formOnly bool) error {
	annots, err := d.Array(p.Dict["Annots"])
	if err != nil || len(annots) == 0 {
		return nil // no annotations
	}
	var draw bytes.Buffer
	xobjects := pdf.Dict{}
	var kept pdf.Array
	for _, a := range annots {
		ad, err := d.Dict(a)
		if err != nil {
			continue // not an annotation: dropped
		}
		if formOnly && !isWidget(ad) {
			kept = append(kept, a)
			continue
		}
		ap, ok := appearance(d, ad)
		if !ok {
			if !isWidget(ad) {
				kept = append(kept, a)
			}
			continue
		}
		if pdf.IntOr(ad["F"], 0)&(flagHidden|flagNoView) != 0 {
			continue
		}
		m, ok := placement(d, ad, ap)
		if !ok {
			continue
		}
		name := pdf.Name(fmt.Sprintf("QuireFlat%d", len(xobjects)))
		xobjects[name] = ap.ref
		fmt.Fprintf(&draw, "q %s cm /%s Do Q\n", m, name)
	}
	page := p.Dict.Clone()
	if len(kept) > 0 {
		page["Annots"] = kept
	} else {
		delete(page, "Annots")
	}
	if draw.Len() > 0 {
		if err := addDrawing(d, p, page, xobjects, draw.Bytes(), false); err != nil {
			return err
		}
	}
	d.Replace(p.Ref, page)
	return nil
}

// isWidget reports whether the annotation is a form field's widget.
func isWidget(annot pdf.Dict) bool { return annot["Subtype"] == pdf.Name("Widget") }

// appearanceStream is an annotation's normal appearance.
type appearanceStream struct {
	ref pdf.Ref
	st  *pdf.Stream
}

// appearance is the annotation's normal appearance (/AP /N), of its
// state /AS when it has several.
func appearance(d *pdf.Document, annot pdf.Dict) (appearanceStream, bool) {
	ap, err := d.Dict(annot["AP"])
	if err != nil {
		return appearanceStream{}, false
	}
	n := ap["N"]
	if o, err := d.Resolve(n); err == nil {
		if states, ok := o.(pdf.Dict); ok {
			as, _ := annot["AS"].(pdf.Name)
			n = states[as]
		}
	}
	ref, ok := n.(pdf.Ref)
	if !ok {
		return appearanceStream{}, false
	}
	o, err := d.Object(ref.Num)
	st, isStream := o.(*pdf.Stream)
	if err != nil || !isStream {
		return appearanceStream{}, false
	}
	return appearanceStream{ref, st}, true
}

// placement is the matrix that puts the appearance's box, transformed by
// its /Matrix, onto the annotation's /Rect (ISO 32000-1, 12.5.5).
func placement(d *pdf.Document, annot pdf.Dict, ap appearanceStream) (string, bool) {
	rect, ok1 := numbers(d, annot["Rect"], 4)
	bbox, ok2 := numbers(d, ap.st.Dict["BBox"], 4)
	if !ok1 || !ok2 {
		return "", false
	}
	mat, ok := numbers(d, ap.st.Dict["Matrix"], 6)
	if !ok {
		mat = []float64{1, 0, 0, 1, 0, 0}
	}
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, c := range [][2]float64{{bbox[0], bbox[1]}, {bbox[2], bbox[1]}, {bbox[0], bbox[3]}, {bbox[2], bbox[3]}} {
		x := mat[0]*c[0] + mat[2]*c[1] + mat[4]
		y := mat[1]*c[0] + mat[3]*c[1] + mat[5]
		x0, y0, x1, y1 = math.Min(x0, x), math.Min(y0, y), math.Max(x1, x), math.Max(y1, y)
	}
	rx0, ry0 := math.Min(rect[0], rect[2]), math.Min(rect[1], rect[3])
	rx1, ry1 := math.Max(rect[0], rect[2]), math.Max(rect[1], rect[3])
	if x1-x0 < 1e-6 || y1-y0 < 1e-6 {
		return "", false
	}
	sx, sy := (rx1-rx0)/(x1-x0), (ry1-ry0)/(y1-y0)
	return fmt.Sprintf("%.6f 0 0 %.6f %.4f %.4f", sx, sy, rx0-x0*sx, ry0-y0*sy), true
}

// numbers reads an array of n numbers.
func numbers(d *pdf.Document, o pdf.Object, n int) ([]float64, bool) {
	arr, err := d.Array(o)
	if err != nil || len(arr) != n {
		return nil, false
	}
	out := make([]float64, n)
	for i, e := range arr {
		e, _ = d.Resolve(e)
		switch v := e.(type) {
		case pdf.Int:
			out[i] = float64(v)
		case pdf.Real:
			out[i] = float64(v)
		default:
			return nil, false
		}
	}
	return out, true
}

// addDrawing adds draw to the page's content, after the former content
// (wrapped in q/Q so that its graphics state does not reach the
// drawing), or before it when under, and adds the XObjects it draws to
// the page's resources.
func addDrawing(d *pdf.Document, p pdf.PageObject, page, xobjects pdf.Dict, draw []byte, under bool) error {
	res, err := d.Dict(attr(p, "Resources"))
	if err != nil {
		res = pdf.Dict{}
	}
	res = res.Clone()
	xo, err := d.Dict(res["XObject"])
	if err != nil {
		xo = pdf.Dict{}
	}
	xo = xo.Clone()
	for k, v := range xobjects {
		xo[k] = v
	}
	res["XObject"] = xo
	page["Resources"] = res
	var contents pdf.Array
	switch c := p.Dict["Contents"].(type) {
	case pdf.Ref:
		o, err := d.Resolve(c)
		if err != nil {
			return err
		}
		if arr, ok := o.(pdf.Array); ok {
			contents = append(contents, arr...)
		} else {
			contents = pdf.Array{c}
		}
	case pdf.Array:
		contents = append(contents, c...)
	}
	if under {
		page["Contents"] = append(pdf.Array{&pdf.Stream{Dict: pdf.Dict{}, Data: draw}}, contents...)
		return nil
	}
	open := &pdf.Stream{Dict: pdf.Dict{}, Data: []byte("q\n")}
	closing := &pdf.Stream{Dict: pdf.Dict{}, Data: append([]byte("\nQ\n"), draw...)}
	page["Contents"] = append(append(pdf.Array{open}, contents...), closing)
	return nil
}
