package libreoffice

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

// The resource test: documents in every input format that reach for
// content outside themselves, by URL of every scheme and by local path.
// A loopback listener counts the connections; local canary files (an
// image, a text, an SVG with a marker) must not reach the PDF, by text
// (pdftotext), by bytes (the PDF uncompressed by qpdf) or as an image
// (pdfimages: an image of the canary's 16 x 16 pixels).

// canaryMarker is written in the text canaries; no document holds it.
const canaryMarker = "QUIRECANARY"

// canaries are local files that documents reach for.
type canaries struct {
	png, txt, svg, html string // paths
}

// canaryPaths names the canaries, in a directory of their own; write
// creates them.
func canaryPaths(t *testing.T) canaries {
	dir := t.TempDir()
	return canaries{png: filepath.Join(dir, "secret.png"), txt: filepath.Join(dir, "secret.txt"), svg: filepath.Join(dir, "secret.svg"), html: filepath.Join(dir, "secret.html")}
}

func (c canaries) write(t *testing.T) {
	t.Helper()
	files := map[string]string{
		c.txt:  canaryMarker + "TXT a secret of the server\n",
		c.svg:  `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40"><text x="0" y="20">` + canaryMarker + `SVG</text></svg>`,
		c.html: `<html><body><p>` + canaryMarker + `HTML</p></body></html>`,
	}
	for path, body := range files {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if png := writePNG(t, filepath.Dir(c.png)); png != c.png {
		t.Fatalf("writePNG wrote %s, want %s", png, c.png)
	}
}

// resourceDoc is one document of the table.
type resourceDoc struct {
	name, from string
	in         []byte
	refused    bool // LibreOffice cannot load it at all: 422
	cold       bool // converted by the cold soffice
}

// refs is what a document of the table reaches for: URLs on the
// listener, the canaries by file:// URL and by path.
type refs struct {
	l *listener
	c canaries
}

func (r refs) http(name string) string { return r.l.url(name) }
func (r refs) file(path string) string { return fileURL(path) }

// svgReaching is an SVG that draws the canaries and a remote image.
func (r refs) svgReaching(tag string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>` +
		`<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="400" height="300">` +
		`<style>rect { fill: url(` + r.http(tag+"-css.svg") + `#p) }</style><rect width="10" height="10"/>` +
		`<image x="0" y="0" width="100" height="100" xlink:href="` + r.file(r.c.png) + `"/>` +
		`<image x="100" y="0" width="100" height="100" href="` + r.c.png + `"/>` +
		`<image x="0" y="100" width="200" height="50" xlink:href="` + r.file(r.c.svg) + `"/>` +
		`<image x="0" y="150" width="100" height="100" xlink:href="` + r.http(tag+".png") + `"/>` +
		`<use xlink:href="` + r.file(r.c.svg) + `#x"/></svg>`
}

func dataURI(mediaType, body string) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString([]byte(body))
}

// resourceDocs builds the table's documents, except those LibreOffice
// itself must write (DOC; see docFromRTF).
func resourceDocs(r refs) []resourceDoc {
	svgBlip := `<w:p><w:r><w:drawing><wp:inline><wp:extent cx="952500" cy="714375"/><wp:docPr id="2" name="svg"/>` +
		`<a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">` +
		`<pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:nvPicPr><pic:cNvPr id="2" name="x.svg"/><pic:cNvPicPr/></pic:nvPicPr>` +
		`<pic:blipFill><a:blip r:embed="rIdSvg"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="952500" cy="714375"/></a:xfrm>` +
		`<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`
	svgTypes := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="svg" ContentType="image/svg+xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`
	vml := `<w:p><w:r><w:pict><v:shape xmlns:v="urn:schemas-microsoft-com:vml" style="width:50pt;height:50pt"><v:imagedata r:id="rIdV1"/></v:shape></w:pict></w:r></w:p>` +
		`<w:p><w:r><w:pict><v:shape xmlns:v="urn:schemas-microsoft-com:vml" style="width:50pt;height:50pt"><v:imagedata r:id="rIdV2"/></v:shape></w:pict></w:r></w:p>` +
		`<w:p><w:subDoc r:id="rIdSub"/></w:p>`
	vmlRels := `<Relationship Id="rIdV1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="` + r.file(r.c.png) + `" TargetMode="External"/>` +
		`<Relationship Id="rIdV2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="` + r.http("vml.png") + `" TargetMode="External"/>` +
		`<Relationship Id="rIdSub" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/subDocument" Target="` + r.file(r.c.html) + `" TargetMode="External"/>`
	xxeDoc := `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE w:document [<!ENTITY x SYSTEM "` + r.file(r.c.txt) + `"><!ENTITY y SYSTEM "` + r.http("xxe.txt") + `">]>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>entity: &x; &y;</w:t></w:r></w:p></w:body></w:document>`

	css := `body { background: url(` + r.http("css-bg.png") + `) } p { background-image: url("` + r.file(r.c.png) + `") } ` +
		`h1 { background: url(` + r.c.png + `) } @import url(` + r.http("import.css") + `); @import "` + r.file(r.c.txt) + `";`
	htmlDoc := `<!DOCTYPE html><html><head><style>` + css + `</style></head>` +
		`<body><h1 style="background-image: url(` + r.http("style-attr.png") + `)">remote content test</h1>` +
		`<p style="background:url('` + r.file(r.c.png) + `')">styled</p>` +
		`<img src="` + r.http("img.png") + `"><img src="` + r.file(r.c.png) + `"><img src="` + r.c.png + `">` +
		`<img src="` + dataURI("image/svg+xml", r.svgReaching("html-data")) + `">` +
		`<iframe src="` + r.file(r.c.html) + `"></iframe><object data="` + r.file(r.c.svg) + `"></object><embed src="` + r.http("embed.svg") + `">` +
		`<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="50" height="50"><image href="` + r.file(r.c.png) + `" width="50" height="50"/></svg>` +
		`</body></html>`

	odtContent := `<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" office:version="1.3"><office:body><office:text>
<text:p>remote content test</text:p>
<text:p><draw:frame svg:width="2cm" svg:height="2cm"><draw:image xlink:href="` + r.file(r.c.png) + `" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p>
<text:p><draw:frame svg:width="2cm" svg:height="2cm"><draw:image xlink:href="` + r.http("odt.png") + `" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p>
<text:p><draw:frame svg:width="2cm" svg:height="2cm"><draw:image xlink:href="` + r.c.svg + `" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p>
<text:p><draw:frame svg:width="4cm" svg:height="3cm"><draw:image xlink:href="Pictures/x.svg" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p>
<text:section text:name="linked"><text:section-source xlink:href="` + r.file(r.c.html) + `" xlink:type="simple"/><text:p>cached section</text:p></text:section>
</office:text></office:body></office:document-content>`
	odt := convtest.Zip(map[string]string{
		"mimetype":              "application/vnd.oasis.opendocument.text",
		"content.xml":           odtContent,
		"Pictures/x.svg":        r.svgReaching("odt-svg"),
		"META-INF/manifest.xml": `<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/><manifest:file-entry manifest:full-path="Pictures/x.svg" manifest:media-type="image/svg+xml"/></manifest:manifest>`,
	})

	return append([]resourceDoc{
		{name: "DOCX linked images and fields", from: engine.FromDOCX, in: linkedImageDOCX(r.http("docx.png"), r.http("docx-field.png"))},
		{name: "DOCX linked local images and fields", from: engine.FromDOCX, in: linkedImageDOCX(r.file(r.c.png), r.file(r.c.txt))},
		{name: "DOCX fields naming paths", from: engine.FromDOCX, in: convtest.DOCXBody(fieldParagraphs(r.c.png, r.c.txt), "")},
		{name: "DOCX SVG media", from: engine.FromDOCX, in: convtest.DOCXWith(svgBlip, `<Relationship Id="rIdSvg" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/x.svg"/>`,
			map[string]string{"word/media/x.svg": r.svgReaching("docx-svg"), "[Content_Types].xml": svgTypes})},
		{name: "DOCX external relationships", from: engine.FromDOCX, in: convtest.DOCXBody(vml, vmlRels)},
		{name: "DOCX external entities", from: engine.FromDOCX, in: convtest.DOCXWith("", "", map[string]string{"word/document.xml": xxeDoc}), refused: true},
		{name: "ODT", from: engine.FromODT, in: odt},
		{name: "RTF", from: engine.FromRTF, in: []byte(rtfReaching(r))},
		{name: "HTML", from: engine.FromHTML, in: []byte(htmlDoc)},
		{name: "Markdown", from: engine.FromMarkdown, in: []byte("# md\n\n![remote](" + r.http("md.png") + ")\n\n![local](" + r.c.png + ")\n\n![file](" + r.file(r.c.png) + ")\n\n" +
			"![svg](" + dataURI("image/svg+xml", r.svgReaching("md-data")) + ")\n\n<img src=\"" + r.file(r.c.png) + "\">\n")},
	}, sheetAndSlideResourceDocs(r)...)
}

// fieldParagraphs are DOCX paragraphs with fields that include a picture
// and a text by local path.
func fieldParagraphs(png, txt string) string {
	field := func(instr string) string {
		return `<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> ` + instr +
			` </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>cached</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>`
	}
	return field(`INCLUDEPICTURE "`+png+`"`) + field(`INCLUDEPICTURE "`+png+`" \d`) + field(`INCLUDETEXT "`+txt+`"`) +
		`<w:p><w:fldSimple w:instr=" INCLUDEPICTURE &quot;` + png + `&quot; \d "><w:r><w:t>simple</w:t></w:r></w:fldSimple></w:p>`
}

// rtfReaching is an RTF document with fields that include pictures and
// text by path, file:// URL and http:// URL.
func rtfReaching(r refs) string {
	esc := func(s string) string { return strings.ReplaceAll(s, `\`, `\\`) }
	field := func(instr string) string {
		return `{\field{\*\fldinst ` + esc(instr) + `}{\fldrslt x}}\par` + "\n"
	}
	return `{\rtf1\ansi\deff0{\fonttbl{\f0 Liberation Serif;}}` + "\n" + `remote content test\par` + "\n" +
		field(`INCLUDEPICTURE "`+r.c.png+`"`) + field(`INCLUDEPICTURE "`+r.file(r.c.png)+`" \d`) +
		field(`INCLUDEPICTURE "`+r.http("rtf.png")+`"`) + field(`INCLUDETEXT "`+r.c.txt+`"`) +
		field(`INCLUDETEXT "`+r.file(r.c.html)+`"`) + field(`IMPORT "`+r.c.png+`"`) + "}\n"
}

// docFromRTF has a cold soffice, with the service's profile (which loads
// nothing), write the RTF document as Word 97-2003.
func docFromRTF(t *testing.T, rtf string) []byte {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "in.rtf")
	os.WriteFile(src, []byte(rtf), 0o600)
	if out, err := sofficeWith("service", writeProfile, "--convert-to", "doc", "--outdir", filepath.Join(dir, "out"), src); err != nil {
		t.Fatalf("soffice --convert-to doc: %v\n%s", err, out)
	}
	doc, err := os.ReadFile(filepath.Join(dir, "out", "in.doc"))
	if err != nil {
		t.Fatalf("soffice wrote no DOC: %v", err)
	}
	return doc
}

// leaks returns what of the canaries pdf holds, or "".
func leaks(t *testing.T, pdf []byte) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "out.pdf")
	os.WriteFile(path, pdf, 0o600)
	var found []string
	text, err := exec.Command("pdftotext", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	if bytes.Contains(text, []byte(canaryMarker)) {
		found = append(found, "canary text (pdftotext)")
	}
	raw, err := exec.Command("qpdf", "--qdf", "--object-streams=disable", path, "-").Output()
	if err != nil {
		t.Fatalf("qpdf --qdf: %v", err)
	}
	if bytes.Contains(raw, []byte(canaryMarker)) {
		found = append(found, "canary bytes (qpdf --qdf)")
	}
	list, err := exec.Command("pdfimages", "-list", path).Output()
	if err != nil {
		t.Fatalf("pdfimages: %v", err)
	}
	for _, line := range strings.Split(string(list), "\n")[2:] {
		if f := strings.Fields(line); len(f) > 4 && f[3] == "16" && f[4] == "16" { // page num type width height
			found = append(found, "the canary image (pdfimages)")
		}
	}
	return strings.Join(found, ", ")
}

// TestNothingOutsideTheDocumentIsLoaded converts the table through the
// pool that /v1/convert and /v1/sign share: no connection, no canary.
func TestNothingOutsideTheDocumentIsLoaded(t *testing.T) {
	requireLibreOffice(t)
	r := refs{l: listen(t), c: canaryPaths(t)}
	docs := resourceDocs(r)
	// LibreOffice writes the DOC before the canaries exist, so that it
	// cannot put them into the DOC itself.
	docs = append(docs, resourceDoc{name: "DOC", from: engine.FromDOC, in: docFromRTF(t, rtfReaching(r))},
		// A comment sends it to the cold soffice (cold.go), confined the same way.
		resourceDoc{name: "DOC with a comment", from: engine.FromDOC, in: docFromRTF(t, strings.Replace(rtfReaching(r), `remote content test\par`,
			`remote {\*\atnid A}{\*\atnauthor A}\chatn{\*\annotation\pard a remark}content test\par`, 1)), cold: true})
	r.c.write(t)
	r.l.settle(t)
	r.l.accepted.Store(0)   // writing the DOC is not the service's doing
	p, _ := sharedSerial(t) // serial: the listener's connections are this test's documents' doing
	if !p.sup.Workers()[0].(*worker).proc.confine {
		t.Fatal("the worker is not confined: this machine's kernel refuses namespaces, and the test would not show what it is meant to")
	}
	checkResources(t, p, r, docs)
}

// TestRewritingAloneKeepsDocumentsInside runs the table on workers
// without namespaces, as where the kernel refuses them: the profile's
// settings and the rewriting of the input must hold by themselves, for
// every format that can be rewritten (DOC cannot).
func TestRewritingAloneKeepsDocumentsInside(t *testing.T) {
	requireLibreOffice(t)
	r := refs{l: listen(t), c: canaryPaths(t)}
	r.c.write(t)
	p := testPool(t, "lok", Options{PoolOptions: engine.PoolOptions{Workers: 1}, hostNamespaces: true})
	checkResources(t, p, r, resourceDocs(r))
}

// checkResources converts docs with p and checks that none reached r.
func checkResources(t *testing.T, p *Pool, r refs, docs []resourceDoc) {
	t.Helper()
	for _, d := range docs {
		before := r.l.accepted.Load()
		res, err := p.ConvertTimed(context.Background(), d.in, d.from)
		if d.refused && errors.Is(err, engine.ErrUnprocessable) {
			continue
		}
		if err != nil || d.refused {
			t.Errorf("%s: %v", d.name, err)
			continue
		}
		r.l.settle(t)
		if n := r.l.accepted.Load() - before; n > 0 {
			t.Errorf("%s: %d connections to the listener: %v", d.name, n, r.l)
		}
		if res.Cold != d.cold {
			t.Errorf("%s: converted cold: %v, want %v", d.name, res.Cold, d.cold)
		}
		if found := leaks(t, res.Output); found != "" {
			t.Errorf("%s: the PDF holds %s (cold: %v)", d.name, found, res.Cold)
		}
	}
}
