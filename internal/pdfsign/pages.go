package pdfsign

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"math"
)

// Page is a page to append. Resources may hold *Stream values anywhere
// (fonts, font files, images): the writer stores each as an object of its
// own, so later callers can add fonts and image XObjects without new API.
type Page struct {
	MediaBox  [4]float64 // page size in points, e.g. {0, 0, 595.28, 841.89} for A4
	Content   []byte     // the content stream, uncompressed
	Resources Dict       // the resource dictionary (/Font, /XObject, …)
}

// AppendPages returns pdf with pages added at the end of the document as
// an incremental update: the input stays a byte prefix of the output, so
// signatures already in it stay intact (they just no longer cover the
// whole file). Call it before Sign so that the signature covers the pages.
//
// pdf is opened as Sign opens it: a damaged structure is repaired (the
// output then extends the repaired file) unless pdf carries a signature,
// which gives ErrDamagedSigned; the repair stops with ctx's error once ctx
// is done. Every other error caused by pdf wraps one of the sentinel errors; errors in pages (none given, an empty or non-finite
// MediaBox, a value that cannot be written) do not, being the caller's.
// lim optionally bounds the work (the first value is used; none, or zero
// fields, mean DefaultLimits).
//
// Each appended page sets /Rotate 0 and a /CropBox equal to its MediaBox,
// so that it does not inherit a rotation or a crop from the page tree.
func AppendPages(ctx context.Context, pdf []byte, pages []Page, lim ...Limits) (out []byte, err error) {
	defer catchPanic(&err)
	if len(pages) == 0 {
		return nil, errors.New("pdfsign: no pages to append")
	}
	l := limitsOf(lim)
	d, err := openForUpdate(ctx, pdf, l)
	if err != nil {
		return nil, inputError(err)
	}
	existing, err := d.pages()
	if err != nil {
		return nil, inputError(err)
	}
	if err := d.allowsPages(); err != nil {
		return nil, err
	}
	u := newUpdate(d)
	rootRef, newRoot, err := treeRoot(u)
	if err != nil {
		return nil, inputError(err)
	}
	for i, p := range pages {
		ref, err := addPage(u, p, rootRef)
		if err != nil {
			return nil, fmt.Errorf("pdfsign: appended page %d: %w", i+1, err)
		}
		if err := u.appendRef(newRoot, "Kids", ref); err != nil {
			return nil, fmt.Errorf("%w: page tree root /Kids: %v", ErrUnreadable, err)
		}
	}
	newRoot["Count"] = Int(len(existing) + len(pages)) // the root's /Count may lie
	u.replace(rootRef, newRoot)
	w, err := u.write()
	if err != nil {
		return nil, err
	}
	if err := checkPageCount(w.pdf, outputLimits(l, w.pdf), len(existing)+len(pages)); err != nil {
		return nil, inputError(fmt.Errorf("pdfsign: self-check of the output with appended pages: %w", err))
	}
	return w.pdf, nil
}

// checkPageCount reads pdf as an update would and requires want pages, so
// that a caller asking for the last appended page finds it.
func checkPageCount(pdf []byte, lim Limits, want int) error {
	d, err := readSound(pdf, lim)
	if err != nil {
		return err
	}
	ps, err := d.pages()
	if err == nil && len(ps) != want {
		err = fmt.Errorf("%d pages, %d expected", len(ps), want)
	}
	return err
}

// treeRoot returns the root of u's page tree, which pages are appended
// to, and a copy of it to change. A catalog whose /Pages names a page
// rather than a page tree node (as damaged files may have) gets a new root
// above that page, so that appended pages follow it instead of becoming
// children of a page.
func treeRoot(u *update) (Ref, Dict, error) {
	catRef, cat, err := u.doc.catalog()
	if err != nil {
		return Ref{}, nil, err
	}
	ref, _ := cat["Pages"].(Ref) // readSound checked it is a reference
	node, err := u.doc.dict(ref)
	if err != nil {
		return Ref{}, nil, fmt.Errorf("%w: page tree root: %v", ErrUnreadable, err)
	}
	if !isLeaf(node) {
		return ref, node.clone(), nil
	}
	root := u.add(Dict{}) // replaced by the caller's version
	page := node.clone()
	page["Parent"] = root
	u.replace(ref, page)
	c := cat.clone()
	c["Pages"] = root
	u.replace(catRef, c)
	return root, Dict{"Type": Name("Pages"), "Kids": Array{ref}}, nil
}

// addPage adds the page object and its content stream, compressed. The
// page states every inheritable attribute that matters for how it shows
// (/Rotate, /CropBox) rather than taking the page tree's.
func addPage(u *update, p Page, parent Ref) (Ref, error) {
	for _, v := range p.MediaBox {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return Ref{}, fmt.Errorf("MediaBox %v holds a non-finite number", p.MediaBox)
		}
	}
	if p.MediaBox[2] <= p.MediaBox[0] || p.MediaBox[3] <= p.MediaBox[1] {
		return Ref{}, fmt.Errorf("empty MediaBox %v", p.MediaBox)
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	_, _ = zw.Write(p.Content)
	if err := zw.Close(); err != nil {
		return Ref{}, err
	}
	res := p.Resources
	if res == nil {
		res = Dict{}
	}
	content := u.add(&Stream{Dict: Dict{"Filter": Name("FlateDecode")}, Data: z.Bytes()})
	mb := Array{Real(p.MediaBox[0]), Real(p.MediaBox[1]), Real(p.MediaBox[2]), Real(p.MediaBox[3])}
	return u.add(Dict{"Type": Name("Page"), "Parent": parent, "MediaBox": mb, "CropBox": mb, "Rotate": Int(0),
		"Resources": res, "Contents": content}), nil
}
