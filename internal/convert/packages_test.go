package convert

import (
	"archive/zip"
	"bytes"
	"testing"
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
	in := zipOf(map[string]string{"word/_rels/document.xml.rels": rels, "word/media/x.svg": svg, "content.xml": odt, "word/document.xml": "<w:document/>"})
	wantSVG := `<svg><image xlink:href=""/><image href=""/><use xlink:href="#local"/><image href="data:image/png;base64,AA"/><rect style="fill:none"/></svg>`
	for _, c := range []struct {
		from string
		want map[string]string
	}{
		{FromDOCX, map[string]string{
			"word/_rels/document.xml.rels": `<Relationship Id="b" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="https://example.com/" TargetMode="External"/>` +
				`<Relationship Id="c" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/i.png"/>`,
			"word/media/x.svg": wantSVG, "content.xml": odt, "word/document.xml": "<w:document/>",
		}},
		{FromODT, map[string]string{
			"content.xml": `<office:text><draw:image xlink:href="Pictures/i.png"/><draw:image xlink:href=""/><draw:image xlink:href=""/>` +
				`<text:section-source xlink:href=""/><text:a xlink:href="file:///x.pdf">link</text:a></office:text>`,
			"word/media/x.svg": wantSVG, "word/_rels/document.xml.rels": rels,
		}},
	} {
		out := withoutOutsideLinks(in, c.from)
		z, err := zip.NewReader(bytes.NewReader(out), int64(len(out)))
		if err != nil {
			t.Fatal(err)
		}
		for name, body := range c.want {
			if got := string(readZIPFile(zipFile(z, name), 1<<20)); got != body {
				t.Errorf("%s, %s:\n got %s\nwant %s", c.from, name, got, body)
			}
		}
	}
	clean := docx(paragraphs(2, "nothing outside"), "")
	if got := withoutOutsideLinks(clean, FromDOCX); !bytes.Equal(got, clean) {
		t.Error("a package with nothing outside was rewritten")
	}
}
