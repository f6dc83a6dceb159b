package annotate

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/ooxml"
)

// controls lists the fields of a package's main document, as Fill sees them.
func controls(t *testing.T, docx []byte) []*sdt {
	t.Helper()
	f := &filling{pkg: mustOpen(t, docx), engine: newTestEngine(t, nil)}
	if err := f.load(); err != nil {
		t.Fatal(err)
	}
	return f.stories[0].sdts
}

func mustOpen(t testing.TB, docx []byte) *ooxml.Package {
	t.Helper()
	p, err := ooxml.Open(docx, DefaultLimits.Package)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// grouped returns the package with every w:tag of its main document
// replaced by the JSON tag of group g.
func grouped(t *testing.T, docx []byte, g string) []byte {
	t.Helper()
	p := mustOpen(t, docx)
	doc, _ := p.Read(documentPart)
	tag := regexp.MustCompile(`<w:tag w:val="[^"]*"\s*/>`)
	json := `<w:tag w:val="{&quot;group&quot;:&quot;` + g + `&quot;,&quot;fieldType&quot;:&quot;x&quot;}"/>`
	var e ooxml.Edits
	e.Set(p, documentPart, tag.ReplaceAll(doc, []byte(json)))
	out, err := p.Rewrite(&e, documentPart)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// filledControl returns the control with w:id id in the filled package.
func filledControl(t *testing.T, docx []byte, id string) *sdt {
	t.Helper()
	for _, c := range controls(t, docx) {
		if c.id == id {
			return c
		}
	}
	t.Fatalf("no control %s after filling", id)
	return nil
}

// sameUntouched checks that every entry of in other than the parts
// allowed to change is in out byte for byte (compressed data, CRC, times).
func sameUntouched(t *testing.T, in, out []byte, changed ...string) {
	t.Helper()
	before, after := rawEntries(t, in), rawEntries(t, out)
	for name, raw := range before {
		if contains(changed, name) {
			continue
		}
		if after[name] != raw {
			t.Errorf("%s changed", name)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var changedByImages = []string{documentPart, "word/_rels/document.xml.rels", contentTypesPart}

// TestFillEveryFixture fills every control of every template with every
// field type, by id and by group, and checks the result, then fills the
// result again.
func TestFillEveryFixture(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t, nil)
	for _, name := range fixtures(t) {
		docx := fixture(t, name)
		for _, c := range controls(t, docx) {
			for _, by := range []string{"id", "group"} {
				t.Run(fmt.Sprintf("%s/%s/by-%s", name, c.id, by), func(t *testing.T) {
					in, field := docx, Field{ID: c.id}
					if by == "group" {
						in, field = grouped(t, docx, "g"), Field{Group: "g"}
					}
					fillEveryType(t, e, in, c, field)
				})
			}
		}
	}
}

func fillEveryType(t *testing.T, e *Engine, in []byte, c *sdt, field Field) {
	ctx := context.Background()
	fill := func(t *testing.T, doc []byte, f Field) []byte {
		t.Helper()
		out, rep, err := e.Fill(ctx, doc, []Field{f})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Unmatched) > 0 {
			t.Fatalf("unmatched %v", rep.Unmatched)
		}
		return out
	}
	t.Run("text", func(t *testing.T) {
		f := field
		f.Type, f.Value, f.Options.KeepTextNodeStyles = TypeText, "Filled <value> & more", true
		out := fill(t, in, f)
		sameUntouched(t, in, out, documentPart)
		got := filledControl(t, out, c.id)
		if text := textOf(got.content); text != "Filled <value> & more" {
			t.Errorf("content text %q", text)
		}
		if got.el.Child(nsW, "sdtPr").Child(nsW, "showingPlcHdr") != nil {
			t.Error("the filled control still shows its placeholder")
		}
		if got.isBlock() != c.isBlock() {
			t.Errorf("block %v became %v", c.isBlock(), got.isBlock())
		}
		if want := firstTextRunProps(c.content); want != nil && !strings.Contains(string(got.story.doc.Bytes(got.content.Inner)), string(c.raw(want))) {
			t.Errorf("the run lost its properties %s", c.raw(want))
		}
		f.Value = "Second fill"
		again := fill(t, out, f)
		if text := textOf(filledControl(t, again, c.id).content); text != "Second fill" {
			t.Errorf("refilled content text %q", text)
		}
		sameUntouched(t, out, again, documentPart)
	})
	t.Run("image", func(t *testing.T) {
		f := field
		f.Type, f.Value, f.Options.Width, f.Options.Height = TypeImage, pngDataURI(t, 40, 20), 180, 90.5
		out := fill(t, in, f)
		sameUntouched(t, in, out, changedByImages...)
		checkExtent(t, out, c.id, 1714500, 862013)
		media := entries(t, out)["word/media/quire-image1.png"]
		if len(media) == 0 {
			t.Fatal("no media part")
		}
		if ct := string(entries(t, out)[contentTypesPart]); !regexp.MustCompile(`(?i)Extension="png"`).MatchString(ct) {
			t.Error("no content type for png")
		}
		again := fill(t, out, f)
		checkExtent(t, again, c.id, 1714500, 862013)
		if len(entries(t, again)["word/media/quire-image2.png"]) == 0 {
			t.Error("the second fill did not add its own media part")
		}
	})
	t.Run("signature", func(t *testing.T) {
		f := field
		f.Type, f.Value = TypeSignature, pngDataURI(t, 300, 100)
		f.Options.BottomLabel = Label{Text: "ip: 127.0.0.1", Color: "#666"}
		out := fill(t, in, f)
		sameUntouched(t, in, out, changedByImages...)
		checkExtent(t, out, c.id, signatureWidthEMU, signatureHeightEMU)
		f.Value = "Jane Typed"
		typed := fill(t, in, f)
		if text := textOf(filledControl(t, typed, c.id).content); text != "Jane Typed" {
			t.Errorf("typed signature %q", text)
		}
	})
	if tbl := c.content.Find(nsW, "tbl"); tbl != nil {
		t.Run("table", func(t *testing.T) {
			f := field
			f.Type, f.Rows = TypeTable, [][]string{{"r1c1", "r1c2"}, {"r2c1"}}
			out := fill(t, in, f)
			sameUntouched(t, in, out, documentPart)
			checkRows(t, c, filledControl(t, out, c.id), f.Rows)
		})
	}
}

// textOf is the text of the w:t elements under e.
func textOf(e *ooxml.Element) string {
	var b strings.Builder
	e.Walk(func(x *ooxml.Element) bool {
		if x.Is(nsW, "t") {
			b.WriteString(x.Text)
		}
		return true
	})
	return b.String()
}

func checkExtent(t *testing.T, docx []byte, id string, cx, cy int64) {
	t.Helper()
	c := filledControl(t, docx, id)
	ext := c.content.Find(nsWP, "extent")
	if ext == nil {
		t.Fatalf("no wp:extent in %s", c.story.doc.Bytes(c.content.Outer))
	}
	gx, _ := ext.AttrValue("", "cx")
	gy, _ := ext.AttrValue("", "cy")
	if gx != fmt.Sprint(cx) || gy != fmt.Sprint(cy) {
		t.Errorf("extent %s x %s, want %d x %d", gx, gy, cx, cy)
	}
}

// checkRows checks that the table of the filled control kept its rows and
// got one more per value row, with the template row's cell properties.
func checkRows(t *testing.T, before, after *sdt, values [][]string) {
	t.Helper()
	rows := func(c *sdt) []*ooxml.Element {
		var out []*ooxml.Element
		for _, x := range c.content.Find(nsW, "tbl").Children {
			if x.Is(nsW, "tr") {
				out = append(out, x)
			}
		}
		return out
	}
	old, now := rows(before), rows(after)
	if len(now) != len(old)+len(values) {
		t.Fatalf("%d rows, want %d", len(now), len(old)+len(values))
	}
	tmpl := old[len(old)-1]
	for i, row := range now[len(old):] {
		cells, tcells := children(row, "tc"), children(tmpl, "tc")
		if len(cells) != len(tcells) {
			t.Fatalf("row %d has %d cells, the template %d", i, len(cells), len(tcells))
		}
		for j, tc := range cells {
			want := before.raw(tcells[j].Child(nsW, "tcPr"))
			if got := after.raw(tc.Child(nsW, "tcPr")); string(got) != string(want) {
				t.Errorf("row %d cell %d: tcPr %s, want %s", i, j, got, want)
			}
			if got := after.raw(tc.Child(nsW, "p").Child(nsW, "pPr")); string(got) != string(before.raw(tcells[j].Child(nsW, "p").Child(nsW, "pPr"))) {
				t.Errorf("row %d cell %d: pPr %s", i, j, got)
			}
		}
		if text := textOf(row); !strings.HasPrefix(text, values[i][0]) {
			t.Errorf("row %d text %q", i, text)
		}
	}
}

func children(e *ooxml.Element, local string) []*ooxml.Element {
	var out []*ooxml.Element
	for _, c := range e.Children {
		if c.Is(nsW, local) {
			out = append(out, c)
		}
	}
	return out
}

// TestImageNaturalSize: without dimensions an image takes its size at 96
// dpi, scaled down to the text width (12240 - 2 x 1440 twips here).
func TestImageNaturalSize(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t, nil)
	docx := fixture(t, "synthetic-sc-template.docx")
	for _, c := range []struct {
		w, h   int
		cx, cy int64
	}{{100, 50, 952500, 476250}, {2000, 100, 5943600, 297180}} {
		out, _, err := e.Fill(context.Background(), docx, []Field{{ID: "777", Type: TypeImage, Value: pngDataURI(t, c.w, c.h)}})
		if err != nil {
			t.Fatal(err)
		}
		checkExtent(t, out, "777", c.cx, c.cy)
	}
}

// TestHeadersAndFooters: controls in headers are fields too, after those
// of the body, and their images get relationships of their own part.
func TestHeadersAndFooters(t *testing.T) {
	t.Parallel()
	docx := fixture(t, "sdts-basic.docx")
	p := mustOpen(t, docx)
	rels, _ := p.Read("word/_rels/document.xml.rels")
	var ed ooxml.Edits
	ed.Set(p, "word/_rels/document.xml.rels", []byte(strings.Replace(string(rels), "</Relationships>",
		`<Relationship Id="rId99" Type="`+relHeader+`" Target="header1.xml"/></Relationships>`, 1)))
	ed.Set(p, "word/header1.xml", []byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+
		`<w:hdr xmlns:w="`+nsW+`"><w:p><w:r><w:t>Head: </w:t></w:r><w:sdt><w:sdtPr><w:id w:val="-436595273"/><w:tag w:val="{&quot;group&quot;:&quot;h&quot;}"/><w:showingPlcHdr/></w:sdtPr>`+
		`<w:sdtContent><w:r><w:t>here</w:t></w:r></w:sdtContent></w:sdt></w:p></w:hdr>`))
	docx, err := p.Rewrite(&ed, documentPart)
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEngine(t, nil)
	// By id, the body's control comes first; by group, the header's is found.
	out, rep, err := e.Fill(context.Background(), docx, []Field{
		{ID: "-436595273", Type: TypeText, Value: "Body"},
		{Group: "h", Type: TypeImage, Value: pngDataURI(t, 10, 10)},
	})
	if err != nil || len(rep.Unmatched) > 0 {
		t.Fatal(err, rep)
	}
	all := entries(t, out)
	head := string(all["word/header1.xml"])
	if !strings.Contains(string(all[documentPart]), ">Body<") || !strings.Contains(head, "<wp:extent") || strings.Contains(head, "showingPlcHdr") {
		t.Errorf("header %s", head)
	}
	if r := string(all["word/_rels/header1.xml.rels"]); !strings.Contains(r, `Target="media/quire-image1.png"`) {
		t.Errorf("header relationships %q", r)
	}
}

// TestNotFields: tables of contents (docPartObj) and the editor library's
// document sections are not fields; tags that are not JSON or have no
// group match no group.
func TestNotFields(t *testing.T) {
	t.Parallel()
	sdt := func(id, pr string) string {
		return `<w:sdt><w:sdtPr><w:id w:val="` + id + `"/>` + pr + `</w:sdtPr><w:sdtContent><w:p><w:r><w:t>old</w:t></w:r></w:p></w:sdtContent></w:sdt>`
	}
	doc := `<w:document xmlns:w="` + nsW + `"><w:body>` +
		sdt("1", `<w:docPartObj><w:docPartGallery w:val="Table of Contents"/></w:docPartObj>`) +
		sdt("2", `<w:tag w:val="{&quot;type&quot;:&quot;documentSection&quot;,&quot;group&quot;:&quot;g&quot;}"/>`) +
		sdt("3", `<w:tag w:val="group"/>`) +
		sdt("4", `<w:tag w:val="{&quot;fieldId&quot;:&quot;g&quot;}"/>`) +
		`</w:body></w:document>`
	docx := withPart(t, fixture(t, "sdts-basic.docx"), documentPart, []byte(doc))
	_, rep, err := newTestEngine(t, nil).Fill(context.Background(), docx, []Field{
		{ID: "1", Type: TypeText, Value: "x"}, {ID: "2", Type: TypeText, Value: "x"},
		{Group: "g", Type: TypeText, Value: "x"}, {Group: "group", Type: TypeText, Value: "x"},
		{ID: "4", Type: TypeText, Value: "x"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rep.Unmatched, " "); got != "1 2 group:g group:group" {
		t.Errorf("unmatched %q", got)
	}
}
