package pdfsign

import (
	"fmt"
	"strings"

	"github.com/quire-dev/quire/internal/pdf"
)

// A document cannot gain a page once signed without failing the
// signatures it carries (a page added is no permitted change, DocMDP or
// not). So the first signing may reserve room for the signers after it:
// empty signature fields, each a widget in an empty area of a page. A
// later signer signs one of them, drawing its appearance there; signing
// an empty signature field is a change every level of DocMDP but P=1
// permits, and which verifiers (EU DSS, pyHanko, quire) accept.

// Slot is an empty signature field reserved for a later signer.
type Slot struct {
	Name string     // the field's full name; given to Options.Field to sign it
	Page int        // 1-based page of its widget
	Rect [4]float64 // the widget's rectangle in page space
}

// addSlots adds an empty signature field per slot (their names given),
// each drawn by an empty appearance: PDF/A wants one for every widget
// (the page itself frames the area).
func addSlots(d *pdf.Document, pages []pdf.PageObject, slots []Slot) error {
	for _, s := range slots {
		if s.Page < 1 || s.Page > len(pages) || s.Name == "" {
			return fmt.Errorf("pdfsign: slot %q on page %d of %d", s.Name, s.Page, len(pages))
		}
		pg := pages[s.Page-1]
		w, h := s.Rect[2]-s.Rect[0], s.Rect[3]-s.Rect[1]
		widget := d.Add(pdf.Dict{
			"Type": pdf.Name("Annot"), "Subtype": pdf.Name("Widget"), "FT": pdf.Name("Sig"),
			"T": pdf.TextString(s.Name), "P": pg.Ref, "F": pdf.Int(4), // Print
			"Rect": pdf.Array{pdf.Real(s.Rect[0]), pdf.Real(s.Rect[1]), pdf.Real(s.Rect[2]), pdf.Real(s.Rect[3])},
			"AP":   pdf.Dict{"N": EmptyAppearance(w, h)},
		})
		pd, err := d.Dict(pg.Ref)
		if err != nil {
			return fmt.Errorf("%w: page %d: %v", pdf.ErrUnreadable, s.Page, err)
		}
		pd = pd.Clone()
		if err := d.AppendRef(pd, "Annots", widget); err != nil {
			return fmt.Errorf("%w: page %d: %v", pdf.ErrUnreadable, s.Page, err)
		}
		d.Replace(pg.Ref, pd)
		if err := addToForm(d, widget); err != nil {
			return err
		}
	}
	return nil
}

// EmptyAppearance is a form XObject of w by h points that draws nothing:
// the appearance of an invisible or reserved widget.
func EmptyAppearance(w, h float64) *pdf.Stream {
	return &pdf.Stream{Dict: pdf.Dict{"Type": pdf.Name("XObject"), "Subtype": pdf.Name("Form"),
		"BBox": pdf.Array{pdf.Real(0), pdf.Real(0), pdf.Real(max(w, 0)), pdf.Real(max(h, 0))}, "Resources": pdf.Dict{}}}
}

// Slots lists the empty signature fields of doc whose names start with
// prefix, in the order of the form: top-level fields that are their own
// widget, as addSlots makes them.
func Slots(doc *pdf.Document, prefix string) ([]Slot, error) {
	_, cat, err := doc.Catalog()
	if err != nil {
		return nil, err
	}
	form, err := doc.Dict(cat["AcroForm"])
	if err != nil {
		return nil, nil
	}
	fields, _ := doc.Array(form["Fields"])
	pages, err := doc.Pages()
	if err != nil {
		return nil, err
	}
	pageOf := map[int]int{}
	for i, p := range pages {
		pageOf[p.Ref.Num] = i + 1
	}
	var out []Slot
	for _, f := range fields {
		fd, err := doc.Dict(f)
		if err != nil || fd["FT"] != pdf.Name("Sig") || fd["V"] != nil || fd["Kids"] != nil {
			continue
		}
		t, _ := fd["T"].(pdf.String)
		name := pdf.DecodeText(t)
		p, _ := fd["P"].(pdf.Ref)
		rect, ok := doc.BoxOf(fd["Rect"])
		if !strings.HasPrefix(name, prefix) || pageOf[p.Num] == 0 || !ok || rect.Empty() {
			continue
		}
		out = append(out, Slot{Name: name, Page: pageOf[p.Num], Rect: rect})
	}
	return out, nil
}

// signSlot makes the empty signature field named name hold value, drawn
// by appearance, and returns value's reference.
func signSlot(d *pdf.Document, name string, value pdf.Dict, appearance *pdf.Stream) (pdf.Ref, error) {
	_, cat, err := d.Catalog()
	if err != nil {
		return pdf.Ref{}, err
	}
	form, _ := d.Dict(cat["AcroForm"])
	fields, _ := d.Array(form["Fields"])
	for _, f := range fields {
		r, isRef := f.(pdf.Ref)
		fd, err := d.Dict(f)
		t, _ := fd["T"].(pdf.String)
		if !isRef || err != nil || fd["FT"] != pdf.Name("Sig") || pdf.DecodeText(t) != name {
			continue
		}
		if fd["V"] != nil {
			return pdf.Ref{}, fmt.Errorf("pdfsign: signature field %q is signed already", name)
		}
		sig := d.Add(value)
		fd = fd.Clone()
		fd["V"] = sig
		if appearance != nil {
			fd["AP"] = pdf.Dict{"N": appearance}
		}
		d.Replace(r, fd)
		return sig, nil
	}
	return pdf.Ref{}, fmt.Errorf("pdfsign: no empty signature field %q", name)
}
