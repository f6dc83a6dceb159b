package pdfsign

import (
	"errors"
	"fmt"
	"slices"
)

// Limits bound the work spent on an untrusted file. Zero fields take the
// defaults of DefaultLimits.
type Limits struct {
	MaxInputSize   int64 // largest accepted file, in bytes
	MaxObjects     int   // most objects (xref entries, pages, fields) considered; object numbers stay below it
	MaxDecodedSize int64 // largest decompressed stream, in bytes
}

// DefaultLimits fit the service's upload limit with room to spare.
func DefaultLimits() Limits {
	return Limits{MaxInputSize: 64 << 20, MaxObjects: 1_000_000, MaxDecodedSize: 64 << 20}
}

// limitsOf returns the Limits passed as the optional last argument of a
// function such as PageLayout: the zero Limits (the defaults) when none
// was given, the first one otherwise.
func limitsOf(lim []Limits) Limits {
	if len(lim) == 0 {
		return Limits{}
	}
	return lim[0]
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxInputSize > 0 {
		d.MaxInputSize = l.MaxInputSize
	}
	if l.MaxObjects > 0 {
		d.MaxObjects = l.MaxObjects
	}
	if l.MaxDecodedSize > 0 {
		d.MaxDecodedSize = l.MaxDecodedSize
	}
	return d
}

// document is a parsed PDF file: its bytes, its cross-reference data and
// the objects loaded so far. Objects are loaded lazily, so only what
// signing needs (catalog, page tree, form) is ever parsed.
type document struct {
	data       []byte
	xref       *xrefInfo
	lim        Limits
	cache      map[int]Object
	failed     map[int]error // objects that failed to load, not retried
	objStreams map[int]*objStream
	loading    map[int]bool // guards against reference cycles
	decoded    int64        // bytes decompressed so far, against decodeBudget
	starts     []int        // offsets of the objects in the file, ascending; built on first use
}

// decodeBudget bounds the bytes decompressed per document, whatever the
// number of streams, so that many small bombs cost no more than one: a
// multiple of the file's size (real object and content streams compress
// a few times at most), plus a floor for small files, and never more than
// four of the largest streams.
func (d *document) decodeBudget() int64 {
	return min(4*d.lim.MaxDecodedSize, decodeFloor+decodeRatio*int64(len(d.data)))
}

// decodeFloor and decodeRatio make up decodeBudget.
const (
	decodeFloor = 8 << 20
	decodeRatio = 8
)

// decode undoes the filters of st within what is left of the document's
// decode budget. The bytes the filters put out are charged to the budget
// also when decoding fails, so that failing bombs exhaust it too.
func (d *document) decode(st *Stream) ([]byte, error) {
	limit := min(d.lim.MaxDecodedSize, d.decodeBudget()-d.decoded)
	out, produced, err := decodeStream(st.Dict, st.Data, limit)
	d.decoded += produced
	return out, err
}

// objStream is a decoded object stream (/Type /ObjStm).
type objStream struct {
	body    []byte
	first   int
	nums    []int
	offsets []int
	ends    []int // where each object's syntax must end, as in parseAt
}

// readDocument parses the structure of data. It fails with ErrTooLarge,
// ErrEncrypted, or an errStructure error when the file's cross-reference
// data cannot be relied on.
func readDocument(data []byte, lim Limits) (*document, error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.MaxInputSize {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(data), lim.MaxInputSize)
	}
	x, err := readXRef(data, lim.MaxObjects)
	if err != nil {
		return nil, err
	}
	if _, ok := x.trailer["Encrypt"]; ok {
		return nil, ErrEncrypted
	}
	d := newDocument(data, x, lim)
	if _, _, err := d.catalog(); err != nil {
		return nil, err
	}
	return d, nil
}

func newDocument(data []byte, x *xrefInfo, lim Limits) *document {
	return &document{data: data, xref: x, lim: lim,
		cache: map[int]Object{}, failed: map[int]error{}, objStreams: map[int]*objStream{}, loading: map[int]bool{}}
}

// size is the trailer /Size an update must extend: one more than the
// highest object number in use. A /Size beyond the object limit is a lie
// (no entry can be there) and is not followed, so that the numbers of an
// update stay within the limit too.
func (d *document) size() int {
	n := intOr(d.xref.trailer["Size"], 0)
	if n > d.lim.MaxObjects {
		n = 0
	}
	for num := range d.xref.entries {
		n = max(n, num+1)
	}
	return n
}

// catalog returns the document catalog and its reference.
func (d *document) catalog() (Ref, Dict, error) {
	ref := d.xref.trailer["Root"].(Ref)
	cat, err := d.dict(ref)
	if err != nil {
		return Ref{}, nil, structuref("catalog %d %d R: %v", ref.Num, ref.Gen, err)
	}
	return ref, cat, nil
}

// object loads object num; a missing or free object is null, as the
// standard says.
func (d *document) object(num int) (Object, error) {
	if o, ok := d.cache[num]; ok {
		return o, nil
	}
	if err, ok := d.failed[num]; ok {
		return nil, err
	}
	e, ok := d.xref.entries[num]
	if !ok || e.kind == 0 {
		return Null{}, nil
	}
	if d.loading[num] {
		return nil, fmt.Errorf("pdfsign: object %d refers to itself", num)
	}
	d.loading[num] = true
	defer delete(d.loading, num)
	var o Object
	var err error
	if e.kind == 1 {
		o, err = d.parseAt(num, e.offset)
	} else {
		o, err = d.fromObjStream(e.stream, e.index, num)
	}
	if err != nil {
		d.failed[num] = fmt.Errorf("pdfsign: object %d: %w", num, err)
		return nil, d.failed[num]
	}
	d.cache[num] = o
	return o, nil
}

// parseAt parses the indirect object at off, including stream data. The
// object's syntax must end before the next object starts (stream data
// excepted): objects do not overlap, and parsing each to the end of an
// object it is nested in (a string that holds all the objects after it)
// would read the file once per object.
func (d *document) parseAt(num, off int) (Object, error) {
	p := &parser{data: d.data[:d.objectEnd(off)], pos: off}
	if _, _, err := p.objectHeader(); err != nil {
		return nil, err
	}
	o, err := p.object(0)
	if err != nil {
		return nil, err
	}
	dict, ok := o.(Dict)
	if !ok {
		return o, nil
	}
	start, ok := p.streamStart()
	if !ok {
		return dict, nil
	}
	length, err := d.resolve(dict["Length"])
	if err != nil {
		return nil, err
	}
	raw, err := d.xref.ends.streamBytes(d.data, start, length)
	if err != nil {
		return nil, err
	}
	return &Stream{Dict: dict, Data: raw}, nil
}

// objectEnd is where the syntax of the object at off must end: where the
// next object that the cross-reference data lists starts.
func (d *document) objectEnd(off int) int {
	if d.starts == nil {
		d.starts = make([]int, 0, len(d.xref.entries))
		for _, e := range d.xref.entries {
			if e.kind == 1 {
				d.starts = append(d.starts, e.offset)
			}
		}
		slices.Sort(d.starts)
	}
	if i, _ := slices.BinarySearch(d.starts, off+1); i < len(d.starts) {
		return min(d.starts[i], len(d.data))
	}
	return len(d.data)
}

// fromObjStream parses the object stored at index of object stream sn.
func (d *document) fromObjStream(sn, index, num int) (Object, error) {
	os, err := d.objStream(sn)
	if err != nil {
		return nil, err
	}
	if index >= len(os.nums) || os.nums[index] != num {
		index = -1
		for i, n := range os.nums {
			if n == num {
				index = i
			}
		}
		if index < 0 {
			return nil, fmt.Errorf("not found in object stream %d", sn)
		}
	}
	p := &parser{data: os.body[:os.ends[index]], pos: os.first + os.offsets[index]}
	return p.object(0)
}

func (d *document) objStream(sn int) (*objStream, error) {
	if os, ok := d.objStreams[sn]; ok {
		return os, nil
	}
	o, err := d.object(sn)
	if err != nil {
		return nil, err
	}
	st, ok := o.(*Stream)
	if !ok || st.Dict["Type"] != Name("ObjStm") {
		return nil, fmt.Errorf("object %d is not an object stream", sn)
	}
	body, err := d.decode(st)
	if err != nil {
		return nil, fmt.Errorf("object stream %d: %w", sn, err)
	}
	n, first := intOr(st.Dict["N"], -1), intOr(st.Dict["First"], -1)
	if n < 0 || first < 0 || first > len(body) || n > len(body) {
		return nil, fmt.Errorf("object stream %d: bad /N or /First", sn)
	}
	os := &objStream{body: body, first: first}
	p := &parser{data: body[:first]}
	for i := 0; i < n; i++ {
		num, err1 := p.integer()
		off, err2 := p.integer()
		if err := errors.Join(err1, err2); err != nil || int(off) > len(body)-first {
			return nil, fmt.Errorf("object stream %d: bad header entry %d", sn, i)
		}
		os.nums = append(os.nums, int(num))
		os.offsets = append(os.offsets, int(off))
	}
	os.ends = objectEnds(os.offsets, first, len(body))
	d.objStreams[sn] = os
	return os, nil
}

// objectEnds gives, for each offset (relative to first), the next larger
// one (absolute), or size for the last object.
func objectEnds(offsets []int, first, size int) []int {
	sorted := slices.Sorted(slices.Values(offsets))
	ends := make([]int, len(offsets))
	for i, off := range offsets {
		ends[i] = size
		if j, _ := slices.BinarySearch(sorted, off+1); j < len(sorted) {
			ends[i] = first + sorted[j]
		}
	}
	return ends
}

// resolve follows references until it reaches a direct object.
func (d *document) resolve(o Object) (Object, error) {
	for i := 0; i < maxNesting; i++ {
		r, ok := o.(Ref)
		if !ok {
			return o, nil
		}
		var err error
		if o, err = d.object(r.Num); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("pdfsign: reference chain too long")
}

// dict resolves o and requires a dictionary (a stream's dictionary counts).
func (d *document) dict(o Object) (Dict, error) {
	r, err := d.resolve(o)
	if err != nil {
		return nil, err
	}
	switch v := r.(type) {
	case Dict:
		return v, nil
	case *Stream:
		return v.Dict, nil
	}
	return nil, fmt.Errorf("pdfsign: expected a dictionary, found %T", r)
}

// array resolves o and requires an array; null counts as empty.
func (d *document) array(o Object) (Array, error) {
	r, err := d.resolve(o)
	if err != nil {
		return nil, err
	}
	switch v := r.(type) {
	case Array:
		return v, nil
	case Null, nil:
		return nil, nil
	}
	return nil, fmt.Errorf("pdfsign: expected an array, found %T", r)
}

// inheritable lists the page attributes a page takes from its ancestors.
var inheritable = []Name{"Resources", "MediaBox", "CropBox", "Rotate"}

// page is a leaf of the page tree.
type page struct {
	ref       Ref
	dict      Dict
	inherited Dict // inheritable attributes, resolved from the ancestors
}

// pages returns the pages in document order.
func (d *document) pages() ([]page, error) {
	_, cat, err := d.catalog()
	if err != nil {
		return nil, err
	}
	root, ok := cat["Pages"].(Ref)
	if !ok {
		return nil, structuref("catalog /Pages is not a reference")
	}
	var out []page
	seen := map[int]bool{}
	err = d.walkPages(root, Dict{}, 0, seen, &out)
	return out, err
}

func (d *document) walkPages(ref Ref, inh Dict, depth int, seen map[int]bool, out *[]page) error {
	if depth > maxNesting || seen[ref.Num] || len(seen) > d.lim.MaxObjects {
		return structuref("page tree loops or is too deep at object %d", ref.Num)
	}
	seen[ref.Num] = true
	node, err := d.dict(ref)
	if err != nil {
		return structuref("page tree node %d: %v", ref.Num, err)
	}
	inh = inherit(inh, node)
	if isLeaf(node) {
		*out = append(*out, page{ref: ref, dict: node, inherited: inh})
		return nil
	}
	arr, err := d.array(node["Kids"])
	if err != nil {
		return structuref("page tree node %d /Kids: %v", ref.Num, err)
	}
	for _, k := range arr {
		kr, ok := k.(Ref)
		if !ok {
			return structuref("page tree node %d has a direct kid", ref.Num)
		}
		if err := d.walkPages(kr, inh, depth+1, seen, out); err != nil {
			return err
		}
	}
	return nil
}

// inherit returns the inheritable attributes of node: those of its parent,
// inh, with its own. inh is shared, not copied, when node adds none (most
// pages): every page holds its attributes, and copies would cost memory
// per page. The result is never changed afterwards.
func inherit(inh, node Dict) Dict {
	own := false
	for _, k := range inheritable {
		if _, ok := node[k]; ok {
			own = true
		}
	}
	if !own {
		return inh
	}
	inh = inh.clone()
	for _, k := range inheritable {
		if v, ok := node[k]; ok {
			inh[k] = v
		}
	}
	return inh
}

// isLeaf reports whether a page tree node is a page: a node that says so,
// or one without /Kids.
func isLeaf(node Dict) bool {
	_, hasKids := node["Kids"]
	return node["Type"] == Name("Page") || !hasKids
}

// sigField is a signature form field that carries a signature value.
type sigField struct {
	name  string
	value Dict // the signature dictionary (/V)
}

// signatureFields returns the signed signature fields of the form. A
// signature dictionary (/V) that several fields share by reference is
// listed once, for the first of them: it is one signature, and checking it
// again would only hash the file again.
func (d *document) signatureFields() ([]sigField, error) {
	_, cat, err := d.catalog()
	if err != nil {
		return nil, err
	}
	form, err := d.dict(cat["AcroForm"])
	if err != nil {
		return nil, nil // no form, no signatures
	}
	fields, err := d.array(form["Fields"])
	if err != nil {
		return nil, fmt.Errorf("pdfsign: /AcroForm /Fields: %w", err)
	}
	w := fieldWalk{seen: map[int]bool{}, values: map[int]bool{}}
	for _, f := range fields {
		if err := d.walkField(f, "", "", 0, &w); err != nil {
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

func (d *document) walkField(o Object, parent string, ft Name, depth int, w *fieldWalk) error {
	if r, ok := o.(Ref); ok {
		if w.seen[r.Num] {
			return nil
		}
		w.seen[r.Num] = true
	}
	if depth > maxNesting || len(w.seen) > d.lim.MaxObjects {
		return errors.New("pdfsign: form field tree too deep or too large")
	}
	f, err := d.dict(o)
	if err != nil {
		return nil // a broken field is not a signature
	}
	name := parent
	if t, ok := f["T"].(String); ok {
		name = joinFieldName(parent, decodeText(t))
	}
	if v, ok := f["FT"].(Name); ok {
		ft = v
	}
	if v, err := d.dict(f["V"]); ft == "Sig" && err == nil {
		r, isRef := f["V"].(Ref)
		if !isRef || !w.values[r.Num] {
			if isRef {
				w.values[r.Num] = true
			}
			w.out = append(w.out, sigField{name: name, value: v})
		}
	}
	kids, _ := d.array(f["Kids"])
	for _, k := range kids {
		if err := d.walkField(k, name, ft, depth+1, w); err != nil {
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

// decodeText decodes a PDF text string: UTF-16BE with a byte-order mark,
// or PDFDocEncoding, which is read as Latin-1 (exact for the ASCII range).
func decodeText(s []byte) string {
	if len(s) >= 2 && s[0] == 0xFE && s[1] == 0xFF {
		var rs []rune
		for i := 2; i+1 < len(s); i += 2 {
			u := rune(s[i])<<8 | rune(s[i+1])
			if u >= 0xD800 && u < 0xDC00 && i+3 < len(s) {
				lo := rune(s[i+2])<<8 | rune(s[i+3])
				u = 0x10000 + (u-0xD800)<<10 + (lo - 0xDC00)
				i += 2
			}
			rs = append(rs, u)
		}
		return string(rs)
	}
	rs := make([]rune, len(s))
	for i, c := range s {
		rs[i] = rune(c)
	}
	return string(rs)
}
