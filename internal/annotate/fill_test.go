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
