package pdf

// Decode returns the data of st with its filters undone, within the
// document's limits and decode budget.
func (d *Document) Decode(st *Stream) ([]byte, error) { return d.decode(st) }

// ChangedSince lists the objects that old, an earlier revision of d (d's
// file cut where that revision ends), had in use and that d's later
// revisions redefine or free. Objects new since old are not listed.
func (d *Document) ChangedSince(old *Document) []int {
	var out []int
	for num, oe := range old.xref.entries {
		if e, ok := d.xref.entries[num]; oe.kind != 0 && (!ok || e != oe) {
			out = append(out, num)
		}
	}
	return out
}
