package pdf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// Open reads pdf within lim (zero fields take DefaultLimits) so that
// pages and an incremental update can be added. A file whose structure is
// damaged is rebuilt cleanly first, unless it already carries a
// signature: the rebuild would invalidate it, so that case is refused
// with ErrDamagedSigned. The rebuild stops with ctx's error once ctx is
// done. The document must have at least one page. Every other error
// caused by pdf wraps one of the sentinel errors of this package. Save
// writes into the spare capacity of pdf, as append does.
func Open(ctx context.Context, pdf []byte, lim Limits) (d *Document, err error) {
	defer Recover(&err)
	d, err = open(ctx, pdf, lim.withDefaults())
	return d, inputError(err)
}

// Read reads pdf as it is, within lim, to inspect it (verify its
// signatures): a damaged structure is refused with ErrUnreadable, never
// repaired, and a document without pages is accepted. A file encrypted
// with an empty user password (one that opens without a password) is
// decrypted as it is read; one that needs a password fails with
// ErrEncrypted. Such a document takes no update.
func Read(pdf []byte, lim Limits) (d *Document, err error) {
	defer Recover(&err)
	d, err = read(pdf, lim.withDefaults(), true)
	return d, inputError(err)
}

func open(ctx context.Context, pdf []byte, lim Limits) (*Document, error) {
	d, err := readSound(pdf, lim)
	if err == nil || !errors.Is(err, errStructure) {
		return d, err
	}
	if bytes.Contains(pdf, []byte("/ByteRange")) {
		return nil, fmt.Errorf("%w: %v", ErrDamagedSigned, err)
	}
	fixed, rerr := rebuild(ctx, pdf, lim)
	if rerr != nil {
		return nil, fmt.Errorf("%w (while repairing: %v)", rerr, err)
	}
	d, err = readSound(fixed, lim)
	if err != nil {
		return nil, fmt.Errorf("%w: repaired file still unusable: %v", ErrUnreadable, err)
	}
	return d, nil
}

// readSound reads pdf and checks that its page tree can be walked and
// holds at least one page, so that an update has somewhere to go.
func readSound(pdf []byte, lim Limits) (*Document, error) {
	d, err := read(pdf, lim, false)
	if err != nil {
		return nil, err
	}
	pages, err := d.Pages()
	if err != nil {
		return nil, err
	}
	if len(pages) == 0 {
		return nil, structuref("document has no pages")
	}
	return d, nil
}

// checkEvery is how many objects a rebuild handles between looks at its
// context: often enough to stop soon after the client has gone, rarely
// enough to cost nothing.
const checkEvery = 1024

// rebuild reconstructs a file whose cross-reference data cannot be
// trusted, as other readers do: it scans the file for object headers
// ("n g obj", the last definition of a number winning, as in an update),
// adds the objects held in object streams, takes the newest trailer that
// names a catalog (or else the last catalog found), and writes every
// object into a new file with a sound cross-reference table. Object
// numbers must stay below lim.MaxObjects and generations within 65535:
// the output's size follows the input's, whatever numbers it claims.
// Object streams count against the document's decode budget. It stops
// with ctx's error once ctx is done.
func rebuild(ctx context.Context, pdf []byte, lim Limits) ([]byte, error) {
	start := bytes.Index(pdf[:min(len(pdf), 1024)], []byte("%PDF-"))
	if start < 0 {
		return nil, fmt.Errorf("%w: no %%PDF- header", ErrUnreadable)
	}
	data := pdf[start:] // offsets count from the header, as writers mean them
	x := &xrefInfo{entries: map[int]xrefEntry{}, ends: &streamEnds{}}
	d := newDocument(data, x, lim)
	gens, err := scanObjects(ctx, data, x, lim.MaxObjects)
	if err != nil {
		return nil, err
	}
	trailer, skip, err := d.recover(ctx)
	if err != nil {
		return nil, err
	}
	return d.writeClean(ctx, trailer, gens, skip)
}

// scanObjects records where each object header of data is, in x, and
// returns the generation of each object.
func scanObjects(ctx context.Context, data []byte, x *xrefInfo, maxObjects int) (map[int]int, error) {
	gens := map[int]int{}
	for i, n := 0, 0; ; n++ {
		j := bytes.Index(data[i:], []byte("obj"))
		if j < 0 {
			return gens, nil
		}
		at := i + j
		i = at + 3
		if n%checkEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if i < len(data) && !isSpace(data[i]) && !isDelimiter(data[i]) {
			continue // "objects", not "obj"
		}
		num, gen, off, ok := headerBefore(data, at)
		if !ok || num == 0 { // object 0 is the head of the free list, never an object
			continue
		}
		if num >= int64(maxObjects) || gen > 65535 {
			return nil, fmt.Errorf("%w: object %d %d at offset %d: numbers must stay below %d and generations within 65535",
				ErrUnreadable, num, gen, off, maxObjects)
		}
		x.entries[int(num)] = xrefEntry{kind: 1, offset: off}
		gens[int(num)] = int(gen)
	}
}

// headerBefore reads the "num gen" that precedes the keyword "obj" at at,
// reading backwards: white space, digits, white space, digits, and before
// them the start of data, white space or a delimiter.
func headerBefore(data []byte, at int) (num, gen int64, off int, ok bool) {
	p := at
	digits := func() (int64, bool) {
		end := p
		for p > 0 && end-p < 10 && isDigit(data[p-1]) {
			p--
		}
		if p == end || (p > 0 && isDigit(data[p-1])) {
			return 0, false
		}
		var v int64
		for _, c := range data[p:end] {
			v = v*10 + int64(c-'0')
		}
		return v, true
	}
	spaces := func() bool {
		end := p
		for p > 0 && isSpace(data[p-1]) {
			p--
		}
		return p < end
	}
	if !spaces() {
		return 0, 0, 0, false
	}
	if gen, ok = digits(); !ok || !spaces() {
		return 0, 0, 0, false
	}
	if num, ok = digits(); !ok || (p > 0 && !isSpace(data[p-1]) && !isDelimiter(data[p-1])) {
		return 0, 0, 0, false
	}
	return num, gen, p, true
}

// recover adds the objects of object streams to the scanned entries and
// finds the trailer. It returns the trailer and the objects that a clean
// file does not keep: object streams and cross-reference streams, whose
// content it holds in its own way.
func (d *Document) recover(ctx context.Context) (Dict, map[int]bool, error) {
	x := d.xref
	skip := map[int]bool{}
	var trailer Dict
	trailerAt, catalog, catalogAt := -1, -1, -1
	for n, num := range sortedNums(x.entries) {
		if n%checkEvery == 0 && ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		e := x.entries[num]
		o, err := d.Object(num)
		if err != nil {
			continue // written as missing; what refers to it gets null
		}
		delete(d.cache, num) // parsed again when written: hold one object at a time
		dict, _ := o.(Dict)
		if st, ok := o.(*Stream); ok {
			dict = st.Dict
		}
		switch dict["Type"] {
		case Name("ObjStm"):
			skip[num] = true
			if err := d.addCompressed(num, e.offset); err != nil {
				return nil, nil, err
			}
		case Name("XRef"):
			skip[num] = true
			if _, ok := dict["Root"].(Ref); ok && e.offset > trailerAt {
				trailer, trailerAt = dict, e.offset
			}
		case Name("Catalog"):
			if e.offset > catalogAt {
				catalog, catalogAt = num, e.offset
			}
		}
	}
	if t, at := lastTrailer(d.data, d.lim.MaxNesting); at > trailerAt {
		trailer = t
	}
	if _, ok := trailer["Encrypt"]; ok {
		return nil, nil, ErrEncrypted
	}
	if r, ok := trailer["Root"].(Ref); !ok || !x.has(r.Num) {
		if catalog < 0 {
			return nil, nil, fmt.Errorf("%w: no trailer and no catalog found", ErrUnreadable)
		}
		trailer = Dict{"Root": Ref{Num: catalog}, "Info": trailer["Info"], "ID": trailer["ID"]}
	}
	return trailer, skip, nil
}

// addCompressed lists the objects of object stream sn, found at offset
// at, where no definition later in the file overrides them.
func (d *Document) addCompressed(sn, at int) error {
	os, err := d.objStream(sn)
	if err != nil {
		return nil // a broken object stream holds nothing usable; its bytes count against the budget all the same
	}
	for i, num := range os.nums {
		if num >= d.lim.MaxObjects {
			return fmt.Errorf("%w: object %d in object stream %d: numbers must stay below %d", ErrUnreadable, num, sn, d.lim.MaxObjects)
		}
		if e, ok := d.xref.entries[num]; !ok || (e.kind == 1 && e.offset < at) {
			d.xref.entries[num] = xrefEntry{kind: 2, stream: sn, index: i}
		}
	}
	return nil
}

// lastTrailer returns the last "trailer" dictionary of data that names a
// catalog, and its offset (-1 when there is none). Each is read up to the
// next one at most, so that a string running over the rest of the file
// is not read once per trailer.
func lastTrailer(data []byte, maxDepth int) (Dict, int) {
	for end := len(data); ; {
		i := bytes.LastIndex(data[:end], []byte("trailer"))
		if i < 0 {
			return nil, -1
		}
		p := &parser{data: data[:end], pos: i + len("trailer"), maxDepth: maxDepth}
		end = i
		if o, err := p.object(0); err == nil {
			if t, ok := o.(Dict); ok {
				if _, ok := t["Root"].(Ref); ok {
					return t, i
				}
			}
		}
	}
}

// writeClean writes the objects of d, except those in skip, into a new
// file with one cross-reference table and trailer.
func (d *Document) writeClean(ctx context.Context, trailer Dict, gens map[int]int, skip map[int]bool) ([]byte, error) {
	s := &serializer{}
	s.buf.Grow(len(d.data) + 4096)
	s.buf.WriteString(headerLine(d.data) + "\n%\xe2\xe3\xcf\xd3\n")
	offsets := map[int]int{}
	size := 1
	for n, num := range sortedNums(d.xref.entries) {
		if n%checkEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if skip[num] {
			continue
		}
		o, err := d.Object(num)
		if err != nil {
			continue
		}
		delete(d.cache, num)
		if d.xref.entries[num].kind != 1 {
			gens[num] = 0 // objects in object streams have generation 0
		}
		at := s.buf.Len()
		fmt.Fprintf(&s.buf, "%d %d obj\n", num, gens[num])
		if err := s.write(o); err != nil {
			s.buf.Truncate(at) // a value that cannot be written again: the object is dropped
			continue
		}
		s.buf.WriteString("\nendobj\n")
		offsets[num], size = at, num+1
	}
	at := s.buf.Len()
	s.buf.WriteString("xref\n0 1\n0000000000 65535 f\r\n")
	for _, r := range runs(sortedNums(offsets)) {
		fmt.Fprintf(&s.buf, "%d %d\n", r[0], r[1])
		for n := r[0]; n < r[0]+r[1]; n++ {
			fmt.Fprintf(&s.buf, "%010d %05d n\r\n", offsets[n], gens[n])
		}
	}
	t := Dict{"Size": Int(size), "Root": trailer["Root"]}
	for _, k := range []Name{"Info", "ID"} {
		if v, ok := trailer[k]; ok && v != nil {
			t[k] = v
		}
	}
	s.buf.WriteString("trailer\n")
	if err := s.write(t); err != nil {
		return nil, fmt.Errorf("%w: trailer: %v", ErrUnreadable, err)
	}
	fmt.Fprintf(&s.buf, "\nstartxref\n%d\n%%%%EOF\n", at)
	return s.buf.Bytes(), nil
}

// headerLine is the "%PDF-n.m" line of data (which starts with "%PDF-"),
// or "%PDF-1.7" when the version is not of that form.
func headerLine(data []byte) string {
	if len(data) >= 8 && isDigit(data[5]) && data[6] == '.' && isDigit(data[7]) {
		return string(data[:8])
	}
	return "%PDF-1.7"
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// has reports whether the cross-reference data lists object num in use.
func (x *xrefInfo) has(num int) bool {
	e, ok := x.entries[num]
	return ok && e.kind != 0
}
