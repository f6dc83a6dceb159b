package certpage

import (
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// TestPagesKeepIndirectObjectsIndirect: once the certificate pages are
// appended to a document, what their resources refer to is an indirect
// object of its own, as ISO 32000-1 requires of a font's descendant font,
// descriptor, font file and ToUnicode CMap (pdffonts fails on a descriptor
// written inline), and the pages share one of each rather than a copy per
// page.
func TestPagesKeepIndirectObjectsIndirect(t *testing.T) {
	t.Parallel()
	d := sampleData("Ann")
	d.Events = append(d.Events, Event{Type: "submit", Timestamp: t0, Data: map[string]any{"signature": signaturePNG(t, 400, 150)}})
	d.Events = append(d.Events, manyEvents(40)...)
	pages, _, err := testRenderer(t).Pages(d, A4)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 2 {
		t.Fatalf("%d certificate pages, want several to see what they share", len(pages))
	}
	doc, err := pdf.Open(t.Context(), pdftest.OnePage("host"), pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := doc.AppendPages(pages); err != nil {
		t.Fatal(err)
	}
	out, err := doc.Save()
	if err != nil {
		t.Fatal(err)
	}
	if doc, err = pdf.Open(t.Context(), out, pdf.Limits{}); err != nil {
		t.Fatal(err)
	}
	written, err := doc.Pages()
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]pdf.Ref{} // resource path → the reference the first certificate page has
	for i, p := range written[1:] {
		for path, o := range indirectResources(t, doc, p.Dict["Resources"]) {
			ref, ok := o.(pdf.Ref)
			if !ok {
				t.Errorf("certificate page %d: %s is written inline (%T), not as an indirect object", i+1, path, o)
				continue
			}
			if first, seen := refs[path]; !seen {
				refs[path] = ref
			} else if first != ref {
				t.Errorf("certificate page %d: %s is %v, the first page's is %v: written twice", i+1, path, ref, first)
			}
		}
	}
	for _, want := range []string{"Font/F0", "Font/F0/DescendantFonts/0", "Font/F0/DescendantFonts/0/FontDescriptor",
		"Font/F0/DescendantFonts/0/FontDescriptor/FontFile2", "Font/F0/ToUnicode", "XObject/Im0"} {
		if _, ok := refs[want]; !ok {
			t.Errorf("no %s in the certificate pages' resources; found %v", want, refs)
		}
	}
}

// indirectResources returns, by path, the values in a page's resources
// that must be indirect objects: the fonts and images, and what a font
// refers to.
func indirectResources(t *testing.T, doc *pdf.Document, resources pdf.Object) map[string]pdf.Object {
	t.Helper()
	dict := func(o pdf.Object) pdf.Dict {
		d, err := doc.Dict(o)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	found := map[string]pdf.Object{}
	res := dict(resources)
	for name, o := range dict(res["XObject"]) {
		found["XObject/"+string(name)] = o
	}
	for name, f := range dict(res["Font"]) {
		path := "Font/" + string(name)
		found[path] = f
		font := dict(f)
		found[path+"/ToUnicode"] = font["ToUnicode"]
		desc, err := doc.Array(font["DescendantFonts"])
		if err != nil || len(desc) != 1 {
			t.Fatalf("%s: /DescendantFonts %v, %v", path, desc, err)
		}
		found[path+"/DescendantFonts/0"] = desc[0]
		fd := dict(desc[0])["FontDescriptor"]
		found[path+"/DescendantFonts/0/FontDescriptor"] = fd
		found[path+"/DescendantFonts/0/FontDescriptor/FontFile2"] = dict(fd)["FontFile2"]
	}
	return found
}
