package pdf

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// update opens b, lets fn change it and saves the change as an update.
func update(t *testing.T, b []byte, fn func(d *Document)) []byte {
	t.Helper()
	d, err := Open(context.Background(), b, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	fn(d)
	out, err := d.Save()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRevisionsAndChanges: each incremental update is a revision, ending
// after its "%%EOF" and line end (CR LF included) or at the end of the
// file without one; against each earlier revision, the objects redefined
// and those added are told apart.
func TestRevisionsAndChanges(t *testing.T) {
	t.Parallel()
	base := pdftest.OnePage("one")
	base = append(bytes.TrimSuffix(base, []byte("\n")), "\r\n"...)
	var note Ref
	second := update(t, base, func(d *Document) {
		page, err := d.Dict(Ref{Num: 3})
		if err != nil {
			t.Fatal(err)
		}
		page = page.Clone()
		note = d.Add(Dict{"Type": Name("Annot"), "Subtype": Name("Text"), "Rect": Array{Int(0), Int(0), Int(9), Int(9)}})
		page["Annots"] = Array{note}
		d.Replace(Ref{Num: 3}, page)
	})
	third := update(t, second, func(d *Document) {
		d.Replace(Ref{Num: 5}, Dict{"Type": Name("Font"), "Subtype": Name("Type1"), "BaseFont": Name("Courier")})
	})
	unterminated := bytes.TrimSuffix(third, []byte("%%EOF\n"))
	if len(unterminated) == len(third) {
		t.Fatalf("the update ends with %q, not %%%%EOF and a line feed", third[len(third)-8:])
	}
	d := readOK(t, unterminated)
	ends := d.Revisions()
	if want := []int{len(base), len(second), len(unterminated)}; !slices.Equal(ends, want) {
		t.Fatalf("Revisions: %v, want %v", ends, want)
	}
	for i, want := range []struct{ changed, added []int }{{[]int{3, 5}, []int{note.Num}}, {[]int{5}, nil}} {
		old := readOK(t, unterminated[:ends[i]])
		changed, added := d.ChangedSince(old), d.AddedSince(old)
		slices.Sort(changed)
		if !slices.Equal(changed, want.changed) || !slices.Equal(added, want.added) {
			t.Errorf("since revision %d: changed %v, added %v; want %v and %v", i+1, changed, added, want.changed, want.added)
		}
	}
	if r, ok := d.TrailerRef("Root"); !ok || r != (Ref{Num: 1}) {
		t.Errorf("TrailerRef(Root): %v %v", r, ok)
	}
	if r, ok := d.TrailerRef("Info"); ok {
		t.Errorf("TrailerRef(Info) of a file without one: %v", r)
	}
}

// readOK reads b, failing the test if it cannot.
func readOK(t *testing.T, b []byte) *Document {
	t.Helper()
	d, err := Read(b, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}
