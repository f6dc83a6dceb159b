package pdf

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
)

// changes are a document's pending incremental update (ISO 32000-1,
// 7.5.6): new and changed objects, which Save appends after the original
// bytes with a cross-reference section of the same kind as the file's
// newest one, whose /Prev points at the previous section. The original
// file stays a byte prefix of the output, which is what keeps earlier
// signatures valid.
type changes struct {
	next    int            // next unused object number; 0 until the first Add
	objects map[int]Object // new and changed objects by number
	gens    map[int]int    // generation numbers of changed objects
	added   map[any]Ref    // *Stream and *Indirect values added: one shared by several pages is one object
	info    Ref            // the trailer's new /Info (SetInfo); zero: the file's own
}

func newChanges() changes {
	return changes{objects: map[int]Object{}, gens: map[int]int{}, added: map[any]Ref{}}
}

// Add stores o as a new object and returns its reference. Streams and
// *Indirect values nested in o become objects of their own (a stream must
// be an indirect object), each once however often it is nested, so
// callers can build resource trees with fonts and images inline.
func (d *Document) Add(o Object) Ref {
	if d.changes.next == 0 {
		d.changes.next = d.size()
	}
	r := Ref{Num: d.changes.next}
	d.changes.next++
	d.changes.objects[r.Num] = d.hoist(o)
	return r
}

// Replace stores a new version of the existing object r.
func (d *Document) Replace(r Ref, o Object) {
	d.changes.objects[r.Num] = d.hoist(o)
	d.changes.gens[r.Num] = r.Gen
}

// hoist turns the streams and *Indirect values nested in o into objects
// of their own.
func (d *Document) hoist(o Object) Object {
	switch v := o.(type) {
	case Dict:
		c := make(Dict, len(v))
		for _, k := range sortedKeys(v) { // numbered in the order written: equal objects give equal files
			c[k] = d.hoistNested(v[k])
		}
		return c
	case Array:
		c := make(Array, len(v))
		for i, e := range v {
			c[i] = d.hoistNested(e)
		}
		return c
	case *Stream:
		return &Stream{Dict: d.hoist(v.Dict).(Dict), Data: v.Data}
	case *Indirect:
		return d.hoist(v.Object)
	}
	return o
}

func (d *Document) hoistNested(o Object) Object {
	switch o.(type) {
	case *Stream, *Indirect:
		if r, done := d.changes.added[o]; done {
			return r
		}
		r := d.Add(o)
		d.changes.added[o] = r
		return r
	}
	return d.hoist(o)
}

// AppendRef adds r to the array holder[key], creating it when missing. An
// array held by reference gets a new version of its own object, so the
// holder's other users see the change too.
func (d *Document) AppendRef(holder Dict, key Name, r Ref) error {
	cur := holder[key]
	if ref, ok := cur.(Ref); ok {
		if o, err := d.Object(ref.Num); err == nil {
			if arr, isArr := o.(Array); isArr {
				d.Replace(ref, append(append(Array{}, arr...), r))
				return nil
			}
		}
	}
	arr, err := d.Array(cur)
	if err != nil {
		return fmt.Errorf("pdf: /%s: %w", key, err)
	}
	holder[key] = append(append(Array{}, arr...), r)
	return nil
}

// Save returns the file with the changes appended as an incremental
// update, and records in each Placeholder where it was written. The output
// extends the bytes the document was opened with, in place when their
// spare capacity holds the update (as append does): a caller that gives
// Open a buffer with room to spare has the file built without a copy,
// and must not use that room for anything else. Save is called once.
func (d *Document) Save() ([]byte, error) {
	if d.crypt != nil { // the update's objects would have to be encrypted too
		return nil, ErrEncrypted
	}
	out := d.data
	if n := len(out); n > 0 && out[n-1] != '\n' && out[n-1] != '\r' {
		out = append(out, '\n')
	}
	s := &serializer{base: len(out)}
	c := &d.changes
	if c.next == 0 {
		c.next = d.size()
	}
	nums := sortedNums(c.objects)
	offsets := make(map[int]int, len(nums)+1)
	for _, n := range nums {
		offsets[n] = s.base + s.buf.Len()
		fmt.Fprintf(&s.buf, "%d %d obj\n", n, c.gens[n])
		if err := s.write(c.objects[n]); err != nil {
			return nil, fmt.Errorf("pdf: object %d: %w", n, err)
		}
		s.buf.WriteString("\nendobj\n")
	}
	var err error
	if d.xref.lastIsStream {
		err = d.writeXRefStream(s, offsets)
	} else {
		err = d.writeXRefTable(s, offsets)
	}
	if err != nil {
		return nil, err
	}
	return append(out, s.buf.Bytes()...), nil
}

// trailer builds the trailer entries of the update: /Prev chains it to
// the file's previous section; /Root, /Info and /ID carry over. A new file
// (see Write) has no previous section, and its identifier is a hash of
// its body, the bytes before the cross-reference section.
func (d *Document) trailer(size int, body []byte) Dict {
	t := d.xref.trailer
	tr := Dict{"Size": Int(size), "Root": t["Root"]}
	if info, ok := t["Info"].(Ref); ok {
		tr["Info"] = info
	}
	if d.changes.info != (Ref{}) {
		tr["Info"] = d.changes.info
	}
	if d.isNew() {
		sum := sha256.Sum256(body)
		tr["ID"] = Array{HexString(sum[:16]), HexString(sum[:16])}
		return tr
	}
	tr["Prev"] = Int(d.xref.startxref)
	tr["ID"] = fileID(t["ID"])
	return tr
}

// isNew reports a document made by Write rather than read from a file.
func (d *Document) isNew() bool { return d.xref.startxref < 0 }

// fileID keeps the file identifier; a file without a valid one gets a
// fresh random one (both halves equal, as for a newly created file).
func fileID(o Object) Array {
	if a, ok := o.(Array); ok && len(a) == 2 && isString(a[0]) && isString(a[1]) {
		return a
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	return Array{HexString(id), HexString(id)}
}

func isString(o Object) bool {
	switch o.(type) {
	case String, HexString:
		return true
	}
	return false
}

// runs groups sorted object numbers into runs of consecutive numbers:
// the subsections of a table, the /Index pairs of a stream.
func runs(nums []int) [][2]int {
	var out [][2]int
	for _, n := range nums {
		if k := len(out); k > 0 && out[k-1][0]+out[k-1][1] == n {
			out[k-1][1]++
			continue
		}
		out = append(out, [2]int{n, 1})
	}
	return out
}

// sortedNums returns the object numbers that key m, in ascending order.
func sortedNums[V any](m map[int]V) []int {
	return slices.Sorted(maps.Keys(m))
}

// writeXRefTable writes a classic "xref" section, trailer and startxref.
func (d *Document) writeXRefTable(s *serializer, offsets map[int]int) error {
	at := s.base + s.buf.Len()
	nums := sortedNums(offsets)
	s.buf.WriteString("xref\n")
	if d.isNew() {
		s.buf.WriteString("0 1\n0000000000 65535 f\r\n")
	}
	for _, r := range runs(nums) {
		fmt.Fprintf(&s.buf, "%d %d\n", r[0], r[1])
		for n := r[0]; n < r[0]+r[1]; n++ {
			fmt.Fprintf(&s.buf, "%010d %05d n\r\n", offsets[n], d.changes.gens[n])
		}
	}
	s.buf.WriteString("trailer\n")
	if err := s.write(d.trailer(d.changes.next, s.buf.Bytes())); err != nil {
		return err
	}
	fmt.Fprintf(&s.buf, "\nstartxref\n%d\n%%%%EOF\n", at)
	return nil
}

// writeXRefStream writes a cross-reference stream (ISO 32000-1, 7.5.8)
// holding the entries of the update, itself included.
func (d *Document) writeXRefStream(s *serializer, offsets map[int]int) error {
	self := d.changes.next
	at := s.base + s.buf.Len()
	offsets[self] = at
	nums := sortedNums(offsets)
	ow := 1
	for at >= 1<<(8*ow) {
		ow++
	}
	var rows bytes.Buffer
	for _, n := range nums {
		rows.WriteByte(1)
		for i := ow - 1; i >= 0; i-- {
			rows.WriteByte(byte(offsets[n] >> (8 * i)))
		}
		rows.WriteByte(byte(d.changes.gens[n] >> 8))
		rows.WriteByte(byte(d.changes.gens[n]))
	}
	var index Array
	for _, r := range runs(nums) {
		index = append(index, Int(r[0]), Int(r[1]))
	}
	z := Deflate(rows.Bytes())
	tr := d.trailer(self+1, s.buf.Bytes())
	tr["Type"], tr["W"], tr["Index"], tr["Filter"] = Name("XRef"), Array{Int(1), Int(ow), Int(2)}, index, Name("FlateDecode")
	fmt.Fprintf(&s.buf, "%d 0 obj\n", self)
	if err := s.write(&Stream{Dict: tr, Data: z}); err != nil {
		return err
	}
	fmt.Fprintf(&s.buf, "\nendobj\nstartxref\n%d\n%%%%EOF\n", at)
	return nil
}
