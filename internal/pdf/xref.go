package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
)

// errStructure marks a file whose cross-reference data cannot be trusted:
// an incremental update on top of it would inherit the damage, so such a
// file is rewritten first (or refused when already signed).
var errStructure = errors.New("broken file structure")

func structuref(format string, a ...any) error {
	return fmt.Errorf("pdf: %w: "+format, append([]any{errStructure}, a...)...)
}

// maxXRefSections bounds the /Prev chain of a file.
const maxXRefSections = 4096

// maxRowsPerObject bounds the cross-reference rows read over the whole
// chain, as a multiple of the object limit: an object may be listed more
// than once (by an update as well as by the original section, or by both
// halves of a hybrid file), but rows beyond that only cost time, since a
// row naming an object already known is skipped.
const maxRowsPerObject = 2

// xrefEntry says where object lives: kind 1 at a file offset, kind 2 as
// the index-th object of object stream number stream; kind 0 is free.
type xrefEntry struct {
	kind   byte
	offset int
	stream int
	index  int
}

// xrefInfo is everything the cross-reference sections of a file say.
type xrefInfo struct {
	entries      map[int]xrefEntry
	decoded      int64       // bytes decompressed from xref streams so far
	rows         int         // entries read from all sections so far
	parsed       int         // bytes of sections read so far
	ends         *streamEnds // where streams with a wrong /Length end
	trailer      Dict        // the newest trailer (or xref stream dictionary)
	startxref    int         // value of the last startxref: /Prev of an update
	lastIsStream bool        // the newest section is an xref stream
	sections     []int       // offsets of the sections of the /Prev chain, newest first
}

// readXRef walks the cross-reference chain from the last startxref through
// every /Prev (and hybrid /XRefStm), then checks that each in-use entry
// points at the object it claims. Any inconsistency is an errStructure.
func readXRef(data []byte, lim Limits) (*xrefInfo, error) {
	if !bytes.HasPrefix(data, []byte("%PDF-")) {
		return nil, structuref("file does not start with %%PDF-")
	}
	sx, err := lastStartXRef(data)
	if err != nil {
		return nil, err
	}
	x := &xrefInfo{entries: map[int]xrefEntry{}, startxref: sx, ends: &streamEnds{}}
	seen := map[int]bool{}
	for off, first := sx, true; ; first = false {
		if seen[off] || len(seen) >= maxXRefSections {
			return nil, structuref("cross-reference /Prev chain loops at offset %d", off)
		}
		seen[off] = true
		x.sections = append(x.sections, off)
		trailer, isStream, err := x.section(data, off, lim)
		if err != nil {
			return nil, err
		}
		if first {
			x.trailer, x.lastIsStream = trailer, isStream
		}
		if stm, ok := trailer["XRefStm"].(Int); ok && !isStream {
			if _, _, err := x.section(data, int(stm), lim); err != nil {
				return nil, err
			}
		}
		prev, ok := trailer["Prev"].(Int)
		if !ok {
			break
		}
		off = int(prev)
	}
	if _, ok := x.trailer["Root"].(Ref); !ok {
		return nil, structuref("trailer has no /Root reference")
	}
	return x, x.check(data)
}

// lastStartXRef finds the value of the last "startxref" near the end.
func lastStartXRef(data []byte) (int, error) {
	tail := data[max(0, len(data)-4096):]
	i := bytes.LastIndex(tail, []byte("startxref"))
	if i < 0 {
		return 0, structuref("no startxref in the last 4096 bytes")
	}
	p := parser{data: tail, pos: i + len("startxref")}
	n, err := p.integer()
	if err != nil || n >= int64(len(data)) {
		return 0, structuref("startxref value is not an offset within the file")
	}
	return int(n), nil
}

// section reads one cross-reference section (table or stream) at off and
// records its entries unless a newer section already did.
func (x *xrefInfo) section(data []byte, off int, lim Limits) (Dict, bool, error) {
	if off < 0 || off >= len(data) {
		return nil, false, structuref("cross-reference offset %d outside the file", off)
	}
	p := &parser{data: data, pos: off, maxDepth: lim.MaxNesting}
	isStream := p.keyword() != "xref"
	var d Dict
	var err error
	if isStream {
		p.pos = off
		d, err = x.stream(p, lim.MaxObjects)
	} else {
		d, err = x.table(p, lim.MaxObjects)
	}
	// Sections do not overlap, so reading them all reads the file once.
	// Sections that do (a trailer holding a string that runs over all the
	// sections before it) would have every section read the rest of the
	// file.
	if x.parsed += p.pos - off; err == nil && x.parsed > 2*len(data) {
		err = structuref("cross-reference sections overlap")
	}
	return d, isStream, err
}

func (x *xrefInfo) add(num int, e xrefEntry, maxObjects int) error {
	if x.rows++; x.rows > maxRowsPerObject*maxObjects {
		return structuref("cross-reference sections list more than %d entries", maxRowsPerObject*maxObjects)
	}
	if _, ok := x.entries[num]; ok {
		return nil
	}
	if len(x.entries) >= maxObjects {
		return structuref("more than %d objects", maxObjects)
	}
	x.entries[num] = e
	return nil
}

// table reads a classic "xref" table and the trailer dictionary after it.
func (x *xrefInfo) table(p *parser, maxObjects int) (Dict, error) {
	for {
		save := p.pos
		if p.keyword() == "trailer" {
			break
		}
		p.pos = save
		start, err1 := p.integer()
		count, err2 := p.integer()
		if err := errors.Join(err1, err2); err != nil {
			return nil, structuref("xref subsection header: %v", err)
		}
		if start+count > int64(maxObjects) {
			return nil, structuref("xref subsection %d+%d exceeds %d objects", start, count, maxObjects)
		}
		for i := int64(0); i < count; i++ {
			off, err1 := p.integer()
			_, err2 := p.integer() // the generation number is not needed
			kind := p.keyword()
			if err := errors.Join(err1, err2); err != nil || (kind != "n" && kind != "f") {
				return nil, structuref("xref entry %d: malformed", start+i)
			}
			e := xrefEntry{offset: int(off)}
			if kind == "n" {
				e.kind = 1
			}
			if err := x.add(int(start+i), e, maxObjects); err != nil {
				return nil, err
			}
		}
	}
	o, err := p.object(0)
	if err != nil {
		return nil, structuref("trailer: %v", err)
	}
	d, ok := o.(Dict)
	if !ok {
		return nil, structuref("trailer is not a dictionary")
	}
	return d, nil
}

// stream reads a cross-reference stream object.
func (x *xrefInfo) stream(p *parser, maxObjects int) (Dict, error) {
	if _, _, err := p.objectHeader(); err != nil {
		return nil, structuref("cross-reference stream: %v", err)
	}
	o, err := p.object(0)
	d, ok := o.(Dict)
	if err != nil || !ok || d["Type"] != Name("XRef") {
		return nil, structuref("startxref/Prev does not point at an xref table or stream")
	}
	start, ok := p.streamStart()
	if !ok {
		return nil, structuref("cross-reference stream without stream data")
	}
	raw, err := x.ends.streamBytes(p.data, start, d["Length"])
	if err != nil {
		return nil, structuref("cross-reference stream: %v", err)
	}
	// A row is at most 24 bytes (three fields of at most 8), so the
	// whole chain never needs more than that per object.
	body, produced, err := decodeStream(d, raw, int64(maxObjects)*24-x.decoded)
	x.decoded += produced
	if err != nil {
		return nil, structuref("cross-reference stream: %v", err)
	}
	return d, x.streamEntries(d, body, maxObjects)
}

// streamEntries decodes the binary rows of an xref stream per /W and /Index.
func (x *xrefInfo) streamEntries(d Dict, body []byte, maxObjects int) error {
	w, ok := d["W"].(Array)
	if !ok || len(w) != 3 {
		return structuref("xref stream /W is not a 3-element array")
	}
	var widths [3]int
	for i := range widths {
		widths[i] = IntOr(w[i], -1)
		if widths[i] < 0 || widths[i] > 8 {
			return structuref("xref stream /W value out of range")
		}
	}
	index, ok := d["Index"].(Array)
	if !ok {
		index = Array{Int(0), d["Size"]}
	}
	// Rows of zero bytes would let /Index ask for any number of entries
	// without any data behind them.
	rowLen := widths[0] + widths[1] + widths[2]
	if rowLen == 0 {
		return structuref("xref stream /W gives rows of zero bytes")
	}
	for i := 0; i+1 < len(index); i += 2 {
		start, count := IntOr(index[i], -1), IntOr(index[i+1], -1)
		if start < 0 || count < 0 || start+count > maxObjects {
			return structuref("xref stream /Index out of range")
		}
		if int64(count)*int64(rowLen) > int64(len(body)) {
			return structuref("xref stream data shorter than /Index says")
		}
		for j := 0; j < count; j++ {
			f := [3]int{1, 0, 0}
			for k, wk := range widths {
				if wk > 0 {
					f[k] = beInt(body[:wk])
					body = body[wk:]
				}
			}
			e := xrefEntry{kind: byte(f[0])}
			switch f[0] {
			case 1:
				e.offset = f[1] // f[2], the generation number, is not needed
			case 2:
				e.stream, e.index = f[1], f[2]
			default:
				e.kind = 0
			}
			if err := x.add(start+j, e, maxObjects); err != nil {
				return err
			}
		}
	}
	return nil
}

func beInt(b []byte) int {
	n := 0
	for _, c := range b {
		n = n<<8 | int(c)
	}
	return n & (1<<62 - 1)
}

// check verifies that every in-use entry points at its object: a damaged
// table is what makes other readers "reconstruct" a file, and an update
// must not be stacked on such a file.
func (x *xrefInfo) check(data []byte) error {
	for num, e := range x.entries {
		switch e.kind {
		case 1:
			p := parser{data: data, pos: e.offset}
			if e.offset < 0 || e.offset >= len(data) {
				return structuref("object %d: offset %d outside the file", num, e.offset)
			}
			n, _, err := p.objectHeader()
			if err != nil || n != num {
				return structuref("object %d: xref offset %d does not point at it", num, e.offset)
			}
		case 2:
			if s, ok := x.entries[e.stream]; !ok || s.kind != 1 {
				return structuref("object %d: object stream %d is missing", num, e.stream)
			}
		}
	}
	return nil
}

// streamEnds indexes the "endstream" keywords of one file. A stream whose
// /Length is wrong ends at the first "endstream" after its start. Searching
// the file forward for each such stream costs time quadratic in the file
// size when that keyword is far away (many streams with a wrong /Length
// and no "endstream" of their own, all running to one near the end), so
// the file is scanned once, on the first wrong /Length, and each stream
// then takes a binary search.
type streamEnds struct {
	offsets []int // of every "endstream", ascending
	built   bool
	scanned int // bytes searched for "endstream": at most the file size
}

var endstreamKeyword = []byte("endstream")

// next returns the offset of the first "endstream" at or after start.
func (e *streamEnds) next(data []byte, start int) (int, bool) {
	if !e.built {
		e.built = true
		e.scanned += len(data)
		for i := 0; ; {
			j := bytes.Index(data[i:], endstreamKeyword)
			if j < 0 {
				break
			}
			e.offsets = append(e.offsets, i+j)
			i += j + len(endstreamKeyword)
		}
	}
	k := sort.SearchInts(e.offsets, start)
	if k == len(e.offsets) {
		return 0, false
	}
	return e.offsets[k], true
}

// streamBytes returns the raw data of a stream starting at start in data,
// the file e indexes. A wrong /Length is common; it is corrected by
// looking for "endstream".
func (e *streamEnds) streamBytes(data []byte, start int, length Object) ([]byte, error) {
	if n, ok := length.(Int); ok && n >= 0 && int64(start)+int64(n) <= int64(len(data)) {
		end := start + int(n)
		p := parser{data: data, pos: end}
		if p.keyword() == "endstream" {
			return data[start:end], nil
		}
	}
	end, ok := e.next(data, start)
	if !ok {
		return nil, errors.New("stream has no endstream")
	}
	if end > start && data[end-1] == '\n' {
		end--
	}
	if end > start && data[end-1] == '\r' {
		end--
	}
	return data[start:end], nil
}
