package annotate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/ooxml"
)

// TestSameStructureAsReference fills the synthetic template as the
// reference library (superdoc 1.46.3) filled it, and compares each filled
// control's content with the library's: the same elements with the same
// attributes, in any order, after setting aside the documented deliberate
// differences:
//   - run properties (w:rPr): kept whole, where the library loses some;
//   - xml:space="preserve" on w:t, so that spaces at the ends survive;
//   - identifiers that must be unique or are the library's bookkeeping:
//     w14:paraId and w14:textId, w:rsid*, wp:docPr and pic:cNvPr ids and
//     names, the relationship id of the picture;
//   - namespace declarations, placed on wp:inline here;
//   - the rows that were there stay as they were, where the library drops
//     their table property exceptions (w:tblPrEx).
func TestSameStructureAsReference(t *testing.T) {
	t.Parallel()
	ref := fixture(t, referenceOutput)
	e := newTestEngine(t, nil)
	out, rep, err := e.Fill(context.Background(), fixture(t, "synthetic-sc-template.docx"), []Field{
		{ID: "-436595273", Type: TypeText, Value: "Jane Doe", Options: Options{KeepTextNodeStyles: true}},
		{Group: "company", Type: TypeText, Value: "ACME Inc", Options: Options{KeepTextNodeStyles: true}},
		{ID: "777", Type: TypeImage, Value: pngDataURI(t, 150, 80)},
		{ID: "-22177123", Type: TypeTable, Rows: [][]string{{"X1", "Y1"}, {"X2", "Y2"}}, Options: Options{CopyRowStyle: true}},
	})
	if err != nil || len(rep.Unmatched) > 0 {
		t.Fatal(err, rep)
	}
	want, got := controls(t, ref), controls(t, out)
	if len(want) != len(got) {
		t.Fatalf("%d controls, the reference has %d", len(got), len(want))
	}
	for i := range want {
		w, g := skeleton(want[i].content), skeleton(got[i].content)
		if !slices.Equal(w, g) {
			t.Errorf("control %s differs from the reference:\n only here: %v\n only there: %v", want[i].id, minus(g, w), minus(w, g))
		}
	}
	// The new media part is registered as the reference registers its own.
	if rels := string(entries(t, out)["word/_rels/document.xml.rels"]); !strings.Contains(rels, `Type="`+relImage+`" Target="media/`) {
		t.Errorf("relationships %s", rels)
	}
}

// ignored are the attributes set aside by the comparison.
func ignored(a string) bool {
	for _, p := range []string{"xmlns", "http://www.w3.org/XML/1998/namespace space", nsW14 + " paraId", nsW14 + " textId", nsW + " rsid", nsR + " embed"} {
		if strings.HasPrefix(a, p) {
			return true
		}
	}
	return false
}

// skeleton lists each element under e (rPr and tblPrEx subtrees left out) as its path
// and sorted attributes, sorted.
func skeleton(e *ooxml.Element) []string {
	var out []string
	var walk func(x *ooxml.Element, path string)
	walk = func(x *ooxml.Element, path string) {
		if x.Is(nsW, "rPr") || x.Is(nsW, "tblPrEx") {
			return
		}
		path += "/" + x.Name.Local
		var attrs []string
		for _, a := range x.Attr {
			name := a.Name.Space + " " + a.Name.Local
			if ignored(name) || a.Name.Space == "xmlns" {
				continue
			}
			v := a.Value
			if x.Is(nsWP, "docPr") || x.Is(nsPic, "cNvPr") {
				v = "*"
			}
			attrs = append(attrs, fmt.Sprintf("%s=%s", name, v))
		}
		slices.Sort(attrs)
		out = append(out, path+" "+strings.Join(attrs, " "))
		for _, c := range x.Children {
			walk(c, path)
		}
	}
	for _, c := range e.Children {
		walk(c, "")
	}
	slices.Sort(out)
	return out
}

// minus lists the lines of a missing from b.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if i := slices.Index(b, x); i >= 0 {
			b = slices.Delete(slices.Clone(b), i, i+1)
			continue
		}
		out = append(out, x)
	}
	return out
}
