package pdf

import (
	"errors"
	"fmt"
	"math"
)

// Page is a page to append. Resources may hold *Stream and *Indirect
// values anywhere (fonts, font files, images): each is written as an
// object of its own, once however many pages share it.
type Page struct {
	MediaBox  [4]float64 // page size in points, e.g. {0, 0, 595.28, 841.89} for A4
	Content   []byte     // the content stream, uncompressed
	Resources Dict       // the resource dictionary (/Font, /XObject, …)
}

// AppendPages adds pages at the end of the document, to be written by
// Save as part of its incremental update: the input stays a byte prefix of
// the output, so signatures already in it stay intact (they just no longer
// cover the whole file). It returns the 1-based number of the first
// appended page.
//
// Errors caused by the document wrap the sentinel errors; errors in pages
// (none given, an empty or non-finite MediaBox, a value that cannot be
// written) do not, being the caller's.
//
// Each appended page sets /Rotate 0 and a /CropBox equal to its MediaBox,
// so that it does not inherit a rotation or a crop from the page tree.
func (d *Document) AppendPages(pages []Page) (first int, err error) {
	defer Recover(&err)
	if len(pages) == 0 {
		return 0, errors.New("pdf: no pages to append")
	}
	existing, err := d.Pages()
	if err != nil {
		return 0, inputError(err)
	}
	rootRef, newRoot, err := d.treeRoot()
	if err != nil {
		return 0, inputError(err)
	}
	for i, p := range pages {
		ref, err := d.addPage(p, rootRef)
		if err != nil {
			return 0, fmt.Errorf("pdf: appended page %d: %w", i+1, err)
		}
		if err := d.AppendRef(newRoot, "Kids", ref); err != nil {
			return 0, fmt.Errorf("%w: page tree root /Kids: %v", ErrUnreadable, err)
		}
	}
	newRoot["Count"] = Int(len(existing) + len(pages)) // the root's /Count may lie
	d.Replace(rootRef, newRoot)
	return len(existing) + 1, nil
}

// Write returns a new file holding pages, each written as AppendPages
// writes it: a catalog, a page tree and the pages, with a classic
// cross-reference table. Its file identifier is a hash of its content, so
// equal pages give equal files.
func Write(pages []Page) (out []byte, err error) {
	defer Recover(&err)
	if len(pages) == 0 {
		return nil, errors.New("pdf: no pages to write")
	}
	x := &xrefInfo{entries: map[int]xrefEntry{}, trailer: Dict{}, startxref: -1}
	d := newDocument([]byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"), x, DefaultLimits())
	d.changes.next = 1
	root := d.Add(Dict{}) // replaced once the kids are known
	x.trailer["Root"] = d.Add(Dict{"Type": Name("Catalog"), "Pages": root})
	kids := make(Array, len(pages))
	for i, p := range pages {
		if kids[i], err = d.addPage(p, root); err != nil {
			return nil, fmt.Errorf("pdf: page %d: %w", i+1, err)
		}
	}
	d.Replace(root, Dict{"Type": Name("Pages"), "Kids": kids, "Count": Int(len(pages))})
	return d.Save()
}

// treeRoot returns the root of the page tree, which pages are appended
// to, and a copy of it to change. A catalog whose /Pages names a page
// rather than a page tree node (as damaged files may have) gets a new root
// above that page, so that appended pages follow it instead of becoming
// children of a page.
func (d *Document) treeRoot() (Ref, Dict, error) {
	catRef, cat, err := d.Catalog()
	if err != nil {
		return Ref{}, nil, err
	}
	ref, _ := cat["Pages"].(Ref) // Pages checked it is a reference
	node, err := d.Dict(ref)
	if err != nil {
		return Ref{}, nil, fmt.Errorf("%w: page tree root: %v", ErrUnreadable, err)
	}
	if !isLeaf(node) {
		return ref, node.Clone(), nil
	}
	root := d.Add(Dict{}) // replaced by the caller's version
	page := node.Clone()
	page["Parent"] = root
	d.Replace(ref, page)
	c := cat.Clone()
	c["Pages"] = root
	d.Replace(catRef, c)
	return root, Dict{"Type": Name("Pages"), "Kids": Array{ref}}, nil
}

// addPage adds the page object and its content stream, compressed. The
// page states every inheritable attribute that matters for how it shows
// (/Rotate, /CropBox) rather than taking the page tree's.
func (d *Document) addPage(p Page, parent Ref) (Ref, error) {
	for _, v := range p.MediaBox {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return Ref{}, fmt.Errorf("MediaBox %v holds a non-finite number", p.MediaBox)
		}
	}
	if p.MediaBox[2] <= p.MediaBox[0] || p.MediaBox[3] <= p.MediaBox[1] {
		return Ref{}, fmt.Errorf("empty MediaBox %v", p.MediaBox)
	}
	z := Deflate(p.Content)
	res := p.Resources
	if res == nil {
		res = Dict{}
	}
	content := d.Add(&Stream{Dict: Dict{"Filter": Name("FlateDecode")}, Data: z})
	mb := Array{Real(p.MediaBox[0]), Real(p.MediaBox[1]), Real(p.MediaBox[2]), Real(p.MediaBox[3])}
	return d.Add(Dict{"Type": Name("Page"), "Parent": parent, "MediaBox": mb, "CropBox": mb, "Rotate": Int(0),
		"Resources": res, "Contents": content}), nil
}

// LastPageSize is the size of the last page as shown, in points: its
// /MediaBox with its /Rotate applied.
func (d *Document) LastPageSize() (width, height float64, err error) {
	defer Recover(&err)
	ps, err := d.Pages()
	if err != nil || len(ps) == 0 { // Open checked both already
		return 0, 0, fmt.Errorf("%w: the document has no pages", ErrUnreadable)
	}
	last := ps[len(ps)-1]
	b, err := d.box(last.Inherited["MediaBox"])
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	width, height = b[2]-b[0], b[3]-b[1]
	if rot := IntOr(last.Inherited["Rotate"], 0); rot%180 != 0 {
		width, height = height, width
	}
	return width, height, nil
}

// box reads a rectangle such as /MediaBox.
func (d *Document) box(o Object) ([4]float64, error) {
	var b [4]float64
	a, err := d.Array(o)
	if err != nil || len(a) != 4 {
		return b, errors.New("page has no valid /MediaBox")
	}
	for i, v := range a {
		r, err := d.Resolve(v)
		if err != nil {
			return b, err
		}
		switch n := r.(type) {
		case Int:
			b[i] = float64(n)
		case Real:
			b[i] = float64(n)
		default:
			return b, errors.New("/MediaBox holds a non-number")
		}
		if math.IsInf(b[i], 0) || math.IsNaN(b[i]) {
			return b, errors.New("/MediaBox holds a non-finite number")
		}
	}
	return b, nil
}

// PageCount reads the page count of the page tree's root (/Count), for
// metering: meant for PDFs quire made itself, never an upload, whose
// tree it does not walk. A PDF it cannot read counts no pages.
func PageCount(b []byte) int64 {
	d, err := Read(b, DefaultLimits())
	if err != nil {
		return 0
	}
	_, cat, err := d.Catalog()
	if err != nil {
		return 0
	}
	pages, err := d.Dict(cat["Pages"])
	if err != nil {
		return 0
	}
	n, _ := pages["Count"].(Int)
	return int64(n)
}
