package pdf

import (
	"context"
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
	MaxNesting     int   // deepest nesting of arrays and dictionaries, of the page tree and of form fields, and longest reference chain
}

// DefaultLimits fit the service's upload limit with room to spare.
func DefaultLimits() Limits {
	return Limits{MaxInputSize: 64 << 20, MaxObjects: 1_000_000, MaxDecodedSize: 64 << 20, MaxNesting: 64}
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
	if l.MaxNesting > 0 {
		d.MaxNesting = l.MaxNesting
	}
	return d
}

// Document is a PDF file opened once: its bytes, its cross-reference data,
// the objects loaded so far and the changes made to it, which Save writes
// as one incremental update. Objects are loaded lazily, so only what is
// asked for (catalog, page tree, form) is ever parsed; a changed object
// reads as its new version. A Document is not safe for concurrent use.
type Document struct {
	data       []byte
	xref       *xrefInfo
	lim        Limits
	cache      map[int]Object
	failed     map[int]error // objects that failed to load, not retried
	objStreams map[int]*objStream
	loading    map[int]bool // guards against reference cycles
	decoded    int64        // bytes decompressed so far, against decodeBudget
	starts     []int        // offsets of the objects in the file, ascending; built on first use
	changes    changes      // the pending incremental update
	dataHash   []byte       // the state of a SHA-256 that has hashed data; taken on first use
	crypt      *decryptor   // an encrypted file read with its empty user password; nil: not encrypted
}

// decodeBudget bounds the bytes decompressed per document, whatever the
// number of streams, so that many small bombs cost no more than one: a
// multiple of the file's size (real object and content streams compress
// a few times at most), plus a floor for small files, and never more than
// four of the largest streams.
func (d *Document) decodeBudget() int64 {
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
func (d *Document) decode(st *Stream) ([]byte, error) {
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

// read parses the structure of data. It fails with ErrTooLarge,
// ErrEncrypted, or an errStructure error when the file's cross-reference
// data cannot be relied on. With decrypt, a file encrypted by the
// standard security handler with an empty user password is read, its
// objects decrypted as they load; without, or with another password, an
// encrypted file fails with ErrEncrypted.
func read(data []byte, lim Limits, decrypt bool) (*Document, error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.MaxInputSize {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(data), lim.MaxInputSize)
	}
	x, err := readXRef(data, lim)
	if err != nil {
		return nil, err
	}
	d := newDocument(data, x, lim)
	if _, ok := x.trailer["Encrypt"]; ok {
		if !decrypt {
			return nil, ErrEncrypted
		}
		dc, err := newDecryptor(d)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrEncrypted, err)
		}
		d.crypt = dc
	}
	if _, _, err := d.Catalog(); err != nil {
		return nil, err
	}
	return d, nil
}

func newDocument(data []byte, x *xrefInfo, lim Limits) *Document {
	return &Document{data: data, xref: x, lim: lim,
		cache: map[int]Object{}, failed: map[int]error{}, objStreams: map[int]*objStream{}, loading: map[int]bool{},
		changes: newChanges()}
}

// size is the trailer /Size an update must extend: one more than the
// highest object number in use. A /Size beyond the object limit is a lie
// (no entry can be there) and is not followed, so that the numbers of an
// update stay within the limit too.
func (d *Document) size() int {
	n := IntOr(d.xref.trailer["Size"], 0)
	if n > d.lim.MaxObjects {
		n = 0
	}
	for num := range d.xref.entries {
		n = max(n, num+1)
	}
	return n
}

// ObjectCount is the number of objects the document may hold: one more
// than the highest object number in use, within the object limit. It is
// known once the cross-reference data is read, before any object is
// parsed: the measure of what reading the document will cost.
func (d *Document) ObjectCount() int { return d.size() }

// Limits are the bounds the document is read within.
func (d *Document) Limits() Limits { return d.lim }

// Catalog returns the document catalog and its reference.
func (d *Document) Catalog() (Ref, Dict, error) {
	ref := d.xref.trailer["Root"].(Ref)
	cat, err := d.Dict(ref)
	if err != nil {
		return Ref{}, nil, structuref("catalog %d %d R: %v", ref.Num, ref.Gen, err)
	}
	return ref, cat, nil
}

// Object loads object num; a missing or free object is null, as the
// standard says. A changed object reads as its new version.
func (d *Document) Object(num int) (Object, error) {
	if o, ok := d.changes.objects[num]; ok {
		return o, nil
	}
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
		return nil, fmt.Errorf("pdf: object %d refers to itself", num)
	}
	d.loading[num] = true
	defer delete(d.loading, num)
	var o Object
	var err error
	if e.kind == 1 {
		var gen int
		o, gen, err = d.parseAt(num, e.offset)
		if err == nil && d.crypt != nil { // objects in object streams are decrypted with their stream
			o, err = d.crypt.object(num, gen, o)
		}
	} else {
		o, err = d.fromObjStream(e.stream, e.index, num)
	}
	if err != nil {
		d.failed[num] = fmt.Errorf("pdf: object %d: %w", num, err)
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
func (d *Document) parseAt(num, off int) (Object, int, error) {
	p := &parser{data: d.data[:d.objectEnd(off)], pos: off, maxDepth: d.lim.MaxNesting}
	_, gen, err := p.objectHeader()
	if err != nil {
		return nil, 0, err
	}
	o, err := p.object(0)
	if err != nil {
		return nil, 0, err
	}
	dict, ok := o.(Dict)
	if !ok {
		return o, gen, nil
	}
	start, ok := p.streamStart()
	if !ok {
		return dict, gen, nil
	}
	length, err := d.Resolve(dict["Length"])
	if err != nil {
		return nil, 0, err
	}
	raw, err := d.xref.ends.streamBytes(d.data, start, length)
	if err != nil {
		return nil, 0, err
	}
	return &Stream{Dict: dict, Data: raw}, gen, nil
}

// objectEnd is where the syntax of the object at off must end: where the
// next object that the cross-reference data lists starts.
func (d *Document) objectEnd(off int) int {
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
func (d *Document) fromObjStream(sn, index, num int) (Object, error) {
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
	p := &parser{data: os.body[:os.ends[index]], pos: os.first + os.offsets[index], maxDepth: d.lim.MaxNesting}
	return p.object(0)
}

func (d *Document) objStream(sn int) (*objStream, error) {
	if os, ok := d.objStreams[sn]; ok {
		return os, nil
	}
	o, err := d.Object(sn)
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
	n, first := IntOr(st.Dict["N"], -1), IntOr(st.Dict["First"], -1)
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

// Resolve follows references until it reaches a direct object.
func (d *Document) Resolve(o Object) (Object, error) {
	for i := 0; i < d.lim.MaxNesting; i++ {
		r, ok := o.(Ref)
		if !ok {
			return o, nil
		}
		var err error
		if o, err = d.Object(r.Num); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("pdf: reference chain too long")
}

// Dict resolves o and requires a dictionary (a stream's dictionary counts).
func (d *Document) Dict(o Object) (Dict, error) {
	r, err := d.Resolve(o)
	if err != nil {
		return nil, err
	}
	switch v := r.(type) {
	case Dict:
		return v, nil
	case *Stream:
		return v.Dict, nil
	}
	return nil, fmt.Errorf("pdf: expected a dictionary, found %T", r)
}

// Array resolves o and requires an array; null counts as empty.
func (d *Document) Array(o Object) (Array, error) {
	r, err := d.Resolve(o)
	if err != nil {
		return nil, err
	}
	switch v := r.(type) {
	case Array:
		return v, nil
	case Null, nil:
		return nil, nil
	}
	return nil, fmt.Errorf("pdf: expected an array, found %T", r)
}

// inheritable lists the page attributes a page takes from its ancestors.
var inheritable = []Name{"Resources", "MediaBox", "CropBox", "Rotate"}

// PageObject is a leaf of the page tree.
type PageObject struct {
	Ref       Ref
	Dict      Dict
	Inherited Dict // inheritable attributes, resolved from the ancestors
}

// Pages returns the pages in document order.
func (d *Document) Pages() ([]PageObject, error) {
	return d.PagesContext(context.Background())
}

// PagesContext is Pages that stops with ctx's error once ctx ends: a
// page tree may have millions of nodes.
func (d *Document) PagesContext(ctx context.Context) ([]PageObject, error) {
	pages, _, err := d.PageTree(ctx)
	return pages, err
}

// PageTree is PagesContext that also returns the object numbers of the
// nodes of the page tree, the pages included.
func (d *Document) PageTree(ctx context.Context) ([]PageObject, map[int]bool, error) {
	_, cat, err := d.Catalog()
	if err != nil {
		return nil, nil, err
	}
	root, ok := cat["Pages"].(Ref)
	if !ok {
		return nil, nil, structuref("catalog /Pages is not a reference")
	}
	var out []PageObject
	seen := map[int]bool{}
	err = d.walkPages(ctx, root, Dict{}, 0, seen, &out)
	return out, seen, err
}

func (d *Document) walkPages(ctx context.Context, ref Ref, inh Dict, depth int, seen map[int]bool, out *[]PageObject) error {
	if depth > d.lim.MaxNesting || seen[ref.Num] || len(seen) > d.lim.MaxObjects {
		return structuref("page tree loops or is too deep at object %d", ref.Num)
	}
	if len(seen)%checkEvery == 0 && ctx.Err() != nil {
		return ctx.Err()
	}
	seen[ref.Num] = true
	node, err := d.Dict(ref)
	if err != nil {
		return structuref("page tree node %d: %v", ref.Num, err)
	}
	inh = inherit(inh, node)
	if isLeaf(node) {
		*out = append(*out, PageObject{Ref: ref, Dict: node, Inherited: inh})
		return nil
	}
	arr, err := d.Array(node["Kids"])
	if err != nil {
		return structuref("page tree node %d /Kids: %v", ref.Num, err)
	}
	for _, k := range arr {
		kr, ok := k.(Ref)
		if !ok {
			return structuref("page tree node %d has a direct kid", ref.Num)
		}
		if err := d.walkPages(ctx, kr, inh, depth+1, seen, out); err != nil {
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
	inh = inh.Clone()
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
