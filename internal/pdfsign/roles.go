package pdfsign

import (
	"context"

	"github.com/quire-dev/quire/internal/pdf"
)

// roles says what each object of one revision is for, as far as a change
// to it matters: a page, what a page shows, an annotation and what draws
// it, a form field, a signature, validation data. An object reached from
// several places takes the first role found, in the order built below:
// what a page shows outranks everything else.
type roles struct {
	doc      *pdf.Document
	catalog  int
	info     int
	pages    []pdf.PageObject
	pageOf   map[int]int  // page dictionaries: 1-based page number
	treeNode map[int]bool // page tree nodes that are not pages
	content  map[int]int  // content streams and resources of a page, with what they use
	annots   map[int]int  // /Annots arrays held by reference: page
	annot    map[int]annotRole
	drawing  map[int]int // appearance streams and what they use: the annotation they draw
	field    map[int]fieldRole
	sigValue map[int]int  // signature dictionaries: their field
	form     map[int]bool // the form dictionary, its /Fields array, its default resources
	dss      map[int]bool // the document security store and everything in it
	metadata map[int]bool // the catalog's XMP metadata stream
	other    map[int]bool // everything else the catalog reaches; built on demand

	paintedBoxes map[int][]pdf.Box // by page: where its content paints, read on demand
	paintedErr   map[int]error
}

// annotRole is an annotation of a page.
type annotRole struct {
	page  int
	field int // the form field of a widget; 0 for other annotations
	dict  pdf.Dict
}

// fieldRole is a node of the form's field tree.
type fieldRole struct {
	name      string
	signature bool // FT /Sig, inherited
	dict      pdf.Dict
}

// buildRoles walks one revision: its page tree, each page's content and
// annotations, its form, its DSS. Each walk is bounded by the reader's
// object limit.
func buildRoles(ctx context.Context, d *pdf.Document) (*roles, error) {
	r := &roles{doc: d, pageOf: map[int]int{}, treeNode: map[int]bool{}, content: map[int]int{}, annots: map[int]int{},
		annot: map[int]annotRole{}, drawing: map[int]int{}, field: map[int]fieldRole{}, sigValue: map[int]int{},
		form: map[int]bool{}, dss: map[int]bool{}, metadata: map[int]bool{}}
	root, cat, err := d.Catalog()
	if err != nil {
		return nil, err
	}
	r.catalog = root.Num
	if info, ok := d.TrailerRef("Info"); ok {
		r.info = info.Num
	}
	pages, nodes, err := d.PageTree(ctx)
	if err != nil {
		return nil, err
	}
	r.pages = pages
	for num := range nodes {
		r.treeNode[num] = true
	}
	for i, p := range pages {
		delete(r.treeNode, p.Ref.Num)
		r.pageOf[p.Ref.Num] = i + 1
	}
	w := &walker{d: d, seen: map[int]bool{}}
	for i, p := range pages {
		w.mark(p.Dict["Contents"], func(n int) { r.content[n] = i + 1 })
		w.mark(p.Inherited["Resources"], func(n int) { r.content[n] = i + 1 })
	}
	r.walkForm(cat)
	for i, p := range pages {
		r.walkAnnots(w, p.Dict["Annots"], i+1)
	}
	w.mark(cat["DSS"], func(n int) { r.dss[n] = true })
	w.mark(cat["Metadata"], func(n int) { r.metadata[n] = true })
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r, nil
}

// walkAnnots records a page's annotations and what draws them.
func (r *roles) walkAnnots(w *walker, annots pdf.Object, page int) {
	if ref, ok := annots.(pdf.Ref); ok {
		r.annots[ref.Num] = page
	}
	arr, _ := r.doc.Array(annots)
	for _, a := range arr[:min(len(arr), r.doc.Limits().MaxObjects)] {
		ref, ok := a.(pdf.Ref)
		if !ok {
			continue
		}
		dict, err := r.doc.Dict(ref)
		if err != nil {
			continue
		}
		role := annotRole{page: page, dict: dict}
		if _, isField := r.field[ref.Num]; isField {
			role.field = ref.Num
		} else if parent, ok := dict["Parent"].(pdf.Ref); ok && dict["Subtype"] == pdf.Name("Widget") {
			if _, isField := r.field[parent.Num]; isField {
				role.field = parent.Num
			}
		}
		if _, known := r.annot[ref.Num]; !known {
			r.annot[ref.Num] = role
		}
		w.mark(dict["AP"], func(n int) { r.drawing[n] = ref.Num })
	}
}

// walkForm records the form's fields and signature values.
func (r *roles) walkForm(cat pdf.Dict) {
	d := r.doc
	if ref, ok := cat["AcroForm"].(pdf.Ref); ok {
		r.form[ref.Num] = true
	}
	form, err := d.Dict(cat["AcroForm"])
	if err != nil {
		return
	}
	if ref, ok := form["Fields"].(pdf.Ref); ok {
		r.form[ref.Num] = true
	}
	w := &walker{d: d, seen: map[int]bool{}}
	w.mark(form["DR"], func(n int) { r.form[n] = true })
	fields, _ := d.Array(form["Fields"])
	seen := map[int]bool{}
	for _, f := range fields {
		r.walkField(f, "", false, 0, seen)
	}
}

func (r *roles) walkField(o pdf.Object, parent string, sig bool, depth int, seen map[int]bool) {
	ref, ok := o.(pdf.Ref)
	if !ok || seen[ref.Num] || depth > r.doc.Limits().MaxNesting || len(seen) > r.doc.Limits().MaxObjects {
		return
	}
	seen[ref.Num] = true
	f, err := r.doc.Dict(ref)
	if err != nil {
		return
	}
	name := parent
	if t, ok := f["T"].(pdf.String); ok {
		name = joinFieldName(parent, pdf.DecodeText(t))
	}
	if ft, ok := f["FT"].(pdf.Name); ok {
		sig = ft == "Sig"
	}
	r.field[ref.Num] = fieldRole{name: name, signature: sig, dict: f}
	if v, ok := f["V"].(pdf.Ref); ok && sig {
		r.sigValue[v.Num] = ref.Num
	}
	kids, _ := r.doc.Array(f["Kids"])
	for _, k := range kids {
		r.walkField(k, name, sig, depth+1, seen)
	}
}

// reachable returns the objects the catalog reaches, walked once on
// demand: a changed object none of the roles names may still be shown
// (an outline, a name tree).
func (r *roles) reachable() map[int]bool {
	if r.other != nil {
		return r.other
	}
	r.other = map[int]bool{}
	w := &walker{d: r.doc, seen: map[int]bool{}}
	w.mark(pdf.Ref{Num: r.catalog}, func(n int) { r.other[n] = true })
	return r.other
}

// walker marks the objects an object reaches through references, each
// once per walker, skipping the keys that point back up a tree.
type walker struct {
	d    *pdf.Document
	seen map[int]bool
}

// backKeys point from a node to its parent or page: following them would
// reach the whole document from any annotation or field.
var backKeys = map[pdf.Name]bool{"Parent": true, "P": true, "Popup": true, "IRT": true}

func (w *walker) mark(o pdf.Object, fn func(num int)) {
	stack := []pdf.Object{o}
	limit := w.d.Limits().MaxObjects
	for len(stack) > 0 && len(w.seen) <= limit {
		o := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch v := o.(type) {
		case pdf.Ref:
			if w.seen[v.Num] {
				continue
			}
			w.seen[v.Num] = true
			fn(v.Num)
			if obj, err := w.d.Object(v.Num); err == nil {
				stack = append(stack, obj)
			}
		case pdf.Dict:
			for k, e := range v {
				if !backKeys[k] {
					stack = append(stack, e)
				}
			}
		case pdf.Array:
			stack = append(stack, v...)
		case *pdf.Stream:
			stack = append(stack, v.Dict)
		}
	}
}
