package safeinput

import (
	"bytes"
	"testing"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

func TestWithoutOutsideLinks(t *testing.T) {
	rels := `<Relationship Id="a" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="file:///x.png" TargetMode="External"/>` +
		`<Relationship Id="b" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="https://example.com/" TargetMode="External"/>` +
		`<Relationship Id="c" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/i.png"/>` +
		`<Relationship Id="d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/subDocument" Target="../s.docx" TargetMode='External'></Relationship>`
	svg := `<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///x">]><?xml-stylesheet href="http://h/s.css"?><svg><image xlink:href="file:///x.png"/><image href='&#x2F;x.png'/>` +
		`<use xlink:href="#local"/><image href="data:image/png;base64,AA"/><rect style="fill:url(http://h/p)"/></svg>`
	odt := `<office:text><draw:image xlink:href="Pictures/i.png"/><draw:image xlink:href="/x.png"/><draw:image xlink:href="../x.png"/>` +
		`<text:section-source xlink:href="http://h/s"/><text:a xlink:href="file:///x.pdf">link</text:a></office:text>`
	in := convtest.Zip(map[string]string{"word/_rels/document.xml.rels": rels, "word/media/x.svg": svg, "content.xml": odt, "word/document.xml": "<w:document/>"})
	wantSVG := `<svg><image xlink:href=""/><image href=""/><use xlink:href="#local"/><image href="data:image/png;base64,AA"/><rect style="fill:none"/></svg>`
	for _, c := range []struct {
		from string
		want map[string]string
	}{
		{engine.FromDOCX, map[string]string{
			"word/_rels/document.xml.rels": `<Relationship Id="b" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="https://example.com/" TargetMode="External"/>` +
				`<Relationship Id="c" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/i.png"/>`,
			"word/media/x.svg": wantSVG, "content.xml": odt, "word/document.xml": "<w:document/>",
		}},
		{engine.FromODT, map[string]string{
			"content.xml": `<office:text><draw:image xlink:href="Pictures/i.png"/><draw:image xlink:href=""/><draw:image xlink:href=""/>` +
				`<text:section-source xlink:href=""/><text:a xlink:href="file:///x.pdf">link</text:a></office:text>`,
			"word/media/x.svg": wantSVG, "word/_rels/document.xml.rels": rels,
		}},
	} {
		out := withoutOutsideLinks(in, c.from)
		for name, body := range c.want {
			if got := convtest.PartOf(out, name); got != body {
				t.Errorf("%s, %s:\n got %s\nwant %s", c.from, name, got, body)
			}
		}
	}
	clean := convtest.DOCXBody(convtest.Paragraphs(2, "nothing outside"), "")
	if got := withoutOutsideLinks(clean, engine.FromDOCX); !bytes.Equal(got, clean) {
		t.Error("a package with nothing outside was rewritten")
	}
}

// TestSpreadsheetAndSlideLinks: a workbook's link to another workbook and
// a slide's linked picture lose their relationships; an ODS sheet linked
// to another file and an ODP linked image lose their targets.
func TestSpreadsheetAndSlideLinks(t *testing.T) {
	const rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
	ext := func(typ, target string) string {
		return `<Relationships><Relationship Id="r1" Type="` + rel + typ + `" Target="` + target + `" TargetMode="External"/></Relationships>`
	}
	for _, c := range []struct {
		from, part, body, want string
	}{
		{engine.FromXLSX, "xl/externalLinks/_rels/externalLink1.xml.rels", ext("externalLinkPath", "file:///etc/secret.xlsx"), "<Relationships></Relationships>"},
		{engine.FromPPTX, "ppt/slides/_rels/slide1.xml.rels", ext("image", "http://127.0.0.1/pixel.png"), "<Relationships></Relationships>"},
		{engine.FromODS, "content.xml", `<table:table><table:table-source xlink:href="file:///etc/other.ods"/></table:table>`, `<table:table><table:table-source xlink:href=""/></table:table>`},
		{engine.FromODP, "content.xml", `<draw:frame><draw:image xlink:href="http://h/i.png"/></draw:frame>`, `<draw:frame><draw:image xlink:href=""/></draw:frame>`},
	} {
		out := withoutOutsideLinks(convtest.Zip(map[string]string{c.part: c.body}), c.from)
		if got := convtest.PartOf(out, c.part); got != c.want {
			t.Errorf("%s, %s:\n got %s\nwant %s", c.from, c.part, got, c.want)
		}
	}
}
