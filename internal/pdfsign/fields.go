package pdfsign

import (
	"errors"
	"fmt"

	"github.com/quire-dev/quire/internal/pdf"
)

// sigField is a signature form field that carries a signature value.
type sigField struct {
	name     string
	value    pdf.Dict // the signature dictionary (/V)
	valueRef pdf.Ref  // its object; zero when the field holds it directly
	fieldRef pdf.Ref  // the field's object; zero for a direct field
}

// signatureFields returns the signed signature fields of the form. A
// signature dictionary (/V) that several fields share by reference is
// listed once, for the first of them: it is one signature, and checking it
// again would only hash the file again.
func signatureFields(d *pdf.Document) ([]sigField, error) {
	_, cat, err := d.Catalog()
	if err != nil {
		return nil, err
	}
	form, err := d.Dict(cat["AcroForm"])
	if err != nil {
		return nil, nil // no form, no signatures
	}
	fields, err := d.Array(form["Fields"])
	if err != nil {
		return nil, fmt.Errorf("pdfsign: /AcroForm /Fields: %w", err)
	}
	w := fieldWalk{seen: map[int]bool{}, values: map[int]bool{}}
	for _, f := range fields {
		if err := walkField(d, f, "", "", 0, &w); err != nil {
			return nil, err
		}
	}
	return w.out, nil
}

// fieldWalk is the state of a walk of the form's field tree.
type fieldWalk struct {
	seen   map[int]bool // field objects visited
	values map[int]bool // signature dictionaries (/V by reference) listed
	out    []sigField
}

func walkField(d *pdf.Document, o pdf.Object, parent string, ft pdf.Name, depth int, w *fieldWalk) error {
	self, _ := o.(pdf.Ref)
	if self.Num != 0 {
		if w.seen[self.Num] {
			return nil
		}
		w.seen[self.Num] = true
	}
	if depth > d.Limits().MaxNesting || len(w.seen) > d.Limits().MaxObjects {
		return errors.New("pdfsign: form field tree too deep or too large")
	}
	f, err := d.Dict(o)
	if err != nil {
		return nil // a broken field is not a signature
	}
	name := parent
	if t, ok := f["T"].(pdf.String); ok {
		name = joinFieldName(parent, pdf.DecodeText(t))
	}
	if v, ok := f["FT"].(pdf.Name); ok {
		ft = v
	}
	if v, err := d.Dict(f["V"]); ft == "Sig" && err == nil {
		r, isRef := f["V"].(pdf.Ref)
		if !isRef || !w.values[r.Num] {
			if isRef {
				w.values[r.Num] = true
			}
			w.out = append(w.out, sigField{name: name, value: v, valueRef: r, fieldRef: self})
		}
	}
	kids, _ := d.Array(f["Kids"])
	for _, k := range kids {
		if err := walkField(d, k, name, ft, depth+1, w); err != nil {
			return err
		}
	}
	return nil
}

func joinFieldName(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
