package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"math"
)

// CopyPages returns the pages of a standalone document (such as rendered
// certificate pages) as Pages for another document's AppendPages: each
// page's content, decoded, and its resources with every reference
// resolved. Objects that pages share (fonts, images) stay shared, and
// AppendPages adds each stream once. Errors wrap ErrUnreadable.
func (d *Document) CopyPages() (pages []Page, err error) {
	defer Recover(&err)
	ps, err := d.Pages()
	if err != nil {
		return nil, inputError(err)
	}
	memo := map[int]Object{}
	for i, p := range ps {
		page, err := d.importPage(p, memo)
		if err != nil {
			return nil, fmt.Errorf("%w: copy page %d: %v", ErrUnreadable, i+1, err)
		}
		pages = append(pages, page)
	}
	return pages, nil
}

func (d *Document) importPage(p PageObject, memo map[int]Object) (Page, error) {
	mb, err := d.box(p.Inherited["MediaBox"])
	if err != nil {
		return Page{}, err
	}
	if !(mb[2] > mb[0] && mb[3] > mb[1]) {
		return Page{}, fmt.Errorf("empty /MediaBox %v", mb)
	}
	content, err := d.content(p.Dict["Contents"])
	if err != nil {
		return Page{}, err
	}
	res, err := d.inline(p.Inherited["Resources"], memo, 0)
	if err != nil {
		return Page{}, err
	}
	resDict, _ := res.(Dict)
	return Page{MediaBox: mb, Content: content, Resources: resDict}, nil
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

// content returns a page's content streams, decoded and joined. They count
// against the document's decode budget, as object streams do.
func (d *Document) content(o Object) ([]byte, error) {
	r, err := d.Resolve(o)
	if err != nil {
		return nil, err
	}
	parts := Array{r}
	if a, ok := r.(Array); ok {
		parts = a
	}
	var out bytes.Buffer
	for _, part := range parts {
		s, err := d.Resolve(part)
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
func (d *Document) inline(o Object, memo map[int]Object, depth int) (Object, error) {
	if depth > MaxNesting {
		return nil, errors.New("resources nest too deep")
	}
	switch v := o.(type) {
	case Ref:
		if m, ok := memo[v.Num]; ok {
			return m, nil
		}
		obj, err := d.Object(v.Num)
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
