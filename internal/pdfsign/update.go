package pdfsign

import (
	"bytes"
	"compress/zlib"
	"crypto/rand"
	"fmt"
	"maps"
	"slices"
)

// update is one incremental update (ISO 32000-1, 7.5.6): new and changed
// objects appended after the original bytes, then a cross-reference
// section of the same kind as the file's newest one, whose /Prev points at
// the previous section. The original file stays a byte prefix of the
// output, which is what keeps earlier signatures valid.
type update struct {
	doc     *document
	next    int            // next unused object number
	objects map[int]Object // new and changed objects by number
	gens    map[int]int    // generation numbers of changed objects
	shared  map[Object]Ref // *Stream and *Indirect values already added: one used twice is one object
}

func newUpdate(d *document) *update {
	return &update{doc: d, next: d.size(), objects: map[int]Object{}, gens: map[int]int{}, shared: map[Object]Ref{}}
}

// add stores o as a new object and returns its reference.
func (u *update) add(o Object) Ref {
	r := Ref{Num: u.next}
	u.next++
	u.objects[r.Num] = u.hoist(o)
	return r
}

// replace stores a new version of the existing object r.
func (u *update) replace(r Ref, o Object) {
	u.objects[r.Num] = u.hoist(o)
	u.gens[r.Num] = r.Gen
}

// hoist turns streams and *Indirect values nested in dictionaries and
// arrays into objects of their own (a stream must be an indirect object),
// so callers can build resource trees with fonts and images inline.
func (u *update) hoist(o Object) Object {
	switch v := o.(type) {
	case Dict:
		c := make(Dict, len(v))
		for k, e := range v {
			c[k] = u.hoistNested(e)
		}
		return c
	case Array:
		c := make(Array, len(v))
		for i, e := range v {
			c[i] = u.hoistNested(e)
		}
		return c
	case *Stream:
		return &Stream{Dict: u.hoist(v.Dict).(Dict), Data: v.Data}
	case *Indirect:
		return u.hoist(v.Value)
	}
	return o
}

// hoistNested returns the reference of a nested stream or *Indirect value,
// numbering it before its content is hoisted so that values referring to
// each other in a cycle end.
func (u *update) hoistNested(o Object) Object {
	switch o.(type) {
	case *Stream, *Indirect:
		if r, done := u.shared[o]; done {
			return r
		}
		r := Ref{Num: u.next}
		u.next++
		u.shared[o] = r
		u.objects[r.Num] = u.hoist(o)
		return r
	}
	return u.hoist(o)
}

// appendRef adds r to the array holder[key], creating it when missing. An
// array held by reference gets a new version of its own object, so the
// holder's other users see the change too.
func (u *update) appendRef(holder Dict, key Name, r Ref) error {
	cur := holder[key]
	if ref, ok := cur.(Ref); ok {
		if arr, isArr := u.current(ref).(Array); isArr {
			u.replace(ref, append(append(Array{}, arr...), r))
			return nil
		}
	}
	arr, err := u.doc.array(cur)
	if err != nil {
		return fmt.Errorf("pdfsign: /%s: %w", key, err)
	}
	holder[key] = append(append(Array{}, arr...), r)
	return nil
}

// current returns the newest version of object r: the one in this update
// if it was changed, otherwise the one in the file.
func (u *update) current(r Ref) Object {
	if o, ok := u.objects[r.Num]; ok {
		return o
	}
	o, err := u.doc.object(r.Num)
	if err != nil {
		return nil
	}
	return o
}

// written is the output of an update.
type written struct {
	pdf   []byte
	marks marks
}

// write appends the objects and the cross-reference section to the
// original bytes and records where the signature placeholders went.
func (u *update) write() (written, error) {
	orig := u.doc.data
	out := make([]byte, len(orig), len(orig)+64<<10)
	copy(out, orig)
	if n := len(out); n > 0 && out[n-1] != '\n' && out[n-1] != '\r' {
		out = append(out, '\n')
	}
	s := &serializer{base: len(out)}
	nums := sortedNums(u.objects)
	offsets := make(map[int]int, len(nums)+1)
	for _, n := range nums {
		offsets[n] = s.base + s.buf.Len()
		fmt.Fprintf(&s.buf, "%d %d obj\n", n, u.gens[n])
		if err := s.write(u.objects[n]); err != nil {
			return written{}, fmt.Errorf("pdfsign: object %d: %w", n, err)
		}
		s.buf.WriteString("\nendobj\n")
	}
	var err error
	if u.doc.xref.lastIsStream {
		err = u.writeXRefStream(s, offsets)
	} else {
		err = u.writeXRefTable(s, offsets)
	}
	if err != nil {
		return written{}, err
	}
	return written{pdf: append(out, s.buf.Bytes()...), marks: s.m}, nil
}

// trailer builds the trailer entries of the update: /Prev chains it to
// the file's previous section; /Root, /Info and /ID carry over.
func (u *update) trailer(size int) Dict {
	t := u.doc.xref.trailer
	d := Dict{"Size": Int(size), "Prev": Int(u.doc.xref.startxref), "Root": t["Root"]}
	if info, ok := t["Info"].(Ref); ok {
		d["Info"] = info
	}
	d["ID"] = fileID(t["ID"])
	return d
}

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
func (u *update) writeXRefTable(s *serializer, offsets map[int]int) error {
	at := s.base + s.buf.Len()
	nums := sortedNums(offsets)
	s.buf.WriteString("xref\n")
	for _, r := range runs(nums) {
		fmt.Fprintf(&s.buf, "%d %d\n", r[0], r[1])
		for n := r[0]; n < r[0]+r[1]; n++ {
			fmt.Fprintf(&s.buf, "%010d %05d n\r\n", offsets[n], u.gens[n])
		}
	}
	s.buf.WriteString("trailer\n")
	if err := s.write(u.trailer(u.next)); err != nil {
		return err
	}
	fmt.Fprintf(&s.buf, "\nstartxref\n%d\n%%%%EOF\n", at)
	return nil
}

// writeXRefStream writes a cross-reference stream (ISO 32000-1, 7.5.8)
// holding the entries of the update, itself included.
func (u *update) writeXRefStream(s *serializer, offsets map[int]int) error {
	self := u.next
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
		rows.WriteByte(byte(u.gens[n] >> 8))
		rows.WriteByte(byte(u.gens[n]))
	}
	var index Array
	for _, r := range runs(nums) {
		index = append(index, Int(r[0]), Int(r[1]))
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	_, _ = zw.Write(rows.Bytes())
	if err := zw.Close(); err != nil {
		return err
	}
	d := u.trailer(self + 1)
	d["Type"], d["W"], d["Index"], d["Filter"] = Name("XRef"), Array{Int(1), Int(ow), Int(2)}, index, Name("FlateDecode")
	fmt.Fprintf(&s.buf, "%d 0 obj\n", self)
	if err := s.write(&Stream{Dict: d, Data: z.Bytes()}); err != nil {
		return err
	}
	fmt.Fprintf(&s.buf, "\nendobj\nstartxref\n%d\n%%%%EOF\n", at)
	return nil
}
