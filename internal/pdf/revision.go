package pdf

import (
	"bytes"
	"sort"
)

// Decode returns the data of st with its filters undone, within the
// document's limits and decode budget.
func (d *Document) Decode(st *Stream) ([]byte, error) { return d.decode(st) }

// ChangedSince lists the objects that old, an earlier revision of d (d's
// file cut where that revision ends), had in use and that d's later
// revisions redefine or free. An object stored in an object stream that
// a later revision redefines counts as redefined: its entry is the same,
// its bytes may not be. Objects new since old are not listed.
func (d *Document) ChangedSince(old *Document) []int {
	var out []int
	restated := map[int]bool{} // object streams redefined since old
	for num, oe := range old.xref.entries {
		if e, ok := d.xref.entries[num]; oe.kind != 0 && (!ok || e != oe) {
			out = append(out, num)
			restated[num] = true
		}
	}
	for num, oe := range old.xref.entries {
		if e := d.xref.entries[num]; oe.kind == 2 && e == oe && restated[oe.stream] {
			out = append(out, num)
		}
	}
	return out
}

// AddedSince lists the objects that d has in use and old, an earlier
// revision of d, had not.
func (d *Document) AddedSince(old *Document) []int {
	var out []int
	for num, e := range d.xref.entries {
		if oe, ok := old.xref.entries[num]; e.kind != 0 && (!ok || oe.kind == 0) {
			out = append(out, num)
		}
	}
	return out
}

// TrailerRef returns the reference the newest trailer holds under key
// (Root, Info), and whether it holds one.
func (d *Document) TrailerRef(key Name) (Ref, bool) {
	r, ok := d.xref.trailer[key].(Ref)
	return r, ok
}

// Revisions returns where each revision of the file ends, oldest first:
// the end of the line after the "%%EOF" that follows each section of the
// cross-reference chain (ISO 32000-1, 7.5.6). A section with no "%%EOF"
// after it ends the file. A linearized file's first-page section is
// listed too: the prefix it ends is no document of its own, which the
// caller finds when it reads that prefix.
func (d *Document) Revisions() []int {
	var markers []int // every "%%EOF" of the file, found in one pass
	for i := 0; ; {
		j := bytes.Index(d.data[i:], eofMarker)
		if j < 0 {
			break
		}
		markers = append(markers, i+j)
		i += j + len(eofMarker)
	}
	ends := map[int]bool{}
	for _, off := range d.xref.sections {
		ends[revisionEnd(d.data, markers, off)] = true
	}
	return sortedNums(ends)
}

var eofMarker = []byte("%%EOF")

// revisionEnd is where the revision whose cross-reference section starts
// at off ends, given the offsets of the file's "%%EOF" markers.
func revisionEnd(data []byte, markers []int, off int) int {
	k := sort.SearchInts(markers, off)
	if k == len(markers) {
		return len(data)
	}
	end := markers[k] + len(eofMarker)
	if end < len(data) && data[end] == '\r' {
		end++
	}
	if end < len(data) && data[end] == '\n' {
		end++
	}
	return end
}
