package pdfsign

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
)

// ImportPages reads the pages of a standalone PDF (such as rendered
// certificate pages) as Pages for AppendPages: each page's content,
// decoded, and its resources with every reference resolved. Objects that
// pages share (fonts, images) stay shared, and AppendPages writes each
// stream once.
//
// src is opened as Sign opens a document: damaged structure is repaired
// when src carries no signature, and the repair stops with ctx's error
// once ctx is done. Every other error wraps one of the sentinel errors.
// lim optionally bounds the work (the first value is used; none,
// or zero fields, mean DefaultLimits).
func ImportPages(ctx context.Context, src []byte, lim ...Limits) (pages []Page, err error) {
	defer catchPanic(&err)
	d, err := openForUpdate(ctx, src, limitsOf(lim))
	if err != nil {
		return nil, inputError(err)
	}
	ps, err := d.pages()
	if err != nil {
		return nil, inputError(err)
	}
	memo := map[int]Object{}
	for i, p := range ps {
		page, err := d.importPage(p, memo)
		if err != nil {
			return nil, fmt.Errorf("%w: import page %d: %v", ErrUnreadable, i+1, err)
		}
		pages = append(pages, page)
	}
	return pages, nil
}

func (d *document) importPage(p page, memo map[int]Object) (Page, error) {
	mb, err := d.box(p.inherited["MediaBox"])
	if err != nil {
		return Page{}, err
	}
	if !(mb[2] > mb[0] && mb[3] > mb[1]) {
		return Page{}, fmt.Errorf("empty /MediaBox %v", mb)
	}
	content, err := d.content(p.dict["Contents"])
	if err != nil {
		return Page{}, err
	}
	res, err := d.inline(p.inherited["Resources"], memo, 0)
	if err != nil {
		return Page{}, err
	}
	resDict, _ := res.(Dict)
	return Page{MediaBox: mb, Content: content, Resources: resDict}, nil
}

// box reads a rectangle such as /MediaBox.
func (d *document) box(o Object) ([4]float64, error) {
	var b [4]float64
	a, err := d.array(o)
	if err != nil || len(a) != 4 {
		return b, errors.New("page has no valid /MediaBox")
	}
	for i, v := range a {
		r, err := d.resolve(v)
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

// content returns a page's content streams, decoded and joined. They count
// against the document's decode budget, as object streams do.
func (d *document) content(o Object) ([]byte, error) {
	r, err := d.resolve(o)
	if err != nil {
		return nil, err
	}
	parts := Array{r}
	if a, ok := r.(Array); ok {
		parts = a
	}
	var out bytes.Buffer
	for _, part := range parts {
		s, err := d.resolve(part)
		if err != nil {
			return nil, err
		}
		st, ok := s.(*Stream)
		if !ok {
			return nil, fmt.Errorf("/Contents holds a %T, not a stream", s)
		}
		data, err := d.decode(st)
		if err != nil {
			return nil, err
		}
		out.Write(data)
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// inline replaces the references in o by the objects they name, keeping
// streams encoded as they are. A referenced object is inlined once (memo),
// so objects shared in the source stay one object in the result.
func (d *document) inline(o Object, memo map[int]Object, depth int) (Object, error) {
	if depth > maxNesting {
		return nil, errors.New("resources nest too deep")
	}
	switch v := o.(type) {
	case Ref:
		if m, ok := memo[v.Num]; ok {
			return m, nil
		}
		obj, err := d.object(v.Num)
		if err != nil {
			return nil, err
		}
		if st, ok := obj.(*Stream); ok {
			out := &Stream{Data: st.Data}
			memo[v.Num] = out
			dict, err := d.inline(st.Dict, memo, depth+1)
			out.Dict, _ = dict.(Dict)
			return out, err
		}
		out, err := d.inline(obj, memo, depth+1)
		memo[v.Num] = out
		return out, err
	case Dict:
		out := make(Dict, len(v))
		for k, e := range v {
			x, err := d.inline(e, memo, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	case Array:
		out := make(Array, len(v))
		for i, e := range v {
			x, err := d.inline(e, memo, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	}
	return o, nil
}

// Layout is what a caller needs to know of a document's pages before
// appending to it.
type Layout struct {
	Pages                 int
	LastWidth, LastHeight float64 // the last page as shown, in points (/Rotate applied)
	// Certified is the DocMDP P of the document's certification signature
	// (0: none). Certified documents take no new pages (AppendPages
	// refuses them with ErrCertified); P=1 takes no signature either.
	Certified int
}

// PageLayout reads the page count and the size of the last page of pdf.
// It opens pdf as Sign and AppendPages do: a damaged structure is repaired
// (the layout is that of the repaired file, which AppendPages will extend)
// unless pdf carries a signature, which gives ErrDamagedSigned; the repair
// stops with ctx's error once ctx is done. Every other error wraps one of
// the sentinel errors. lim optionally bounds the work
// (the first value is used; none, or zero fields, mean DefaultLimits).
func PageLayout(ctx context.Context, pdf []byte, lim ...Limits) (l Layout, err error) {
	defer catchPanic(&err)
	d, err := openForUpdate(ctx, pdf, limitsOf(lim))
	if err != nil {
		return l, inputError(err)
	}
	ps, err := d.pages()
	if err != nil || len(ps) == 0 { // openForUpdate checked both already
		return l, fmt.Errorf("%w: the document has no pages", ErrUnreadable)
	}
	last := ps[len(ps)-1]
	b, err := d.box(last.inherited["MediaBox"])
	if err != nil {
		return l, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	l = Layout{Pages: len(ps), LastWidth: b[2] - b[0], LastHeight: b[3] - b[1], Certified: d.certification()}
	if rot := intOr(last.inherited["Rotate"], 0); rot%180 != 0 {
		l.LastWidth, l.LastHeight = l.LastHeight, l.LastWidth
	}
	return l, nil
}
