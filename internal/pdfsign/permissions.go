package pdfsign

import (
	"context"
	"strings"

	"github.com/quire-dev/quire/internal/pdf"
)

// permissions are what may change after one signature: the document's
// certification level and the fields the signature locks.
type permissions struct {
	docMDP int // P of the document's certification signature; 0: not certified
	lock   fieldLock
	signed *roles // the revision the signature covers
}

// fieldLock is a FieldMDP transform (ISO 32000-1, 12.8.2.4): which
// fields may no longer change once the signature is made.
type fieldLock struct {
	action string   // "All", "Include" or "Exclude"; "": no lock
	fields []string // full field names
}

// locks reports whether the lock covers the field named name.
func (l fieldLock) locks(name string) bool {
	listed := false
	for _, f := range l.fields {
		listed = listed || name == f || strings.HasPrefix(name, f+".")
	}
	switch l.action {
	case "All":
		return true
	case "Include":
		return listed
	case "Exclude":
		return !listed
	}
	return false
}

// fieldMDP reads the FieldMDP transform of a signature dictionary's
// /Reference, else the /Lock of its field.
func fieldMDP(d *pdf.Document, sig, field pdf.Dict) fieldLock {
	refs, _ := d.Array(sig["Reference"])
	for _, r := range refs {
		ref, err := d.Dict(r)
		if err != nil || ref["TransformMethod"] != pdf.Name("FieldMDP") {
			continue
		}
		params, _ := d.Dict(ref["TransformParams"])
		return lockOf(d, params)
	}
	lock, err := d.Dict(field["Lock"])
	if err != nil {
		return fieldLock{}
	}
	return lockOf(d, lock)
}

func lockOf(d *pdf.Document, params pdf.Dict) fieldLock {
	action, _ := params["Action"].(pdf.Name)
	l := fieldLock{action: string(action)}
	names, _ := d.Array(params["Fields"])
	for _, n := range names {
		l.fields = append(l.fields, pdf.TextOf(n))
	}
	return l
}

// judge decides for each change whether it is allowed after the signature
// (ISO 32000-1, 12.8.2.2 and 12.8.2.4; PAdES, ETSI EN 319 142-1, 5.4):
// validation data and document time-stamps always; form filling and
// signing unless the document is certified with P=1; annotations in an
// uncertified document or one certified with P=3; nothing else. On top of
// which, whatever the level: a field the signature locks does not change,
// a field value that was signed does not change, and nothing is drawn
// over (or removed from over) what the signed page showed: the shadow
// attacks hide and replace signed content with exactly such changes.
func (p permissions) judge(ctx context.Context, changes []change) Modifications {
	m := Modifications{Level: ClassNone, Permitted: true, Changes: []Change{}}
	for _, ch := range changes {
		ch.Permitted = p.allowedClass(ch.Class)
		if ch.Permitted && ch.field != 0 && p.lock.locks(ch.fieldName) {
			ch.Permitted, ch.What = false, ch.What+" (the field is locked by this signature)"
		}
		if ch.Permitted && ch.Class == ClassForm && ch.field != 0 && p.valueSigned(ch.field) {
			ch.Permitted, ch.What = false, ch.What+" (its value was signed)"
		}
		if ch.Permitted && ch.drawn && ch.Class != ClassLTV {
			if over, what := p.drawnOver(ctx, ch); over {
				ch.Permitted, ch.What = false, ch.What+" (drawn over "+what+")"
			}
		}
		m.Level = higher(m.Level, ch.Class)
		m.Permitted = m.Permitted && ch.Permitted
		m.Changes = append(m.Changes, ch.Change)
	}
	return m
}

func (p permissions) allowedClass(class string) bool {
	switch class {
	case ClassLTV:
		return true
	case ClassForm, ClassSignature:
		return p.docMDP != 1
	case ClassAnnotations:
		return p.docMDP == 0 || p.docMDP == 3
	}
	return false
}

// valueSigned reports a field that held a value in the signed revision.
func (p permissions) valueSigned(field int) bool {
	f, ok := p.signed.field[field]
	if !ok {
		return false
	}
	switch v := f.dict["V"].(type) {
	case nil, pdf.Null:
		return false
	case pdf.String:
		return len(v) > 0
	case pdf.HexString:
		return len(v) > 0
	case pdf.Name:
		return v != "Off" && v != ""
	case pdf.Array:
		return len(v) > 0
	}
	return true
}

// drawnOver reports whether the annotation of ch covers text or an image
// the signed page painted, or an annotation the signed page showed
// (other than its own former self).
func (p permissions) drawnOver(ctx context.Context, ch change) (bool, string) {
	page := p.signed.pageOf[ch.pageRef]
	if page == 0 {
		return false, "" // a page added later: a change of its own
	}
	boxes, err := p.signed.painted(ctx, page)
	if err != nil {
		return true, "page content quire cannot read"
	}
	for _, b := range boxes {
		if b.Overlaps(ch.rect) {
			return true, "signed page content"
		}
	}
	for num, a := range p.signed.annot {
		if a.page != page || num == ch.annot || (a.field != 0 && a.field == ch.field) {
			continue
		}
		var probe change
		drawnAt(&probe, p.signed.doc, 0, a.dict)
		if probe.drawn && probe.rect.Overlaps(ch.rect) {
			return true, "an annotation the signer saw"
		}
	}
	return false, ""
}

// painted returns, once, the boxes page paints text and images in.
func (r *roles) painted(ctx context.Context, page int) ([]pdf.Box, error) {
	if r.paintedBoxes == nil {
		r.paintedBoxes, r.paintedErr = map[int][]pdf.Box{}, map[int]error{}
	}
	if b, ok := r.paintedBoxes[page]; ok {
		return b, r.paintedErr[page]
	}
	b, err := r.doc.PaintedBoxes(ctx, r.pages[page-1])
	r.paintedBoxes[page], r.paintedErr[page] = b, err
	return b, err
}
